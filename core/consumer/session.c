/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/session.c: a worker's session with its services (see
 * consumer/session.h): its database connection and SQS client (made and
 * remade), the gate that stops receiving while the database refuses
 * statements, transactions, and the message operations of its port.
 */
#include "consumer/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/backoff.h"
#include "common/log.h"
#include "common/metrics.h"
#include "consumer/control.h"
#include "consumer/liveness.h"
#include "consumer/message.h"
#include "db/db.h"
#include "db/traffic.h"

/* Reconnects, failed receives and the database gate: 0.5 s doubling to 30 s. */
#define SESSION_BACKOFF_FIRST_MS 500L
#define SESSION_BACKOFF_MAX_MS 30000L
/* Refused probes of the gate: 0.5 s doubling to 5 s (nothing is received
 * meanwhile, a probe is one statement). */
#define SESSION_PROBE_MAX_MS 5000L

/* Ends the worker's session; consumer_worker_ensure() opens the next. */
static void close_session(struct consumer_worker *w)
{
	if (w->conn == NULL)
		return;
	metrics_gauge_add(METRIC_WORKERS_UP, w->dest->name, -1);
	PQfinish(w->conn);
	w->conn = NULL;
}

int consumer_worker_ensure(struct consumer_worker *w)
{
	char err[512];

	if (w->conn != NULL && db_connection_lost(w->conn))
		consumer_worker_db_failed(w);
	if (w->conn == NULL) {
		w->conn = db_connect(w->c->cfg->database.conninfo, "outboxd consumer", err,
		                     sizeof(err));
		/* The worker's own session holds the process's liveness lock too,
		 * so a claim it makes right after PostgreSQL restarted, before the
		 * heartbeat has reconnected, never takes a run of this very process
		 * for a crash (consumer/liveness.h). */
		if (w->conn != NULL && (ledger_prepare(w->conn, err, sizeof(err)) < 0 ||
		                        liveness_hold(w->conn, err, sizeof(err)) < 0)) {
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
		log_warning(db_session_read_only(w->conn)
		                    ? "database session is read-only; reconnecting dest=%s"
		                    : "database connection lost; reconnecting dest=%s",
		            w->dest->name);
		metrics_inc(METRIC_DB_RECONNECTS, w->dest->name);
		close_session(w);
	}
}

void consumer_worker_backoff(struct consumer_worker *w)
{
	consumer_sleep(w->c, (int)backoff_doubling(SESSION_BACKOFF_FIRST_MS, SESSION_BACKOFF_MAX_MS,
	                                           ++w->backoff_failures));
}

int consumer_tx(struct consumer_worker *w, const char *verb, char *err, size_t errlen)
{
	PGresult *res = PQexec(w->conn, verb);
	int rc = 0;

	db_traffic_note_simple(verb);
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

void consumer_worker_flush_deletes(struct consumer_worker *w)
{
	w->port.ops->flush(w->port.ctx);
}

void consumer_worker_delete(struct consumer_worker *w, const struct sqs_message *m)
{
	w->port.ops->delete_message(w->port.ctx, m);
}

/* Returns 0, or -1 (logged) when the visibility could not be changed. */
int consumer_worker_set_visibility(struct consumer_worker *w, const struct sqs_message *m,
                                   int seconds, const char *job_id)
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
void consumer_worker_rearm(struct consumer_worker *w, const struct ledger_claim *claim)
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

struct sqs_receive_options consumer_receive_options(const struct cfg *cfg, bool wait)
{
	return (struct sqs_receive_options){
		.max_messages = SQS_MAX_BATCH_ENTRIES,
		.wait_time_seconds = wait ? cfg->consumer.wait_time_seconds : 0,
		.visibility_timeout = cfg->consumer.visibility_timeout_seconds,
		.trace_only = true,
	};
}

int consumer_worker_receive(struct consumer_worker *w, const char *queue_url, int max,
                            struct sqs_messages *msgs)
{
	struct sqs_receive_options opts = consumer_receive_options(w->c->cfg, true);

	opts.max_messages = max;
	/* A DLQ reader records every attribute of what it finds. */
	opts.trace_only = !w->dlq;
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
	w->backoff_failures = 0;
	return 0;
}

int consumer_worker_gate(struct consumer_worker *w)
{
	char err[512] = "no database connection";

	if (!atomic_load(&w->c->db_trouble)) {
		w->probe_refusals = 0;
		return 0;
	}
	/* While probes are refused nothing is received, so they come at most
	 * 5 s apart: receiving resumes soon after the database does, however
	 * long it refused.  A probe that passed and a batch that failed after
	 * it spent a receive of each message in it: those waits grow to 30 s. */
	long wait_ms = w->probe_refusals > 0
	                       ? backoff_doubling(SESSION_BACKOFF_FIRST_MS, SESSION_PROBE_MAX_MS,
	                                          w->probe_refusals + 1)
	                       : backoff_doubling(SESSION_BACKOFF_FIRST_MS, SESSION_BACKOFF_MAX_MS,
	                                          ++w->gate_failures);

	if (consumer_sleep(w->c, (int)wait_ms))
		return -1;
	/* A fresh session after the wait, whoever opens the gate: what
	 * refuses may be this session's own state (read-only after a
	 * failover, a changed role setting), and a session opened during the
	 * outage may be in hand even when another worker's probe has passed
	 * since.  Kept through the wait: it holds this process's liveness
	 * lock (consumer/liveness.h). */
	close_session(w);
	if (!atomic_load(&w->c->db_trouble)) {
		w->probe_refusals = 0;
		return 0;
	}
	if (consumer_worker_ensure(w) < 0 || ledger_probe(w->conn, err, sizeof(err)) < 0) {
		log_warning("the database refuses the consumer's statements; not receiving for"
		            " %ld ms: %s dest=%s", wait_ms, err, w->dest->name);
		w->probe_refusals++;
		return -1;
	}
	w->probe_refusals = 0;
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
		w->gate_failures = 0;
	w->db_failed = false;
}

void consumer_worker_give_back(struct consumer_worker *w, const struct sqs_message *m)
{
	(void)consumer_worker_set_visibility(w, m, 0, "-");
}
