/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/ledger.c: the job state machine of docs/schema.md, one prepared statement
 * per transition (see ledger.h and docs/consumer.md).
 */
#include "consumer/ledger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/metrics.h"
#include "consumer/liveness.h"
#include "db/db.h"
#include "db/traffic.h"

/* The binding every transition out of CLAIMED carries ($1..$5). */
#define CLAIM_BINDING                                                        \
	" WHERE job_id = $1 AND claimed_by = $2 AND status = 'CLAIMED'"          \
	"   AND attempt_count = $3::integer AND redrive_generation = $4::integer" \
	"   AND window_generation IS NOT DISTINCT FROM $5::integer"

/* Not claimable by anyone else right now: due PENDING or an expired lease. */
#define CLAIMABLE                                                   \
	" (status = 'PENDING' AND next_attempt_at <= now()"             \
	"  OR status = 'CLAIMED' AND lease_until < now())"

/* The job's last handler run started and its process is gone: CLAIMED,
 * started_by set, and nobody holds that key's liveness lock
 * (consumer/liveness.h).  Old values when used in an UPDATE's SET. */
#define RUN_CRASHED                                                              \
	" (status = 'CLAIMED' AND started_by IS NOT NULL AND NOT EXISTS ("         \
	"   SELECT 1 FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory'"     \
	"      AND l.classid = " LIVENESS_LOCK_SPACE_SQL "::oid"                   \
	"      AND l.objid = started_by::oid AND l.objsubid = 2 AND l.granted"     \
	"      AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d"       \
	"                         WHERE d.datname = current_database())))"

/* Every claim counts a crashed last run (RUN_CRASHED). */
#define COUNT_CRASH " crash_count = crash_count + CASE WHEN" RUN_CRASHED " THEN 1 ELSE 0 END,"

/* A price job's window has another generation than the job's; the window
 * row is share-locked so that a correction waits for the decision. */
#define WINDOW_MOVED                                                           \
	" NOT EXISTS (SELECT 1 FROM outbox.price_windows w"                         \
	"  WHERE w.symbol = jobs.window_symbol AND w.window_start = jobs.window_start" \
	"    AND w.generation = jobs.window_generation FOR SHARE)"

/*
 * Re-arming a job's outbox event: NEW again, same event_id, due at the
 * job's next_attempt_at (j is the job's row), so the relay publishes a
 * fresh message (receive count 1) when the job is due.  A NEW event under
 * a live relay claim is being sent right now and is left alone: its
 * message is the job's wake-up, and the relay's mark would turn the event
 * PUBLISHED over the re-arm.
 */
#define REARM_EVENT_SET(why)                                                \
	" status = 'NEW', published_at = NULL, next_attempt_at = j.next_attempt_at," \
	" claimed_by = NULL, claim_until = NULL, last_error = " why
#define REARMABLE                                                           \
	" (e.status = 'PUBLISHED' OR e.status = 'NEW'"                          \
	"  AND (e.claim_until IS NULL OR e.claim_until < now()))"

enum stmt {
	ST_LOOKUP,
	ST_WINDOW_LOCK,
	ST_CLAIM,
	ST_MARK_STALE,
	ST_MARK_STALE_CLAIMED,
	ST_EXTEND,
	ST_SUCCEED,
	ST_RETRY,
	ST_FAIL,
	ST_RELEASE,
	ST_MARK_DLQ,
	ST_REARM_DLQ,
	ST_RECORD_DLQ,
	ST_REDRIVE_LOCK,
	ST_REDRIVE_RESET,
	ST_REDRIVE_EVENT,
	ST_CLAIM_BATCH,
	ST_LOCK_CLAIMS,
	ST_SUCCEED_BATCH,
	ST_REARM_EVENT,
	ST_PROBE,
	ST_MARK_STARTED,
	ST_COUNT
};

struct stmt_def {
	const char *name;
	int nparams;
	const char *sql;
};

