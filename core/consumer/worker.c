/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/worker.c: one worker thread of one destination: receive, apply
 * the per-message rules (docs/consumer.md) to each message, run claimed jobs in two
 * phases (execute outside any transaction, commit inside the transaction
 * that also records the verdict).  See docs/consumer.md.
 */
#include "consumer/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/clock.h"
#include "consumer/message.h"
#include "consumer/quarantine.h"
#include "consumer/services.h"
#include "db/db.h"
#include "common/fault.h"
#include "common/log.h"
#include "common/metrics.h"

#define MSG_LEN 1024

/* One message being handled: what every step needs. */
struct run {
	struct consumer_worker *w;
	const struct sqs_message *m;
	const struct consumer_msg *pm;
	struct ledger_claim claim;
	struct outbox_job job;
};

int consumer_worker_ensure(struct consumer_worker *w)
{
	char err[512];

	if (w->conn != NULL && db_connection_lost(w->conn))
		consumer_worker_db_failed(w);
	if (w->conn == NULL) {
		w->conn = db_connect(w->c->cfg->database.conninfo, "outboxd consumer", err,
		                     sizeof(err));
		if (w->conn != NULL && ledger_prepare(w->conn, err, sizeof(err)) < 0) {
			PQfinish(w->conn);
			w->conn = NULL;
		}
		if (w->conn == NULL) {
			log_warning("consumer could not connect to the database: %s dest=%s", err,
			            w->dest->name);
			return -1;
		}
		metrics_gauge_add(METRIC_WORKERS_UP, w->dest->name, 1);
	}
	if (w->uses_sqs && w->sqs == NULL) {
		if (aws_http_new(&w->c->env, AWS_SERVICE_SQS, &w->sqs) < 0) {
			w->sqs = NULL;
			log_warning("could not create the SQS client dest=%s", w->dest->name);
			return -1;
		}
		w->sqs_port.sqs = w->sqs;
	}
	return 0;
}

void consumer_worker_db_failed(struct consumer_worker *w)
{
	/* Whatever failed, the next receive waits until the database takes
	 * claims again (consumer_worker_gate): every receive while it refuses
	 * would count towards maxReceiveCount. */
	w->db_failed = true;
	atomic_store(&w->c->db_trouble, true);
	if (w->conn != NULL && db_connection_lost(w->conn)) {
		log_warning("database connection lost; reconnecting dest=%s", w->dest->name);
		metrics_gauge_add(METRIC_WORKERS_UP, w->dest->name, -1);
		metrics_inc(METRIC_DB_RECONNECTS, w->dest->name);
		PQfinish(w->conn);
		w->conn = NULL;
	}
}

void consumer_worker_backoff(struct consumer_worker *w)
{
	w->backoff_ms = w->backoff_ms < 500 ? 500 : w->backoff_ms * 2;
	if (w->backoff_ms > 30000)
		w->backoff_ms = 30000;
	consumer_sleep(w->c, w->backoff_ms);
}

int consumer_tx(struct consumer_worker *w, const char *verb, char *err, size_t errlen)
{
	PGresult *res = PQexec(w->conn, verb);
	int rc = 0;

	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		db_error(w->conn, res, err, errlen);
		rc = -1;
	} else if (strcmp(verb, "COMMIT") == 0 && strcmp(PQcmdStatus(res), "COMMIT") != 0) {
		snprintf(err, errlen, "the transaction was rolled back");
		rc = -1;
	}
	PQclear(res);
	return rc;
}

static void rollback(struct consumer_worker *w)
{
	char err[512];

	if (consumer_tx(w, "ROLLBACK", err, sizeof(err)) < 0)
		consumer_worker_db_failed(w);
}

void consumer_worker_flush_deletes(struct consumer_worker *w)
{
	w->port.ops->flush(w->port.ctx);
}

void consumer_worker_delete(struct consumer_worker *w, const struct sqs_message *m)
{
	w->port.ops->delete_message(w->port.ctx, m);
}

/* Returns 0, or -1 (logged) when the visibility could not be changed. */
static int set_visibility(struct consumer_worker *w, const struct sqs_message *m, int seconds,
                          const char *job_id)
{
	struct aws_result res;

	if (w->port.ops->change_visibility(w->port.ctx, m, consumer_visibility_cap(seconds),
	                                   &res) == 0)
		return 0;
	log_warning("could not change the message visibility: %s %s dest=%s job_id=%s",
	            res.code, res.message, w->dest->name, job_id);
	return -1;
}

