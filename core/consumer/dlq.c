/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/dlq.c: the dead-letter queue reader of one destination (rule 7
 * of docs/consumer.md).  For every message: record the evidence in
 * outbox.dlq_messages and, if the body names a job of this destination
 * and generation that is non-terminal without a live lease, decide it in
 * the same transaction: fewer than DLQ_REARM_MAX arrivals so far, the
 * arrival is counted and the job gets a fresh message (a receive count
 * spent by processes that died is no evidence against it); else DEAD
 * 'DLQ'.  After COMMIT delete the DLQ copy.
 *
 * A copy whose job is non-terminal under a live lease is neither recorded
 * nor deleted: the handler may still give the job back (RETRY, release)
 * and then this copy may be its only message.  Its visibility is set to
 * the rest of the lease plus DLQ_LEASE_MARGIN_SECONDS, and it is decided
 * again then (terminal: recorded and deleted; claimable: DEAD 'DLQ').
 *
 * Outcomes recorded: rearmed, marked_dead, unparseable, wrong_destination (the body
 * names another destination, or the job it names is of another
 * destination, job type or window generation: the job is not touched),
 * unknown_job, already_terminal, obsolete_generation.
 */
#include "consumer/dlq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "consumer/control.h"
#include "consumer/message.h"
#include "consumer/session.h"
#include "common/log.h"
#include "common/metrics.h"

#define DLQ_LEASE_MARGIN_SECONDS 2
/* DLQ arrivals of one job (one redrive generation) that get a fresh
 * message; the next one marks it DEAD 'DLQ' (docs/consumer.md,
 * "Dead-letter arrivals"). */
#define DLQ_REARM_MAX 3

/* Not an outcome that is recorded: the copy is kept (see above). */
static const char leased[] = "leased";

/* Does the job belong to this DLQ's destination and to the message's
 * job type and window generation (what ledger_mark_dlq binds)? */
static bool job_matches(const struct consumer_worker *w, const struct consumer_msg *pm,
                        const struct ledger_job *job)
{
	return strcmp(job->destination, w->dest->name) == 0 &&
	       strcmp(job->job_type, pm->job_type) == 0 &&
	       job->has_price_window == pm->has_price_window &&
	       (!job->has_price_window || job->window_generation == pm->window_generation);
}

/* Why the job was not marked (the CAS matched nothing); *lease_left is set
 * for "leased". */
static const char *not_marked_outcome(struct consumer_worker *w, const struct consumer_msg *pm,
                                      double *lease_left, char *err, size_t errlen)
{
	struct ledger_job job;
	int rc = ledger_job_lookup(w->conn, pm->job_id, &job, err, errlen);

	if (rc < 0)
		return NULL;
	if (rc == 0)
		return "unknown_job";
	if (!job_matches(w, pm, &job))
		return "wrong_destination";
	if (job.status == LEDGER_SUCCEEDED || job.status == LEDGER_DEAD)
		return "already_terminal";
	if (job.redrive_generation != pm->redrive_generation)
		return "obsolete_generation";
	*lease_left = job.lease_remaining_seconds;
	return leased;
}

/* The outcome for a parsed message, inside the open transaction. */
static const char *decide(struct consumer_worker *w, const struct consumer_msg *pm,
                          double *lease_left, char *err, size_t errlen)
{
	int rc;

	const struct ledger_binding binding = {w->dest->name, pm->job_type, pm->has_price_window,
	                                       pm->window_generation};

	if (strcmp(pm->destination, w->dest->name) != 0)
		return "wrong_destination";
	/* The CAS itself binds the job to this DLQ's destination: a copy on
	 * another destination's DLQ (whatever its body says) never kills it. */
	rc = ledger_rearm_dlq(w->conn, pm->job_id, pm->redrive_generation, &binding,
	                      DLQ_REARM_MAX, err, errlen);
	if (rc < 0)
		return NULL;
	if (rc == 1)
		return "rearmed";
	rc = ledger_mark_dlq(w->conn, pm->job_id, pm->redrive_generation, &binding, err, errlen);
	if (rc < 0)
		return NULL;
	if (rc == 1)
		return "marked_dead";
	return not_marked_outcome(w, pm, lease_left, err, errlen);
}