static const struct stmt_def stmts[ST_COUNT] = {
	[ST_LOOKUP] = {"ledger_lookup", 1,
		"SELECT job_id, job_type, destination, status, redrive_generation, attempt_count,"
		"       window_symbol, window_start::text, coalesce(window_generation, 0),"
		"       extract(epoch FROM next_attempt_at - now())::float8,"
		"       (status = 'CLAIMED' AND lease_until > now()),"
		"       CASE WHEN status = 'CLAIMED'"
		"            THEN greatest(extract(epoch FROM lease_until - now()), 0) ELSE 0"
		"       END::float8"
		"  FROM outbox.jobs WHERE job_id = $1"},
	[ST_WINDOW_LOCK] = {"ledger_price_window_lock", 2,
		"SELECT generation FROM outbox.price_windows"
		" WHERE symbol = $1 AND window_start = $2::timestamptz FOR SHARE"},
	/* The single claims, both with the same parameters: bound to the
	 * queue the message came from ($5: its destination) and to the
	 * message's job type and window generation ($6, $7; NULL for no
	 * window); the handler runs right after, so the run is recorded as
	 * started ($8 started_by) with the claim itself, except for a suspect
	 * (it crashed a process before, or is found crashed now), whose run
	 * ledger_mark_started() records once it holds the process's suspect
	 * turn (consumer/suspect_turn.h); a crashed last run is counted
	 * (COUNT_CRASH). */
	[ST_CLAIM] = {"ledger_claim", 8,
		"UPDATE outbox.jobs SET status = 'CLAIMED', claimed_by = $3,"
		"       attempt_count = attempt_count + 1," COUNT_CRASH
		"       started_by = CASE WHEN crash_count > 0 OR" RUN_CRASHED " THEN NULL"
		"                         ELSE $8::integer END,"
		"       lease_until = now() + make_interval(secs => $4::float8), updated_at = now()"
		" WHERE job_id = $1 AND redrive_generation = $2::integer"
		"   AND destination = $5 AND job_type = $6"
		"   AND window_generation IS NOT DISTINCT FROM $7::integer AND" CLAIMABLE
		" RETURNING attempt_count, window_symbol IS NOT NULL, coalesce(window_generation, 0),"
		"           payload::text, crash_count, extract(epoch FROM next_attempt_at)::float8,"
		"           started_by IS NOT NULL"},
	[ST_MARK_STALE] = {"ledger_mark_stale", 2,
		"UPDATE outbox.jobs SET status = 'DEAD', dead_reason = 'STALE',"
		"       last_error = 'the price window was corrected: a newer generation exists',"
		"       lease_until = NULL, finished_at = now(), updated_at = now()"
		" WHERE job_id = $1 AND redrive_generation = $2::integer AND" CLAIMABLE},
	[ST_MARK_STALE_CLAIMED] = {"ledger_mark_stale_claimed", 5,
		"UPDATE outbox.jobs SET status = 'DEAD', dead_reason = 'STALE',"
		"       last_error = 'the price window was corrected while the job ran:"
		" a newer generation exists',"
		"       lease_until = NULL, finished_at = now(), updated_at = now()" CLAIM_BINDING
		"   AND window_symbol IS NOT NULL AND " WINDOW_MOVED},
	[ST_EXTEND] = {"ledger_extend_lease", 6,
		"UPDATE outbox.jobs SET lease_until = now() + make_interval(secs => $6::float8),"
		"       updated_at = now()" CLAIM_BINDING},
	[ST_SUCCEED] = {"ledger_succeed", 5,
		"UPDATE outbox.jobs SET status = 'SUCCEEDED', lease_until = NULL,"
		"       finished_at = now(), updated_at = now()" CLAIM_BINDING
		"   AND (window_symbol IS NULL OR EXISTS ("
		"        SELECT 1 FROM outbox.price_windows w"
		"         WHERE w.symbol = jobs.window_symbol AND w.window_start = jobs.window_start"
		"           AND w.generation = jobs.window_generation FOR SHARE))"},
	/* The retry and its wake-up in one statement: the job's outbox event
	 * of that generation is re-armed (REARM_EVENT_SET, why $8), due when the job
	 * is, unless a relay is publishing it right now (then its message is
	 * the wake-up).  Returns (jobs changed, events re-armed). */
	[ST_RETRY] = {"ledger_retry", 8,
		"WITH j AS ("
		"  UPDATE outbox.jobs SET status = 'PENDING', claimed_by = NULL, lease_until = NULL,"
		"         next_attempt_at = now() + make_interval(secs => $6::float8),"
		"         last_error = $7, updated_at = now()" CLAIM_BINDING
		"  RETURNING job_id, redrive_generation, next_attempt_at),"
		" e AS ("
		"  UPDATE outbox.outbox_events e SET" REARM_EVENT_SET("$8")
		"    FROM j WHERE e.job_id = j.job_id AND e.redrive_generation = j.redrive_generation"
		"     AND" REARMABLE
		"  RETURNING 1)"
		" SELECT (SELECT count(*) FROM j), (SELECT count(*) FROM e)"},
	[ST_FAIL] = {"ledger_fail", 7,
		"UPDATE outbox.jobs SET status = 'DEAD',"
		"       dead_reason = CASE WHEN window_symbol IS NOT NULL AND " WINDOW_MOVED
		"                          THEN 'STALE' ELSE $6 END, last_error = $7,"
		"       lease_until = NULL, finished_at = now(), updated_at = now()" CLAIM_BINDING},
	[ST_RELEASE] = {"ledger_release", 5,
		"UPDATE outbox.jobs SET status = 'PENDING', claimed_by = NULL, lease_until = NULL,"
		"       next_attempt_at = now(), last_error = 'claim released at shutdown',"
		"       updated_at = now()" CLAIM_BINDING},
	/* Bound to the DLQ's destination ($3) and to the message's job type
	 * and window generation ($4, $5): a copy on another destination's DLQ
	 * never kills the job. */
	[ST_MARK_DLQ] = {"ledger_mark_dlq", 5,
		"UPDATE outbox.jobs SET status = 'DEAD', dead_reason = 'DLQ',"
		"       last_error = 'the message reached the dead-letter queue',"
		"       lease_until = NULL, finished_at = now(), updated_at = now()"
		" WHERE job_id = $1 AND redrive_generation = $2::integer"
		"   AND destination = $3 AND job_type = $4"
		"   AND window_generation IS NOT DISTINCT FROM $5::integer"
		"   AND (status = 'PENDING' OR status = 'CLAIMED' AND lease_until < now())"},
	/* A DLQ arrival PostgreSQL can still decide: a job of the binding,
	 * generation $2, non-terminal, without a live lease, that has an
	 * outbox event of that generation and fewer than $6 arrivals counts
	 * one more, and its event is re-armed (a fresh message, due when the
	 * job is), unless a relay is publishing it right now (that message is
	 * the wake-up).  The job's status is left as it is: a run whose
	 * process died stays CLAIMED, so the next claim counts its crash.
	 * Returns (jobs counted, events re-armed). */
	[ST_REARM_DLQ] = {"ledger_rearm_dlq", 6,
		"WITH j AS ("
		"  UPDATE outbox.jobs SET dlq_arrivals = dlq_arrivals + 1, updated_at = now()"
		"   WHERE job_id = $1 AND redrive_generation = $2::integer"
		"     AND destination = $3 AND job_type = $4"
		"     AND window_generation IS NOT DISTINCT FROM $5::integer"
		"     AND (status = 'PENDING' OR status = 'CLAIMED' AND lease_until < now())"
		"     AND dlq_arrivals < $6::integer"
		"     AND EXISTS (SELECT 1 FROM outbox.outbox_events x"
		"                  WHERE x.job_id = $1 AND x.redrive_generation = $2::integer)"
		"  RETURNING job_id, redrive_generation, next_attempt_at),"
		" e AS ("
		"  UPDATE outbox.outbox_events e SET"
		REARM_EVENT_SET("'the message reached the dead-letter queue; a fresh one is sent'")
		"    FROM j WHERE e.job_id = j.job_id AND e.redrive_generation = j.redrive_generation"
		"     AND" REARMABLE
		"  RETURNING 1)"
		" SELECT (SELECT count(*) FROM j), (SELECT count(*) FROM e)"},
	[ST_RECORD_DLQ] = {"ledger_record_dlq", 8,
		"INSERT INTO outbox.dlq_messages (destination, sqs_message_id, job_id, event_id,"
		"                                 body, attributes, receive_count, outcome)"
		" VALUES ($1, $2, $3, $4, $5, coalesce($6::jsonb, '{}'), $7::integer, $8)"},
	[ST_REDRIVE_LOCK] = {"ledger_redrive_lock", 1,
		"SELECT job_type, destination, (status = 'CLAIMED' AND lease_until > now()),"
		"       window_generation IS NOT NULL, coalesce(window_generation, 0)"
		"  FROM outbox.jobs WHERE job_id = $1 FOR UPDATE"},
	[ST_REDRIVE_RESET] = {"ledger_redrive_reset", 1,
		"UPDATE outbox.jobs SET redrive_generation = redrive_generation + 1,"
		"       status = 'PENDING', attempt_count = 0, next_attempt_at = now(),"
		"       dead_reason = NULL, claimed_by = NULL, lease_until = NULL,"
		"       started_by = NULL, crash_count = 0, dlq_arrivals = 0,"
		"       finished_at = NULL, updated_at = now()"
		" WHERE job_id = $1 RETURNING redrive_generation"},
	/* The new event keeps the trace the producer started: the traceparent
	 * of the job's newest earlier event that has one (events pruned by
	 * [retention] events_seconds took theirs with them). */
	[ST_REDRIVE_EVENT] = {"ledger_redrive_event", 6,
		"INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination,"
		"                                  redrive_generation, body, traceparent)"
		" SELECT $1, $2, $3, $4, $5::integer, $6,"
		"        (SELECT e.traceparent FROM outbox.outbox_events e"
		"          WHERE e.job_id = $3 AND e.redrive_generation < $5::integer"
		"            AND e.traceparent IS NOT NULL"
		"          ORDER BY e.redrive_generation DESC LIMIT 1)"},
	/* The pipeline's claim of a whole receive batch: each row keeps its own
	 * generation and job type; rows another transaction holds locked are
	 * skipped (no waits, no lock-order deadlock between workers): the caller
	 * applies the rules to every message it did not win. */
	/* Every run is recorded as started ($7) with the claim, at no extra
	 * statement, or only the run of job $8 when it is not NULL, except
	 * for a job that crashed a process before (or is found crashed now):
	 * a run not recorded here is recorded by ledger_mark_started() right
	 * before it runs, so that it counts only its own crashes (see
	 * consumer/batch.c, run_all). */
	/* The plan must look the batch's rows up by job_id, whatever the
	 * statistics say: each row is locked in a LATERAL subquery of its own
	 * (a subquery with a locking clause is never flattened into the join),
	 * and the row filter is tested as "(...) IS TRUE", which no index can
	 * answer (nor prove a partial index's predicate); the update then
	 * finds the locked rows by "job_id = ANY (ARRAY(...))", an index scan
	 * of the primary key whatever the estimate.  With a plain join and
	 * filter the planner scans the destination's whole due backlog (an
	 * index of the destination, or the table) and joins it to the batch
	 * whenever the statistics predate the backlog (they estimate a few
	 * pending rows), custom and generic plans alike, at a
	 * cost that grows with the backlog (docs/performance.md, "The claim's
	 * plan"). */
	[ST_CLAIM_BATCH] = {"ledger_claim_batch", 8,
		"WITH c AS ("
		"  SELECT l.job_id"
		"    FROM unnest($1::text[], $2::integer[], $3::text[]) AS m(job_id, gen, job_type)"
		"   CROSS JOIN LATERAL ("
		"     SELECT j.job_id FROM outbox.jobs j"
		"      WHERE j.job_id = m.job_id AND (j.redrive_generation = m.gen"
		"        AND j.job_type = m.job_type AND j.destination = $4"
		"        AND j.window_symbol IS NULL AND" CLAIMABLE ") IS TRUE"
		"      FOR UPDATE OF j SKIP LOCKED) l)"
		" UPDATE outbox.jobs j SET status = 'CLAIMED', claimed_by = $5,"
		"       attempt_count = j.attempt_count + 1," COUNT_CRASH
		"       started_by = CASE WHEN j.crash_count > 0 OR" RUN_CRASHED " THEN NULL"
		"                         WHEN $8::text IS NULL OR j.job_id = $8 THEN $7::integer"
		"                         ELSE NULL END,"
		"       lease_until = now() + make_interval(secs => $6::float8), updated_at = now()"
		" WHERE j.job_id = ANY (ARRAY(SELECT job_id FROM c)) AND (" CLAIMABLE ") IS TRUE"
		" RETURNING j.job_id, j.attempt_count, j.payload::text, j.crash_count,"
		"           j.started_by IS NOT NULL, extract(epoch FROM j.next_attempt_at)::float8"},
	/* The completion transaction's first statement: lock the rows whose
	 * claims ($1 job ids, $2 attempt counts, $3 redrive generations, by
	 * $4, no window) still hold, in job_id order. */
	[ST_LOCK_CLAIMS] = {"ledger_lock_claims", 4,
		"SELECT j.job_id FROM outbox.jobs j"
		"  JOIN unnest($1::text[], $2::integer[], $3::integer[]) AS c(job_id, attempt, gen)"
		"    ON j.job_id = c.job_id"
		" WHERE j.claimed_by = $4 AND j.status = 'CLAIMED' AND j.attempt_count = c.attempt"
		"   AND j.redrive_generation = c.gen AND j.window_generation IS NULL"
		" ORDER BY j.job_id FOR UPDATE OF j"},
	/* CLAIMED -> SUCCEEDED for many non-price claims, each row bound;
	 * returns the job ids of the rows changed. */
	[ST_SUCCEED_BATCH] = {"ledger_succeed_batch", 4,
		"UPDATE outbox.jobs j SET status = 'SUCCEEDED', lease_until = NULL,"
		"       finished_at = now(), updated_at = now()"
		"  FROM unnest($1::text[], $2::integer[], $3::integer[]) AS c(job_id, attempt, gen)"
		" WHERE j.job_id = c.job_id AND j.claimed_by = $4 AND j.status = 'CLAIMED'"
		"   AND j.attempt_count = c.attempt AND j.redrive_generation = c.gen"
		"   AND j.window_generation IS NULL"
		" RETURNING j.job_id"},
	/* Only the event of a job still PENDING in that generation: a DEAD
	 * event made the job UNROUTABLE, and a job claimed again meanwhile has
	 * a message. */
	[ST_REARM_EVENT] = {"ledger_rearm_event", 3,
		"UPDATE outbox.outbox_events e SET" REARM_EVENT_SET("$3")
		"  FROM outbox.jobs j"
		" WHERE e.job_id = $1 AND e.redrive_generation = $2::integer AND" REARMABLE
		"   AND j.job_id = e.job_id"
		"   AND j.redrive_generation = e.redrive_generation AND j.status = 'PENDING'"},
	/* Fails, without touching a row, exactly when the session may not run
	 * the claim and the re-arm: privileges, a read-only session (a standby
	 * after a failover, default_transaction_read_only), a table lock held
	 * past lock_timeout. */
	[ST_PROBE] = {"ledger_probe", 0,
		"WITH e AS (UPDATE outbox.outbox_events SET status = status WHERE false RETURNING 1)"
		" UPDATE outbox.jobs SET status = status WHERE false"},
	/* The handler run of a claim starts: recorded, and the lease renewed;
	 * the runs before it in the batch ($8, same claimed_by) have returned,
	 * so they no longer count as running. */
	[ST_MARK_STARTED] = {"ledger_mark_started", 8,
		"WITH prev AS ("
		"  UPDATE outbox.jobs SET started_by = NULL"
		"   WHERE job_id = ANY ($8::text[]) AND claimed_by = $2 AND status = 'CLAIMED')"
		" UPDATE outbox.jobs SET started_by = $6::integer,"
		"       lease_until = now() + make_interval(secs => $7::float8),"
		"       updated_at = now()" CLAIM_BINDING},
};

