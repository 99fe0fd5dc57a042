/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/batch.c: the job pipeline (see consumer/batch.h and
 * docs/consumer.md, "The pipeline"): claim, the rules for what the claim
 * did not win, run, complete.  The claim is claim(); the completions are
 * in consumer/complete.c.
 */
#include "consumer/batch.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/clock.h"
#include "common/fault.h"
#include "common/log.h"
#include "common/metrics.h"
#include "consumer/bjob.h"
#include "consumer/complete.h"
#include "consumer/control.h"
#include "consumer/message.h"
#include "consumer/quarantine.h"
#include "consumer/rules.h"
#include "consumer/services.h"
#include "consumer/session.h"
#include "consumer/suspect_turn.h"

static size_t slot_of(const struct batch *b, const struct bjob *j)
{
	return b->w->slot + (size_t)(j - b->j);
}

/* Each delivery counted, parsed and sent on: to the claim when one
 * statement may take it (not a price job, of this destination, the first
 * message of its job in the batch), else to the rules. */
static void choose(struct batch *b, const struct sqs_message *items, size_t n)
{
	struct consumer_worker *w = b->w;
	char why[256];

	b->n = n;
	b->n_returned = 0;
	memset(b->j, 0, n * sizeof(*b->j));
	for (size_t i = 0; i < n; i++) {
		struct bjob *j = &b->j[i];

		j->m = &items[i];
		w->counters.deliveries++;
		if (consumer_message_parse(j->m->body, j->m->body_len, &j->pm, why, sizeof(why)) < 0) {
			w->counters.ignored++;
			log_warning("ignoring a message that is not an outbox event: %s dest=%s"
			            " message_id=%s", why, w->dest->name, j->m->message_id);
			j->state = B_DONE;
			continue;
		}
		j->state = B_WANT;
		if (j->pm.has_price_window || strcmp(j->pm.destination, w->dest->name) != 0)
			j->state = B_RULES;
		for (size_t k = 0; k < i && j->state == B_WANT; k++) {
			if (b->j[k].state == B_WANT && strcmp(b->j[k].pm.job_id, j->pm.job_id) == 0)
				j->state = B_RULES;
		}
	}
}

/* A claim won: counted; its heartbeat slot begins after the last claim. */
static void won(struct batch *b, struct bjob *j)
{
	struct consumer_worker *w = b->w;

	w->counters.claims++;
	metrics_inc(METRIC_JOBS_CLAIMED, w->dest->name);
	j->state = B_WON;
	j->claimed_ms = now_ms();
}

/* A claim not won: to the rules the first time, else lost to another
 * delivery (consumer_rules_lost). */
static void not_won(struct batch *b, struct bjob *j)
{
	if (!j->second) {
		j->state = B_RULES;
		return;
	}
	j->state = B_DONE;
	consumer_rules_lost(b->w, j->m, j->pm.job_id);
}

/* The claim statement or the price transaction failed: left alone. */
static void claim_failed(struct batch *b, struct bjob *j, const char *err)
{
	struct consumer_worker *w = b->w;

	w->counters.db_errors++;
	log_warning("could not claim the job: %s job_id=%s", err, j->pm.job_id);
	j->state = B_DONE;
}

/*
 * Rules 4 (price window) and 5 for a price job in one transaction: the
 * window row is share-locked while staleness is decided and the claim
 * taken.  Returns 1 claimed, 2 marked stale, 0 lost, -1 error.
 */
static int claim_price(struct consumer_worker *w, struct bjob *j, char *err, size_t errlen)
{
	const struct ledger_job *job = &j->looked;
	/* Bound to the queue the message came from, in the CAS itself. */
	const struct ledger_binding binding = {w->dest->name, j->pm.job_type, true,
	                                       j->pm.window_generation};
	char rerr[256];
	int gen = 0, rc;

	if (consumer_tx(w, "BEGIN", err, errlen) < 0)
		return -1;
	rc = ledger_price_window_lock(w->conn, job->window_symbol, job->window_start, &gen, err,
	                              errlen);
	if (rc == 1 && job->window_generation < gen) {
		rc = ledger_mark_stale(w->conn, job->job_id, job->redrive_generation, err, errlen);
		rc = rc == 1 ? 2 : rc;
	} else if (rc >= 0) {
		rc = ledger_claim(w->conn, job->job_id, job->redrive_generation, &binding,
		                  w->claimed_by, w->c->cfg->consumer.lease_seconds, &j->claim,
		                  &j->payload, err, errlen);
	}
	if (rc < 0 || consumer_tx(w, "COMMIT", err, errlen) < 0) {
		if (consumer_tx(w, "ROLLBACK", rerr, sizeof(rerr)) < 0)
			consumer_worker_db_failed(w);
		free(j->payload);
		j->payload = NULL;
		return -1;
	}
	return rc;
}

