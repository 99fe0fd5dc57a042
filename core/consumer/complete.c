/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/complete.c: the completions of the job pipeline (see
 * consumer/complete.h and docs/consumer.md, "The pipeline"): the success
 * completion consumer_complete_ok(), the failure completion
 * consumer_complete_failed().
 */
#include "consumer/complete.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/fault.h"
#include "common/log.h"
#include "common/metrics.h"
#include "consumer/ledger.h"
#include "consumer/services.h"
#include "consumer/session.h"
#include "db/db.h"

/* commit_one(): a price job's commit() said OK but its success CAS did not
 * match (stale_or_lost() decides it after the transaction). */
#define NOT_SUCCEEDED 100

/*
 * The failure completion, for every verdict but OK of a claim j holds.
 * RETRY: back to PENDING, next attempt after the destination's backoff
 * or, when execute() asked for one (retry_after_ms), not before that
 * (capped at the backoff maximum); in the same statement the job's outbox
 * event is re-armed to be published when the job is due, then the
 * message is deleted, so a retry never counts as a receive towards
 * maxReceiveCount.  When nothing could be re-armed (a relay is sending
 * the event right now), the message is kept and reappears when due.
 * FAIL, or a RETRY of the destination's last attempt (max_attempts): DEAD
 * 'PERMANENT' or 'MAX_ATTEMPTS', message deleted.  A broken connection is
 * reopened first: the CAS binds the claim, so recording the verdict is
 * safe whatever happened to the transaction that broke.
 */
void consumer_complete_failed(struct batch *b, struct bjob *j, enum outbox_verdict v,
                              const char *why)
{
	struct consumer_worker *w = b->w;
	const struct cfg *cfg = w->c->cfg;
	int delay = consumer_retry_delay_seconds(cfg, j->claim.attempt_count, j->retry_after_ms);
	/* a RETRY that would start attempt max_attempts + 1 ends the job instead */
	bool exhausted = v != OUTBOX_FAIL && w->dest->max_attempts > 0
	                 && j->claim.attempt_count >= w->dest->max_attempts;
	const char *reason = exhausted ? "MAX_ATTEMPTS" : "PERMANENT";
	char err[512] = "no database connection", last[640];
	bool rearmed = false;
	int rc;

	snprintf(last, sizeof(last), "attempt %d of at most %d asked to retry: %s",
	         j->claim.attempt_count, w->dest->max_attempts, why);
	if (exhausted)
		v = OUTBOX_FAIL;
	rc = consumer_worker_ensure(w) < 0 ? -1
	     : v == OUTBOX_FAIL
	         ? ledger_fail(w->conn, &j->claim, reason, exhausted ? last : why, err, sizeof(err))
	         : ledger_retry(w->conn, &j->claim, delay, why, &rearmed, err, sizeof(err));
	if (rc < 0) {
		log_warning("could not record the %s; the job is decided when its lease expires:"
		            " %s job_id=%s", v == OUTBOX_FAIL ? "failure" : "retry", err,
		            j->claim.job_id);
		consumer_worker_db_failed(w);
		return;
	}
	if (rc == 0) {
		w->counters.lost_claims++;
		log_warning("lost the claim; %s not recorded job_id=%s",
		            v == OUTBOX_FAIL ? "failure" : "retry", j->claim.job_id);
		return;
	}
	if (v == OUTBOX_FAIL) {
		w->counters.failed++;
		metrics_inc(exhausted ? METRIC_JOBS_DEAD_MAX_ATTEMPTS : METRIC_JOBS_DEAD_PERMANENT,
		            w->dest->name);
		log_warning("job %s: %s dest=%s job_id=%s", exhausted ? "ran out of attempts"
		            : "failed permanently", exhausted ? last : why, w->dest->name,
		            j->claim.job_id);
		consumer_worker_delete(w, j->m);
		return;
	}
	w->counters.retried++;
	metrics_inc(METRIC_JOBS_RETRIED, w->dest->name);
	log_info("job will be retried in %d s: %s dest=%s job_id=%s attempt=%d", delay, why,
	         w->dest->name, j->claim.job_id, j->claim.attempt_count);
	if (rearmed) {
		w->counters.rearmed++;
		consumer_worker_delete(w, j->m);
	} else if (consumer_worker_set_visibility(w, j->m, delay, j->claim.job_id) < 0) {
		consumer_worker_rearm(w, &j->claim);
	}
}

