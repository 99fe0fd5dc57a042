/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * producer/producer.c: liboutbox's enqueue functions (see include/outbox/producer.h).
 *
 * Each enqueue is one call of the SQL producer API (outbox.enqueue(),
 * outbox.confirm_price_window()), which inserts the job and, only if the job
 * row was new, its outbox event.  Both inserts are ON CONFLICT DO NOTHING,
 * so a concurrent enqueue of the same job waits on the primary key, then
 * does nothing: one job, one event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "outbox/producer.h"

/*
 * outbox.enqueue() (migrations/V4__producer_api.sql) computes the job id,
 * event id and message body, so every producer, in any language, gets the
 * same ones: liboutbox only passes the JSON texts on.
 */
static const char enqueue_sql[] =
	"SELECT job_id, event_id, created FROM outbox.enqueue("
	"job_type => $1, destination => $2, identity => $3::json, payload => $4::jsonb,"
	" traceparent => $5)";

/* With run_at (migration V9): only outbox_enqueue_job_at() needs it, so the
 * other functions keep working on a database migrated to V4 only. */
static const char enqueue_at_sql[] =
	"SELECT job_id, event_id, created FROM outbox.enqueue("
	"job_type => $1, destination => $2, identity => $3::json, payload => $4::jsonb,"
	" traceparent => $5, run_at => $6::timestamptz)";

static void set_pq_error(PGconn *conn, const PGresult *res, const char *what,
                         char *err, size_t errlen)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	size_t n;

	if (msg == NULL)
		msg = res ? PQresultErrorMessage(res) : PQerrorMessage(conn);
	snprintf(err, errlen, "could not %s: %s", what, msg && *msg ? msg : "unknown error");
	n = strlen(err);
	while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '))
		err[--n] = '\0';
}

/* Copies one (job_id, event_id, created) triple of res's row 0 from column col. */
static int read_enqueued(const PGresult *res, int col, struct outbox_enqueued *out,
                         char *err, size_t errlen)
{
	const char *job_id = PQgetvalue(res, 0, col);
	const char *event_id = PQgetvalue(res, 0, col + 1);

	if (strlen(job_id) != OUTBOX_JOB_ID_LEN || strlen(event_id) >= sizeof(out->event_id)) {
		snprintf(err, errlen, "outbox.enqueue() returned unexpected ids \"%s\" \"%s\"", job_id,
		         event_id);
		return -1;
	}
	memcpy(out->job_id, job_id, OUTBOX_JOB_ID_LEN + 1);
	memcpy(out->event_id, event_id, strlen(event_id) + 1);
	out->created = strcmp(PQgetvalue(res, 0, col + 2), "t") == 0;
	return 0;
}