/* The price jobs offered to the claim, each in its own transaction. */
static void claim_prices(struct batch *b)
{
	struct consumer_worker *w = b->w;
	char err[512];

	for (size_t i = 0; i < b->n; i++) {
		struct bjob *j = &b->j[i];
		int rc;

		if (j->state != B_WANT || !j->pm.has_price_window)
			continue;
		rc = claim_price(w, j, err, sizeof(err));
		if (rc == 1) {
			won(b, j);
		} else if (rc == 2) {
			w->counters.stale++;
			metrics_inc(METRIC_JOBS_DEAD_STALE, w->dest->name);
			log_warning("price job is stale: its window has a newer generation; marked DEAD"
			            " dest=%s job_id=%s", w->dest->name, j->pm.job_id);
			consumer_worker_delete(w, j->m);
			j->state = B_DONE;
		} else if (rc == 0) {
			not_won(b, j);
		} else {
			claim_failed(b, j, err);
			consumer_worker_db_failed(w);
		}
	}
}

/* Offers j to the claim statement, unless its job is offered already. */
static bool offer(struct batch *b, size_t i, size_t n)
{
	const struct bjob *j = &b->j[i];
	struct batch_scratch *s = b->s;

	for (size_t k = 0; k < n; k++) {
		if (strcmp(s->reqs[k].job_id, j->pm.job_id) == 0)
			return false;
	}
	s->reqs[n] = (struct ledger_batch_req){j->pm.job_id, j->pm.job_type,
	                                       j->pm.redrive_generation};
	s->idx[n] = i;
	return true;
}

/* A handler faster than this (measured) has its batch's runs recorded as
 * started by the claim: a statement per run would cost more than the run. */
#define MARK_EACH_MIN_MS 20

/*
 * Whether the claim records only the first run as started and each other
 * run is recorded right before it starts (ledger_mark_started), so that a
 * process that dies counts a crash only for the job that was running, not
 * for the claimed jobs waiting behind it; and each run is completed as
 * soon as it returns (complete_early), so that a process that dies loses
 * at most the run in progress, not the runs of the batch that had
 * returned before it.  Not for a handler measured
 * faster than MARK_EACH_MIN_MS: its batch runs in about claim_max times
 * that, and the claim records every run at no extra statement
 * (docs/outboxd.md, "Quarantine", says what a kill costs then); its
 * suspects are still recorded and completed one by one (run_one()).
 */
static bool mark_each(const struct consumer_worker *w)
{
	long long ms = w->pace != NULL ? atomic_load(&w->pace->handler_ms) : 0;

	return ms == 0 || ms >= MARK_EACH_MIN_MS;
}

/*
 * The claim: every delivery offered, the others in one statement
 * (ledger_claim_batch: bound to this destination and each message's job
 * type and generation), each price job with its window's staleness
 * decided under the window row lock (claim_price).  Deliveries not won go
 * to the rules (or, when the rules sent them, are lost).
 */
static void claim(struct batch *b)
{
	struct consumer_worker *w = b->w;
	struct batch_scratch *s = b->s;
	char err[512];
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < b->n; i++) {
		if (b->j[i].state != B_WANT || b->j[i].pm.has_price_window)
			continue;
		if (offer(b, i, n))
			n++;
		else
			not_won(b, &b->j[i]);
	}
	rc = n == 0 ? 0
	            : ledger_claim_batch(w->conn, s->reqs, n, w->dest->name, w->claimed_by,
	                                 w->c->cfg->consumer.lease_seconds,
	                                 b->each ? s->reqs[0].job_id : NULL, s->claims,
	                                 s->payloads, s->got, err, sizeof(err));
	for (size_t k = 0; k < n; k++) {
		struct bjob *j = &b->j[s->idx[k]];

		if (rc >= 0 && s->got[k]) {
			j->claim = s->claims[k];
			j->payload = s->payloads[k];
			won(b, j);
		} else if (rc >= 0) {
			not_won(b, j);
		} else {
			free(s->payloads[k]);
			claim_failed(b, j, err);
		}
	}
	if (rc < 0)
		consumer_worker_db_failed(w);
	claim_prices(b);
}

