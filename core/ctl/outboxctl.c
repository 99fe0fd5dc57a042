/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/outboxctl.c: the operator's command line (docs/outboxctl.md).
 *
 *   outboxctl [-c FILE] [--json] COMMAND [ARGS...]
 *
 * -c and --json are accepted anywhere on the line; everything else belongs
 * to the command.
 */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "ctl/ctl.h"
#include "common/fault.h"
#include "common/log.h"

struct command {
	const char *name;
	int (*run)(struct ctl *ctl, int argc, char **argv);
	const char *usage;
};

static const struct command commands[] = {
	{"migrate", cmd_migrate, "migrate [--dir DIR]"},
	{"enqueue", cmd_enqueue,
	 "enqueue --type T --destination D --identity JSON --payload JSON [--traceparent TP]\n"
	 "                [--type T] [--destination D] FILE|-"},
	{"enqueue-news", cmd_enqueue_news, "enqueue-news [--destination D] FILE|-"},
	{"status", cmd_status, "status [--json]"},
	{"create-queues", cmd_create_queues, "create-queues [--json]"},
	{"dead", cmd_dead, "dead [--destination D] [--json]"},
	{"redrive", cmd_redrive, "redrive JOB_ID..."},
	{"ingest-window", cmd_ingest_window,
	 "ingest-window --symbol S --window-start ISO8601 --bars FILE [--backfill]\n"
	 "                [--window-seconds N] [--destination D]"},
	{"reconcile-artifacts", cmd_reconcile_artifacts,
	 "reconcile-artifacts [--grace SECONDS] [--dry-run] [--json]"},
	{"prune", cmd_prune, "prune [--dry-run] [--json]"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: outboxctl [-c FILE] [--json] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %s\n", commands[i].usage);
	fprintf(out, "\n-c FILE defaults to %s\n", SYSCONFDIR "/outboxd/relay.ini");
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
	/* Before any thread exists, as libcurl requires. */
	fault_init();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) == 0) {
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