/*
 * The job was given back (RETRY or release) but its message could not be
 * moved: it may be gone (moved to the DLQ, stale receipt handle), so the
 * job's outbox event goes back to NEW, due when the job is, and the relay
 * publishes it again.  A duplicate message, if the old one survives, only
 * meets the rules again.
 */
static void rearm(struct consumer_worker *w, const struct ledger_claim *claim)
{
	char err[512];
	int rc = ledger_rearm_event(w->conn, claim->job_id, claim->redrive_generation,
	                            "republished: the consumer could not move the message"
	                            " visibility after giving the job back", err, sizeof(err));

	if (rc < 0) {
		log_error("could not re-arm the outbox event; the job waits for a redrive: %s"
		          " job_id=%s", err, claim->job_id);
		consumer_worker_db_failed(w);
	} else if (rc == 1) {
		w->counters.rearmed++;
		log_warning("outbox event re-armed: the relay publishes the job again dest=%s"
		            " job_id=%s", w->dest->name, claim->job_id);
	}
}

/* Shutdown began between the claim and the handler: give the claim back. */
static void release_claim(struct run *r)
{
	char err[512];
	int rc = ledger_release(r->w->conn, &r->claim, err, sizeof(err));

	if (rc < 0) {
		log_warning("could not release the claim; it is retried when its lease expires:"
		            " %s job_id=%s", err, r->claim.job_id);
		consumer_worker_db_failed(r->w);
		return;
	}
	if (rc == 0)
		return;
	log_info("shutting down: claim released before the handler started job_id=%s",
	         r->claim.job_id);
	if (set_visibility(r->w, r->m, 0, r->claim.job_id) < 0)
		rearm(r->w, &r->claim);
}

/*
 * RETRY: back to PENDING with backoff and, in the same statement, the
 * job's outbox event re-armed to be published when the job is due; then
 * the message is deleted, so a retry never counts as a receive towards
 * maxReceiveCount.  When nothing could be re-armed (a relay is sending the
 * event right now), the message is kept and reappears when due.  A broken
 * connection is reopened first: the CAS binds the claim, so recording the
 * retry is safe whatever happened to the transaction that broke.
 */
static void complete_retry(struct run *r, const char *why)
{
	const struct cfg *cfg = r->w->c->cfg;
	int delay = consumer_backoff_seconds(cfg->relay.retry_base_seconds,
	                                     cfg->relay.retry_max_seconds, r->claim.attempt_count);
	char err[512] = "no database connection";
	bool rearmed = false;
	int rc = consumer_worker_ensure(r->w) < 0
		         ? -1
		         : ledger_retry(r->w->conn, &r->claim, delay, why, &rearmed, err, sizeof(err));

	if (rc < 0) {
		log_warning("could not record the retry; the job is retried when its lease"
		            " expires: %s job_id=%s", err, r->claim.job_id);
		consumer_worker_db_failed(r->w);
		return;
	}
	if (rc == 0) {
		r->w->counters.lost_claims++;
		log_warning("lost the claim; retry not recorded job_id=%s", r->claim.job_id);
		return;
	}
	r->w->counters.retried++;
	metrics_inc(METRIC_JOBS_RETRIED, r->w->dest->name);
	log_info("job will be retried in %d s: %s dest=%s job_id=%s attempt=%d", delay, why,
	         r->w->dest->name, r->claim.job_id, r->claim.attempt_count);
	if (rearmed) {
		r->w->counters.rearmed++;
		consumer_worker_delete(r->w, r->m);
	} else if (set_visibility(r->w, r->m, delay, r->claim.job_id) < 0) {
		rearm(r->w, &r->claim);
	}
}

/*
 * Rule 4, a delivery before the job is due: the wake-up goes to
 * PostgreSQL (the job's outbox event re-armed, due when the job is) and
 * the message is deleted, so early deliveries never count towards
 * maxReceiveCount.  When nothing could be re-armed (the relay is sending
 * the event right now, or the job changed meanwhile), the message is
 * hidden until the due time instead.
 */