/* The rules for each delivery the claim did not take; those they let
 * claim are offered to the claim once more. */
static size_t apply_rules(struct batch *b)
{
	struct consumer_worker *w = b->w;
	size_t again = 0;

	for (size_t i = 0; i < b->n; i++) {
		struct bjob *j = &b->j[i];

		if (j->state != B_RULES)
			continue;
		j->state = B_DONE;
		if (consumer_stopping(w->c)) {
			consumer_worker_give_back(w, j->m);
		} else if (atomic_load(&w->c->db_trouble) || w->conn == NULL) {
			/* The database refused a statement: leave the message alone
			 * until it takes claims again (consumer_worker_gate). */
			w->counters.db_errors++;
		} else if (consumer_rules_apply(w, j->m, &j->pm, &j->looked)) {
			j->state = B_WANT;
			j->second = true;
			again++;
		}
	}
	return again;
}

/* A heartbeat slot per won claim, from now to its completion. */
static void begin_heartbeats(struct batch *b)
{
	struct consumer_worker *w = b->w;

	for (size_t i = 0; w->c->hb != NULL && i < b->n; i++) {
		const char *handles[1];
		struct heartbeat_job hj = {&b->j[i].claim, w->dest->queue_url, handles, 1,
		                           w->batch_received_ms};

		if (b->j[i].state != B_WON)
			continue;
		handles[0] = b->j[i].m->receipt_handle;
		heartbeat_begin(w->c->hb, slot_of(b, &b->j[i]), &hj);
	}
}

/* Ends j's heartbeat slot; j is no longer won.  Returns the outcome. */
static enum heartbeat_outcome end_slot(struct batch *b, struct bjob *j)
{
	j->state = B_DONE;
	if (b->w->c->hb == NULL)
		return HEARTBEAT_KEPT;
	return heartbeat_end(b->w->c->hb, slot_of(b, j));
}

/* Shutdown before the handler ran: the claim back to PENDING (due now),
 * the message visible at once, else the outbox event re-armed. */
static void release(struct batch *b, struct bjob *j)
{
	struct consumer_worker *w = b->w;
	char err[512];
	int rc;

	if (end_slot(b, j) != HEARTBEAT_KEPT)
		return; /* released by the heartbeat already, or lost */
	rc = ledger_release(w->conn, &j->claim, err, sizeof(err));
	if (rc < 0) {
		log_warning("could not release the claim; it is retried when its lease expires:"
		            " %s job_id=%s", err, j->claim.job_id);
		consumer_worker_db_failed(w);
		return;
	}
	if (rc == 0)
		return;
	log_info("shutting down: claim released before the handler started job_id=%s",
	         j->claim.job_id);
	if (consumer_worker_set_visibility(w, j->m, 0, j->claim.job_id) < 0)
		consumer_worker_rearm(w, &j->claim);
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
	char err[512] = "no database connection";
	int rc = 1;

	if (w->c->hb != NULL && heartbeat_outcome(w->c->hb, slot_of(b, j)) != HEARTBEAT_KEPT)
		rc = 0;
	else if (!j->claim.run_marked || now_ms() - j->claimed_ms > (int64_t)lease * 1000 / 3)
		rc = consumer_worker_ensure(w) < 0 ? -1
		     : !j->claim.run_marked
		         ? ledger_mark_started(w->conn, &j->claim, lease, b->returned, b->n_returned,
		                               err, sizeof(err))
		         : ledger_extend_lease(w->conn, &j->claim, lease, err, sizeof(err));
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
	(void)end_slot(b, j);
	return false;
}

/* Weight of the newest call in a destination's handler duration. */
#define HANDLER_WEIGHT 0.25

/* A call of ms: the destination's smoothed handler duration, which sizes
 * the receives (consumer/loop.c).  Racing updates lose one sample at most. */
static void measured(struct consumer_worker *w, int64_t ms)
{
	long long old;

	if (w->pace == NULL)
		return;
	old = atomic_load(&w->pace->handler_ms);
	ms = ms > 0 ? ms : 1;
	atomic_store(&w->pace->handler_ms,
	             old == 0 ? (long long)ms
	                      : (long long)((double)old * (1 - HANDLER_WEIGHT) +
	                                    (double)ms * HANDLER_WEIGHT + 0.5));
}

