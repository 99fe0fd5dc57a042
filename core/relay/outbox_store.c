/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/outbox_store.c: the relay's statements (see outbox_store.h and
 * docs/relay.md, "The SQL").
 *
 * Lists travel to the server as one jsonb parameter: jansson does the
 * escaping, and jsonb_to_recordset() turns it into rows, so a whole pass
 * is marked by one statement whatever its size.
 */
#include "relay/outbox_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/metrics.h"
#include "db/db.h"
#include "db/traffic.h"

/*
 * Claim and lease in one statement: the CTE locks due rows (skipping those
 * another relay is claiming right now) and the UPDATE leases them.  The
 * claim_until test excludes rows leased by a live relay; when a concurrent
 * claim commits first, READ COMMITTED re-checks it on the new row version.
 * A paused destination (outboxctl pause) has nothing to claim.
 */
static const char claim_sql[] =
	"WITH c AS ("
	"  SELECT event_id FROM outbox.outbox_events"
	"   WHERE destination = $1 AND status = 'NEW' AND next_attempt_at <= now()"
	"     AND (claim_until IS NULL OR claim_until < now())"
	"     AND NOT EXISTS (SELECT 1 FROM outbox.paused_destinations p"
	"                      WHERE p.destination = $1)"
	"   ORDER BY next_attempt_at"
	"   LIMIT $3::integer"
	"   FOR UPDATE SKIP LOCKED),"
	" u AS ("
	"  UPDATE outbox.outbox_events e"
	"     SET claimed_by = $2, claim_until = now() + $4::integer * interval '1 second'"
	"    FROM c WHERE e.event_id = c.event_id"
	"  RETURNING e.event_id, e.job_id, e.body, e.attempts, e.next_attempt_at, e.traceparent)"
	" SELECT event_id, job_id, body, attempts, traceparent FROM u"
	" ORDER BY next_attempt_at, event_id";

/*
 * attempts is capped at 30 in the exponent: the delay is capped by
 * retry_max anyway, and 2^huge would overflow float8.
 *
 * "Still NEW" is spelled status <> 'PUBLISHED' AND status <> 'DEAD' (the
 * same thing under the table's CHECK) on purpose: written status = 'NEW',
 * the planner may use the partial index outbox_events_new_due, which it
 * believes tiny when the statistics lag behind a burst of enqueues, and
 * hash every NEW row of the table for a 10-row update (22 ms instead of
 * 0.3 ms with 17k NEW rows, measured).  This form can only use the primary
 * key.
 */
static const char mark_sql[] =
	"WITH m AS ("
	"  SELECT * FROM jsonb_to_recordset($2::jsonb)"
	"    AS m(event_id text, outcome text, message_id text, error text, dead_reason text)),"
	" u AS ("
	"  UPDATE outbox.outbox_events e SET"
	"    status = CASE m.outcome WHEN 'RETRY' THEN 'NEW' ELSE m.outcome END,"
	"    sqs_message_id = CASE WHEN m.outcome = 'PUBLISHED' THEN m.message_id"
	"                          ELSE e.sqs_message_id END,"
	"    published_at = CASE WHEN m.outcome = 'PUBLISHED' THEN now() END,"
	"    attempts = e.attempts + CASE WHEN m.outcome = 'RETRY' THEN 1 ELSE 0 END,"
	"    next_attempt_at = CASE WHEN m.outcome = 'RETRY' THEN now() +"
	"        least($3::float8 * power(2::float8, least(e.attempts, 30)), $4::float8)"
	"        * interval '1 second' ELSE e.next_attempt_at END,"
	"    last_error = CASE WHEN m.outcome = 'PUBLISHED' THEN e.last_error ELSE m.error END,"
	"    dead_reason = CASE WHEN m.outcome = 'DEAD' THEN m.dead_reason END,"
	"    claimed_by = NULL, claim_until = NULL"
	"   FROM m"
	"  WHERE e.event_id = m.event_id AND e.claimed_by = $1"
	"    AND e.status <> 'PUBLISHED' AND e.status <> 'DEAD'"
	"  RETURNING e.event_id, e.job_id, e.redrive_generation, m.outcome, m.dead_reason,"
	"            m.error),"
	" j AS ("
	"  UPDATE outbox.jobs SET status = 'DEAD', dead_reason = 'UNROUTABLE',"
	"    last_error = format('outbox event %s is dead (%s): %s', u.event_id,"
	"                        u.dead_reason, u.error),"
	"    updated_at = now(), finished_at = now()"
	"   FROM u"
	"  WHERE u.outcome = 'DEAD' AND jobs.job_id = u.job_id AND jobs.status = 'PENDING'"
	"    AND jobs.redrive_generation = u.redrive_generation"
	"  RETURNING jobs.job_id)"
	" SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM j)";

