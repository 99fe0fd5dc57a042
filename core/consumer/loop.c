/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/loop.c: a consumer worker thread's loop: receive a batch from
 * the destination's queue (one poller per queue at a time), hand it to
 * consumer/batch.c, flush the deletions it queued; nothing while the
 * destination is paused.
 *
 * Calls go one way (tests/check-layers.sh): consumer.c starts this loop,
 * the loop calls the pipeline (consumer/batch.c), which calls the rules,
 * quarantine and the session, and nothing calls back up.
 */
#include "consumer/loop.h"

#include <pthread.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/pace.h"
#include "consumer/batch.h"
#include "consumer/control.h"
#include "consumer/pause.h"
#include "consumer/session.h"

/*
 * Joins what further receives bring to a full first receive: while every
 * receive comes back full (a backlog), ask again without waiting, up to
 * [consumer] claim_max messages and [consumer] linger_max_ms.  A receive
 * that is not full ends it, so an emptying queue costs at most one more
 * request, and at low rates nothing changes.  One claim statement and one
 * completion transaction then cover the whole batch (docs/consumer.md,
 * "The pipeline").
 */
static void receive_more(struct consumer_worker *w, struct sqs_messages *msgs, size_t budget)
{
	const struct cfg *cfg = w->c->cfg;
	const struct sqs_receive_options now = consumer_receive_options(cfg, false);
	int64_t until = now_ms() + cfg->consumer.linger_max_ms;
	size_t last = msgs->n;

	while (last == SQS_MAX_BATCH_ENTRIES && msgs->n + SQS_MAX_BATCH_ENTRIES <= budget &&
	       now_ms() < until && !consumer_stopping(w->c)) {
		struct sqs_messages more = {0};
		struct aws_result res;

		if (sqs_receive_message(w->sqs, w->dest->queue_url, &now, &more, &res) < 0)
			return; /* what we have is handled; the next receive logs */
		last = more.n;
		if (sqs_messages_join(msgs, &more) < 0) {
			/* Out of memory: those messages come back after their
			 * visibility timeout. */
			sqs_messages_free(&more);
			return;
		}
	}
}

/*
 * How many messages a worker may take: as many as it can start within a
 * third of the shorter of lease and visibility (when still_ours() extends
 * a waiting claim's lease) at the destination's measured handler duration
 * -- stretched when max_in_flight makes the workers take turns -- and at
 * least one, at most [consumer] claim_max.  A slow handler thus never
 * holds claims and messages that other workers (or processes) could run
 * sooner; with a fast one (a few ms) this is claim_max and the batching
 * is unchanged.  Before anything is measured, one: the first run of a
 * process measures the handler before a batch is sized by it
 * (docs/consumer.md, "The pipeline").
 */
static size_t receive_budget(const struct consumer_worker *w)
{
	const struct cfg *cfg = w->c->cfg;
	int window_s = cfg->consumer.lease_seconds < cfg->consumer.visibility_timeout_seconds
	                   ? cfg->consumer.lease_seconds : cfg->consumer.visibility_timeout_seconds;
	long long ms = w->pace != NULL ? atomic_load(&w->pace->handler_ms) : 0;
	double per_job;
	double n;

	if (w->pace == NULL)
		return (size_t)cfg->consumer.claim_max;
	if (ms <= 0)
		return 1;
	per_job = (double)ms;
	if (w->pace->max_in_flight < cfg->consumer.workers)
		per_job *= (double)cfg->consumer.workers / w->pace->max_in_flight;
	n = (double)window_s * 1000 / 3 / per_job;
	if (n < 1)
		return 1;
	return n >= cfg->consumer.claim_max ? (size_t)cfg->consumer.claim_max : (size_t)n;
}

/* Receives in a row that waited and came back full before the next one
 * takes it for a backlog (pace_before_receive). */
#define PACE_BACKLOG_AFTER_FULL 3

/*
 * Before a receive: when messages arrive fast enough that a full receive
 * (ten) comes within [consumer] linger_max_ms of the last receive, wait
 * until then, so that one ReceiveMessage, one claim statement and one
 * completion transaction carry ten jobs instead of one or two each.  At
 * lower rates no wait: latency unchanged.  After a full receive that had
 * not waited (a backlog), no wait either: receive at once.  A receive that
 * waited and came back full is no backlog, only a rate a little faster
 * than the estimate, so the next receive waits too, until
 * PACE_BACKLOG_AFTER_FULL of them in a row say more.  Returns true when
 * it waited.  The same rule as the relay's linger (common/pace.h).
 */
static bool pace_before_receive(struct consumer_worker *w)
{
	const struct consumer_pace *p = w->pace;
	int64_t wait;

	/* After a full receive, full_waited says whether it had waited. */
	if (p == NULL || (p->last_n >= SQS_MAX_BATCH_ENTRIES &&
	                  (p->full_waited == 0 || p->full_waited >= PACE_BACKLOG_AFTER_FULL)))
		return false;
	wait = pace_wait_ms(p->rate, SQS_MAX_BATCH_ENTRIES, w->c->cfg->consumer.linger_max_ms,
	                    p->last_ms);
	if (wait <= 0)
		return false; /* no wait applies, or they had time to arrive: a backlog, maybe */
	(void)consumer_sleep(w->c, (int)wait);
	return true;
}

