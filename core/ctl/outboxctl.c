/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/outboxctl.c: the operator's command line (docs/outboxctl.md).
 *
 *   outboxctl [-c FILE] [--json] COMMAND [ARGS...]
 *
 * -c and --json are accepted anywhere on the line; everything else belongs
 * to the command.  "outboxctl COMMAND --help" prints the command's usage
 * and what it does; "outboxctl --version" the versions.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "ctl/commands.h"
#include "common/fault.h"
#include "common/log.h"
#include "common/version.h"

struct command {
	const char *name;
	int (*run)(struct ctl *ctl, int argc, char **argv);
	const char *usage;
	const char *does; /* for COMMAND --help */
};

static const struct command commands[] = {
	{"migrate", cmd_migrate, "migrate [--dir DIR]",
	 "apply the migrations in order, refusing an applied file that changed"},
	{"enqueue", cmd_enqueue,
	 "enqueue --type T --destination D --identity JSON --payload JSON [--traceparent TP]\n"
	 "                [--type T] [--destination D] FILE|-",
	 "enqueue a job of any type, from options or one per JSON line; print its ids"},
	{"enqueue-news", cmd_enqueue_news, "enqueue-news [--destination D] FILE|-",
	 "enqueue one news job per JSON line; print its job_id and event_id"},
	{"status", cmd_status, "status [--json]",
	 "per destination: jobs and outbox events by state, the oldest waiting ages,\n"
	 "the queue's and the DLQ's approximate depth; the live instances"},
	{"create-queues", cmd_create_queues, "create-queues [--json]",
	 "create each destination's queue and DLQ with its redrive policy"},
	{"dead", cmd_dead, "dead [--destination D] [--evidence] [--json]",
	 "list dead jobs and dead events with their reasons"},
	{"redrive", cmd_redrive, "redrive JOB_ID...",
	 "send dead or stuck jobs round again (a new redrive generation each)"},
	{"ingest-window", cmd_ingest_window,
	 "ingest-window --symbol S --window-start ISO8601 --bars FILE [--backfill]\n"
	 "                [--window-seconds N] [--destination D]",
	 "store a price window's bars in S3 and enqueue its price job"},
	{"reconcile-artifacts", cmd_reconcile_artifacts,
	 "reconcile-artifacts [--grace SECONDS] [--dry-run] [--json]",
	 "delete S3 artifacts no price window refers to"},
	{"prune", cmd_prune, "prune [--dry-run] [--json]",
	 "delete the finished jobs, events and dead-letter evidence [retention] allows"},
	{"pause", cmd_pause, "pause DEST",
	 "stop the consumers of a destination receiving and claiming (jobs wait)"},
	{"resume", cmd_resume, "resume DEST", "let a paused destination's consumers run again"},
};

/* "COMMAND --help" (or -h) anywhere before "--": the command's help. */
static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	}
	return false;
}

static void command_help(const struct command *c)
{
	printf("usage: outboxctl [-c FILE] [--json] %s\n\n%s\n", c->usage, c->does);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: outboxctl [-c FILE] [--json] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %s\n", commands[i].usage);
	fprintf(out, "\n-c FILE defaults to %s\n"
	        "outboxctl COMMAND --help describes a command; outboxctl --version prints versions\n",
	        SYSCONFDIR "/outboxd/relay.ini");
}

/* Removes -c FILE / --config FILE / --json from argv; returns the new argc or -1. */
static int take_common_options(struct ctl *ctl, int argc, char **argv)
{
	int out = 0;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[out++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) {
			if (i + 1 >= argc) {
				ctl_error("option \"%s\" needs a file name", argv[i]);
				return -1;
			}
			ctl->config_path = argv[++i];
		} else if (strncmp(argv[i], "--config=", 9) == 0) {
			ctl->config_path = argv[i] + 9;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctl->json = true;
		} else {
			argv[out++] = argv[i];
		}
	}
	argv[out] = NULL;
	return out;
}

int main(int argc, char **argv)
{
	struct ctl ctl = {.config_path = SYSCONFDIR "/outboxd/relay.ini"};
	int rc = CTL_EXIT_USAGE;

	log_set_ident("outboxctl");
	log_set_format(LOG_FORMAT_TEXT);
	argc = take_common_options(&ctl, argc, argv);
	if (argc < 0)
		return CTL_EXIT_USAGE;
	if (argc < 2) {
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return CTL_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		outbox_print_version(stdout, "outboxctl");
		return CTL_EXIT_OK;
	}
	/* Before any thread exists, as libcurl requires. */
	fault_init();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) == 0) {
			if (wants_help(argc - 1, argv + 1)) {
				command_help(&commands[i]);
				rc = CTL_EXIT_OK;
				goto out;
			}
			rc = commands[i].run(&ctl, argc - 1, argv + 1);
			goto out;
		}
	}
	ctl_error("unknown command \"%s\"", argv[1]);
	usage(stderr);
out:
	if (ctl.conn != NULL)
		PQfinish(ctl.conn);
	cfg_free(ctl.cfg);
	curl_global_cleanup();
	return rc;
}