int ledger_prepare(PGconn *conn, char *err, size_t errlen)
{
	for (int i = 0; i < ST_COUNT; i++) {
		PGresult *res = PQprepare(conn, stmts[i].name, stmts[i].sql, stmts[i].nparams, NULL);

		db_traffic_note(0);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			db_error(conn, res, err, errlen);
			PQclear(res);
			return -1;
		}
		PQclear(res);
	}
	return 0;
}

/* Runs a prepared statement; NULL with err on failure. */
static PGresult *run(PGconn *conn, enum stmt st, const char *const *params,
                     char *err, size_t errlen)
{
	double t0 = metrics_now_seconds();
	PGresult *res = PQexecPrepared(conn, stmts[st].name, stmts[st].nparams, params,
	                               NULL, NULL, 0);
	ExecStatusType s = PQresultStatus(res);

	db_traffic_note(1);
	metrics_observe_keyed(METRIC_DB_STATEMENT_SECONDS, stmts[st].name, metrics_now_seconds() - t0);
	if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK)
		return res;
	db_error(conn, res, err, errlen);
	PQclear(res);
	return NULL;
}

/* A CAS without RETURNING: 1 if a row changed, 0 if none, -1. */
static int run_cas(PGconn *conn, enum stmt st, const char *const *params,
                   char *err, size_t errlen)
{
	PGresult *res = run(conn, st, params, err, errlen);
	int rc;

	if (res == NULL)
		return -1;
	rc = strcmp(PQcmdTuples(res), "0") == 0 ? 0 : 1;
	PQclear(res);
	return rc;
}

