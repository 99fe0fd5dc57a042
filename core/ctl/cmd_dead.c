/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_dead.c: outboxctl dead [--destination D] [--json] (docs/outboxctl.md).
 *
 * Lists dead jobs (job_id, destination, dead_reason, last_error,
 * attempt_count, finished_at) and dead outbox events (event_id,
 * destination, dead_reason, last_error), oldest first.  --json prints
 * {"jobs": [...], "events": [...]} with those keys (attempt_count a
 * number, finished_at ISO 8601 UTC, absent values null).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/ctl.h"
#include "db/db.h"

static const char dead_jobs_sql[] =
	"SELECT job_id, destination, dead_reason, last_error, attempt_count,"
	"       to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
	"  FROM outbox.jobs WHERE status = 'DEAD' AND ($1::text IS NULL OR destination = $1)"
	" ORDER BY finished_at, job_id";

static const char dead_events_sql[] =
	"SELECT event_id, destination, dead_reason, last_error"
	"  FROM outbox.outbox_events WHERE status = 'DEAD'"
	"   AND ($1::text IS NULL OR destination = $1)"
	" ORDER BY created_at, event_id";

static json_t *text_or_null(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* Rows as objects with the given keys; integer columns flagged in ints. */
static json_t *rows_json(const PGresult *res, const char *const *keys, int nkeys, int int_col)
{
	json_t *arr = json_array();

	for (int i = 0; arr != NULL && i < PQntuples(res); i++) {
		json_t *o = json_object();

		for (int j = 0; o != NULL && j < nkeys; j++) {
			json_t *v = j == int_col && !PQgetisnull(res, i, j)
			                ? json_integer(strtoll(PQgetvalue(res, i, j), NULL, 10))
			                : text_or_null(res, i, j);
			json_object_set_new(o, keys[j], v);
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

static const char *cell(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? "-" : PQgetvalue(res, row, col);
}

static void print_text(const PGresult *jobs, const PGresult *events)
{
	printf("dead jobs: %d\n", PQntuples(jobs));
	for (int i = 0; i < PQntuples(jobs); i++)
		printf("  %s  dest=%s reason=%s attempts=%s finished_at=%s\n    last_error: %s\n",
		       cell(jobs, i, 0), cell(jobs, i, 1), cell(jobs, i, 2), cell(jobs, i, 4),
		       cell(jobs, i, 5), cell(jobs, i, 3));
	printf("dead events: %d\n", PQntuples(events));
	for (int i = 0; i < PQntuples(events); i++)
		printf("  %s  dest=%s reason=%s\n    last_error: %s\n", cell(events, i, 0),
		       cell(events, i, 1), cell(events, i, 2), cell(events, i, 3));
}

static void print_json(const PGresult *jobs, const PGresult *events)
{
	static const char *const job_keys[] = {"job_id", "destination", "dead_reason",
	                                       "last_error", "attempt_count", "finished_at"};
	static const char *const event_keys[] = {"event_id", "destination", "dead_reason",
	                                         "last_error"};
	json_t *doc = json_pack("{s:o, s:o}", "jobs", rows_json(jobs, job_keys, 6, 4),
	                        "events", rows_json(events, event_keys, 4, -1));

	json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
}

int cmd_dead(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"destination", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	const char *destination = NULL;
	PGresult *jobs = NULL, *events = NULL;
	int opt, exit_code = CTL_EXIT_OK;
	char err[1024];

	optind = 1;
	opt = getopt_long(argc, argv, "", longopts, NULL);
	while (opt != -1) {
		if (opt != 'd')
			return CTL_EXIT_USAGE;
		destination = optarg;
		opt = getopt_long(argc, argv, "", longopts, NULL);
	}
	if (optind != argc) {
		ctl_error("usage: dead [--destination D] [--json]");
		return CTL_EXIT_USAGE;
	}
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	const char *params[1] = {destination};
	jobs = db_query(conn, dead_jobs_sql, 1, params, err, sizeof(err));
	if (jobs != NULL)
		events = db_query(conn, dead_events_sql, 1, params, err, sizeof(err));
	if (events == NULL) {
		ctl_error("could not list dead jobs: %s", err);
		exit_code = db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
		goto out;
	}
	if (ctl->json)
		print_json(jobs, events);
	else
		print_text(jobs, events);
out:
	PQclear(jobs);
	PQclear(events);
	return exit_code;
}