/* After commit() returned OK over an SQL error of its own: the savepoint
 * rolled back and RETRY with the error, or -1 when there is no savepoint
 * to go back to (the whole transaction is lost). */
static int commit_errored(struct consumer_worker *w, struct outbox_tx *tx, char *err,
                          size_t errlen)
{
	char sqlerr[512];

	if (!tx->savepoint_taken) {
		snprintf(err, errlen, "commit() returned OK in a failed transaction: %s",
		         PQerrorMessage(w->conn));
		return -1;
	}
	snprintf(sqlerr, sizeof(sqlerr), "%.500s", err[0] ? err : PQerrorMessage(w->conn));
	sqlerr[strcspn(sqlerr, "\n")] = '\0';
	snprintf(err, errlen, "commit() returned OK after an SQL error: %s", sqlerr);
	if (consumer_tx(w, "ROLLBACK TO SAVEPOINT outbox_job", err + strlen(err),
	                errlen - strlen(err)) < 0)
		return -1;
	return OUTBOX_RETRY;
}

/*
 * The success CAS of a price job (only while its window still has the
 * job's generation), right after its commit(): when it matches nothing
 * the job's writes are rolled back to its savepoint and, after the
 * transaction, the job is found stale or lost (stale_or_lost()).
 * Returns OK, NOT_SUCCEEDED, or -1 when the transaction broke.
 */
static int succeed_price(struct consumer_worker *w, struct bjob *j, const struct outbox_tx *tx,
                         char *err, size_t errlen)
{
	int rc = ledger_succeed(w->conn, &j->claim, err, errlen);

	if (rc < 0)
		return -1;
	if (rc == 1)
		return OUTBOX_OK;
	if (tx->savepoint_taken &&
	    consumer_tx(w, "ROLLBACK TO SAVEPOINT outbox_job", err, errlen) < 0)
		return -1;
	return NOT_SUCCEEDED;
}

/* The job's commit() behind its savepoint.  began is NULL inside BEGIN;
 * else the transaction is begun before commit()'s first statement, if it
 * has one, and *began says whether it was (by this job or an earlier one).
 * Returns its verdict (the savepoint rolled back unless OK; RETRY when
 * commit() returned OK over an SQL error), or -1 when the transaction
 * broke. */
static int commit_one(struct batch *b, struct bjob *j, bool *began, char *err, size_t errlen)
{
	struct consumer_worker *w = b->w;
	struct outbox_tx tx = {.conn = w->conn, .savepoint = true, .lazy = began != NULL,
	                       .began = began != NULL && *began};
	enum outbox_verdict v;

	err[0] = '\0';
	v = plugin_instance_commit(w->inst, &j->job, j->output, &tx, err, errlen);
	if (began != NULL)
		*began = tx.began;
	b->commit_ran_sql = b->commit_ran_sql || tx.savepoint_taken || tx.began;
	if (consumer_tx_violated(&tx)) {
		/* tx_exec refused transaction control (the transaction, if
		 * begun, is still open): the job fails.  Else the connection is
		 * gone, and with it the whole batch's transaction: the caller
		 * retries them all. */
		PGTransactionStatusType st = PQtransactionStatus(w->conn);
		bool open = tx.lazy && !tx.began ? st == PQTRANS_IDLE
		                                 : st == PQTRANS_INTRANS || st == PQTRANS_INERROR;

		log_warning("%s; %s dest=%s job_id=%s", tx.why,
		            open ? "the job fails" : "nothing of the attempt was committed",
		            w->dest->name, j->claim.job_id);
		snprintf(err, errlen, "%s", tx.why);
		v = OUTBOX_FAIL;
		if (!open)
			return -1;
	}
	if (v == OUTBOX_OK && PQtransactionStatus(w->conn) == PQTRANS_INERROR)
		return commit_errored(w, &tx, err, errlen);
	if (v == OUTBOX_OK && j->claim.has_price_window)
		return succeed_price(w, j, &tx, err, errlen);
	if (v == OUTBOX_OK || !tx.savepoint_taken)
		return (int)v;
	if (consumer_tx(w, "ROLLBACK TO SAVEPOINT outbox_job", err + strlen(err),
	                errlen - strlen(err)) < 0)
		return -1;
	return (int)v;
}