static int to_int(const char *s)
{
	return (int)strtol(s, NULL, 10);
}

static void copy_field(char *dst, size_t dstlen, const char *src)
{
	snprintf(dst, dstlen, "%s", src != NULL ? src : "");
}

const char *ledger_status_name(enum ledger_status s)
{
	static const char *const names[] = {"PENDING", "CLAIMED", "SUCCEEDED", "DEAD"};

	return (unsigned)s < 4 ? names[s] : "UNKNOWN";
}

static enum ledger_status parse_status(const char *s)
{
	if (strcmp(s, "CLAIMED") == 0)
		return LEDGER_CLAIMED;
	if (strcmp(s, "SUCCEEDED") == 0)
		return LEDGER_SUCCEEDED;
	if (strcmp(s, "DEAD") == 0)
		return LEDGER_DEAD;
	return LEDGER_PENDING;
}

int ledger_job_lookup(PGconn *conn, const char *job_id, struct ledger_job *out,
                      char *err, size_t errlen)
{
	const char *params[1] = {job_id};
	PGresult *res = run(conn, ST_LOOKUP, params, err, errlen);
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1)
		goto out;
	copy_field(out->job_id, sizeof(out->job_id), PQgetvalue(res, 0, 0));
	copy_field(out->job_type, sizeof(out->job_type), PQgetvalue(res, 0, 1));
	copy_field(out->destination, sizeof(out->destination), PQgetvalue(res, 0, 2));
	out->status = parse_status(PQgetvalue(res, 0, 3));
	out->redrive_generation = to_int(PQgetvalue(res, 0, 4));
	out->attempt_count = to_int(PQgetvalue(res, 0, 5));
	out->has_price_window = !PQgetisnull(res, 0, 6);
	copy_field(out->window_symbol, sizeof(out->window_symbol), PQgetvalue(res, 0, 6));
	copy_field(out->window_start, sizeof(out->window_start), PQgetvalue(res, 0, 7));
	out->window_generation = to_int(PQgetvalue(res, 0, 8));
	out->due_in_seconds = strtod(PQgetvalue(res, 0, 9), NULL);
	out->lease_live = strcmp(PQgetvalue(res, 0, 10), "t") == 0;
	out->lease_remaining_seconds = strtod(PQgetvalue(res, 0, 11), NULL);
	rc = 1;