/*
 * After a receive (with what receive_more joined) of n messages: the
 * destination's smoothed rate.  The first receive only starts the clock;
 * an empty one (a whole long poll without an arrival) means no rate at
 * all; a full one after a wait counts ten of what may have been more, so
 * it never lowers the estimate (pace_rate()).
 */
static void pace_after_receive(struct consumer_worker *w, size_t n, bool waited)
{
	struct consumer_pace *p = w->pace;
	int64_t now = now_ms();
	bool capped = waited && n >= SQS_MAX_BATCH_ENTRIES;

	if (p == NULL)
		return;
	if (n == 0)
		p->rate = 0;
	else if (p->last_ms > 0)
		p->rate = pace_rate(p->rate, n, (double)(now - p->last_ms), capped);
	p->last_ms = now;
	p->last_n = n;
	p->full_waited = capped ? p->full_waited + 1 : 0;
}

/* ReceiveMessage with the destination's receive lock held: one poller per
 * queue at a time (the others wait for it, then poll). */
static int receive_locked(struct consumer_worker *w, struct sqs_messages *msgs)
{
	int rc = -1;
	size_t budget;
	bool waited;

	/* The gate first: after its wait it opens a new session itself.
	 * Connected before waiting for the lock (outbox-bench counts the
	 * workers' connections to know the daemon is up). */
	if (consumer_worker_gate(w) < 0)
		return -1;
	if (consumer_worker_ensure(w) < 0) {
		consumer_worker_backoff(w);
		return -1;
	}
	if (w->receive_lock != NULL)
		pthread_mutex_lock(w->receive_lock);
	waited = pace_before_receive(w);
	budget = receive_budget(w);
	if (!consumer_stopping(w->c))
		rc = consumer_worker_receive(w, w->dest->queue_url,
		                             budget < SQS_MAX_BATCH_ENTRIES ? (int)budget
		                                                            : SQS_MAX_BATCH_ENTRIES,
		                             msgs);
	/* A receive that waited took what the wait gathered: asking again at
	 * once would mostly come back empty. */
	if (rc == 0 && !waited && w->c->cfg->consumer.linger_max_ms > 0)
		receive_more(w, msgs, budget);
	if (rc == 0)
		pace_after_receive(w, msgs->n, waited);
	if (w->receive_lock != NULL)
		pthread_mutex_unlock(w->receive_lock);
	return rc;
}

/* An abandoned thread's last step: frees w's connection, SQS client and
 * scratch (nobody else does while the thread lives), then marks w
 * WORKER_GONE and touches it no more. */
static void exit_abandoned(struct consumer_worker *w)
{
	/* w->dest may be gone with a reloaded configuration: claimed_by is
	 * w's own copy.  The workers gauge was moved by the watch. */
	log_warning("an abandoned worker's handler returned; its thread exits worker=%s",
	            w->claimed_by);
	PQfinish(w->conn);
	w->conn = NULL;
	aws_http_free(w->sqs);
	w->sqs = NULL;
	consumer_batch_scratch_free(w->scratch);
	w->scratch = NULL;
	atomic_store(&w->state, WORKER_STATE(atomic_load(&w->state), WORKER_GONE));
}

void *consumer_worker_main(void *arg)
{
	struct consumer_worker *w = arg;

	while (!consumer_stopping(w->c)) {
		struct sqs_messages msgs = {0};

		metrics_progress(METRIC_THREAD_WORKER, w->dest->name);
		/* A paused destination: no receive, no claim (consumer/pause.h). */
		if (w->conn != NULL && consumer_paused(w)) {
			consumer_sleep(w->c, CONSUMER_PAUSE_READ_MS);
			continue;
		}
		if (receive_locked(w, &msgs) < 0)
			continue;
		if (consumer_paused(w)) {
			consumer_leave_paused(w, &msgs);
			/* Nothing claimed: ends the batch's database-error record
			 * without counting it as a batch that proved claims work. */
			consumer_worker_batch_done(w, 0);
			sqs_messages_free(&msgs);
			continue;
		}
		w->batch_received_ms = now_ms();
		consumer_batch_process(w, &msgs);
		if (consumer_worker_abandoned(w)) {
			/* Deletions waiting in its own port are dropped (those
			 * messages come back, and the rules delete them then);
			 * those handed to the destination's pool were copied and
			 * go out with the others. */
			sqs_messages_free(&msgs);
			exit_abandoned(w);
			return NULL;
		}
		consumer_worker_flush_deletes(w);
		consumer_worker_batch_done(w, msgs.n);
		sqs_messages_free(&msgs);
	}
	return NULL;
}
