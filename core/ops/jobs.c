/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ops/jobs.c: list jobs and show one (see ops/jobs.h).
 *
 * PostgreSQL builds the documents (json_build_object), so every column
 * keeps its SQL type's JSON form and nothing is formatted twice; only the
 * cutting of long texts happens here, on a UTF-8 boundary.
 */
#include "ops/jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/*
 * The keyset cursor is created_at to the microsecond (in UTC) and the
 * job_id: "2026-12-01T23:05:00.123456Z_<job_id>".  Every filter that is
 * NULL folds away when the planner sees the parameters (PQexecParams plans
 * each call with its values), so each call is one backward scan of
 * jobs_created that stops after $7 rows.
 */
static const char list_sql[] =
	"SELECT coalesce(json_agg(json_build_object("
	"         'job_id', job_id, 'job_type', job_type, 'destination', destination,"
	"         'status', status, 'attempt_count', attempt_count,"
	"         'redrive_generation', redrive_generation, 'dead_reason', dead_reason,"
	"         'created_at', " TS("created_at") ", 'updated_at', " TS("updated_at") ","
	"         'run_at', " TS("run_at") ", 'next_attempt_at', " TS("next_attempt_at") ","
	"         'cursor', to_char(created_at AT TIME ZONE 'UTC',"
	"                           'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') || '_' || job_id)"
	"       ORDER BY created_at DESC, job_id DESC), '[]')::text"
	"  FROM (SELECT * FROM outbox.jobs"
	"         WHERE ($1::text IS NULL OR destination = $1)"
	"           AND ($2::text IS NULL OR status = $2)"
	"           AND ($3::text IS NULL OR job_type = $3)"
	"           AND ($4::float8 IS NULL OR created_at >= now() - make_interval(secs => $4::float8))"
	"           AND ($5::timestamptz IS NULL OR (created_at, job_id) < ($5::timestamptz, $6::text))"
	"         ORDER BY created_at DESC, job_id DESC LIMIT $7::integer) j";

static const char show_sql[] =
	"SELECT json_build_object("
	"  'job_id', j.job_id, 'job_type', j.job_type, 'destination', j.destination,"
	"  'status', j.status, 'dead_reason', j.dead_reason, 'last_error', j.last_error,"
	"  'attempt_count', j.attempt_count, 'crash_count', j.crash_count,"
	"  'redrive_generation', j.redrive_generation,"
	"  'claimed_by', j.claimed_by, 'lease_until', " TS("j.lease_until") ","
	"  'run_at', " TS("j.run_at") ", 'next_attempt_at', " TS("j.next_attempt_at") ","
	"  'created_at', " TS("j.created_at") ", 'updated_at', " TS("j.updated_at") ","
	"  'finished_at', " TS("j.finished_at") ","
	"  'window_symbol', j.window_symbol, 'window_start', " TS("j.window_start") ","
	"  'window_generation', j.window_generation,"
	"  'identity', j.identity, 'payload', NULL, 'payload_truncated', false,"
	"  'payload_bytes', octet_length(j.payload::text),"
	"  'events', (SELECT coalesce(json_agg(json_build_object("
	"      'event_id', e.event_id, 'event_type', e.event_type, 'status', e.status,"
	"      'redrive_generation', e.redrive_generation, 'attempts', e.attempts,"
	"      'sqs_message_id', e.sqs_message_id, 'traceparent', e.traceparent,"
	"      'dead_reason', e.dead_reason, 'last_error', e.last_error,"
	"      'next_attempt_at', " TS("e.next_attempt_at") ","
	"      'created_at', " TS("e.created_at") ", 'published_at', " TS("e.published_at") ")"
	"    ORDER BY e.created_at, e.event_id), '[]')"
	"    FROM outbox.outbox_events e WHERE e.job_id = j.job_id),"
	"  'dlq_evidence', (SELECT coalesce(json_agg(json_build_object("
	"      'id', d.id, 'destination', d.destination, 'sqs_message_id', d.sqs_message_id,"
	"      'event_id', d.event_id, 'receive_count', d.receive_count, 'outcome', d.outcome,"
	"      'received_at', " TS("d.received_at") ", 'attributes', d.attributes,"
	"      'body', d.body) ORDER BY d.received_at, d.id), '[]')"
	"    FROM outbox.dlq_messages d WHERE d.job_id = j.job_id))::text,"
	"  j.payload::text"
	"  FROM outbox.jobs j WHERE j.job_id = $1";

static const char *const job_states[] = {"PENDING", "CLAIMED", "SUCCEEDED", "DEAD"};

bool ops_is_job_id(const char *s)
{
	size_t n = 0;

	for (; s[n] != '\0'; n++) {
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	}
	return n == 64;
}

/* "YYYY-MM-DDTHH:MM:SS.ffffffZ_<job_id>" into its two halves. */
static int parse_cursor(const char *cursor, char ts[32], const char **job_id)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddddddZ_";
	size_t n = sizeof(shape) - 1;

	if (strlen(cursor) != n + 64 || !ops_is_job_id(cursor + n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (shape[i] == 'd' ? (cursor[i] < '0' || cursor[i] > '9') : cursor[i] != shape[i])
			return -1;
	}
	memcpy(ts, cursor, n - 1);
	ts[n - 1] = '\0';
	*job_id = cursor + n;
	return 0;
}