/* {system attributes..., "MessageAttributes": {...}} as text; NULL if none. */
static char *attributes_json(const struct sqs_message *m)
{
	json_t *obj = m->attributes != NULL ? json_deep_copy(m->attributes) : json_object();
	char *text = NULL;

	if (obj == NULL)
		return NULL;
	if (m->message_attributes != NULL &&
	    json_object_set_new(obj, "MessageAttributes",
	                        json_deep_copy(m->message_attributes)) < 0)
		goto out;
	text = json_dumps(obj, JSON_COMPACT);
out:
	json_decref(obj);
	return text;
}

static void rollback_dlq(struct consumer_worker *w)
{
	char ignored[64];

	if (consumer_tx(w, "ROLLBACK", ignored, sizeof(ignored)) < 0)
		consumer_worker_db_failed(w);
}

/*
 * Returns 0 when recorded (the copy may be deleted), 1 when the job is
 * under a live lease (nothing recorded; *keep_seconds: how long to hide
 * the copy), -1 otherwise.
 */
static int record(struct consumer_worker *w, const struct sqs_message *m, int *keep_seconds)
{
	struct consumer_msg pm;
	char why[256], err[512];
	char *attrs = attributes_json(m);
	bool parsed = consumer_message_parse(m->body, m->body_len, &pm, why, sizeof(why)) == 0;
	const char *outcome = "unparseable";
	double lease_left = 0;
	int rc = -1;

	if (consumer_tx(w, "BEGIN", err, sizeof(err)) < 0)
		goto out;
	if (parsed)
		outcome = decide(w, &pm, &lease_left, err, sizeof(err));
	if (outcome == leased) {
		rollback_dlq(w);
		/* The margin added first: the sum stays in the SQS range. */
		*keep_seconds = consumer_visibility_cap(lease_left + DLQ_LEASE_MARGIN_SECONDS);
		log_warning("job is under a live lease; dead-letter message kept for %d s"
		            " dest=%s message_id=%s job_id=%s", *keep_seconds, w->dest->name,
		            m->message_id, pm.job_id);
		rc = 1;
		goto out;
	}
	const struct ledger_dlq_record rec = {
		w->dest->name, m->message_id, parsed ? pm.job_id : NULL,
		parsed ? pm.event_id : NULL, m->body, attrs, m->receive_count, outcome,
	};
	if (outcome == NULL || ledger_record_dlq(w->conn, &rec, err, sizeof(err)) < 0 ||
	    consumer_tx(w, "COMMIT", err, sizeof(err)) < 0) {
		rollback_dlq(w);
		goto out;
	}
	metrics_add(METRIC_JOBS_DEAD_DLQ, w->dest->name, strcmp(outcome, "marked_dead") == 0);
	log_warning("dead-letter message recorded: %s dest=%s message_id=%s job_id=%s"
	            " receive_count=%d", outcome, w->dest->name, m->message_id,
	            parsed ? pm.job_id : "-", m->receive_count);
	rc = 0;
out:
	if (rc < 0) {
		log_warning("could not record a dead-letter message: %s dest=%s message_id=%s", err,
		            w->dest->name, m->message_id);
		consumer_worker_db_failed(w);
	}
	free(attrs);
	return rc;
}

/* One DLQ copy: recorded and deleted, or kept hidden while leased. */
static void handle(struct consumer_worker *w, const struct sqs_message *m)
{
	struct aws_result res;
	int keep = 0;
	int rc;

	if (consumer_worker_ensure(w) < 0)
		return;
	rc = record(w, m, &keep);
	if (rc == 0) {
		consumer_worker_delete(w, m);
	} else if (rc == 1 && w->port.ops->change_visibility(w->port.ctx, m, keep, &res) < 0) {
		/* It reappears after the receive's visibility timeout instead. */
		log_warning("could not hide a dead-letter message: %s %s dest=%s message_id=%s",
		            res.code, res.message, w->dest->name, m->message_id);
	}
}

void *consumer_dlq_main(void *arg)
{
	struct consumer_worker *w = arg;

	while (!consumer_stopping(w->c)) {
		struct sqs_messages msgs = {0};

		metrics_progress(METRIC_THREAD_WORKER, w->dest->name);
		if (consumer_worker_gate(w) < 0 ||
		    consumer_worker_receive(w, w->dest->dlq_url, SQS_MAX_BATCH_ENTRIES, &msgs) < 0)
			continue;
		for (size_t i = 0; i < msgs.n; i++)
			handle(w, &msgs.items[i]);
		consumer_worker_flush_deletes(w);
		consumer_worker_batch_done(w, msgs.n);
		sqs_messages_free(&msgs);
	}
	return NULL;
}
