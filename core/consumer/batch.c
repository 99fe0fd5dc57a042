/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/batch.c: one receive batch at once (see consumer/batch.h and
 * docs/consumer.md, "Batches"): one claim statement, the won jobs run in
 * order, one completion transaction for their OK verdicts; the per-message
 * rules (consumer/worker.c) for everything else.
 */
#include "consumer/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/clock.h"
#include "consumer/internal.h"
#include "consumer/message.h"
#include "consumer/quarantine.h"
#include "consumer/services.h"
#include "db/db.h"
#include "common/fault.h"
#include "common/log.h"
#include "common/metrics.h"

#define MSG_LEN 1024

/* One message of the batch. */
struct bjob {
	const struct sqs_message *m;  /* borrowed from the receive batch */
	struct consumer_msg pm;
	bool candidate;               /* offered to the batch claim */
	bool rest;                    /* left to consumer_worker_process() */
	bool won;                     /* claim won; heartbeat slot active */
	bool executed;                /* execute() returned v */
	bool lost;                    /* its claim did not hold at completion */
	bool refused;                 /* commit() returned RETRY or FAIL */
	bool carrier;                 /* its slot also keeps the rest messages fresh */
	struct ledger_claim claim;
	char *payload;                /* owned: JSON text */
	json_t *payload_json;         /* owned reference */
	struct outbox_job job;
	enum outbox_verdict v;
	char msg[MSG_LEN];
	json_t *output;               /* owned reference: execute()'s result */
	int64_t claimed_ms;
};

struct batch {
	struct consumer_worker *w;
	struct bjob *j;         /* owned; n entries, at most [consumer] claim_max */
	size_t n;
	/* job_ids of the runs that returned, in order (borrowed from j[]);
	 * owned array of n slots */
	const char **returned;
	size_t n_returned;
};

/* n zeroed elements of size each for a batch's scratch arrays; NULL when
 * out of memory (n may be 0: then one element, so NULL means only OOM). */
static void *scratch(size_t n, size_t size)
{
	return calloc(n > 0 ? n : 1, size);
}

static size_t slot_of(const struct batch *b, const struct bjob *j)
{
	return b->w->slot + (size_t)(j - b->j);
}

/* Which messages the batch claim may take: parsed, not a price job, of
 * this destination, and the first message of its job in the batch. */
static size_t choose(struct batch *b, const struct sqs_messages *msgs)
{
	char why[256];
	size_t n = 0;

	size_t max = (size_t)b->w->c->cfg->consumer.claim_max;

	b->n = msgs->n < max ? msgs->n : max;
	b->j = scratch(b->n, sizeof(*b->j));
	b->returned = scratch(b->n, sizeof(*b->returned));
	if (b->j == NULL || b->returned == NULL) {
		/* Out of memory: every message goes to the per-message rules. */
		b->n = 0;
		return 0;
	}
	for (size_t i = 0; i < b->n; i++) {
		struct bjob *j = &b->j[i];

		j->m = &msgs->items[i];
		j->rest = true;
		if (consumer_message_parse(j->m->body, j->m->body_len, &j->pm, why, sizeof(why)) < 0 ||
		    j->pm.has_price_window || strcmp(j->pm.destination, b->w->dest->name) != 0)
			continue;
		j->candidate = true;
		for (size_t k = 0; k < i; k++) {
			if (b->j[k].candidate && strcmp(b->j[k].pm.job_id, j->pm.job_id) == 0)
				j->candidate = false;
		}
		j->rest = !j->candidate;
		n += j->candidate ? 1 : 0;
	}
	return n;
}

/* The won claims get a heartbeat slot each, from now to their completion. */
static void won(struct batch *b, struct bjob *j)
{
	struct consumer_worker *w = b->w;

	w->counters.deliveries++;
	w->counters.claims++;
	metrics_inc(METRIC_JOBS_CLAIMED, w->dest->name);
	j->won = true;
	j->rest = false;
	j->claimed_ms = now_ms();
}

/* The receipt handles of the messages left to the per-message rules, at
 * most max (a heartbeat slot keeps SQS_MAX_BATCH_ENTRIES messages fresh;
 * one left out may come back visible early, and its next delivery is
 * decided by its claim like any other). */
