/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_dead.c: outboxctl dead [--destination D] [--evidence] [--json]
 * (docs/outboxctl.md).
 *
 * Lists dead jobs (job_id, destination, dead_reason, last_error,
 * attempt_count, finished_at) and dead outbox events (event_id,
 * destination, dead_reason, last_error), oldest first.  --json prints
 * {"jobs": [...], "events": [...]} with those keys (attempt_count a
 * number, finished_at ISO 8601 UTC, absent values null).  --evidence adds
 * to each job the outbox.dlq_messages rows that name it (what the DLQ
 * reader saw: the message, its receive count and the outcome), oldest
 * first; in text the body is escaped and cut, since it may be hostile.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/commands.h"
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

/* Ordered by job, so each job's rows are one run (see evidence_of()). */
static const char evidence_sql[] =
	"SELECT d.job_id, d.id, d.destination, d.sqs_message_id, d.event_id,"
	"       d.receive_count, d.outcome,"
	"       to_char(d.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
	"       d.attributes::text, d.body"
	"  FROM outbox.dlq_messages d JOIN outbox.jobs j ON j.job_id = d.job_id"
	" WHERE j.status = 'DEAD' AND ($1::text IS NULL OR j.destination = $1)"
	" ORDER BY d.job_id, d.received_at, d.id";

enum { EV_JOB, EV_ID, EV_DEST, EV_MSG, EV_EVENT, EV_COUNT, EV_OUTCOME, EV_AT, EV_ATTRS, EV_BODY };

/* Text output shows at most this much of a body. */
#define EVIDENCE_BODY_SHOWN 200

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

/* First row of ev (NULL: none) for job_id, and how many follow it. */
static int evidence_of(const PGresult *ev, const char *job_id, int *n)
{
	int first = -1;

	*n = 0;
	for (int r = 0; ev != NULL && r < PQntuples(ev); r++) {
		if (strcmp(PQgetvalue(ev, r, EV_JOB), job_id) != 0) {
			if (first >= 0)
				break;
			continue;
		}
		if (first < 0)
			first = r;
		(*n)++;
	}
	return first;
}

/* A message body as printable ASCII: a hostile body cannot drive the terminal. */
static void print_escaped(const char *s, size_t max)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\')
			fputs("\\\\", stdout);
		else if (c >= 0x20 && c < 0x7f)
			putchar(c);
		else
			printf("\\x%02x", c);
	}
	if (len > max)
		printf("... (%zu bytes)", len);
}

static void print_evidence_text(const PGresult *ev, const char *job_id)
{
	int n, first = evidence_of(ev, job_id, &n);

	printf("    evidence: %d dead-letter message%s\n", n, n == 1 ? "" : "s");
	for (int r = first; n > 0 && r < first + n; r++) {
		printf("      %s  outcome=%s queue_message=%s receive_count=%s event_id=%s\n"
		       "        body: ", cell(ev, r, EV_AT), cell(ev, r, EV_OUTCOME),
		       cell(ev, r, EV_MSG), cell(ev, r, EV_COUNT), cell(ev, r, EV_EVENT));
		print_escaped(PQgetvalue(ev, r, EV_BODY), EVIDENCE_BODY_SHOWN);
		putchar('\n');
	}
}

static json_t *evidence_json(const PGresult *ev, const char *job_id)
{
	int n, first = evidence_of(ev, job_id, &n);
	json_t *arr = json_array();

	for (int r = first; arr != NULL && n > 0 && r < first + n; r++) {
		json_error_t jerr;
		json_t *attrs = json_loads(PQgetvalue(ev, r, EV_ATTRS), 0, &jerr);

		json_array_append_new(arr, json_pack(
			"{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			"id", (json_int_t)strtoll(PQgetvalue(ev, r, EV_ID), NULL, 10),
			"destination", text_or_null(ev, r, EV_DEST),
			"sqs_message_id", text_or_null(ev, r, EV_MSG),
			"event_id", text_or_null(ev, r, EV_EVENT),
			"receive_count", PQgetisnull(ev, r, EV_COUNT) ? json_null()
			                 : json_integer(strtoll(PQgetvalue(ev, r, EV_COUNT), NULL, 10)),
			"outcome", text_or_null(ev, r, EV_OUTCOME),
			"received_at", text_or_null(ev, r, EV_AT),
			"attributes", attrs != NULL ? attrs : json_object(),
			"body", text_or_null(ev, r, EV_BODY)));
	}
	return arr;
}