/* execute() of one won job; its heartbeat slot keeps beating. */
static void execute(struct batch *b, struct bjob *j)
{
	struct consumer_worker *w = b->w;
	struct outbox_result result = {j->msg, sizeof(j->msg), NULL, 0};

	/* Deletions queued by this batch wait for one DeleteMessageBatch at
	 * its end (or in the destination's pool, which sends them within
	 * DELETE_POOL_MAX_AGE_MS: then this flush sends nothing), unless the
	 * batch is old enough that a long handler now could let them reappear
	 * (each would cost a receive and a lookup). */
	if (now_ms() - w->batch_received_ms >
	    (int64_t)w->c->cfg->consumer.visibility_timeout_seconds * 1000 / 3)
		consumer_worker_flush_deletes(w);
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
	int64_t started = now_ms();
	consumer_handler_enter(w, slot_of(b, j));
	j->v = plugin_instance_execute_traced(w->inst, &j->job, sqs_message_traceparent(j->m), &result);
	if (!consumer_handler_leave(w)) {
		/* Abandoned: the job was recorded RETRY long ago and another
		 * worker took this one's place; only what the thread owns is
		 * freed (free_jobs()). */
		j->output = result.output;
		b->abandoned = true;
		log_warning("handler returned after its worker was abandoned; result discarded"
		            " job_id=%s", j->claim.job_id);
		return;
	}
	measured(w, now_ms() - started);
	j->output = result.output;
	j->retry_after_ms = j->v == OUTBOX_RETRY ? result.retry_after_ms : 0;
	j->executed = true;
	b->returned[b->n_returned++] = j->claim.job_id;
}

static void complete_early(struct batch *b, struct bjob *j);

/* A job that crashed a process before (consumer/suspect_turn.h). */
static bool suspect(const struct bjob *j)
{
	return j->claim.crash_count > 0;
}

/*
 * Runs j, its call counted (consumer_call_begin()) and, for a suspect,
 * the process's suspect turn taken (or waited for long enough): a suspect
 * is completed as soon as it returns and gives the turn back only then,
 * since until its completion a crash of another run would count for it
 * too.
 */
static void run_one(struct batch *b, struct bjob *j)
{
	bool ran = still_ours(b, j);

	if (ran)
		execute(b, j);
	if (b->abandoned)
		return; /* the watch took the call and the turn */
	consumer_call_end(b->w);
	if (ran && (b->each || suspect(j)))
		complete_early(b, j);
	if (suspect(j))
		suspect_turn_give(b->w);
}

/* One pass of run_all(): the won jobs recorded as started by the claim
 * (suspects false), or the others (true), each recorded by still_ours(). */
static void run_pass(struct batch *b, bool suspects)
{
	for (size_t i = 0; i < b->n; i++) {
		struct bjob *j = &b->j[i];

		if (b->abandoned)
			return;
		if (j->state != B_WON || j->claim.run_marked == suspects)
			continue;
		/* consumer_stop() may have found no handler busy just before
		 * this claim: a handler must not start outside the grace period. */
		if (consumer_stopping(b->w->c)) {
			release(b, j);
		} else if (consumer_quarantine_due(b->w, &j->claim)) {
			if (end_slot(b, j) == HEARTBEAT_KEPT)
				consumer_quarantine(b->w, j->m, &j->claim);
		} else if (!consumer_call_begin(b->w)) {
			release(b, j); /* a stop came while it waited for a free call */
		} else if (suspect(j) &&
		           suspect_turn_take(b->w, j->claim.job_id) == SUSPECT_TURN_STOPPING) {
			consumer_call_end(b->w);
			release(b, j); /* a stop came while another suspect ran */
		} else {
			run_one(b, j);
		}
	}
}

/*
 * Runs the won jobs: first those whose run the claim recorded as started,
 * then the others -- the suspects (they crashed a process before) and,
 * unless the handler is fast (mark_each()), every job but the first --
 * each recorded right before it runs, which also clears the record of
 * every run that returned before it, a suspect only while it holds the
 * process's suspect turn (run_one()).  So a job counts the crashes of
 * the runs it was recorded in; with a fast handler a crash during the
 * first pass counts for every job of that pass (they were all recorded at
 * the claim), which makes them suspects for their next run.
 * The poison-job count costs no statement unless a suspect is in the
 * batch (docs/outboxd.md, "Quarantine").
 */
