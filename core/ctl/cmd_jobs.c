/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_jobs.c: outboxctl jobs [--destination D] [--status S] [--type T]
 * [--since DURATION] [--limit N] [--before CURSOR] [--json]
 * (docs/outboxctl.md).
 *
 * Jobs newest first, one page (ops_jobs_list()).  Text: one line per job,
 * then, when the page is full, the option that shows the next one; --json
 * prints the JSON array of ops/jobs.h, each object with its "cursor".
 * DURATION is a number of seconds with an optional unit: 90, 90s, 15m,
 * 2h, 7d.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/commands.h"
#include "ctl/job_text.h"
#include "ops/jobs.h"

#define USAGE                                                                          \
	"usage: jobs [--destination D] [--status S] [--type T] [--since DURATION]\n"      \
	"            [--limit N] [--before CURSOR] [--json]"

/* "90", "90s", "15m", "2h", "7d" into seconds; -1 if it is none of those. */
static double parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !(v > 0) || v > 1e10)
		return -1;
	if (*end == '\0' || strcmp(end, "s") == 0)
		return v;
	if (strcmp(end, "m") == 0)
		return v * 60;
	if (strcmp(end, "h") == 0)
		return v * 3600;
	if (strcmp(end, "d") == 0)
		return v * 86400;
	return -1;
}

static int parse_args(int argc, char **argv, struct ops_jobs_filter *f)
{
	static const struct option longopts[] = {
		{"destination", required_argument, NULL, 'd'},
		{"status", required_argument, NULL, 's'},
		{"type", required_argument, NULL, 't'},
		{"since", required_argument, NULL, 'S'},
		{"limit", required_argument, NULL, 'l'},
		{"before", required_argument, NULL, 'b'},
		{NULL, 0, NULL, 0},
	};
	int opt;
	char *end;

	optind = 1;
	for (opt = getopt_long(argc, argv, "", longopts, NULL); opt != -1;
	     opt = getopt_long(argc, argv, "", longopts, NULL)) {
		switch (opt) {
		case 'd': f->destination = optarg; break;
		case 's': f->status = optarg; break;
		case 't': f->job_type = optarg; break;
		case 'b': f->before = optarg; break;
		case 'S':
			f->since_seconds = parse_duration(optarg);
			if (f->since_seconds < 0) {
				ctl_error("invalid --since \"%s\": must be a duration like 90s, 15m, 2h or 7d",
				          optarg);
				return -1;
			}
			break;
		case 'l':
			f->limit = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end != '\0' || f->limit < 1 || f->limit > OPS_JOBS_LIMIT_MAX) {
				ctl_error("invalid --limit \"%s\": must be a number from 1 to %d", optarg,
				          OPS_JOBS_LIMIT_MAX);
				return -1;
			}
			break;
		default:
			ctl_error(USAGE);
			return -1;
		}
	}
	if (optind != argc) {
		ctl_error(USAGE);
		return -1;
	}
	return 0;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "-";
}

static void print_text(const json_t *rows, int limit)
{
	size_t n = json_array_size(rows);

	printf("%-24s %-9s %8s  %-16s %-64s %s\n", "CREATED_AT", "STATUS", "ATTEMPTS",
	       "DESTINATION", "JOB_ID", "TYPE");
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(rows, i);
		size_t dest_len = strlen(str(r, "destination"));

		/* only job_id, status and the times are known to be plain ASCII */
		printf("%-24s %-9s %8lld  ", str(r, "created_at"), str(r, "status"),
		       (long long)json_integer_value(json_object_get(r, "attempt_count")));
		ctl_print_escaped(stdout, str(r, "destination"), 40);
		printf("%*s %s ", dest_len < 16 ? (int)(16 - dest_len) : 0, "", str(r, "job_id"));
		ctl_print_escaped(stdout, str(r, "job_type"), 64);
		if (strcmp(str(r, "status"), "DEAD") == 0) {
			fputs(" (", stdout);
			ctl_print_escaped(stdout, str(r, "dead_reason"), 64);
			putchar(')');
		}
		putchar('\n');
	}
	if (n > 0 && (int)n == limit)
		printf("next page: --before %s\n", str(json_array_get(rows, n - 1), "cursor"));
}

int cmd_jobs(struct ctl *ctl, int argc, char **argv)
{
	struct ops_jobs_filter f = {0};
	json_t *rows = NULL;
	int exit_code = CTL_EXIT_OK, rc;
	char err[1024];

	if (parse_args(argc, argv, &f) < 0)
		return CTL_EXIT_USAGE;
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	rc = ops_jobs_list(conn, &f, &rows, err, sizeof(err));
	if (rc != OPS_OK) {
		ctl_error("could not list jobs: %s", err);
		return ctl_ops_exit(rc, conn);
	}
	if (ctl->json)
		ctl_print_json(rows);
	else
		print_text(rows, f.limit > 0 ? f.limit : OPS_JOBS_LIMIT_DEFAULT);
	json_decref(rows);
	return CTL_EXIT_OK;
}