out:
	PQclear(res);
	return rc;
}

int ledger_price_window_lock(PGconn *conn, const char *symbol, const char *window_start,
                       int *generation, char *err, size_t errlen)
{
	const char *params[2] = {symbol, window_start};
	PGresult *res = run(conn, ST_WINDOW_LOCK, params, err, errlen);
	int rc = 0;

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 1) {
		*generation = to_int(PQgetvalue(res, 0, 0));
		rc = 1;
	}
	PQclear(res);
	return rc;
}

/* ST_CLAIM (destination, job_type, window generation:
 * $5, $6, $7, NULL without a window; started_by, the liveness key: $8). */
static int claim(PGconn *conn, enum stmt st, const char *job_id, int redrive_generation,
                 const char *claimed_by, int lease_seconds, const struct ledger_binding *b,
                 struct ledger_claim *out, char **payload, char *err, size_t errlen)
{
	char gen[16], lease[16], window[16], key[16];
	const char *params[8] = {job_id, gen, claimed_by, lease, b->destination, b->job_type,
	                         b->has_price_window ? window : NULL, key};
	PGresult *res;
	int rc = 0;

	*payload = NULL;
	memset(out, 0, sizeof(*out));
	snprintf(gen, sizeof(gen), "%d", redrive_generation);
	snprintf(lease, sizeof(lease), "%d", lease_seconds);
	snprintf(window, sizeof(window), "%d", b->window_generation);
	snprintf(key, sizeof(key), "%d", liveness_key());
	res = run(conn, st, params, err, errlen);
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1)
		goto out;
	*payload = strdup(PQgetvalue(res, 0, 3));
	if (*payload == NULL) {
		/* The claim is taken but unusable: its lease expires. */
		snprintf(err, errlen, "out of memory");
		rc = -1;
		goto out;
	}
	copy_field(out->job_id, sizeof(out->job_id), job_id);
	copy_field(out->claimed_by, sizeof(out->claimed_by), claimed_by);
	out->attempt_count = to_int(PQgetvalue(res, 0, 0));
	out->redrive_generation = redrive_generation;
	out->has_price_window = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	out->window_generation = to_int(PQgetvalue(res, 0, 2));
	out->crash_count = to_int(PQgetvalue(res, 0, 4));
	out->run_marked = strcmp(PQgetvalue(res, 0, 6), "t") == 0;
	out->due_epoch = strtod(PQgetvalue(res, 0, 5), NULL);
	rc = 1;
out:
	PQclear(res);
	return rc;
}

int ledger_claim(PGconn *conn, const char *job_id, int redrive_generation,
                 const struct ledger_binding *binding, const char *claimed_by,
                 int lease_seconds, struct ledger_claim *out, char **payload,
                 char *err, size_t errlen)
{
	return claim(conn, ST_CLAIM, job_id, redrive_generation, claimed_by, lease_seconds,
	             binding, out, payload, err, errlen);
}

int ledger_mark_stale(PGconn *conn, const char *job_id, int redrive_generation,
                      char *err, size_t errlen)
{
	char gen[16];
	const char *params[2] = {job_id, gen};

	snprintf(gen, sizeof(gen), "%d", redrive_generation);
	return run_cas(conn, ST_MARK_STALE, params, err, errlen);
}

/* The five bound values of a claim, as text. */
struct claim_text {
	char attempt[16];
	char gen[16];
	char window[16];
	char extra[16];
};

static void claim_params(const struct ledger_claim *c, struct claim_text *t,
                         const char *params[5])
{
	snprintf(t->attempt, sizeof(t->attempt), "%d", c->attempt_count);
	snprintf(t->gen, sizeof(t->gen), "%d", c->redrive_generation);
	snprintf(t->window, sizeof(t->window), "%d", c->window_generation);
	params[0] = c->job_id;
	params[1] = c->claimed_by;
	params[2] = t->attempt;
	params[3] = t->gen;
	params[4] = c->has_price_window ? t->window : NULL;
}

int ledger_extend_lease(PGconn *conn, const struct ledger_claim *claim, int lease_seconds,
                        char *err, size_t errlen)
{
	struct claim_text t;
	const char *params[6];

	claim_params(claim, &t, params);
	snprintf(t.extra, sizeof(t.extra), "%d", lease_seconds);
	params[5] = t.extra;
	return run_cas(conn, ST_EXTEND, params, err, errlen);
}

