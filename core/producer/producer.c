/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * producer/producer.c: liboutbox's enqueue functions (see include/outbox/producer.h).
 *
 * Each enqueue is one statement: a data-modifying CTE inserts the job and,
 * only if the job row was new, its outbox event.  Both inserts are
 * ON CONFLICT DO NOTHING, so a concurrent enqueue of the same job waits on
 * the primary key, then does nothing: one job, one event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "outbox/producer.h"

static const char enqueue_sql[] =
	"WITH j AS ("
	"  INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload,"
	"                           window_symbol, window_start, window_generation)"
	"  VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7::timestamptz, $8::integer)"
	"  ON CONFLICT (job_id) DO NOTHING"
	"  RETURNING job_id)"
	" INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination,"
	"                                   redrive_generation, body)"
	" SELECT $9, $2, job_id, $3, 0, $10 FROM j"
	" ON CONFLICT (event_id) DO NOTHING"
	" RETURNING event_id";

static const char current_generation_sql[] =
	"SELECT redrive_generation FROM outbox.jobs WHERE job_id = $1";

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

/*
 * The message body the relay sends: enough to find the job; the database,
 * not the message, decides what happens (docs/consumer.md).
 */
static char *message_body(const char *event_id, const char *job_id, const char *job_type,
                          const char *destination, const char *window_generation)
{
	json_t *body = json_pack("{s:s, s:s, s:s, s:s, s:i}", "event_id", event_id,
	                         "job_id", job_id, "job_type", job_type,
	                         "destination", destination, "redrive_generation", 0);
	char *text = NULL;

	if (body == NULL)
		return NULL;
	if (window_generation != NULL &&
	    json_object_set_new(body, "window_generation",
	                        json_integer(strtol(window_generation, NULL, 10))) < 0)
		goto out;
	text = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
	json_decref(body);
	return text;
}

/* Fills out->event_id with the job's current generation after a no-op insert. */
static int describe_existing(PGconn *conn, const char *event_type,
                             struct outbox_enqueued *out, char *err, size_t errlen)
{
	const char *params[1] = {out->job_id};
	PGresult *res = PQexecParams(conn, current_generation_sql, 1, NULL, params,
	                             NULL, NULL, 0);
	int rc = -1;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		set_pq_error(conn, res, "read the existing job", err, errlen);
		goto out;
	}
	if (outbox_event_id(event_type, out->job_id, (int)strtol(PQgetvalue(res, 0, 0), NULL, 10),
	                    out->event_id, sizeof(out->event_id)) < 0) {
		snprintf(err, errlen, "event id too long for job type \"%s\"", event_type);
		goto out;
	}
	rc = 0;
out:
	PQclear(res);
	return rc;
}

struct window_ref {
	const char *symbol;
	const char *start;
	const char *generation;
};