static void defer(struct consumer_worker *w, const struct sqs_message *m,
                  const struct consumer_msg *pm, int seconds)
{
	char err[512];
	int rc = ledger_rearm_event(w->conn, pm->job_id, pm->redrive_generation,
	                            "re-armed: a delivery came before the job was due; the"
	                            " relay publishes a fresh one when it is", err, sizeof(err));

	if (rc < 0) {
		w->counters.db_errors++;
		log_warning("could not re-arm the outbox event of a job not due: %s job_id=%s", err,
		            pm->job_id);
		consumer_worker_db_failed(w);
		return;
	}
	if (rc == 1) {
		log_debug("job not due; message deleted, its outbox event re-armed job_id=%s",
		          pm->job_id);
		w->counters.rearmed++;
		consumer_worker_delete(w, m);
		return;
	}
	log_debug("job not due; message deferred by %d s job_id=%s", seconds, pm->job_id);
	(void)set_visibility(w, m, seconds, pm->job_id);
}

/* FAIL: DEAD (PERMANENT), message deleted. */
static void complete_fail(struct run *r, const char *why)
{
	char err[512] = "no database connection";
	int rc = consumer_worker_ensure(r->w) < 0
		         ? -1
		         : ledger_fail(r->w->conn, &r->claim, "PERMANENT", why, err, sizeof(err));

	if (rc < 0) {
		log_warning("could not record the failure: %s job_id=%s", err, r->claim.job_id);
		consumer_worker_db_failed(r->w);
		return;
	}
	if (rc == 0) {
		r->w->counters.lost_claims++;
		log_warning("lost the claim; failure not recorded job_id=%s", r->claim.job_id);
		return;
	}
	r->w->counters.failed++;
	metrics_inc(METRIC_JOBS_DEAD_PERMANENT, r->w->dest->name);
	log_warning("job failed permanently: %s dest=%s job_id=%s", why, r->w->dest->name,
	            r->claim.job_id);
	consumer_worker_delete(r->w, r->m);
}

/*
 * The success CAS of a price job matched nothing: if the claim is still
 * ours and the window was corrected meanwhile, the job is stale (DEAD
 * 'STALE', decided under the window row lock) and its message goes.
 * Called after the completion transaction was rolled back.
 */
static void stale_or_lost(struct run *r)
{
	struct consumer_worker *w = r->w;
	char err[512];
	int rc = r->claim.has_price_window ? ledger_mark_stale_claimed(w->conn, &r->claim, err,
	                                                         sizeof(err))
	                             : 0;

	if (rc == 1) {
		w->counters.stale++;
		metrics_inc(METRIC_JOBS_DEAD_STALE, w->dest->name);
		log_warning("price window corrected while the job ran; marked DEAD STALE, the"
		            " handler's writes are discarded dest=%s job_id=%s", w->dest->name,
		            r->claim.job_id);
		consumer_worker_delete(w, r->m);
		return;
	}
	if (rc < 0) {
		log_warning("could not mark the job stale; it is decided when its lease expires:"
		            " %s job_id=%s", err, r->claim.job_id);
		consumer_worker_db_failed(w);
		return;
	}
	w->counters.lost_claims++;
	log_warning("lost the claim; the handler's writes are discarded job_id=%s",
	            r->claim.job_id);
}

/* commit() with the completion transaction open; OUTBOX_OK when the
 * success CAS may follow, else the transaction is rolled back and the
 * verdict recorded. */
static enum outbox_verdict plugin_commit(struct run *r, const json_t *output)
{
	struct consumer_worker *w = r->w;
	struct outbox_tx tx = {.conn = w->conn};
	char err[MSG_LEN] = "";
	enum outbox_verdict v = plugin_instance_commit(w->inst, &r->job, output, &tx, err,
	                                               sizeof(err));

	if (consumer_tx_violated(&tx)) {
		rollback(w);
		log_warning("%s; the job fails dest=%s job_id=%s", tx.why, w->dest->name,
		            r->claim.job_id);
		complete_fail(r, tx.why);
		return OUTBOX_FAIL;
	}
	if (v == OUTBOX_OK)
		return v;
	rollback(w);
	if (v == OUTBOX_FAIL)
		complete_fail(r, err);
	else
		complete_retry(r, err[0] ? err : "commit() asked for a retry");
	return v;
}

