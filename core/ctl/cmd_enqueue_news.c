/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_enqueue_news.c: outboxctl enqueue-news [--destination D] FILE|-
 *
 * One news job per JSON line, each in its own transaction, so a bad line
 * writes nothing and never takes good lines with it.  Prints
 * "JOB_ID EVENT_ID" per enqueued line (after its commit); a bad line is
 * reported as FILE:LINE: problem, and the command exits 1 at the end.
 *
 * Checked here, before anything is written: a line is at most
 * NEWS_LINE_MAX bytes (read without ever holding more), and published_at
 * is an ISO 8601 time with a zone, so that a job never carries a date
 * nobody downstream can read.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "db/db.h"
#include "price/artifact.h"
#include "outbox/producer.h"

/* Longest accepted line (one news item), newline included: docs/outboxctl.md. */
#define NEWS_LINE_MAX (256 * 1024)

struct enqueue_totals {
	int enqueued;
	int existing;
	int bad;
	json_t *jobs;     /* --json: one object per enqueued line */
	json_t *rejected; /* --json: one object per bad line */
};

/*
 * published_at: "YYYY-MM-DDTHH:MM[:SS[.fraction]]" with "Z" or an offset.
 * The fraction is dropped before artifact_parse_time() (which accepts only
 * zeros there) checks the rest: calendar, clock, zone and a 4-digit year.
 */
static bool valid_published_at(const char *text)
{
	char copy[64];
	const char *dot = strchr(text, '.');
	int n;

	if (dot == NULL)
		return strlen(text) < sizeof(copy) && artifact_parse_time(text, &(int64_t){0}) == 0;
	size_t digits = strspn(dot + 1, "0123456789");
	if (digits == 0)
		return false;
	n = snprintf(copy, sizeof(copy), "%.*s%s", (int)(dot - text), text, dot + 1 + digits);
	return n > 0 && (size_t)n < sizeof(copy) && artifact_parse_time(copy, &(int64_t){0}) == 0;
}

/* What the producer does not check: returns 0, or -1 with err set. */
static int check_item(const json_t *item, char *err, size_t errlen)
{
	const json_t *p = json_object_get(item, "published_at");

	/* A missing or non-string value is the producer's to report. */
	if (json_is_string(p) && json_string_length(p) > 0 &&
	    !valid_published_at(json_string_value(p))) {
		snprintf(err, errlen, "news item has an unparseable \"published_at\": expected an "
		         "ISO 8601 time with a zone, such as \"2026-11-30T09:00:00Z\"");
		return -1;
	}
	return 0;
}

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
	if (check_item(item, err, errlen) < 0)
		goto out;
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

/*
 * Reads one line into buf (NEWS_LINE_MAX + 1 bytes); a longer one is read to
 * its end and dropped, and *too_long says so.  A NUL byte ends the text
 * (json_loads() would stop there too): *has_nul says so.  Returns false at
 * the end of the input.
 */
static bool read_line(FILE *in, char *buf, bool *too_long, bool *has_nul)
{
	size_t len = 0;
	int c = EOF;

	*too_long = false;
	*has_nul = false;
	while ((c = getc(in)) != EOF) {
		if (len < NEWS_LINE_MAX)
			buf[len] = (char)c;
		else
			*too_long = true;
		*has_nul |= c == '\0';
		len++;
		if (c == '\n')
			break;
	}
	buf[len < NEWS_LINE_MAX ? len : NEWS_LINE_MAX] = '\0';
	return len > 0;
}

/* A line refused before it is parsed: false with err set. */
static bool line_ok(bool too_long, bool has_nul, char *err, size_t errlen)
{
	if (too_long)
		snprintf(err, errlen, "news item is too large (more than %d bytes on one line)",
		         NEWS_LINE_MAX);
	else if (has_nul)
		snprintf(err, errlen, "line contains a NUL byte");
	return !too_long && !has_nul;
}

static int enqueue_stream(PGconn *conn, const char *destination, FILE *in, const char *name,
                          struct enqueue_totals *t)
{
	char *line = malloc(NEWS_LINE_MAX + 1);
	long lineno = 0;
	char err[1024];
	struct outbox_enqueued out;
	bool too_long, has_nul;

	if (line == NULL) {
		ctl_error("out of memory");
		return CTL_EXIT_FAILURE;
	}
	while (read_line(in, line, &too_long, &has_nul)) {
		bool ok = line_ok(too_long, has_nul, err, sizeof(err));

		lineno++;
		if (ok && blank(line))
			continue;
		if (!ok || enqueue_line(conn, destination, line, &out, err, sizeof(err)) < 0) {
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