/*
 * The success CAS of a price job matched nothing: if the claim is still
 * ours and the window was corrected meanwhile, the job is stale (DEAD
 * 'STALE', decided under the window row lock) and its message goes.
 */
static void stale_or_lost(struct batch *b, struct bjob *j)
{
	struct consumer_worker *w = b->w;
	char err[512];
	int rc = ledger_mark_stale_claimed(w->conn, &j->claim, err, sizeof(err));

	if (rc == 1) {
		w->counters.stale++;
		metrics_inc(METRIC_JOBS_DEAD_STALE, w->dest->name);
		log_warning("price window corrected while the job ran; marked DEAD STALE, the"
		            " handler's writes are discarded dest=%s job_id=%s", w->dest->name,
		            j->claim.job_id);
		consumer_worker_delete(w, j->m);
		return;
	}
	if (rc < 0) {
		log_warning("could not mark the job stale; it is decided when its lease expires:"
		            " %s job_id=%s", err, j->claim.job_id);
		consumer_worker_db_failed(w);
		return;
	}
	w->counters.lost_claims++;
	log_warning("lost the claim; the handler's writes are discarded job_id=%s",
	            j->claim.job_id);
}

/* After a committed completion: count, log and delete each success, and
 * decide the price jobs whose success CAS matched nothing. */
static void succeeded(struct batch *b, struct bjob *const *ok, size_t n)
{
	struct consumer_worker *w = b->w;

	for (size_t k = 0; k < n; k++) {
		w->counters.succeeded++;
		metrics_inc(METRIC_JOBS_SUCCEEDED, w->dest->name);
		log_info("job succeeded dest=%s job_id=%s attempt=%d", w->dest->name,
		         ok[k]->claim.job_id, ok[k]->claim.attempt_count);
		consumer_worker_delete(w, ok[k]->m);
	}
}

/* Jobs whose commit() refused: RETRY or FAIL, after the transaction
 * (reconnecting first if it broke; else they wait for their leases); the
 * price jobs found not to succeed: stale or lost. */
static void refused(struct batch *b, struct bjob *const *no, size_t n)
{
	if (n > 0 && consumer_worker_ensure(b->w) < 0)
		return;
	for (size_t k = 0; k < n; k++) {
		struct bjob *j = no[k];

		if (j->stale_check)
			stale_or_lost(b, j);
		else if (!j->refused)
			continue; /* not succeeded, then rolled back: retried already */
		else if (j->v == OUTBOX_FAIL)
			consumer_complete_failed(b, j, OUTBOX_FAIL,
			                         j->msg[0] ? j->msg : "commit() failed permanently");
		else
			consumer_complete_failed(b, j, OUTBOX_RETRY,
			                         j->msg[0] ? j->msg : "commit() asked for a retry");
	}
}

/* Records that j's commit() refused with verdict v (RETRY or FAIL) and
 * why; returns j. */
static struct bjob *refusal(struct bjob *j, int v, const char *why)
{
	j->v = (enum outbox_verdict)v;
	j->refused = true;
	snprintf(j->msg, sizeof(j->msg), "%s", why);
	return j;
}