static int enqueue(PGconn *conn, const char *job_type, const char *destination,
                   const json_t *identity, const json_t *payload, const char *traceparent,
                   const char *run_at, struct outbox_enqueued *out, char *err, size_t errlen)
{
	/* Any JSON value goes to the database, which names what is wrong with it. */
	char *identity_text = json_dumps(identity, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	char *payload_text = json_dumps(payload, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	PGresult *res = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (identity_text == NULL || payload_text == NULL) {
		snprintf(err, errlen, "job identity and payload must be JSON values");
		goto out;
	}
	const char *params[6] = {job_type, destination, identity_text, payload_text, traceparent,
	                         run_at};
	res = PQexecParams(conn, run_at != NULL ? enqueue_at_sql : enqueue_sql, run_at != NULL ? 6 : 5,
	                   NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		set_pq_error(conn, res, "enqueue the job", err, errlen);
		goto out;
	}
	rc = read_enqueued(res, 0, out, err, errlen);
out:
	PQclear(res);
	free(payload_text);
	free(identity_text);
	return rc;
}

int outbox_enqueue_job(struct pg_conn *conn, const char *job_type,
                       const char *destination, const json_t *identity,
                       const json_t *payload, struct outbox_enqueued *out,
                       char *err, size_t errlen)
{
	return enqueue(conn, job_type, destination, identity, payload, NULL, NULL, out, err,
	               errlen);
}

int outbox_enqueue_job_traced(struct pg_conn *conn, const char *job_type,
                              const char *destination, const json_t *identity,
                              const json_t *payload, const char *traceparent,
                              struct outbox_enqueued *out, char *err, size_t errlen)
{
	return enqueue(conn, job_type, destination, identity, payload, traceparent, NULL, out,
	               err, errlen);
}

int outbox_enqueue_job_at(struct pg_conn *conn, const char *job_type,
                          const char *destination, const json_t *identity,
                          const json_t *payload, const char *traceparent,
                          const char *run_at, struct outbox_enqueued *out,
                          char *err, size_t errlen)
{
	char utc[21];

	if (run_at != NULL && outbox_normalize_timestamp(run_at, utc) < 0) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "invalid run_at \"%.80s\": must be an ISO 8601 time such as"
		         " 2026-12-03T09:00:00Z or 2026-12-03 18:00+09:00", run_at);
		return -1;
	}
	return enqueue(conn, job_type, destination, identity, payload, traceparent,
	               run_at != NULL ? utc : NULL, out, err, errlen);
}

int outbox_enqueue_news_job(struct pg_conn *conn, const char *destination,
                            const json_t *item, struct outbox_enqueued *out,
                            char *err, size_t errlen)
{
	json_t *identity = outbox_news_identity(item, err, errlen);
	int rc;

	if (identity == NULL)
		return -1;
	rc = enqueue(conn, "news", destination, identity, item, NULL, NULL, out, err, errlen);
	json_decref(identity);
	return rc;
}

/*
 * outbox.confirm_price_window() (migrations/V4__producer_api.sql) holds the
 * generation rule and writes window, job and event: the same statement a
 * worker in another language runs.
 */
static const char confirm_window_sql[] =
	"SELECT generation, corrected, job_id, event_id, created FROM outbox.confirm_price_window("
	"destination => $1, symbol => $2, window_start => $3::timestamptz, artifact_key => $4,"
	" artifact_sha256 => $5, backfill => $6::boolean)";

static int check_price_window(const struct outbox_price_window *w, char start[21],
                              char *err, size_t errlen)
{
	if (w->symbol == NULL || w->symbol[0] == '\0') {
		snprintf(err, errlen, "price window needs a symbol");
		return -1;
	}
	if (w->window_start == NULL || outbox_normalize_timestamp(w->window_start, start) < 0) {
		snprintf(err, errlen, "invalid window start \"%s\": expected an ISO 8601 timestamp",
		         w->window_start ? w->window_start : "");
		return -1;
	}
	if (w->artifact_key == NULL || w->artifact_key[0] == '\0' || w->artifact_sha256 == NULL) {
		snprintf(err, errlen, "price window needs an artifact key and its SHA-256");
		return -1;
	}
	return 0;
}

int outbox_enqueue_price_job(struct pg_conn *conn, const char *destination,
                             const struct outbox_price_window *w,
                             struct outbox_price_enqueued *out,
                             char *err, size_t errlen)
{
	char start[21];
	PGresult *res;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (check_price_window(w, start, err, errlen) < 0)
		return -1;
	const char *params[6] = {destination, w->symbol, start, w->artifact_key,
	                         w->artifact_sha256, w->backfill ? "true" : "false"};
	res = PQexecParams(conn, confirm_window_sql, 6, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		set_pq_error(conn, res, "confirm the price window", err, errlen);
		goto out;
	}
	out->generation = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
	out->corrected = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	out->job_written = !PQgetisnull(res, 0, 2);
	rc = out->job_written ? read_enqueued(res, 2, &out->job, err, errlen) : 0;
out:
	PQclear(res);
	return rc;
}