static void print_text(const PGresult *jobs, const PGresult *events, const PGresult *ev)
{
	printf("dead jobs: %d\n", PQntuples(jobs));
	for (int i = 0; i < PQntuples(jobs); i++) {
		printf("  %s  dest=%s reason=%s attempts=%s finished_at=%s\n    last_error: %s\n",
		       cell(jobs, i, 0), cell(jobs, i, 1), cell(jobs, i, 2), cell(jobs, i, 4),
		       cell(jobs, i, 5), cell(jobs, i, 3));
		if (ev != NULL)
			print_evidence_text(ev, PQgetvalue(jobs, i, 0));
	}
	printf("dead events: %d\n", PQntuples(events));
	for (int i = 0; i < PQntuples(events); i++)
		printf("  %s  dest=%s reason=%s\n    last_error: %s\n", cell(events, i, 0),
		       cell(events, i, 1), cell(events, i, 2), cell(events, i, 3));
}

static void print_json(const PGresult *jobs, const PGresult *events, const PGresult *ev)
{
	static const char *const job_keys[] = {"job_id", "destination", "dead_reason",
	                                       "last_error", "attempt_count", "finished_at"};
	static const char *const event_keys[] = {"event_id", "destination", "dead_reason",
	                                         "last_error"};
	json_t *job_rows = rows_json(jobs, job_keys, 6, 4);
	json_t *doc;

	for (size_t i = 0; ev != NULL && job_rows != NULL && i < json_array_size(job_rows); i++)
		json_object_set_new(json_array_get(job_rows, i), "evidence",
		                    evidence_json(ev, PQgetvalue(jobs, (int)i, 0)));
	doc = json_pack("{s:o, s:o}", "jobs", job_rows,
	                "events", rows_json(events, event_keys, 4, -1));

	json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
}

int cmd_dead(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"destination", required_argument, NULL, 'd'},
		{"evidence", no_argument, NULL, 'e'},
		{NULL, 0, NULL, 0},
	};
	const char *destination = NULL;
	bool evidence = false;
	PGresult *jobs = NULL, *events = NULL, *ev = NULL;
	int opt, exit_code = CTL_EXIT_OK;
	char err[1024];

	optind = 1;
	opt = getopt_long(argc, argv, "", longopts, NULL);
	while (opt != -1) {
		if (opt == 'd')
			destination = optarg;
		else if (opt == 'e')
			evidence = true;
		else
			return CTL_EXIT_USAGE;
		opt = getopt_long(argc, argv, "", longopts, NULL);
	}
	if (optind != argc) {
		ctl_error("usage: dead [--destination D] [--evidence] [--json]");
		return CTL_EXIT_USAGE;
	}
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	const char *params[1] = {destination};
	jobs = db_query(conn, dead_jobs_sql, 1, params, err, sizeof(err));
	if (jobs != NULL)
		events = db_query(conn, dead_events_sql, 1, params, err, sizeof(err));
	if (events != NULL && evidence)
		ev = db_query(conn, evidence_sql, 1, params, err, sizeof(err));
	if (events == NULL || (evidence && ev == NULL)) {
		ctl_error("could not list dead jobs: %s", err);
		exit_code = db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
		goto out;
	}
	if (ctl->json)
		print_json(jobs, events, ev);
	else
		print_text(jobs, events, ev);
out:
	PQclear(jobs);
	PQclear(events);
	PQclear(ev);
	return exit_code;
}
