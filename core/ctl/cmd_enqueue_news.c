/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_enqueue_news.c: outboxctl enqueue-news [--destination D] FILE|-
 *
 * One news job per JSON line, each in its own transaction, so a bad line
 * writes nothing and never takes good lines with it.  Prints
 * "JOB_ID EVENT_ID" per enqueued line (after its commit); a bad line is
 * reported as FILE:LINE: problem, and the command exits 1 at the end.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "db/db.h"
#include "outbox/producer.h"

struct enqueue_totals {
	int enqueued;
	int existing;
	int bad;
	json_t *jobs;     /* --json: one object per enqueued line */
	json_t *rejected; /* --json: one object per bad line */
};

static int enqueue_line(PGconn *conn, const char *destination, const char *line,
                        struct outbox_enqueued *out, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *item = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
	int rc = -1;

	if (item == NULL) {
		snprintf(err, errlen, "invalid JSON at column %d: %s", jerr.column, jerr.text);
		return -1;
	}
	if (db_exec(conn, "BEGIN", err, errlen) < 0)
		goto out;
	if (outbox_enqueue_news_job(conn, destination, item, out, err, errlen) < 0) {
		PQclear(PQexec(conn, "ROLLBACK"));
		goto out;
	}
	rc = db_exec(conn, "COMMIT", err, errlen);
out:
	json_decref(item);
	return rc;
}

static bool blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

static int enqueue_stream(PGconn *conn, const char *destination, FILE *in, const char *name,
                          struct enqueue_totals *t)
{
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	char err[1024];
	struct outbox_enqueued out;

	while (getline(&line, &cap, in) != -1) {
		lineno++;
		if (blank(line))
			continue;
		if (enqueue_line(conn, destination, line, &out, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s:%ld: %s\n", name, lineno, err);
			t->bad++;
			if (t->rejected)
				json_array_append_new(t->rejected, json_pack("{s:I, s:s}", "line",
				                      (json_int_t)lineno, "error", err));
			if (db_connection_lost(conn)) {
				free(line);
				return CTL_EXIT_UNAVAILABLE;
			}
			continue;
		}
		if (out.created)
			t->enqueued++;
		else
			t->existing++;
		if (t->jobs)
			json_array_append_new(t->jobs, json_pack("{s:I, s:s, s:s, s:b}", "line",
			                      (json_int_t)lineno, "job_id", out.job_id,
			                      "event_id", out.event_id, "created", out.created));
		else
			printf("%s %s%s\n", out.job_id, out.event_id, out.created ? "" : " (already enqueued)");
	}
	free(line);
	return CTL_EXIT_OK;
}

int cmd_enqueue_news(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"destination", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	const char *destination = "news";
	struct enqueue_totals totals = {0};
	int opt, exit_code = CTL_EXIT_OK;
	FILE *in;

	optind = 1;
	for (opt = getopt_long(argc, argv, "", longopts, NULL); opt != -1;
	     opt = getopt_long(argc, argv, "", longopts, NULL)) {
		if (opt != 'd')
			return CTL_EXIT_USAGE;
		destination = optarg;
	}
	if (optind + 1 != argc) {
		ctl_error("usage: enqueue-news [--destination D] FILE|-");
		return CTL_EXIT_USAGE;
	}
	const struct cfg *cfg = ctl_config(ctl);
	if (cfg == NULL)
		return CTL_EXIT_CONFIG;
	if (cfg_find_destination(cfg, destination) == NULL) {
		ctl_error("destination \"%s\" is not configured in \"%s\"", destination, cfg->file);
		return CTL_EXIT_USAGE;
	}
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	const char *name = argv[optind];
	in = strcmp(name, "-") == 0 ? stdin : fopen(name, "r");
	if (in == NULL) {
		ctl_error("could not open \"%s\": %s", name, strerror(errno));
		return CTL_EXIT_FAILURE;
	}
	if (ctl->json) {
		totals.jobs = json_array();
		totals.rejected = json_array();
	}
	exit_code = enqueue_stream(conn, destination, in, strcmp(name, "-") == 0 ? "<stdin>" : name,
	                           &totals);
	if (in != stdin)
		fclose(in);
	if (ctl->json) {
		json_t *doc = json_pack("{s:o, s:o, s:i, s:i, s:i}", "jobs", totals.jobs,
		                        "rejected", totals.rejected, "enqueued", totals.enqueued,
		                        "already_enqueued", totals.existing, "rejected_count", totals.bad);
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	}
	fprintf(stderr, "outboxctl: %d enqueued, %d already enqueued, %d rejected\n",
	        totals.enqueued, totals.existing, totals.bad);
	if (exit_code == CTL_EXIT_OK && totals.bad > 0)
		exit_code = CTL_EXIT_FAILURE;
	return exit_code;
}