/* OK: the plugin's commit() and the CAS to SUCCEEDED in one transaction. */
static void complete_ok(struct run *r, const json_t *output)
{
	struct consumer_worker *w = r->w;
	char err[MSG_LEN];
	int rc;

	if (consumer_tx(w, "BEGIN", err, sizeof(err)) < 0) {
		log_warning("could not begin the completion: %s job_id=%s", err, r->claim.job_id);
		consumer_worker_db_failed(w);
		return;
	}
	if (plugin_commit(r, output) != OUTBOX_OK)
		return;
	rc = ledger_succeed(w->conn, &r->claim, err, sizeof(err));
	if (rc <= 0) {
		rollback(w);
		if (rc == 0)
			stale_or_lost(r);
		else
			complete_retry(r, err);
		return;
	}
	FAULT_POINT("consumer.in_commit");
	if (consumer_tx(w, "COMMIT", err, sizeof(err)) < 0) {
		log_error("could not commit the completion; the job is retried when its lease"
		          " expires: %s job_id=%s", err, r->claim.job_id);
		consumer_worker_db_failed(w);
		return;
	}
	w->counters.succeeded++;
	metrics_inc(METRIC_JOBS_SUCCEEDED, w->dest->name);
	log_info("job succeeded dest=%s job_id=%s attempt=%d", w->dest->name, r->claim.job_id,
	         r->claim.attempt_count);
	consumer_worker_delete(w, r->m);
}

/* The heartbeat of r's handler: its message, then the batch's waiting ones. */
static void begin_heartbeat(struct run *r, const char **handles)
{
	struct consumer_worker *w = r->w;
	struct heartbeat_job hj = {&r->claim, w->dest->queue_url, handles, 1, w->batch_received_ms};

	handles[0] = r->m->receipt_handle;
	for (size_t i = 0; i < w->n_waiting && hj.n_handles < SQS_MAX_BATCH_ENTRIES; i++)
		handles[hj.n_handles++] = w->waiting[i];
	heartbeat_begin(w->c->hb, w->slot, &hj);
}

/* The verdict of execute(), recorded unless the claim was released. */
static void complete(struct run *r, enum outbox_verdict v, const char *msg,
                     const json_t *output)
{
	enum heartbeat_outcome hb =
		r->w->c->hb != NULL ? heartbeat_end(r->w->c->hb, r->w->slot) : HEARTBEAT_KEPT;

	if (hb == HEARTBEAT_RELEASED)
		log_warning("handler finished after its claim was released; result discarded"
		            " job_id=%s", r->claim.job_id);
	else if (v == OUTBOX_OK)
		complete_ok(r, output);
	else if (v == OUTBOX_RETRY)
		complete_retry(r, msg[0] ? msg : "handler asked for a retry");
	else
		complete_fail(r, msg[0] ? msg : "handler failed permanently");
}

/* The winner of the claim runs the handler (counted busy by the caller). */
static void run_claimed(struct run *r, const char *payload)
{
	struct consumer_worker *w = r->w;
	char msg[MSG_LEN] = "";
	struct outbox_result result = {.msg = msg, .msg_size = sizeof(msg)};
	const char *handles[SQS_MAX_BATCH_ENTRIES];
	json_t *payload_json;
	enum outbox_verdict v;

	FAULT_POINT("consumer.after_claim");
	/* consumer_stop() may have found no handler busy just before this
	 * claim: a handler must not start outside the grace period. */
	if (consumer_stopping(w->c)) {
		release_claim(r);
		return;
	}
	if (consumer_quarantine_due(w, &r->claim)) {
		consumer_quarantine(w, r->m, &r->claim);
		return;
	}
	payload_json = json_loads(payload, JSON_DECODE_ANY, NULL);
	r->job = (struct outbox_job){r->claim.job_id, r->pm->job_type, w->dest->name,
	                             payload_json, r->claim.attempt_count,
	                             r->claim.redrive_generation};
	/* Deletions of the batch's earlier messages wait for one
	 * DeleteMessageBatch at its end, unless the batch is old enough that a
	 * long handler now could let them reappear (they would only be
	 * terminal skips, but each costs a receive and a delete). */
	if (now_ms() - w->batch_received_ms >
	    (int64_t)w->c->cfg->consumer.visibility_timeout_seconds * 1000 / 3)
		consumer_worker_flush_deletes(w);
	if (w->c->hb != NULL)
		begin_heartbeat(r, handles);
	FAULT_POINT("consumer.in_execute");
	w->counters.handler_runs++;
	if (w->c->hb != NULL)
		heartbeat_running(w->c->hb, w->slot, w->dest->handler_timeout_seconds, w->dest->name);
	metrics_observe(METRIC_START_LATENCY_SECONDS, w->dest->name,
	                (double)wall_clock_ms() / 1000 - r->claim.due_epoch);
	v = plugin_instance_execute_traced(w->inst, &r->job, sqs_message_traceparent(r->m), &result);
	complete(r, v, msg, result.output);
	json_decref(result.output);
	json_decref(payload_json);
}