static int check_filter(const struct ops_jobs_filter *f, char ts[32], const char **before_id,
                        char *err, size_t errlen)
{
	bool known = f->status == NULL;

	for (size_t i = 0; !known && i < sizeof(job_states) / sizeof(job_states[0]); i++)
		known = strcmp(f->status, job_states[i]) == 0;
	if (!known) {
		snprintf(err, errlen, "invalid status \"%s\": must be PENDING, CLAIMED, SUCCEEDED or DEAD",
		         f->status);
		return OPS_INVALID;
	}
	if (f->limit < 0 || f->limit > OPS_JOBS_LIMIT_MAX) {
		snprintf(err, errlen, "invalid limit %d: must be between 1 and %d", f->limit,
		         OPS_JOBS_LIMIT_MAX);
		return OPS_INVALID;
	}
	if (!(f->since_seconds >= 0)) {
		snprintf(err, errlen, "invalid since: must not be negative");
		return OPS_INVALID;
	}
	if (f->before != NULL && parse_cursor(f->before, ts, before_id) < 0) {
		snprintf(err, errlen, "invalid cursor \"%.100s\": must be a \"cursor\" of an earlier page",
		         f->before);
		return OPS_INVALID;
	}
	return OPS_OK;
}

/* The single text of row 0, column col, parsed; NULL with err. */
static json_t *load_cell(const PGresult *res, int col, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *doc = json_loads(PQgetvalue(res, 0, col), JSON_DECODE_ANY, &jerr);

	if (doc == NULL)
		snprintf(err, errlen, "the database returned JSON jansson cannot read: %s", jerr.text);
	return doc;
}

int ops_jobs_list(PGconn *conn, const struct ops_jobs_filter *f, json_t **out,
                  char *err, size_t errlen)
{
	char ts[32] = "", since[32], limit[16];
	const char *before_id = NULL;
	int rc = check_filter(f, ts, &before_id, err, errlen);

	*out = NULL;
	if (rc != OPS_OK)
		return rc;
	snprintf(since, sizeof(since), "%.3f", f->since_seconds);
	snprintf(limit, sizeof(limit), "%d", f->limit > 0 ? f->limit : OPS_JOBS_LIMIT_DEFAULT);
	const char *params[7] = {f->destination, f->status, f->job_type,
	                         f->since_seconds > 0 ? since : NULL,
	                         before_id != NULL ? ts : NULL, before_id, limit};
	PGresult *res = db_query(conn, list_sql, 7, params, err, errlen);

	if (res == NULL)
		return OPS_DB;
	*out = load_cell(res, 0, err, errlen);
	PQclear(res);
	return *out != NULL ? OPS_OK : OPS_DB;
}

/* Length of the longest prefix of s, at most max bytes, that ends on a
 * UTF-8 character boundary. */
static size_t utf8_cut(const char *s, size_t max)
{
	size_t n = max;

	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* obj[key] (a string) cut to OPS_SHOW_CUT_BYTES, with flag = true if cut. */
static void cut_member(json_t *obj, const char *key, const char *flag)
{
	const char *s = json_string_value(json_object_get(obj, key));
	size_t len = s != NULL ? strlen(s) : 0;

	if (len > OPS_SHOW_CUT_BYTES) {
		json_object_set_new(obj, key, json_stringn(s, utf8_cut(s, OPS_SHOW_CUT_BYTES)));
		json_object_set_new(obj, flag, json_true());
	} else {
		json_object_set_new(obj, flag, json_false());
	}
}

/* The payload member: the JSON value, or the cut text of a long one. */
static int set_payload(json_t *doc, const char *text, bool full, char *err, size_t errlen)
{
	size_t len = strlen(text);
	json_t *v;

	if (!full && len > OPS_SHOW_CUT_BYTES) {
		json_object_set_new(doc, "payload", json_stringn(text, utf8_cut(text, OPS_SHOW_CUT_BYTES)));
		json_object_set_new(doc, "payload_truncated", json_true());
		return 0;
	}
	json_error_t jerr;
	v = json_loads(text, JSON_DECODE_ANY, &jerr);
	if (v == NULL) {
		snprintf(err, errlen, "the job's payload is JSON jansson cannot read: %s", jerr.text);
		return -1;
	}
	json_object_set_new(doc, "payload", v);
	json_object_set_new(doc, "payload_truncated", json_false());
	return 0;
}

int ops_job_show(PGconn *conn, const char *job_id, bool full, json_t **out,
                 char *err, size_t errlen)
{
	const char *params[1] = {job_id};
	PGresult *res;
	json_t *doc, *evidence;
	size_t i;

	*out = NULL;
	if (!ops_is_job_id(job_id)) {
		snprintf(err, errlen, "invalid job id \"%.80s\": must be 64 lower-case hex digits", job_id);
		return OPS_INVALID;
	}
	res = db_query(conn, show_sql, 1, params, err, errlen);
	if (res == NULL)
		return OPS_DB;
	if (PQntuples(res) == 0) {
		snprintf(err, errlen, "no job \"%s\"", job_id);
		PQclear(res);
		return OPS_NOT_FOUND;
	}
	doc = load_cell(res, 0, err, errlen);
	if (doc == NULL || set_payload(doc, PQgetvalue(res, 0, 1), full, err, errlen) < 0) {
		json_decref(doc);
		PQclear(res);
		return OPS_DB;
	}
	PQclear(res);
	evidence = json_object_get(doc, "dlq_evidence");
	for (i = 0; !full && i < json_array_size(evidence); i++)
		cut_member(json_array_get(evidence, i), "body", "body_truncated");
	*out = doc;
	return OPS_OK;
}