static size_t rest_handles(const struct batch *b, const char **handles, size_t max)
{
	size_t n = 0;

	for (size_t k = 0; k < b->n && n < max; k++) {
		if (b->j[k].rest)
			handles[n++] = b->j[k].m->receipt_handle;
	}
	return n;
}

/*
 * A heartbeat slot per won claim, from now to its completion: its own
 * message; the first one's also carries the messages left to the
 * per-message rules, which wait behind the whole batch (handed on by
 * end_slot() when that claim ends first).
 */
static void begin_heartbeats(struct batch *b)
{
	struct consumer_worker *w = b->w;
	const char *handles[SQS_MAX_BATCH_ENTRIES];
	bool first = true;

	for (size_t i = 0; w->c->hb != NULL && i < b->n; i++) {
		struct heartbeat_job hj = {&b->j[i].claim, w->dest->queue_url, handles, 1,
		                           w->batch_received_ms};

		if (!b->j[i].won)
			continue;
		if (first)
			hj.n_handles = rest_handles(b, handles + 1, SQS_MAX_BATCH_ENTRIES - 1) + 1;
		handles[0] = b->j[i].m->receipt_handle;
		b->j[i].carrier = first;
		first = false;
		heartbeat_begin(w->c->hb, slot_of(b, &b->j[i]), &hj);
	}
}

/* Ends j's heartbeat slot (j->won is false by now); the rest messages it
 * carried go to the next won claim still beating.  Returns the outcome. */
static enum heartbeat_outcome end_slot(struct batch *b, struct bjob *j)
{
	struct heartbeat *hb = b->w->c->hb;
	const char *handles[SQS_MAX_BATCH_ENTRIES];
	enum heartbeat_outcome out;
	size_t n;

	if (hb == NULL)
		return HEARTBEAT_KEPT;
	out = heartbeat_end(hb, slot_of(b, j));
	if (!j->carrier)
		return out;
	j->carrier = false;
	n = rest_handles(b, handles, SQS_MAX_BATCH_ENTRIES);
	for (size_t k = 0; n > 0 && k < b->n; k++) {
		if (b->j[k].won && heartbeat_outcome(hb, slot_of(b, &b->j[k])) == HEARTBEAT_KEPT) {
			b->j[k].carrier = true;
			heartbeat_carry(hb, slot_of(b, &b->j[k]), handles, n);
			break;
		}
	}
	return out;
}