/*
 * Rule 4 (price window) and rule 5 in one transaction: the window row is
 * share-locked while staleness is decided and the claim taken.  Returns 1
 * claimed, 2 marked stale, 0 lost, -1 error.
 */
static int claim_price(struct consumer_worker *w, const struct ledger_job *job,
                       const struct ledger_binding *binding, struct ledger_claim *claim,
                       char **payload, char *err, size_t errlen)
{
	int gen = 0, rc;

	if (consumer_tx(w, "BEGIN", err, errlen) < 0)
		return -1;
	rc = ledger_price_window_lock(w->conn, job->window_symbol, job->window_start, &gen, err, errlen);
	if (rc == 1 && job->window_generation < gen) {
		rc = ledger_mark_stale(w->conn, job->job_id, job->redrive_generation, err, errlen);
		rc = rc == 1 ? 2 : rc;
	} else if (rc >= 0) {
		rc = ledger_claim(w->conn, job->job_id, job->redrive_generation, binding,
		                  w->claimed_by, w->c->cfg->consumer.lease_seconds, claim, payload,
		                  err, errlen);
	}
	if (rc < 0 || consumer_tx(w, "COMMIT", err, errlen) < 0) {
		rollback(w);
		free(*payload);
		*payload = NULL;
		return -1;
	}
	return rc;
}

static void claim_and_run(struct run *r, const struct ledger_job *job)
{
	struct consumer_worker *w = r->w;
	char err[512];
	char *payload = NULL;
	struct ledger_job now;
	/* Bound to the queue the message came from, in the CAS itself. */
	const struct ledger_binding binding = {w->dest->name, r->pm->job_type,
	                                       r->pm->has_price_window, r->pm->window_generation};
	int rc;

	if (job->has_price_window)
		rc = claim_price(w, job, &binding, &r->claim, &payload, err, sizeof(err));
	else
		rc = ledger_claim(w->conn, job->job_id, job->redrive_generation, &binding,
		                  w->claimed_by, w->c->cfg->consumer.lease_seconds, &r->claim,
		                  &payload, err, sizeof(err));
	if (rc < 0) {
		w->counters.db_errors++;
		log_warning("could not claim the job: %s job_id=%s", err, job->job_id);
		consumer_worker_db_failed(w);
	} else if (rc == 2) {
		w->counters.stale++;
		metrics_inc(METRIC_JOBS_DEAD_STALE, w->dest->name);
		log_warning("price job is stale: its window has a newer generation; marked DEAD"
		            " dest=%s job_id=%s", w->dest->name, job->job_id);
		consumer_worker_delete(w, r->m);
	} else if (rc == 0) {
		/* Someone else holds it, unless it finished meanwhile. */
		w->counters.left++;
		rc = ledger_job_lookup(w->conn, job->job_id, &now, err, sizeof(err));
		if (rc == 1 && (now.status == LEDGER_SUCCEEDED || now.status == LEDGER_DEAD))
			consumer_worker_delete(w, r->m);
		else if (rc == 1 && now.lease_live)
			(void)set_visibility(w, r->m, consumer_visibility_cap(now.lease_remaining_seconds),
			                     job->job_id);
		log_info("claim lost to another delivery dest=%s job_id=%s", w->dest->name,
		         job->job_id);
	} else {
		w->counters.claims++;
		metrics_inc(METRIC_JOBS_CLAIMED, w->dest->name);
		run_claimed(r, payload);
	}
	free(payload);
}