/* j's claim did not hold at its completion: its verdict is discarded. */
static void lost_claim(struct batch *b, struct bjob *j)
{
	j->lost = true;
	b->w->counters.lost_claims++;
	log_warning("lost the claim; the handler's result is discarded job_id=%s",
	            j->claim.job_id);
}

/* Locks the claims of todo[] that still hold: the non-price ones in one
 * statement; a price claim's success CAS binds it (succeed_price).
 * Returns 0 with s->held[], or -1. */
static int lock_held(struct batch *b, struct bjob *const *todo, size_t n, char *err,
                     size_t errlen)
{
	struct batch_scratch *s = b->s;
	size_t m = 0, k2 = 0;

	for (size_t k = 0; k < n; k++) {
		if (!todo[k]->claim.has_price_window)
			s->cl[m++] = &todo[k]->claim;
	}
	if (m > 0 && ledger_lock_claims(b->w->conn, s->cl, m, s->got, err, errlen) < 0)
		return -1;
	for (size_t k = 0; k < n; k++)
		s->held[k] = todo[k]->claim.has_price_window || s->got[k2++];
	return 0;
}

/* Inside BEGIN: lock the claims that still hold, each held job's commit()
 * behind its savepoint, then the success CAS of the OK ones.  Fills ok[]
 * and no[] (commit() refused, or a price job not succeeded).  Returns 0,
 * or -1: roll back. */
static int complete_tx(struct batch *b, struct bjob *const *todo, size_t n, size_t *n_ok,
                       size_t *n_no, char *err, size_t errlen)
{
	struct consumer_worker *w = b->w;
	struct batch_scratch *s = b->s;
	char cerr[MSG_LEN];
	size_t n_cas = 0;
	int rc;

	if (lock_held(b, todo, n, err, errlen) < 0)
		return -1;
	for (size_t k = 0; k < n; k++) {
		if (!s->held[k]) {
			lost_claim(b, todo[k]);
			continue;
		}
		rc = commit_one(b, todo[k], NULL, cerr, sizeof(cerr));
		if (rc < 0) {
			snprintf(err, errlen, "%s", cerr);
			return -1;
		}
		if (rc == OUTBOX_OK) {
			if (!todo[k]->claim.has_price_window)
				s->cl[n_cas++] = &todo[k]->claim;
			s->ok[(*n_ok)++] = todo[k];
			continue;
		}
		if (rc == NOT_SUCCEEDED) {
			todo[k]->stale_check = true;
			s->no[(*n_no)++] = todo[k];
			continue;
		}
		s->no[(*n_no)++] = refusal(todo[k], rc, cerr);
	}
	if (n_cas == 0)
		return 0;
	rc = ledger_succeed_batch(w->conn, s->cl, n_cas, s->got, err, errlen);
	if (rc >= 0 && rc != (int)n_cas)
		snprintf(err, errlen, "the success CAS changed %d of %zu locked rows", rc, n_cas);
	return rc == (int)n_cas ? 0 : -1;
}

/* After a failed completion transaction rolled back: each job not lost
 * and not refused is recorded RETRY with its backoff (its CAS), so its
 * commit() is not run again blindly at once. */
static void retry_rolled_back(struct batch *b, struct bjob *const *todo, size_t n,
                              const char *err)
{
	char why[MSG_LEN + 64];

	snprintf(why, sizeof(why), "the completion transaction failed: %s", err);
	for (size_t k = 0; k < n; k++) {
		if (!todo[k]->lost && !todo[k]->refused)
			consumer_complete_failed(b, todo[k], OUTBOX_RETRY, why);
	}
}

/*
 * A completion that failed before anything of it was committed (in_tx: a
 * transaction is open and rolled back): each job not lost and not refused
 * is recorded RETRY.  A broken connection is reopened for that first.
 * (A success CAS that commits on its own and broke has an unknown
 * outcome: outcome_unknown().)
 */