int ledger_succeed(PGconn *conn, const struct ledger_claim *claim, char *err, size_t errlen)
{
	struct claim_text t;
	const char *params[5];

	claim_params(claim, &t, params);
	return run_cas(conn, ST_SUCCEED, params, err, errlen);
}

int ledger_mark_stale_claimed(PGconn *conn, const struct ledger_claim *claim,
                              char *err, size_t errlen)
{
	struct claim_text t;
	const char *params[5];

	claim_params(claim, &t, params);
	return run_cas(conn, ST_MARK_STALE_CLAIMED, params, err, errlen);
}

int ledger_retry(PGconn *conn, const struct ledger_claim *claim, int delay_seconds,
                 const char *last_error, bool *rearmed, char *err, size_t errlen)
{
	struct claim_text t;
	const char *params[8];
	PGresult *res;
	int rc;

	*rearmed = false;
	claim_params(claim, &t, params);
	snprintf(t.extra, sizeof(t.extra), "%d", delay_seconds);
	params[5] = t.extra;
	params[6] = last_error;
	params[7] = "re-armed: the consumer finished the message of a retry; the relay"
	            " publishes a fresh one when the job is due";
	res = run(conn, ST_RETRY, params, err, errlen);
	if (res == NULL)
		return -1;
	rc = to_int(PQgetvalue(res, 0, 0)) > 0 ? 1 : 0;
	*rearmed = to_int(PQgetvalue(res, 0, 1)) > 0;
	PQclear(res);
	return rc;
}

int ledger_fail(PGconn *conn, const struct ledger_claim *claim, const char *dead_reason,
                const char *last_error, char *err, size_t errlen)
{
	struct claim_text t;
	const char *params[7];

	claim_params(claim, &t, params);
	params[5] = dead_reason;
	params[6] = last_error;
	return run_cas(conn, ST_FAIL, params, err, errlen);
}

int ledger_release(PGconn *conn, const struct ledger_claim *claim, char *err, size_t errlen)
{
	struct claim_text t;
	const char *params[5];

	claim_params(claim, &t, params);
	return run_cas(conn, ST_RELEASE, params, err, errlen);
}

int ledger_rearm_event(PGconn *conn, const char *job_id, int redrive_generation,
                       const char *why, char *err, size_t errlen)
{
	char gen[16];
	const char *params[3] = {job_id, gen, why};

	snprintf(gen, sizeof(gen), "%d", redrive_generation);
	return run_cas(conn, ST_REARM_EVENT, params, err, errlen);
}

int ledger_mark_dlq(PGconn *conn, const char *job_id, int redrive_generation,
                    const struct ledger_binding *binding, char *err, size_t errlen)
{
	char gen[16], window[16];
	const char *params[5] = {job_id, gen, binding->destination, binding->job_type,
	                         binding->has_price_window ? window : NULL};

	snprintf(gen, sizeof(gen), "%d", redrive_generation);
	snprintf(window, sizeof(window), "%d", binding->window_generation);
	return run_cas(conn, ST_MARK_DLQ, params, err, errlen);
}

int ledger_rearm_dlq(PGconn *conn, const char *job_id, int redrive_generation,
                     const struct ledger_binding *binding, int max_arrivals,
                     char *err, size_t errlen)
{
	char gen[16], window[16], max[16];
	const char *params[6] = {job_id, gen, binding->destination, binding->job_type,
	                         binding->has_price_window ? window : NULL, max};
	PGresult *res;
	int rc;

	snprintf(gen, sizeof(gen), "%d", redrive_generation);
	snprintf(window, sizeof(window), "%d", binding->window_generation);
	snprintf(max, sizeof(max), "%d", max_arrivals);
	res = run(conn, ST_REARM_DLQ, params, err, errlen);
	if (res == NULL)
		return -1;
	rc = to_int(PQgetvalue(res, 0, 0)) > 0 ? 1 : 0;
	PQclear(res);
	return rc;
}

int ledger_probe(PGconn *conn, char *err, size_t errlen)
{
	return run_cas(conn, ST_PROBE, NULL, err, errlen) < 0 ? -1 : 0;
}

int ledger_record_dlq(PGconn *conn, const struct ledger_dlq_record *rec,
                      char *err, size_t errlen)
{
	char count[16];
	const char *params[8] = {rec->destination, rec->sqs_message_id, rec->job_id,
	                         rec->event_id, rec->body, rec->attributes_json,
	                         rec->receive_count >= 0 ? count : NULL, rec->outcome};

	snprintf(count, sizeof(count), "%d", rec->receive_count);
	return run_cas(conn, ST_RECORD_DLQ, params, err, errlen) < 0 ? -1 : 0;
}

char *ledger_message_body(const char *event_id, const char *job_id, const char *job_type,
                          const char *destination, int redrive_generation,
                          bool has_price_window, int window_generation)
{
	json_t *body = json_pack("{s:s, s:s, s:s, s:s, s:i}", "event_id", event_id,
	                         "job_id", job_id, "job_type", job_type,
	                         "destination", destination,
	                         "redrive_generation", redrive_generation);
	char *text = NULL;

	if (body == NULL)
		return NULL;
	if (has_price_window &&
	    json_object_set_new(body, "window_generation", json_integer(window_generation)) < 0)
		goto out;
	text = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
	json_decref(body);
	return text;
}

