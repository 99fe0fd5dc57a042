/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ops/dead.c: see ops/dead.h.
 *
 * Dead jobs are found through jobs_dead_finished (finished_at, job_id) and
 * jobs_dead_reason (destination, dead_reason, ...), both partial indexes
 * whose predicate DEAD_JOB implies (V14), so a filtered or limited
 * list reads only the rows it returns.
 */
#include "ops/dead.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

/* status = 'DEAD', as the indexes say it: the table's CHECK makes
 * dead_reason set exactly when DEAD, and no index holds status. */
#define DEAD_JOB " dead_reason IS NOT NULL"

/* $1 destination, $2 reason, $3 limit (NULL: all). */
static const char dead_jobs_sql[] =
	"SELECT job_id, destination, dead_reason, last_error, attempt_count,"
	"       to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
	"       job_type"
	"  FROM outbox.jobs WHERE" DEAD_JOB " AND ($1::text IS NULL OR destination = $1)"
	"   AND ($2::text IS NULL OR dead_reason = $2)"
	" ORDER BY finished_at, job_id LIMIT $3::integer";

static const char dead_events_sql[] =
	"SELECT event_id, destination, dead_reason, last_error"
	"  FROM outbox.outbox_events WHERE status = 'DEAD'"
	"   AND ($1::text IS NULL OR destination = $1)"
	"   AND ($2::text IS NULL OR dead_reason = $2)"
	" ORDER BY created_at, event_id LIMIT $3::integer";

/* Ordered by job, so each job's rows are one run (see evidence_of()). */
static const char evidence_sql[] =
	"SELECT d.job_id, d.id, d.destination, d.sqs_message_id, d.event_id,"
	"       d.receive_count, d.outcome,"
	"       to_char(d.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
	"       d.attributes::text, d.body"
	"  FROM outbox.dlq_messages d JOIN outbox.jobs j ON j.job_id = d.job_id"
	" WHERE j.dead_reason IS NOT NULL"
	"   AND ($1::text IS NULL OR j.destination = $1)"
	"   AND ($2::text IS NULL OR j.dead_reason = $2)"
	" ORDER BY d.job_id, d.received_at, d.id";

static const char reasons_sql[] =
	"SELECT destination, dead_reason, count(*) FROM outbox.jobs WHERE" DEAD_JOB
	" GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2";

static const char ids_sql[] =
	"SELECT job_id FROM outbox.jobs WHERE" DEAD_JOB
	"   AND ($1::text IS NULL OR destination = $1) AND ($2::text IS NULL OR dead_reason = $2)"
	" ORDER BY finished_at, job_id LIMIT $3::integer";

enum { EV_JOB, EV_ID, EV_DEST, EV_MSG, EV_EVENT, EV_COUNT, EV_OUTCOME, EV_AT, EV_ATTRS, EV_BODY };

static json_t *text_or_null(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* Rows as objects with the given keys; column int_col a number. */
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

/* First row of ev (-1: none) for job_id, and how many follow it. */
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

/* The filter as the statements' three parameters; limit_buf holds $3. */
static void filter_params(const struct ops_dead_filter *f, const char *params[3],
                          char *limit_buf, size_t len)
{
	params[0] = f->destination;
	params[1] = f->reason;
	params[2] = NULL;
	if (f->limit > 0) {
		snprintf(limit_buf, len, "%d", f->limit);
		params[2] = limit_buf;
	}
}

static json_t *to_document(const PGresult *jobs, const PGresult *events, const PGresult *ev)
{
	static const char *const job_keys[] = {"job_id", "destination", "dead_reason",
	                                       "last_error", "attempt_count", "finished_at",
	                                       "job_type"};
	static const char *const event_keys[] = {"event_id", "destination", "dead_reason",
	                                         "last_error"};
	json_t *job_rows = rows_json(jobs, job_keys, 7, 4);

	for (size_t i = 0; ev != NULL && job_rows != NULL && i < json_array_size(job_rows); i++)
		json_object_set_new(json_array_get(job_rows, i), "evidence",
		                    evidence_json(ev, PQgetvalue(jobs, (int)i, 0)));
	return json_pack("{s:o, s:o}", "jobs", job_rows,
	                 "events", rows_json(events, event_keys, 4, -1));
}

json_t *ops_dead(PGconn *conn, const struct ops_dead_filter *f, char *err, size_t errlen)
{
	const char *params[3];
	char limit[16];
	PGresult *jobs, *events = NULL, *ev = NULL;
	json_t *doc = NULL;

	filter_params(f, params, limit, sizeof(limit));
	jobs = db_query(conn, dead_jobs_sql, 3, params, err, errlen);
	if (jobs != NULL)
		events = db_query(conn, dead_events_sql, 3, params, err, errlen);
	if (events != NULL && f->evidence)
		ev = db_query(conn, evidence_sql, 2, params, err, errlen);
	if (events != NULL && (!f->evidence || ev != NULL)) {
		doc = to_document(jobs, events, ev);
		if (doc == NULL)
			snprintf(err, errlen, "out of memory");
	}
	PQclear(jobs);
	PQclear(events);
	PQclear(ev);
	return doc;
}

json_t *ops_dead_reasons(PGconn *conn, char *err, size_t errlen)
{
	PGresult *res = db_query(conn, reasons_sql, 0, NULL, err, errlen);
	json_t *arr;

	if (res == NULL)
		return NULL;
	arr = json_array();
	for (int r = 0; arr != NULL && r < PQntuples(res); r++)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:I}",
			"destination", PQgetvalue(res, r, 0), "dead_reason", PQgetvalue(res, r, 1),
			"count", (json_int_t)strtoll(PQgetvalue(res, r, 2), NULL, 10)));
	PQclear(res);
	return arr;
}

json_t *ops_dead_job_ids(PGconn *conn, const struct ops_dead_filter *f, char *err,
                         size_t errlen)
{
	const char *params[3];
	char limit[16];
	PGresult *res;
	json_t *arr;

	filter_params(f, params, limit, sizeof(limit));
	res = db_query(conn, ids_sql, 3, params, err, errlen);
	if (res == NULL)
		return NULL;
	arr = json_array();
	for (int r = 0; arr != NULL && r < PQntuples(res); r++)
		json_array_append_new(arr, json_string(PQgetvalue(res, r, 0)));
	PQclear(res);
	return arr;
}