static void not_recorded(struct batch *b, struct bjob *const *todo, size_t n, size_t n_no,
                         const char *err, bool in_tx)
{
	struct consumer_worker *w = b->w;
	char rerr[256];

	log_warning("could not record the completion of %zu job(s): %s dest=%s", n, err,
	            w->dest->name);
	for (size_t k = 0; k < n; k++)
		todo[k]->stale_check = false; /* rolled back: retried like the others */
	if (in_tx && consumer_tx(w, "ROLLBACK", rerr, sizeof(rerr)) == 0) {
		retry_rolled_back(b, todo, n, err);
	} else if (in_tx || db_connection_lost(w->conn)) {
		consumer_worker_db_failed(w);
		/* The connection broke (e.g. the server ended a commit() idle
		 * past its timeout): the retries are recorded on a new one. */
		if (w->conn == NULL && consumer_worker_ensure(w) == 0)
			retry_rolled_back(b, todo, n, err);
	} else {
		retry_rolled_back(b, todo, n, err);
	}
	refused(b, b->s->no, n_no);
}

/* The completion's COMMIT, or its success CAS that committed on its own,
 * failed with an unknown outcome: its jobs stay as they are (CLAIMED, or
 * SUCCEEDED with their messages kept) until a delivery after their leases
 * expire decides them. */
static void outcome_unknown(struct batch *b, size_t n, size_t n_no, const char *err)
{
	struct consumer_worker *w = b->w;

	log_error("could not commit the completion of %zu job(s); they are retried when"
	          " their leases expire: %s dest=%s", n, err, w->dest->name);
	consumer_worker_db_failed(w);
	refused(b, b->s->no, n_no);
}

/* COMMIT of a completion whose statements all succeeded.  Returns 0, or
 * -1 when it failed (logged; the jobs wait for their leases). */
static int commit_completion(struct batch *b, size_t n, size_t n_no)
{
	char err[MSG_LEN];

	FAULT_POINT("consumer.in_commit");
	if (consumer_tx(b->w, "COMMIT", err, sizeof(err)) == 0)
		return 0;
	outcome_unknown(b, n, n_no, err);
	return -1;
}

/* A connection for the completion of n jobs, or false (logged). */
static bool completion_conn(struct consumer_worker *w, size_t n)
{
	if (consumer_worker_ensure(w) == 0)
		return true;
	log_warning("could not begin the completion of %zu job(s); they are retried when"
	            " their leases expire dest=%s", n, w->dest->name);
	consumer_worker_db_failed(w);
	return false;
}

/*
 * The success completion the locking way: BEGIN, lock the claims that
 * still hold (ledger_lock_claims), each held job's commit() behind its
 * savepoint, the success CAS of the OK ones, COMMIT.  When
 * consumer_complete_ok() chooses it, and after a lazy completion found a
 * claim lost under writes.
 */
static void complete_locked(struct batch *b, struct bjob *const *todo, size_t n)
{
	struct consumer_worker *w = b->w;
	size_t n_ok = 0, n_no = 0;
	char err[MSG_LEN];

	if (!completion_conn(w, n))
		return;
	if (consumer_tx(w, "BEGIN", err, sizeof(err)) < 0) {
		log_warning("could not begin the completion of %zu job(s); they are retried when"
		            " their leases expire: %s dest=%s", n, err, w->dest->name);
		consumer_worker_db_failed(w);
		return;
	}
	if (complete_tx(b, todo, n, &n_ok, &n_no, err, sizeof(err)) < 0) {
		not_recorded(b, todo, n, n_no, err, true);
		return;
	}
	if (commit_completion(b, n, n_no) < 0)
		return;
	succeeded(b, b->s->ok, n_ok);
	refused(b, b->s->no, n_no);
}

/* Runs each job's commit() for complete_lazily(), filling ok[] (and the
 * claims of their CAS in cl[]) and no[].  Returns 0, or -1 with err (the
 * transaction broke). */