/* The claim statement; messages not won are left to the per-message rules. */
static int claim(struct batch *b)
{
	struct consumer_worker *w = b->w;
	struct ledger_batch_req *reqs = scratch(b->n, sizeof(*reqs));
	struct ledger_claim *claims = scratch(b->n, sizeof(*claims));
	char **payloads = scratch(b->n, sizeof(*payloads));
	bool *got = scratch(b->n, sizeof(*got));
	size_t *idx = scratch(b->n, sizeof(*idx)), n = 0;
	char err[512];
	int rc = -1;

	if (reqs == NULL || claims == NULL || payloads == NULL || got == NULL || idx == NULL) {
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	for (size_t i = 0; i < b->n; i++) {
		if (!b->j[i].candidate)
			continue;
		reqs[n] = (struct ledger_batch_req){b->j[i].pm.job_id, b->j[i].pm.job_type,
		                                    b->j[i].pm.redrive_generation};
		idx[n++] = i;
	}
	rc = ledger_claim_batch(w->conn, reqs, n, w->dest->name, w->claimed_by,
	                        w->c->cfg->consumer.lease_seconds, claims, payloads, got,
	                        err, sizeof(err));
out:
	for (size_t k = 0; k < n; k++) {
		struct bjob *j = &b->j[idx[k]];

		if (rc >= 0 && got[k]) {
			j->claim = claims[k];
			j->payload = payloads[k];
			won(b, j);
		} else if (rc >= 0) {
			j->rest = true; /* not won: the per-message rules decide */
		} else {
			free(payloads[k]);
			j->rest = false; /* the database failed: leave the message */
			w->counters.deliveries++;
			w->counters.db_errors++;
		}
	}
	if (rc < 0) {
		log_warning("could not claim a batch of %zu message(s): %s dest=%s", n, err,
		            w->dest->name);
		consumer_worker_db_failed(w);
	}
	free(reqs);
	free(claims);
	free(payloads);
	free(got);
	free(idx);
	begin_heartbeats(b);
	return rc;
}

/* Gives a waiting claim back (shutdown): PENDING again, message visible. */
static void give_back_claim(struct batch *b, struct bjob *j)
{
	struct consumer_worker *w = b->w;
	enum heartbeat_outcome hb;

	j->won = false;
	hb = end_slot(b, j);
	if (hb != HEARTBEAT_KEPT)
		return; /* released by the heartbeat already, or lost */
	consumer_worker_release(w, j->m, &j->claim);
}

/* The claim CAS extending a waiting claim's lease, reconnecting first (an
 * earlier step of the batch may have dropped the connection). */
static int extend(struct consumer_worker *w, const struct ledger_claim *claim, char *err,
                  size_t errlen)
{
	if (consumer_worker_ensure(w) < 0) {
		snprintf(err, errlen, "no database connection");
		return -1;
	}
	return ledger_extend_lease(w->conn, claim, w->c->cfg->consumer.lease_seconds, err,
	                           errlen);
}

/* Records j's handler run as started (the poison-job count needs it
 * before the run), renewing its lease; a CAS binding the claim. */
static int mark_started(struct batch *b, const struct ledger_claim *claim, char *err,
                        size_t errlen)
{
	struct consumer_worker *w = b->w;

	if (consumer_worker_ensure(w) < 0) {
		snprintf(err, errlen, "no database connection");
		return -1;
	}
	return ledger_mark_started(w->conn, claim, w->c->cfg->consumer.lease_seconds, b->returned,
	                           b->n_returned, err, errlen);
}

/*
 * May the waiting claim j run now?  Not when the heartbeat lost or
 * released it.  A run the claim did not record as started is recorded
 * now; otherwise, when the claim is older than a third of the lease, its
 * lease is extended here first.  Both are CASes binding the claim, so a
 * claim that lapsed and was taken by another delivery never runs.
 */
static bool still_ours(struct batch *b, struct bjob *j)
{
	struct consumer_worker *w = b->w;
	int lease = w->c->cfg->consumer.lease_seconds;
	char err[512];
	int rc = 1;

	if (w->c->hb != NULL && heartbeat_outcome(w->c->hb, slot_of(b, j)) != HEARTBEAT_KEPT)
		rc = 0;
	else if (!j->claim.run_marked)
		rc = mark_started(b, &j->claim, err, sizeof(err));
	else if (now_ms() - j->claimed_ms > (int64_t)lease * 1000 / 3)
		rc = extend(w, &j->claim, err, sizeof(err));
	if (rc == 1)
		return true;
	if (rc < 0) {
		log_warning("could not extend the lease of a waiting job; not run: %s job_id=%s", err,
		            j->claim.job_id);
		consumer_worker_db_failed(w);
	} else {
		w->counters.lost_claims++;
		log_warning("lost the claim of a waiting job; not run job_id=%s", j->claim.job_id);
	}
	j->won = false;
	(void)end_slot(b, j);
	return false;
}

/* execute() of one won job; its heartbeat slot keeps beating. */
static void execute(struct batch *b, struct bjob *j)
{
	struct consumer_worker *w = b->w;
	struct outbox_result result = {.msg = j->msg, .msg_size = sizeof(j->msg)};

	j->payload_json = json_loads(j->payload, JSON_DECODE_ANY, NULL);
	j->job = (struct outbox_job){j->claim.job_id, j->pm.job_type, w->dest->name,
	                             j->payload_json, j->claim.attempt_count,
	                             j->claim.redrive_generation};
	FAULT_POINT("consumer.in_execute");
	w->counters.handler_runs++;
	if (w->c->hb != NULL)
		heartbeat_running(w->c->hb, slot_of(b, j), w->dest->handler_timeout_seconds,
		                  w->dest->name);
	metrics_observe(METRIC_START_LATENCY_SECONDS, w->dest->name,
	                (double)wall_clock_ms() / 1000 - j->claim.due_epoch);
	j->v = plugin_instance_execute_traced(w->inst, &j->job, sqs_message_traceparent(j->m), &result);
	j->output = result.output;
	j->executed = true;
	b->returned[b->n_returned++] = j->claim.job_id;
}

/* One pass of run_all(): the won jobs recorded as started by the claim
 * (suspects false), or the others (true). */
static void run_pass(struct batch *b, bool suspects)
{
	for (size_t i = 0; i < b->n; i++) {
		struct bjob *j = &b->j[i];

		if (!j->won || j->claim.run_marked == suspects)
			continue;
		if (consumer_stopping(b->w->c)) {
			give_back_claim(b, j);
		} else if (consumer_quarantine_due(b->w, &j->claim)) {
			j->won = false;
			if (end_slot(b, j) == HEARTBEAT_KEPT)
				consumer_quarantine(b->w, j->m, &j->claim);
		} else if (still_ours(b, j)) {
			execute(b, j);
		}
	}
}

/*
 * Runs the won jobs: first those whose run the claim recorded as started,
 * then the suspects (they crashed a process before), each recorded right
 * before it runs, which also clears the record of every run that returned
 * before it.  So a suspect counts only its own crashes; a crash during
 * the first pass counts for every job of that pass (they were all
 * recorded at the claim), which makes them suspects for their next run.
 * The poison-job count costs no statement unless a suspect is in the
 * batch (docs/outboxd.md, "Quarantine").
 */
static void run_all(struct batch *b)
{
	for (int pass = 0; pass < 2; pass++)
		run_pass(b, pass == 1);
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

/* The job's commit() behind its savepoint.  Returns its verdict (the
 * savepoint rolled back unless OK; RETRY when commit() returned OK over an
 * SQL error), or -1 when the transaction broke. */
static int commit_one(struct batch *b, struct bjob *j, char *err, size_t errlen)
{
	struct consumer_worker *w = b->w;
	struct outbox_tx tx = {.conn = w->conn, .savepoint = true};
	enum outbox_verdict v;

	err[0] = '\0';
	v = plugin_instance_commit(w->inst, &j->job, j->output, &tx, err, errlen);
	if (consumer_tx_violated(&tx)) {
		/* tx_exec refused transaction control (the transaction is still
		 * open, else the whole batch is lost): the job fails. */
		log_warning("%s; the job fails dest=%s job_id=%s", tx.why, w->dest->name,
		            j->claim.job_id);
		snprintf(err, errlen, "%s", tx.why);
		v = OUTBOX_FAIL;
		if (PQtransactionStatus(w->conn) != PQTRANS_INTRANS &&
		    PQtransactionStatus(w->conn) != PQTRANS_INERROR)
			return -1;
	}
	if (v == OUTBOX_OK && PQtransactionStatus(w->conn) == PQTRANS_INERROR)
		return commit_errored(w, &tx, err, errlen);
	if (v == OUTBOX_OK || !tx.savepoint_taken)
		return (int)v;
	if (consumer_tx(w, "ROLLBACK TO SAVEPOINT outbox_job", err + strlen(err),
	                errlen - strlen(err)) < 0)
		return -1;
	return (int)v;
}

/* After a committed completion: count, log and delete each success. */
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
 * (reconnecting first if it broke; else they wait for their leases). */
static void refused(struct batch *b, struct bjob *const *no, size_t n)
{
	if (n > 0 && consumer_worker_ensure(b->w) < 0)
		return;
	for (size_t k = 0; k < n; k++) {
		struct bjob *j = no[k];

		if (j->v == OUTBOX_FAIL)
			consumer_worker_fail(b->w, j->m, &j->claim,
			                     j->msg[0] ? j->msg : "commit() failed permanently");
		else
			consumer_worker_retry(b->w, j->m, &j->claim,
			                      j->msg[0] ? j->msg : "commit() asked for a retry");
	}
}

/* Inside BEGIN: lock the claims that still hold, each held job's commit()
 * behind its savepoint, then the success CAS of the OK ones.  Fills ok[]
 * and no[] (commit() refused).  Returns 0, or -1: roll back. */
static int complete_tx(struct batch *b, struct bjob *const *todo, size_t n, struct bjob **ok,
                       size_t *n_ok, struct bjob **no, size_t *n_no, char *err, size_t errlen)
{
	struct consumer_worker *w = b->w;
	const struct ledger_claim **claims = scratch(n, sizeof(*claims));
	bool *held = scratch(n, sizeof(*held));
	char cerr[MSG_LEN];
	int rc = -1;

	if (claims == NULL || held == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < n; k++)
		claims[k] = &todo[k]->claim;
	if (ledger_lock_claims(w->conn, claims, n, held, err, errlen) < 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		if (!held[k]) {
			todo[k]->lost = true;
			w->counters.lost_claims++;
			log_warning("lost the claim; the handler's result is discarded job_id=%s",
			            todo[k]->claim.job_id);
			continue;
		}
		rc = commit_one(b, todo[k], cerr, sizeof(cerr));
		if (rc < 0) {
			snprintf(err, errlen, "%s", cerr);
			goto out;
		}
		if (rc == OUTBOX_OK) {
			claims[(*n_ok)] = &todo[k]->claim;
			ok[(*n_ok)++] = todo[k];
			continue;
		}
		todo[k]->v = (enum outbox_verdict)rc;
		todo[k]->refused = true;
		snprintf(todo[k]->msg, sizeof(todo[k]->msg), "%s", cerr);
		no[(*n_no)++] = todo[k];
	}
	rc = 0;
	if (*n_ok == 0)
		goto out;
	rc = ledger_succeed_batch(w->conn, claims, *n_ok, err, errlen);
	if (rc >= 0 && rc != (int)*n_ok)
		snprintf(err, errlen, "the success CAS changed %d of %zu locked rows", rc, *n_ok);
	rc = rc == (int)*n_ok ? 0 : -1;
out:
	free(claims);
	free(held);
	return rc;
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
			consumer_worker_retry(b->w, todo[k]->m, &todo[k]->claim, why);
	}
}

/* One transaction for every OK verdict of the batch; the verdicts commit()
 * refused are recorded whatever happens to it. */
static void complete_ok(struct batch *b, struct bjob *const *todo, size_t n)
{
	struct consumer_worker *w = b->w;
	struct bjob **ok = scratch(n, sizeof(*ok)), **no = scratch(n, sizeof(*no));
	size_t n_ok = 0, n_no = 0;
	char err[MSG_LEN], rerr[256];

	if (ok == NULL || no == NULL) {
		log_warning("out of memory completing %zu job(s); they are retried when their"
		            " leases expire dest=%s", n, w->dest->name);
		goto out;
	}
	if (consumer_worker_ensure(w) < 0 || consumer_tx(w, "BEGIN", err, sizeof(err)) < 0) {
		log_warning("could not begin the completion of %zu job(s); they are retried when"
		            " their leases expire dest=%s", n, w->dest->name);
		consumer_worker_db_failed(w);
		goto out;
	}
	if (complete_tx(b, todo, n, ok, &n_ok, no, &n_no, err, sizeof(err)) < 0) {
		log_warning("could not record the completion of %zu job(s): %s dest=%s", n, err,
		            w->dest->name);
		if (consumer_tx(w, "ROLLBACK", rerr, sizeof(rerr)) < 0) {
			consumer_worker_db_failed(w);
			/* The connection broke before COMMIT was sent (e.g. the
			 * server ended a commit() idle past its timeout): nothing
			 * was committed, so the retries are recorded on a new one. */
			if (w->conn == NULL && consumer_worker_ensure(w) == 0)
				retry_rolled_back(b, todo, n, err);
		} else {
			retry_rolled_back(b, todo, n, err);
		}
		refused(b, no, n_no);
		goto out;
	}
	FAULT_POINT("consumer.in_commit");
	if (consumer_tx(w, "COMMIT", err, sizeof(err)) < 0) {
		log_error("could not commit the completion of %zu job(s); they are retried when"
		          " their leases expire: %s dest=%s", n, err, w->dest->name);
		consumer_worker_db_failed(w);
		refused(b, no, n_no);
		goto out;
	}
	succeeded(b, ok, n_ok);
	refused(b, no, n_no);
out:
	free(ok);
	free(no);
}

/* Stops each executed job's heartbeat and records its verdict. */
static void complete_all(struct batch *b)
{
	struct consumer_worker *w = b->w;
	struct bjob **ok = scratch(b->n, sizeof(*ok));
	size_t n = 0;

	if (ok == NULL)
		log_warning("out of memory completing a batch; its jobs are retried when their"
		            " leases expire dest=%s", w->dest->name);
	else if (consumer_worker_ensure(w) < 0)
		log_warning("no database connection to record the batch's verdicts; they are"
		            " retried when their leases expire dest=%s", w->dest->name);
	for (size_t i = 0; i < b->n; i++) {
		struct bjob *j = &b->j[i];

		if (!j->won || !j->executed)
			continue;
		j->won = false;
		if (end_slot(b, j) == HEARTBEAT_RELEASED)
			log_warning("handler finished after its claim was released; result discarded"
			            " job_id=%s", j->claim.job_id);
		else if (w->conn == NULL || ok == NULL)
			continue; /* CLAIMED until its lease expires */
		else if (j->v == OUTBOX_OK)
			ok[n++] = j;
		else if (j->v == OUTBOX_RETRY)
			consumer_worker_retry(w, j->m, &j->claim,
			                      j->msg[0] ? j->msg : "handler asked for a retry");
		else
			consumer_worker_fail(w, j->m, &j->claim,
			                     j->msg[0] ? j->msg : "handler failed permanently");
	}
	if (n > 0)
		complete_ok(b, ok, n);
	free(ok);
}

/* The rest messages after message i: the per-message heartbeat of i keeps
 * them fresh, and nothing else (the batch's decided jobs keep the
 * visibility their verdicts set). */
static void set_waiting(struct batch *b, size_t i)
{
	b->w->n_waiting = 0;
	for (size_t k = i + 1; k < b->n && b->w->n_waiting < SQS_MAX_BATCH_ENTRIES; k++) {
		if (b->j[k].rest)
			b->w->waiting[b->w->n_waiting++] = b->j[k].m->receipt_handle;
	}
}

/* The per-message rules for every message the batch did not take. */
static void process_rest(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		if (!b->j[i].rest)
			continue;
		set_waiting(b, i);
		if (consumer_stopping(b->w->c))
			consumer_worker_give_back(b->w, b->j[i].m);
		else
			consumer_worker_process(b->w, b->j[i].m);
	}
	b->w->n_waiting = 0;
}