/*
 * The common case first: one statement that claims the job only if every
 * rule would let this message claim it (ledger_claim_direct).  Returns
 * true when the message was handled (claimed and run, or a database
 * error), false when the rules must decide.
 */
static bool try_direct_claim(struct consumer_worker *w, const struct sqs_message *m,
                             const struct consumer_msg *pm)
{
	struct run r = {.w = w, .m = m, .pm = pm};
	char err[512];
	char *payload = NULL;
	int rc;

	if (pm->has_price_window || strcmp(pm->destination, w->dest->name) != 0)
		return false;
	rc = ledger_claim_direct(w->conn, pm->job_id, pm->redrive_generation, w->dest->name,
	                         pm->job_type, w->claimed_by, w->c->cfg->consumer.lease_seconds,
	                         &r.claim, &payload, err, sizeof(err));
	if (rc == 0)
		return false;
	if (rc < 0) {
		w->counters.db_errors++;
		log_warning("could not claim the job: %s job_id=%s", err, pm->job_id);
		consumer_worker_db_failed(w);
		return true;
	}
	w->counters.claims++;
	metrics_inc(METRIC_JOBS_CLAIMED, w->dest->name);
	run_claimed(&r, payload);
	free(payload);
	return true;
}

/* Counts what the rule choice did with a delivery (claims count later). */
static void count_action(struct consumer_worker *w, enum consumer_action a)
{
	switch (a) {
	case CONSUMER_IGNORE:
		w->counters.ignored++;
		break;
	case CONSUMER_DELETE_TERMINAL:
		w->counters.terminal_skips++;
		metrics_inc(METRIC_DUPLICATES_SKIPPED, w->dest->name);
		atomic_fetch_add(&w->c->terminal_skips, 1);
		break;
	case CONSUMER_DELETE_OBSOLETE:
		w->counters.obsolete_deletes++;
		metrics_inc(METRIC_DUPLICATES_SKIPPED, w->dest->name);
		break;
	case CONSUMER_DEFER:
		w->counters.deferred++;
		break;
	case CONSUMER_LEAVE:
		w->counters.left++;
		break;
	case CONSUMER_CLAIM:
		break;
	}
}

static void process(struct consumer_worker *w, const struct sqs_message *m)
{
	struct consumer_msg pm;
	struct ledger_job job;
	char why[256], err[512];
	const char *reason;
	enum consumer_action action;
	int rc, defer_s;

	w->counters.deliveries++;
	if (consumer_message_parse(m->body, m->body_len, &pm, why, sizeof(why)) < 0) {
		w->counters.ignored++;
		log_warning("ignoring a message that is not an outbox event: %s dest=%s"
		            " message_id=%s", why, w->dest->name, m->message_id);
		return;
	}
	/* The database refused a statement of this or another worker: leave
	 * the message alone until it takes claims again (consumer_worker_gate). */
	if (atomic_load(&w->c->db_trouble) || consumer_worker_ensure(w) < 0) {
		w->counters.db_errors++;
		return;
	}
	if (try_direct_claim(w, m, &pm))
		return;
	rc = ledger_job_lookup(w->conn, pm.job_id, &job, err, sizeof(err));
	if (rc < 0) {
		w->counters.db_errors++;
		log_warning("could not read the job: %s job_id=%s", err, pm.job_id);
		consumer_worker_db_failed(w);
		return;
	}
	struct run r = {.w = w, .m = m, .pm = &pm};
	action = consumer_message_decide(w->dest->name, &pm, rc == 1 ? &job : NULL, &defer_s,
	                                 &reason);
	count_action(w, action);
	switch (action) {
	case CONSUMER_IGNORE:
		log_warning("ignoring message: %s dest=%s job_id=%s event_id=%s", reason,
		            w->dest->name, pm.job_id, pm.event_id);
		break;
	case CONSUMER_DELETE_TERMINAL:
		log_info("terminal skip: job is %s, message deleted dest=%s job_id=%s event_id=%s",
		         ledger_status_name(job.status), w->dest->name, pm.job_id, pm.event_id);
		consumer_worker_delete(w, m);
		break;
	case CONSUMER_DELETE_OBSOLETE:
		log_info("message of an older redrive generation deleted dest=%s job_id=%s"
		         " event_id=%s", w->dest->name, pm.job_id, pm.event_id);
		consumer_worker_delete(w, m);
		break;
	case CONSUMER_DEFER:
		defer(w, m, &pm, defer_s);
		break;
	case CONSUMER_LEAVE:
		log_debug("%s; message hidden for %d s job_id=%s", reason, defer_s, pm.job_id);
		(void)set_visibility(w, m, defer_s, pm.job_id);
		break;
	case CONSUMER_CLAIM:
		claim_and_run(&r, &job);
		break;
	}
}

