/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/rules.c: a delivery the claim did not win, decided (see
 * consumer/rules.h).
 */
#include "consumer/rules.h"

#include <stdatomic.h>

#include "common/log.h"
#include "common/metrics.h"
#include "consumer/session.h"

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
	(void)consumer_worker_set_visibility(w, m, seconds, pm->job_id);
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

bool consumer_rules_apply(struct consumer_worker *w, const struct sqs_message *m,
                          const struct consumer_msg *pm, struct ledger_job *job)
{
	char err[512];
	const char *reason;
	enum consumer_action action;
	int rc, defer_s;

	rc = ledger_job_lookup(w->conn, pm->job_id, job, err, sizeof(err));
	if (rc < 0) {
		w->counters.db_errors++;
		log_warning("could not read the job: %s job_id=%s", err, pm->job_id);
		consumer_worker_db_failed(w);
		return false;
	}
	action = consumer_message_decide(w->dest->name, pm, rc == 1 ? job : NULL, &defer_s,
	                                 &reason);
	count_action(w, action);
	switch (action) {
	case CONSUMER_IGNORE:
		log_warning("ignoring message: %s dest=%s job_id=%s event_id=%s", reason,
		            w->dest->name, pm->job_id, pm->event_id);
		break;
	case CONSUMER_DELETE_TERMINAL:
		log_info("terminal skip: job is %s, message deleted dest=%s job_id=%s event_id=%s",
		         ledger_status_name(job->status), w->dest->name, pm->job_id, pm->event_id);
		consumer_worker_delete(w, m);
		break;
	case CONSUMER_DELETE_OBSOLETE:
		log_info("message of an older redrive generation deleted dest=%s job_id=%s"
		         " event_id=%s", w->dest->name, pm->job_id, pm->event_id);
		consumer_worker_delete(w, m);
		break;
	case CONSUMER_DEFER:
		defer(w, m, pm, defer_s);
		break;
	case CONSUMER_LEAVE:
		log_debug("%s; message hidden for %d s job_id=%s", reason, defer_s, pm->job_id);
		(void)consumer_worker_set_visibility(w, m, defer_s, pm->job_id);
		break;
	case CONSUMER_CLAIM:
		return true;
	}
	return false;
}

void consumer_rules_lost(struct consumer_worker *w, const struct sqs_message *m,
                         const char *job_id)
{
	struct ledger_job now;
	char err[512];
	int rc;

	/* Someone else holds it, unless it finished meanwhile. */
	w->counters.left++;
	rc = ledger_job_lookup(w->conn, job_id, &now, err, sizeof(err));
	if (rc < 0) {
		log_warning("could not read the job: %s job_id=%s", err, job_id);
		consumer_worker_db_failed(w);
	} else if (rc == 1 && (now.status == LEDGER_SUCCEEDED || now.status == LEDGER_DEAD)) {
		consumer_worker_delete(w, m);
	} else if (rc == 1 && now.lease_live) {
		(void)consumer_worker_set_visibility(
			w, m, consumer_visibility_cap(now.lease_remaining_seconds), job_id);
	}
	log_info("claim lost to another delivery dest=%s job_id=%s", w->dest->name, job_id);
}