/*
 * Events of destinations no live relay serves: not this one ($1), not one
 * whose registry heartbeat is younger than $3 seconds.  Only rows of
 * processes that run the relay count: a consumer-only process registers
 * the destinations it consumes, but cannot send their events.  The grace
 * period counts from next_attempt_at, when the event became due: for a fresh
 * enqueue that is created_at, for an event the consumer re-armed for a
 * retry it is the retry's time, so a retry gets the same grace as a new
 * job instead of dying as soon as it is due.  A live claim means some relay
 * does serve the destination.
 */
static const char sweep_sql[] =
	"WITH d AS ("
	"  UPDATE outbox.outbox_events e SET status = 'DEAD',"
	"    dead_reason = 'UNKNOWN_DESTINATION',"
	"    last_error = format('destination \"%s\" is not configured', e.destination),"
	"    claimed_by = NULL, claim_until = NULL"
	"  WHERE e.status = 'NEW'"
	"    AND e.destination NOT IN (SELECT jsonb_array_elements_text($1::jsonb))"
	"    AND e.next_attempt_at <= now() - $2::integer * interval '1 second'"
	"    AND (e.claim_until IS NULL OR e.claim_until < now())"
	"    AND NOT EXISTS (SELECT 1 FROM outbox.relay_instances r"
	"                     WHERE r.heartbeat_at > now() - $3::integer * interval '1 second'"
	"                       AND r.role IN ('relay', 'all')"
	"                       AND r.destinations ? e.destination)"
	"  RETURNING e.event_id, e.job_id, e.redrive_generation, e.destination, e.last_error),"
	" j AS ("
	"  UPDATE outbox.jobs SET status = 'DEAD', dead_reason = 'UNROUTABLE',"
	"    last_error = format('outbox event %s is dead (UNKNOWN_DESTINATION): %s',"
	"                        d.event_id, d.last_error),"
	"    updated_at = now(), finished_at = now()"
	"   FROM d"
	"  WHERE jobs.job_id = d.job_id AND jobs.status = 'PENDING'"
	"    AND jobs.redrive_generation = d.redrive_generation"
	"  RETURNING jobs.job_id)"
	" SELECT d.event_id, d.destination FROM d ORDER BY 1";

/*
 * Runs sql as the prepared statement name, preparing it on conn the first
 * time (SQLSTATE 26000: no such prepared statement; the relay's statements
 * run outside transactions, so the failed attempt aborts nothing).  The
 * claim and the mark run several times a second per lane: parsing and
 * planning them once per connection matters.  Same result as db_query().
 */
static PGresult *query_prepared(PGconn *conn, const char *name, const char *sql, int nparams,
                                const char *const *params, char *err, size_t errlen)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		double t0 = metrics_now_seconds();
		PGresult *res = PQexecPrepared(conn, name, nparams, params, NULL, NULL, 0);
		ExecStatusType st = PQresultStatus(res);
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

		db_traffic_note(1);
		metrics_observe_keyed(METRIC_DB_STATEMENT_SECONDS, name, metrics_now_seconds() - t0);
		if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
			return res;
		if (attempt > 0 || state == NULL || strcmp(state, "26000") != 0) {
			db_error(conn, res, err, errlen);
			PQclear(res);
			return NULL;
		}
		PQclear(res);
		res = PQprepare(conn, name, sql, nparams, NULL);
		db_traffic_note(0);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			db_error(conn, res, err, errlen);
			PQclear(res);
			return NULL;
		}
		PQclear(res);
	}
	return NULL;
}

static int claim_fill(struct outbox_claim *out, char *err, size_t errlen)
{
	int rows = PQntuples(out->res);

	if (rows == 0)
		return 0;
	out->events = calloc((size_t)rows, sizeof(*out->events));
	if (out->events == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < rows; i++) {
		struct outbox_claimed_event *e = &out->events[i];
		e->event_id = PQgetvalue(out->res, i, 0);
		e->job_id = PQgetvalue(out->res, i, 1);
		e->body = PQgetvalue(out->res, i, 2);
		e->body_len = (size_t)PQgetlength(out->res, i, 2);
		e->attempts = (int)strtol(PQgetvalue(out->res, i, 3), NULL, 10);
		e->traceparent = PQgetisnull(out->res, i, 4) ? NULL : PQgetvalue(out->res, i, 4);
	}
	out->n = (size_t)rows;
	return 0;
}