/* Frees what the jobs hold; the array itself stays for process_rest(). */
static void free_jobs(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		json_decref(b->j[i].output);
		json_decref(b->j[i].payload_json);
		free(b->j[i].payload);
	}
}

/* Claim, run and complete the candidates; false when they must go to the
 * per-message path instead (no database, or stopping). */
static bool run_batch(struct batch *b)
{
	struct consumer_worker *w = b->w;
	int rc;

	if (consumer_worker_ensure(w) < 0)
		return false;
	consumer_busy(w->c, 1);
	if (consumer_stopping(w->c)) {
		consumer_busy(w->c, -1);
		return false;
	}
	rc = claim(b);
	for (size_t i = 0; rc > 0 && i < b->n; i++) {
		if (b->j[i].won)
			FAULT_POINT("consumer.after_claim");
	}
	if (rc > 0) {
		run_all(b);
		complete_all(b);
	}
	consumer_busy(w->c, -1);
	return true;
}

void consumer_batch_process(struct consumer_worker *w, const struct sqs_messages *msgs)
{
	struct batch b = {.w = w};

	if (choose(&b, msgs) > 0 && !run_batch(&b)) {
		for (size_t i = 0; i < b.n; i++)
			b.j[i].rest = true;
	}
	free_jobs(&b);
	process_rest(&b);
	free(b.j);
	free(b.returned);
	for (size_t i = b.n; i < msgs->n; i++)
		consumer_worker_process(w, &msgs->items[i]);
}