static int enqueue(PGconn *conn, const char *job_type, const char *destination,
                   const json_t *identity, const json_t *payload,
                   const struct window_ref *win, struct outbox_enqueued *out,
                   char *err, size_t errlen)
{
	char *canonical = outbox_canonical_json(identity);
	char *payload_text = json_dumps(payload, JSON_COMPACT | JSON_PRESERVE_ORDER);
	char *body = NULL;
	PGresult *res = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (canonical == NULL || payload_text == NULL) {
		snprintf(err, errlen, "job identity and payload must be JSON objects");
		goto out;
	}
	outbox_job_id(canonical, out->job_id);
	if (outbox_event_id(job_type, out->job_id, 0, out->event_id, sizeof(out->event_id)) < 0) {
		snprintf(err, errlen, "event id too long for job type \"%s\"", job_type);
		goto out;
	}
	body = message_body(out->event_id, out->job_id, job_type, destination,
	                    win ? win->generation : NULL);
	if (body == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	const char *params[10] = {
		out->job_id, job_type, destination, canonical, payload_text,
		win ? win->symbol : NULL, win ? win->start : NULL, win ? win->generation : NULL,
		out->event_id, body,
	};
	res = PQexecParams(conn, enqueue_sql, 10, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		set_pq_error(conn, res, "enqueue the job", err, errlen);
		goto out;
	}
	out->created = PQntuples(res) == 1;
	rc = out->created ? 0 : describe_existing(conn, job_type, out, err, errlen);
out:
	PQclear(res);
	free(body);
	free(payload_text);
	free(canonical);
	return rc;
}

int outbox_enqueue_job(struct pg_conn *conn, const char *job_type,
                       const char *destination, const json_t *identity,
                       const json_t *payload, struct outbox_enqueued *out,
                       char *err, size_t errlen)
{
	return enqueue(conn, job_type, destination, identity, payload, NULL, out, err, errlen);
}

int outbox_enqueue_news_job(struct pg_conn *conn, const char *destination,
                            const json_t *item, struct outbox_enqueued *out,
                            char *err, size_t errlen)
{
	json_t *identity = outbox_news_identity(item, err, errlen);
	int rc;

	if (identity == NULL)
		return -1;
	rc = enqueue(conn, "news", destination, identity, item, NULL, out, err, errlen);
	json_decref(identity);
	return rc;
}

/*
 * A new window gets generation 1; a different artifact for a confirmed
 * window raises the generation (a correction); the same artifact again
 * changes nothing and returns no row.  The upsert row-locks the window, which
 * the consumer's staleness check also locks (docs/price-path.md, "Corrections and generations").
 */
static const char confirm_window_sql[] =
	"INSERT INTO outbox.price_windows AS w"
	"       (symbol, window_start, artifact_key, artifact_sha256, backfill)"
	" VALUES ($1, $2::timestamptz, $3, $4, $5::boolean)"
	" ON CONFLICT (symbol, window_start) DO UPDATE"
	"   SET generation = w.generation + 1, artifact_key = EXCLUDED.artifact_key,"
	"       artifact_sha256 = EXCLUDED.artifact_sha256, corrected_at = now(),"
	"       backfill = w.backfill AND EXCLUDED.backfill"
	"   WHERE w.artifact_sha256 IS DISTINCT FROM EXCLUDED.artifact_sha256"
	" RETURNING generation, (xmax <> 0) AS corrected";

static const char window_generation_sql[] =
	"SELECT generation FROM outbox.price_windows"
	" WHERE symbol = $1 AND window_start = $2::timestamptz";

static int confirm_window(PGconn *conn, const struct outbox_price_window *w, const char *start,
                          struct outbox_price_enqueued *out, char *err, size_t errlen)
{
	const char *params[5] = {w->symbol, start, w->artifact_key, w->artifact_sha256,
	                         w->backfill ? "true" : "false"};
	PGresult *res = PQexecParams(conn, confirm_window_sql, 5, NULL, params, NULL, NULL, 0);
	int rc = -1;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		set_pq_error(conn, res, "confirm the price window", err, errlen);
		goto out;
	}
	if (PQntuples(res) == 1) {
		out->generation = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
		out->corrected = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
		rc = 0;
		goto out;
	}
	PQclear(res);
	res = PQexecParams(conn, window_generation_sql, 2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		set_pq_error(conn, res, "read the price window", err, errlen);
		goto out;
	}
	out->generation = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
	rc = 0;
out:
	PQclear(res);
	return rc;
}

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
	char start[21], generation[16];
	json_t *identity = NULL, *payload = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (check_price_window(w, start, err, errlen) < 0)
		return -1;
	if (confirm_window(conn, w, start, out, err, errlen) < 0)
		return -1;
	if (w->backfill)
		return 0;
	snprintf(generation, sizeof(generation), "%d", out->generation);
	identity = json_pack("{s:s, s:s, s:s, s:i}", "type", "price", "symbol", w->symbol,
	                     "window_start", start, "generation", out->generation);
	payload = json_pack("{s:s, s:s, s:i, s:s, s:s}", "symbol", w->symbol,
	                    "window_start", start, "generation", out->generation,
	                    "artifact_key", w->artifact_key, "artifact_sha256", w->artifact_sha256);
	if (identity == NULL || payload == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	struct window_ref win = {w->symbol, start, generation};
	rc = enqueue(conn, "price", destination, identity, payload, &win, &out->job, err, errlen);
	out->job_written = rc == 0;
out:
	json_decref(identity);
	json_decref(payload);
	return rc;
}