static void run_all(struct batch *b)
{
	for (int pass = 0; pass < 2; pass++)
		run_pass(b, pass == 1);
}

/* Stops an executed job's heartbeat; a RETRY or FAIL goes to the failure
 * completion at once.  True when j is for the success completion. */
static bool settle(struct batch *b, struct bjob *j)
{
	if (j->state != B_WON || !j->executed)
		return false;
	if (end_slot(b, j) == HEARTBEAT_RELEASED) {
		log_warning("handler finished after its claim was released; result discarded"
		            " job_id=%s", j->claim.job_id);
		return false;
	}
	if (b->w->conn == NULL)
		return false; /* CLAIMED until its lease expires */
	if (j->v == OUTBOX_OK)
		return true;
	consumer_complete_failed(b, j, j->v == OUTBOX_RETRY ? OUTBOX_RETRY : OUTBOX_FAIL,
	                j->msg[0] ? j->msg
	                : j->v == OUTBOX_RETRY ? "handler asked for a retry"
	                                       : "handler failed permanently");
	return false;
}

static void ensure_for_verdicts(struct consumer_worker *w)
{
	if (consumer_worker_ensure(w) < 0)
		log_warning("no database connection to record the batch's verdicts; they are"
		            " retried when their leases expire dest=%s", w->dest->name);
}

/* Records the verdict of j, which just returned (mark_each(), or a suspect). */
static void complete_early(struct batch *b, struct bjob *j)
{
	struct bjob *one[1] = {j};

	ensure_for_verdicts(b->w);
	if (settle(b, j))
		consumer_complete_ok(b, one, 1);
}

/* Stops each executed job's heartbeat and records its verdict (those
 * complete_early() recorded are done already). */
static void complete_all(struct batch *b)
{
	struct bjob **todo = b->s->todo;
	size_t n = 0;

	if (b->abandoned)
		return;
	ensure_for_verdicts(b->w);
	for (size_t i = 0; i < b->n; i++) {
		if (settle(b, &b->j[i]))
			todo[n++] = &b->j[i];
	}
	if (n > 0)
		consumer_complete_ok(b, todo, n);
}

/* Frees what the jobs hold. */
static void free_jobs(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		json_decref(b->j[i].output);
		json_decref(b->j[i].payload_json);
		free(b->j[i].payload);
	}
}

/* Claim, rules, claim again what the rules allow, run, complete.  Counted
 * busy before any claim can be taken, so that consumer_stop() either
 * waits for this batch or the run sees the stop (run_pass). */
static void pipeline(struct batch *b)
{
	struct consumer_worker *w = b->w;

	consumer_busy(w->c, 1);
	if (consumer_stopping(w->c) || atomic_load(&w->c->db_trouble) ||
	    consumer_worker_ensure(w) < 0) {
		for (size_t i = 0; i < b->n; i++) {
			if (b->j[i].state == B_DONE)
				continue;
			if (consumer_stopping(w->c))
				consumer_worker_give_back(w, b->j[i].m);
			else
				w->counters.db_errors++;
		}
		consumer_busy(w->c, -1);
		return;
	}
	b->each = mark_each(w);
	claim(b);
	if (apply_rules(b) > 0)
		claim(b);
	begin_heartbeats(b);
	for (size_t i = 0; i < b->n; i++) {
		if (b->j[i].state == B_WON)
			FAULT_POINT("consumer.after_claim");
	}
	run_all(b);
	complete_all(b);
	if (!b->abandoned)
		consumer_busy(w->c, -1); /* else the watch did */
}

void consumer_batch_process(struct consumer_worker *w, const struct sqs_messages *msgs)
{
	size_t max = (size_t)w->c->cfg->consumer.claim_max;

	if (w->scratch == NULL)
		w->scratch = consumer_batch_scratch_new(max);
	if (w->scratch == NULL) {
		/* Out of memory: the messages come back after their visibility
		 * timeout. */
		log_warning("out of memory for a batch of %zu message(s) dest=%s", msgs->n,
		            w->dest->name);
		return;
	}
	for (size_t at = 0; at < msgs->n; at += max) {
		struct batch b = {.w = w, .s = w->scratch, .j = w->scratch->j,
		                  .returned = w->scratch->returned};

		choose(&b, msgs->items + at, msgs->n - at < max ? msgs->n - at : max);
		pipeline(&b);
		free_jobs(&b);
		if (b.abandoned)
			return;
	}
}