static int commit_each(struct batch *b, struct bjob *const *todo, size_t n, bool *began,
                       size_t *n_ok, size_t *n_no, char *err, size_t errlen)
{
	struct batch_scratch *s = b->s;

	for (size_t k = 0; k < n; k++) {
		int rc = commit_one(b, todo[k], began, err, errlen);

		if (rc < 0)
			return -1;
		if (rc == OUTBOX_OK) {
			s->cl[*n_ok] = &todo[k]->claim;
			s->ok[(*n_ok)++] = todo[k];
			continue;
		}
		s->no[(*n_no)++] = refusal(todo[k], rc, err);
	}
	return 0;
}

/* After an autocommitted success CAS: the OK jobs whose row it did not
 * change lost their claims; ok[] keeps the others.  Returns how many. */
static size_t keep_succeeded(struct batch *b, size_t n_ok)
{
	struct batch_scratch *s = b->s;
	size_t kept = 0;

	for (size_t k = 0; k < n_ok; k++) {
		if (s->got[k]) {
			s->ok[kept++] = s->ok[k];
			continue;
		}
		lost_claim(b, s->ok[k]);
	}
	return kept;
}

/*
 * The success completion of jobs without a price window: each job's
 * commit() first, in a transaction begun only when one of them runs a
 * statement, then one success CAS for the OK ones.  When none did, that CAS
 * is the whole completion, one statement on its own, and a claim it finds
 * lost discards nothing but the verdict.  When one wrote, the CAS and the
 * writes commit together, or, if a claim was lost (the writes of a job
 * whose claim no longer holds must not commit), the transaction is rolled
 * back and the completion is done again the locking way.
 */
static void complete_lazily(struct batch *b, struct bjob *const *todo, size_t n)
{
	struct consumer_worker *w = b->w;
	struct batch_scratch *s = b->s;
	size_t n_ok = 0, n_no = 0;
	bool began = false;
	char err[MSG_LEN], rerr[256];
	int rc = 0;

	if (!completion_conn(w, n))
		return;
	if (commit_each(b, todo, n, &began, &n_ok, &n_no, err, sizeof(err)) < 0) {
		not_recorded(b, todo, n, n_no, err, began);
		return;
	}
	if (n_ok > 0) {
		if (!began)
			FAULT_POINT("consumer.in_commit");
		rc = ledger_succeed_batch(w->conn, s->cl, n_ok, s->got, err, sizeof(err));
		if (rc < 0 && !began && db_connection_lost(w->conn)) {
			outcome_unknown(b, n, n_no, err);
			return;
		}
		if (rc < 0) {
			not_recorded(b, todo, n, n_no, err, began);
			return;
		}
	}
	if (began && rc != (int)n_ok) {
		log_info("a claim was lost under the batch's writes; completing it again with"
		         " the claims locked dest=%s", w->dest->name);
		if (consumer_tx(w, "ROLLBACK", rerr, sizeof(rerr)) < 0) {
			not_recorded(b, todo, n, n_no, rerr, false);
			return;
		}
		for (size_t k = 0; k < n; k++)
			todo[k]->refused = false;
		complete_locked(b, todo, n);
		return;
	}
	if (began && commit_completion(b, n, n_no) < 0)
		return;
	succeeded(b, s->ok, keep_succeeded(b, n_ok));
	refused(b, s->no, n_no);
}

/*
 * The locking way for a batch with a price job, and for a plugin whose
 * commit() ran statements the last time: its commit()s then run with
 * their jobs' rows locked, so a slow commit() cannot lose its claim to a
 * lease that expires meanwhile, and every completion takes the job row
 * before the plugin's rows.  The lazy way otherwise (a worker's first
 * completion, and a plugin whose commit() writes nothing).
 */
void consumer_complete_ok(struct batch *b, struct bjob *const *todo, size_t n)
{
	bool locked = b->w->commit_writes;

	for (size_t k = 0; k < n && !locked; k++)
		locked = todo[k]->claim.has_price_window;
	b->commit_ran_sql = false;
	if (locked)
		complete_locked(b, todo, n);
	else
		complete_lazily(b, todo, n);
	b->w->commit_writes = b->commit_ran_sql;
}
