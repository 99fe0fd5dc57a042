/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_enqueue_news.c: outboxctl enqueue-news [--destination D] FILE|-
 *
 * One news job per JSON line, with the error handling and output of
 * ctl/enqueue_lines.h.
 *
 * Checked here, before anything is written: a line is at most
 * NEWS_LINE_MAX bytes (read without ever holding more), and published_at
 * is an ISO 8601 time with a zone, so that a job never carries a date
 * nobody downstream can read.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctl/commands.h"
#include "ctl/enqueue_lines.h"
#include "price/artifact.h"

/* Longest accepted line (one news item), newline included: docs/outboxctl.md. */
#define NEWS_LINE_MAX (256 * 1024)

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

static int enqueue_news_line(PGconn *conn, const char *line, void *arg,
                             struct outbox_enqueued *out, char *err, size_t errlen)
{
	const char *destination = arg;
	json_error_t jerr;
	json_t *item = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
	int rc = -1;

	if (item == NULL) {
		snprintf(err, errlen, "invalid JSON at column %d: %s", jerr.column, jerr.text);
		return -1;
	}
	if (check_item(item, err, errlen) == 0)
		rc = outbox_enqueue_news_job(conn, destination, item, out, err, errlen);
	json_decref(item);
	return rc;
}

int cmd_enqueue_news(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"destination", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	const char *destination = "news";
	int opt, exit_code = CTL_EXIT_OK;

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
	return enqueue_lines(ctl, conn, argv[optind], NEWS_LINE_MAX, "news item", enqueue_news_line,
	                     (void *)destination);
}