/*
 * Counted busy before any claim can be taken, so that consumer_stop()
 * either waits for this message or the claim sees the stop (run_claimed).
 */
void consumer_worker_process(struct consumer_worker *w, const struct sqs_message *m)
{
	consumer_busy(w->c, 1);
	process(w, m);
	consumer_busy(w->c, -1);
}

int consumer_worker_receive(struct consumer_worker *w, const char *queue_url,
                            struct sqs_messages *msgs)
{
	const struct cfg *cfg = w->c->cfg;
	const struct sqs_receive_options opts = {SQS_MAX_BATCH_ENTRIES,
	                                         cfg->consumer.wait_time_seconds,
	                                         cfg->consumer.visibility_timeout_seconds};
	struct aws_result res;

	if (consumer_worker_ensure(w) < 0) {
		consumer_worker_backoff(w);
		return -1;
	}
	if (sqs_receive_message(w->sqs, queue_url, &opts, msgs, &res) < 0) {
		log_warning("could not receive messages: %s %s dest=%s queue=\"%s\"", res.code,
		            res.message, w->dest->name, queue_url);
		sqs_messages_free(msgs);
		consumer_worker_backoff(w);
		return -1;
	}
	w->backoff_ms = 0;
	return 0;
}

int consumer_worker_gate(struct consumer_worker *w)
{
	char err[512] = "no database connection";

	if (!atomic_load(&w->c->db_trouble))
		return 0;
	w->db_backoff_ms = w->db_backoff_ms < 500 ? 500 : w->db_backoff_ms * 2;
	if (w->db_backoff_ms > 30000)
		w->db_backoff_ms = 30000;
	if (consumer_sleep(w->c, w->db_backoff_ms))
		return -1;
	if (!atomic_load(&w->c->db_trouble))
		return 0;
	if (consumer_worker_ensure(w) < 0 || ledger_probe(w->conn, err, sizeof(err)) < 0) {
		log_warning("the database refuses the consumer's statements; not receiving for"
		            " %d ms: %s dest=%s", w->db_backoff_ms, err, w->dest->name);
		/* A fresh session next time: what refuses may be this session's
		 * state (read-only after a failover, a changed role setting). */
		PQfinish(w->conn);
		w->conn = NULL;
		return -1;
	}
	if (atomic_exchange(&w->c->db_trouble, false))
		log_info("the database takes the consumer's statements again; receiving resumes"
		         " dest=%s", w->dest->name);
	return 0;
}

void consumer_worker_batch_done(struct consumer_worker *w, size_t n_messages)
{
	/* The backoff of consumer_worker_gate() keeps growing until a batch is
	 * handled without a database error: a probe that passes does not
	 * prove that claims work (a full disk fails only real writes). */
	if (n_messages > 0 && !w->db_failed)
		w->db_backoff_ms = 0;
	w->db_failed = false;
}

void consumer_worker_retry(struct consumer_worker *w, const struct sqs_message *m,
                           const struct ledger_claim *claim, const char *why)
{
	struct run r = {.w = w, .m = m, .claim = *claim};

	complete_retry(&r, why);
}

void consumer_worker_fail(struct consumer_worker *w, const struct sqs_message *m,
                          const struct ledger_claim *claim, const char *why)
{
	struct run r = {.w = w, .m = m, .claim = *claim};

	complete_fail(&r, why);
}

void consumer_worker_release(struct consumer_worker *w, const struct sqs_message *m,
                             const struct ledger_claim *claim)
{
	struct run r = {.w = w, .m = m, .claim = *claim};

	release_claim(&r);
}

void consumer_worker_give_back(struct consumer_worker *w, const struct sqs_message *m)
{
	(void)set_visibility(w, m, 0, "-");
}