/* Inserts the outbox event of generation gen for a redriven job. */
static int insert_redrive_event(PGconn *conn, const char *job_id, PGresult *job, int gen,
                                char *event_id, size_t event_id_len,
                                char *err, size_t errlen)
{
	const char *type = PQgetvalue(job, 0, 0);
	const char *dest = PQgetvalue(job, 0, 1);
	bool has_price_window = strcmp(PQgetvalue(job, 0, 3), "t") == 0;
	char gentext[16];
	char *body;
	int n, rc;

	n = snprintf(event_id, event_id_len, "%s:%s:%d", type, job_id, gen);
	if (n < 0 || (size_t)n >= event_id_len) {
		snprintf(err, errlen, "event id too long for job type \"%s\"", type);
		return -1;
	}
	body = ledger_message_body(event_id, job_id, type, dest, gen, has_price_window,
	                           to_int(PQgetvalue(job, 0, 4)));
	if (body == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(gentext, sizeof(gentext), "%d", gen);
	const char *params[6] = {event_id, type, job_id, dest, gentext, body};
	rc = run_cas(conn, ST_REDRIVE_EVENT, params, err, errlen);
	free(body);
	return rc < 0 ? -1 : 0;
}

int ledger_redrive(PGconn *conn, const char *job_id, int *new_generation,
                   char *event_id, size_t event_id_len, char *err, size_t errlen)
{
	const char *params[1] = {job_id};
	PGresult *job = run(conn, ST_REDRIVE_LOCK, params, err, errlen);
	PGresult *reset = NULL;
	int rc = -1;

	if (job == NULL)
		return -1;
	if (PQntuples(job) != 1) {
		rc = 0;
		goto out;
	}
	if (strcmp(PQgetvalue(job, 0, 2), "t") == 0) {
		rc = -2;
		goto out;
	}
	reset = run(conn, ST_REDRIVE_RESET, params, err, errlen);
	if (reset == NULL || PQntuples(reset) != 1)
		goto out;
	*new_generation = to_int(PQgetvalue(reset, 0, 0));
	if (insert_redrive_event(conn, job_id, job, *new_generation, event_id, event_id_len,
	                         err, errlen) < 0)
		goto out;
	rc = 1;
out:
	PQclear(reset);
	PQclear(job);
	return rc;
}

/* Appends s to the array literal being built in buf (quoted when quote). */
static void array_add(char **p, const char *s, bool quote, bool first)
{
	if (!first)
		*(*p)++ = ',';
	if (quote)
		*(*p)++ = '"';
	for (; *s != '\0'; s++) {
		if (quote && (*s == '"' || *s == '\\'))
			*(*p)++ = '\\';
		*(*p)++ = *s;
	}
	if (quote)
		*(*p)++ = '"';
}

/*
 * A PostgreSQL array literal of n strings (quote: each quoted and escaped,
 * for text[]; else as they are, for integer[]).  Caller frees; NULL when
 * out of memory.
 */
static char *array_literal(const char *const *v, size_t n, bool quote)
{
	size_t len = 3;
	char *buf, *p;

	for (size_t i = 0; i < n; i++)
		len += 2 * strlen(v[i]) + 3;
	buf = malloc(len);
	if (buf == NULL)
		return NULL;
	p = buf;
	*p++ = '{';
	for (size_t i = 0; i < n; i++)
		array_add(&p, v[i], quote, i == 0);
	*p++ = '}';
	*p = '\0';
	return buf;
}

/* Integers as text for array_literal(); nums holds n slots of 16 bytes. */
static void int_texts(const int *v, size_t n, char (*nums)[16], const char **out)
{
	for (size_t i = 0; i < n; i++) {
		snprintf(nums[i], sizeof(nums[i]), "%d", v[i]);
		out[i] = nums[i];
	}
}

/* Finds job_id among the n requests; n if absent. */
static size_t find_req(const struct ledger_batch_req *reqs, size_t n, const char *job_id)
{
	size_t i = 0;

	while (i < n && strcmp(reqs[i].job_id, job_id) != 0)
		i++;
	return i;
}

/* Fills claims/payloads/won from the claim statement's rows; -1 on OOM. */
static int claimed_rows(PGresult *res, const struct ledger_batch_req *reqs, size_t n,
                        const char *claimed_by, struct ledger_claim *claims,
                        char **payloads, bool *won, char *err, size_t errlen)
{
	int got = 0;

	for (int r = 0; r < PQntuples(res); r++) {
		size_t i = find_req(reqs, n, PQgetvalue(res, r, 0));

		if (i == n || won[i])
			continue;
		payloads[i] = strdup(PQgetvalue(res, r, 2));
		if (payloads[i] == NULL) {
			/* Claims taken but unusable: their leases expire. */
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memset(&claims[i], 0, sizeof(claims[i]));
		copy_field(claims[i].job_id, sizeof(claims[i].job_id), reqs[i].job_id);
		copy_field(claims[i].claimed_by, sizeof(claims[i].claimed_by), claimed_by);
		claims[i].attempt_count = to_int(PQgetvalue(res, r, 1));
		claims[i].redrive_generation = reqs[i].redrive_generation;
		claims[i].crash_count = to_int(PQgetvalue(res, r, 3));
		claims[i].run_marked = strcmp(PQgetvalue(res, r, 4), "t") == 0;
		claims[i].due_epoch = strtod(PQgetvalue(res, r, 5), NULL);
		won[i] = true;
		got++;
	}
	return got;
}

int ledger_claim_batch(PGconn *conn, const struct ledger_batch_req *reqs, size_t n,
                       const char *destination, const char *claimed_by, int lease_seconds,
                       const char *mark_only, struct ledger_claim *claims, char **payloads,
                       bool *won, char *err, size_t errlen)
{
	const char *ids[LEDGER_BATCH_MAX], *types[LEDGER_BATCH_MAX], *gens[LEDGER_BATCH_MAX];
	char nums[LEDGER_BATCH_MAX][16], lease[16], key[16];
	int genv[LEDGER_BATCH_MAX];
	char *a_ids = NULL, *a_gens = NULL, *a_types = NULL;
	PGresult *res = NULL;
	int rc = -1;

	for (size_t i = 0; i < n && i < LEDGER_BATCH_MAX; i++) {
		ids[i] = reqs[i].job_id;
		types[i] = reqs[i].job_type;
		genv[i] = reqs[i].redrive_generation;
		won[i] = false;
		payloads[i] = NULL;
	}
	if (n > LEDGER_BATCH_MAX) {
		snprintf(err, errlen, "too many messages in one claim");
		return -1;
	}
	int_texts(genv, n, nums, gens);
	snprintf(lease, sizeof(lease), "%d", lease_seconds);
	a_ids = array_literal(ids, n, true);
	a_gens = array_literal(gens, n, false);
	a_types = array_literal(types, n, true);
	if (a_ids == NULL || a_gens == NULL || a_types == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(key, sizeof(key), "%d", liveness_key());
	const char *params[8] = {a_ids, a_gens, a_types, destination, claimed_by, lease, key,
	                         mark_only};
	res = run(conn, ST_CLAIM_BATCH, params, err, errlen);
	if (res != NULL)
		rc = claimed_rows(res, reqs, n, claimed_by, claims, payloads, won, err, errlen);
out:
	PQclear(res);
	free(a_ids);
	free(a_gens);
	free(a_types);
	return rc;
}

/* Runs ST_LOCK_CLAIMS or ST_SUCCEED_BATCH for n claims (same claimed_by). */
static PGresult *run_claims(PGconn *conn, enum stmt st, const struct ledger_claim *const *claims,
                            size_t n, char *err, size_t errlen)
{
	const char *ids[LEDGER_BATCH_MAX], *att[LEDGER_BATCH_MAX], *gens[LEDGER_BATCH_MAX];
	char n_att[LEDGER_BATCH_MAX][16], n_gen[LEDGER_BATCH_MAX][16];
	int v_att[LEDGER_BATCH_MAX], v_gen[LEDGER_BATCH_MAX];
	char *a_ids, *a_att, *a_gens;
	PGresult *res = NULL;

	if (n == 0 || n > LEDGER_BATCH_MAX) {
		snprintf(err, errlen, "1 to %d claims at once", LEDGER_BATCH_MAX);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		ids[i] = claims[i]->job_id;
		v_att[i] = claims[i]->attempt_count;
		v_gen[i] = claims[i]->redrive_generation;
	}
	int_texts(v_att, n, n_att, att);
	int_texts(v_gen, n, n_gen, gens);
	a_ids = array_literal(ids, n, true);
	a_att = array_literal(att, n, false);
	a_gens = array_literal(gens, n, false);
	if (a_ids == NULL || a_att == NULL || a_gens == NULL) {
		snprintf(err, errlen, "out of memory");
	} else {
		const char *params[4] = {a_ids, a_att, a_gens, claims[0]->claimed_by};
		res = run(conn, st, params, err, errlen);
	}
	free(a_ids);
	free(a_att);
	free(a_gens);
	return res;
}

/* Sets found[i] for each claim whose job id is a row of res (column 0);
 * returns how many were found. */
static int claims_returned(const PGresult *res, const struct ledger_claim *const *claims,
                           size_t n, bool *found)
{
	int got = 0;

	for (size_t i = 0; i < n; i++)
		found[i] = false;
	for (int r = 0; r < PQntuples(res); r++) {
		for (size_t i = 0; i < n; i++) {
			if (!found[i] && strcmp(claims[i]->job_id, PQgetvalue(res, r, 0)) == 0) {
				found[i] = true;
				got++;
				break;
			}
		}
	}
	return got;
}

/* Runs st (ST_LOCK_CLAIMS or ST_SUCCEED_BATCH) and sets found[] from the
 * job ids it returns.  Returns how many were found, or -1. */
static int run_claims_found(PGconn *conn, enum stmt st, const struct ledger_claim *const *claims,
                            size_t n, bool *found, char *err, size_t errlen)
{
	PGresult *res = run_claims(conn, st, claims, n, err, errlen);
	int got;

	if (res == NULL) {
		for (size_t i = 0; i < n; i++)
			found[i] = false;
		return -1;
	}
	got = claims_returned(res, claims, n, found);
	PQclear(res);
	return got;
}

int ledger_lock_claims(PGconn *conn, const struct ledger_claim *const *claims, size_t n,
                       bool *held, char *err, size_t errlen)
{
	return run_claims_found(conn, ST_LOCK_CLAIMS, claims, n, held, err, errlen);
}

int ledger_succeed_batch(PGconn *conn, const struct ledger_claim *const *claims, size_t n,
                         bool *succeeded, char *err, size_t errlen)
{
	return run_claims_found(conn, ST_SUCCEED_BATCH, claims, n, succeeded, err, errlen);
}

int ledger_mark_started(PGconn *conn, const struct ledger_claim *claim, int lease_seconds,
                        const char *const *returned, size_t n_returned, char *err,
                        size_t errlen)
{
	struct claim_text t;
	char key[16];
	const char *params[8];
	char *ids = array_literal(returned, n_returned, true);
	int rc;

	if (ids == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	claim_params(claim, &t, params);
	snprintf(key, sizeof(key), "%d", liveness_key());
	snprintf(t.extra, sizeof(t.extra), "%d", lease_seconds);
	params[5] = key;
	params[6] = t.extra;
	params[7] = ids;
	rc = run_cas(conn, ST_MARK_STARTED, params, err, errlen);
	free(ids);
	return rc;
}