int outbox_store_claim(PGconn *conn, const char *destination, const char *token,
                       int limit, int lease_seconds, struct outbox_claim *out,
                       char *err, size_t errlen)
{
	char limit_s[16], lease_s[16];
	const char *params[4] = {destination, token, limit_s, lease_s};

	memset(out, 0, sizeof(*out));
	snprintf(limit_s, sizeof(limit_s), "%d", limit);
	snprintf(lease_s, sizeof(lease_s), "%d", lease_seconds);
	out->res = query_prepared(conn, "outbox_store_claim", claim_sql, 4, params, err, errlen);
	if (out->res == NULL)
		return -1;
	return claim_fill(out, err, errlen);
}

void outbox_store_claim_free(struct outbox_claim *c)
{
	if (c == NULL)
		return;
	free(c->events);
	PQclear(c->res);
	memset(c, 0, sizeof(*c));
}

static const char *outcome_name(enum outbox_outcome o)
{
	switch (o) {
	case OUTBOX_OUTCOME_PUBLISHED:
		return "PUBLISHED";
	case OUTBOX_OUTCOME_RETRY:
		return "RETRY";
	case OUTBOX_OUTCOME_DEAD:
		return "DEAD";
	}
	return "RETRY";
}

/* Compact JSON text of arr (consumed, may be NULL); caller frees with
 * free(); NULL when out of memory. */
static char *json_text(json_t *arr)
{
	char *text = arr != NULL ? json_dumps(arr, JSON_COMPACT) : NULL;

	json_decref(arr);
	return text;
}

/* jsonb text of the marks; caller frees with free(); NULL when out of memory. */
static char *marks_json(const struct outbox_mark *marks, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr != NULL && i < n; i++) {
		const struct outbox_mark *m = &marks[i];
		json_t *o = json_pack("{s:s, s:s, s:s?, s:s?, s:s?}", "event_id", m->event_id,
		                      "outcome", outcome_name(m->outcome),
		                      "message_id", m->message_id, "error", m->error,
		                      "dead_reason", m->dead_reason);
		if (o == NULL || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return json_text(arr);
}

int outbox_store_mark(PGconn *conn, const char *token, const struct outbox_mark *marks,
                      size_t n, int retry_base_seconds, int retry_max_seconds,
                      struct outbox_mark_stats *stats, char *err, size_t errlen)
{
	char base_s[16], max_s[16];
	char *json = NULL;
	PGresult *res = NULL;
	int rc = -1;

	memset(stats, 0, sizeof(*stats));
	if (n == 0)
		return 0;
	json = marks_json(marks, n);
	if (json == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(base_s, sizeof(base_s), "%d", retry_base_seconds);
	snprintf(max_s, sizeof(max_s), "%d", retry_max_seconds);
	const char *params[4] = {token, json, base_s, max_s};
	res = query_prepared(conn, "outbox_store_mark", mark_sql, 4, params, err, errlen);
	if (res == NULL)
		goto out;
	stats->applied = (size_t)strtoul(PQgetvalue(res, 0, 0), NULL, 10);
	stats->jobs_dead = (size_t)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
	rc = 0;
out:
	PQclear(res);
	free(json);
	return rc;
}

static char *names_json(const char *const *known, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr != NULL && i < n; i++) {
		if (json_array_append_new(arr, json_string(known[i])) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return json_text(arr);
}

int outbox_store_sweep_unknown(PGconn *conn, const char *const *known, size_t n,
                               int grace_seconds, outbox_swept_fn on_dead, void *arg,
                               size_t *count, char *err, size_t errlen)
{
	char grace_s[16], fresh_s[16];
	char *json = names_json(known, n);
	PGresult *res = NULL;
	int rc = -1;

	*count = 0;
	if (json == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(grace_s, sizeof(grace_s), "%d", grace_seconds);
	snprintf(fresh_s, sizeof(fresh_s), "%d", OUTBOX_RELAY_HEARTBEAT_FRESH_SECONDS);
	const char *params[3] = {json, grace_s, fresh_s};
	res = db_query(conn, sweep_sql, 3, params, err, errlen);
	if (res == NULL)
		goto out;
	*count = (size_t)PQntuples(res);
	for (size_t i = 0; on_dead != NULL && i < *count; i++)
		on_dead(arg, PQgetvalue(res, (int)i, 0), PQgetvalue(res, (int)i, 1));
	rc = 0;
out:
	PQclear(res);
	free(json);
	return rc;
}
