/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/relay.c: the relay's threads: one per destination lane, plus the
 * listener (relay/listener.c).  The pass itself is in relay/lane.c.
 *
 * A lane loops: pass; if the claim was full, pass again at once (the
 * claim's limit grows meanwhile, relay/lane.h), unless the lane is pacing
 * and fewer than RELAY_BACKLOG_AFTER_FULL full claims came in a row; if
 * it was not, but events arrive fast enough that a full SendMessageBatch
 * comes within [relay] linger_max_ms, linger until then and pass again,
 * claiming one batch at a time while it lingers (relay_linger_ms(),
 * lane_pace()); else sleep until woken by a notification or
 * poll_interval_ms.  A database
 * failure sleeps relay_reconnect_delay_ms(); a request that failed as a
 * whole sleeps the lane's own backoff (relay_backoff_ms()), which ignores
 * notifications: a failing queue must not be hammered, and the lane's
 * sleep never blocks another lane.
 */
#include "relay/relay.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws/env.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/pace.h"
#include "relay/publisher.h"
#include "relay/backoff.h"
#include "relay/listener.h"

/* A busy lane polls every linger_max_ms / RELAY_BUSY_POLL_DIVISOR, and
 * goes idle after RELAY_IDLE_AFTER_EMPTY empty polls in a row
 * (relay_busy_poll_ms). */
#define RELAY_BUSY_POLL_DIVISOR 2
#define RELAY_IDLE_AFTER_EMPTY 8
/* Paced passes in a row that come back full before the lane takes it for
 * a backlog (lane_main). */
#define RELAY_BACKLOG_AFTER_FULL 3

struct relay_thread {
	struct relay *r;                     /* back pointer */
	const struct cfg_destination *dest;  /* borrowed from cfg */
	struct relay_lane *lane;             /* owned */
	struct publisher *pub;               /* owned */
	pthread_t tid;
	bool started;
	bool sync_ready;                     /* mu and cv initialised */
	pthread_mutex_t mu;
	pthread_cond_t cv;                   /* CLOCK_MONOTONIC */
	bool woken;                          /* under mu */
	int db_failures;
	int send_failures;
	double rate;                         /* events per ms, smoothed (common/pace.h) */
	int empty_polls;                     /* empty passes in a row (relay_busy_poll_ms) */
	bool busy;                           /* polling on its own, not notified */
	int64_t last_pass_ms;                /* CLOCK_MONOTONIC start of the last pass */
	bool paced;                          /* lingering between passes (lane_pace) */
	int full_paced;                      /* paced passes in a row that were full */
};

struct relay {
	const struct cfg *cfg;        /* borrowed */
	struct aws_env env;           /* owned; only for the "sqs" publisher */
	struct relay_thread *lanes;   /* owned; cfg->n_destinations */
	size_t n;
	atomic_bool stop;
	struct relay_listener *listener;
};

static bool relay_stopping(struct relay *r)
{
	return atomic_load(&r->stop);
}

static void lane_wake(struct relay_thread *t)
{
	pthread_mutex_lock(&t->mu);
	t->woken = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

static void wake_lanes(void *arg, const char *destination)
{
	struct relay *r = arg;

	for (size_t i = 0; i < r->n; i++) {
		if (destination == NULL || strcmp(r->lanes[i].dest->name, destination) == 0)
			lane_wake(&r->lanes[i]);
	}
}

/*
 * Sleeps up to ms, or until stop; also until a wake-up when wakeable.  A
 * wake-up that arrived during the pass ends the next sleep at once, so
 * none is lost.
 */
static void lane_sleep(struct relay_thread *t, long ms, bool wakeable)
{
	struct timespec deadline;

	monotonic_deadline(&deadline, ms);
	pthread_mutex_lock(&t->mu);
	while (!relay_stopping(t->r) && !(wakeable && t->woken)) {
		if (pthread_cond_timedwait(&t->cv, &t->mu, &deadline) != 0)
			break;
	}
	if (wakeable)
		t->woken = false;
	pthread_mutex_unlock(&t->mu);
}

static void lane_send_failed(struct relay_thread *t, const struct relay_pass_stats *st)
{
	const struct cfg *cfg = t->r->cfg;
	long ms;

	t->send_failures++;
	ms = relay_backoff_ms(cfg->relay.retry_base_seconds, cfg->relay.retry_max_seconds,
	                      t->send_failures);
	/* A permanent whole-request error is a misconfiguration (missing queue,
	 * no permission): the events stay NEW until an operator fixes it. */
	if (st->failure_class == AWS_ERR_PERMANENT)
		log_error("queue refused the batch, lane backing off for %ld ms dest=%s "
		          "queue_url=\"%s\" error=%s failures=%d",
		          ms, t->dest->name, t->dest->queue_url, st->failure_code, t->send_failures);
	else
		log_warning("could not send to the queue, lane backing off for %ld ms dest=%s "
		            "error=%s failures=%d",
		            ms, t->dest->name, st->failure_code, t->send_failures);
	lane_sleep(t, ms, false);
}

/*
 * How long to linger after a pass that claimed some events: until a full
 * SendMessageBatch (batch_size events) has arrived at the smoothed rate
 * since the pass began, when that takes at most linger_max_ms; else 0
 * (sleep until notified).  Counted from the pass's start, so the pass's
 * own duration is part of the wait and the next pass finds one batch, not
 * one and a part.  So at low rates, where waiting would not fill a batch,
 * a lane never waits and latency is unchanged; under load every request
 * and statement carries a full batch (docs/performance.md, "Batches").  A
 * single event is no evidence of load: no linger.  *pace: the wait was
 * still ahead, so claiming one batch per pass keeps up; a pass that took
 * longer than the fill time gets 1 ms and no pacing (more than a batch
 * arrives per pass: claim what there is).
 */
static long relay_linger_ms(struct relay_thread *t, const struct relay_pass_stats *st,
                            int64_t started_ms, bool *pace)
{
	const struct cfg *cfg = t->r->cfg;
	int64_t wait;

	/* A full paced claim counts ten of what may have been more: it never
	 * lowers the estimate. */
	t->rate = pace_rate(t->rate, st->claimed, (double)(started_ms - t->last_pass_ms),
	                    st->full && t->paced);
	t->last_pass_ms = started_ms;
	*pace = false;
	if (st->claimed < 2)
		return 0;
	wait = pace_wait_ms(t->rate, cfg->relay.batch_size, cfg->relay.linger_max_ms, started_ms);
	if (wait == INT64_MIN)
		return 0;
	*pace = wait > 0;
	return wait > 0 ? (long)wait : 1;
}

/* Pacing on (the lane lingers between passes: one batch per claim) or off. */
static void lane_pace(struct relay_thread *t, bool paced)
{
	if (paced == t->paced)
		return;
	t->paced = paced;
	t->full_paced = 0;
	relay_lane_set_paced(t->lane, paced);
}

/*
 * After a pass that neither filled its claim nor lingers: keep polling
 * every RELAY_BUSY_POLL_MS while events keep coming, and go idle (ask
 * producers to notify: migrations/V7) only after RELAY_IDLE_AFTER_EMPTY
 * empty polls in a row.  A notification serialises the producers'
 * commits (docs/performance.md, "Waking up"), so a lane that sees work
 * every few milliseconds must not need one; a quiet lane costs its
 * producers nothing either way.  0: go idle now.  No busy polling when
 * lingering is off (linger_max_ms = 0).
 */
static long relay_busy_poll_ms(struct relay_thread *t, const struct relay_pass_stats *st)
{
	long every = t->r->cfg->relay.linger_max_ms / RELAY_BUSY_POLL_DIVISOR;

	if (every <= 0)
		return 0;
	if (st->claimed > 0) {
		t->empty_polls = 0;
		t->busy = true;
		return every;
	}
	if (!t->busy)
		return 0; /* idle already: sleep until notified */
	if (++t->empty_polls < RELAY_IDLE_AFTER_EMPTY)
		return every;
	t->busy = false;
	t->empty_polls = 0;
	return 0;
}

static void *lane_main(void *arg)
{
	struct relay_thread *t = arg;
	struct relay_pass_stats st;

	while (!relay_stopping(t->r)) {
		int64_t started_ms = now_ms();
		long linger;
		bool pace;

		metrics_progress(METRIC_THREAD_LANE, t->dest->name);
		if (relay_lane_pass(t->lane, &st) < 0) {
			t->db_failures++;
			lane_sleep(t, relay_reconnect_delay_ms(t->db_failures), false);
			continue;
		}
		t->db_failures = 0;
		if (st.failed_requests > 0) {
			lane_send_failed(t, &st);
			continue;
		}
		if (t->send_failures > 0 && st.requests > 0) {
			log_info("sends to the queue work again dest=%s", t->dest->name);
			t->send_failures = 0;
		}
		/* A full claim is a backlog (pass again at once, the limit
		 * grows), unless the lane is pacing: its claim is one batch, and
		 * a full one only says the rate is a little above the estimate,
		 * until RELAY_BACKLOG_AFTER_FULL of them in a row say more. */
		linger = 0;
		pace = false;
		if (st.full && t->paced && ++t->full_paced < RELAY_BACKLOG_AFTER_FULL)
			linger = relay_linger_ms(t, &st, started_ms, &pace);
		if (st.full && !pace) {
			lane_pace(t, false);
			t->last_pass_ms = started_ms;
			t->busy = true;
			t->empty_polls = 0;
			(void)relay_lane_set_idle(t->lane, false);
			continue;
		}
		if (!st.full) {
			t->full_paced = 0;
			linger = st.claimed > 0 ? relay_linger_ms(t, &st, started_ms, &pace) : 0;
		}
		lane_pace(t, pace);
		if (linger == 0)
			linger = relay_busy_poll_ms(t, &st);
		if (linger > 0) {
			/* Busy: we poll on our own, so producers need not notify;
			 * a pass that claimed something keeps the lane busy for
			 * relay_busy_poll_ms(). */
			if (st.claimed > 0) {
				t->busy = true;
				t->empty_polls = 0;
			}
			(void)relay_lane_set_idle(t->lane, false);
			lane_sleep(t, linger, false);
			continue;
		}
		/* Going to sleep: ask producers to notify, then look once more,
		 * for the events committed before they could see the request. */
		if (relay_lane_set_idle(t->lane, true) > 0)
			continue;
		lane_sleep(t, t->r->cfg->relay.poll_interval_ms, true);
	}
	return NULL;
}

static int lane_init(struct relay *r, struct relay_thread *t,
                     const struct cfg_destination *d, const char *instance_id,
                     const char *kind)
{
	struct relay_lane_settings s;

	t->r = r;
	t->dest = d;
	if (pthread_mutex_init(&t->mu, NULL) != 0)
		return -1;
	if (monotonic_cond_init(&t->cv) != 0) {
		pthread_mutex_destroy(&t->mu);
		return -1;
	}
	t->sync_ready = true;
	if (publisher_new_concurrent(kind, &r->env, (size_t)r->cfg->relay.send_concurrency,
	                             &t->pub) < 0)
		return -1;
	relay_lane_settings_from_cfg(r->cfg, &s);
	if (relay_lane_new(r->cfg->database.conninfo, d->name, d->queue_url, instance_id, &s,
	                   t->pub, &t->lane) < 0) {
		log_error("out of memory creating the relay lane dest=%s", d->name);
		return -1;
	}
	return 0;
}

static int relay_listen(struct relay *r, const char *instance_id, const char *role)
{
	const char **names = calloc(r->n ? r->n : 1, sizeof(*names));
	int rc;

	if (names == NULL) {
		log_error("out of memory starting the relay");
		return -1;
	}
	for (size_t i = 0; i < r->n; i++)
		names[i] = r->lanes[i].dest->name;
	rc = relay_listener_start(r->cfg->database.conninfo, instance_id, role, names, r->n,
	                          wake_lanes, r, &r->listener);
	free(names);
	return rc;
}

static int relay_spawn(struct relay *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct relay_thread *t = &r->lanes[i];
		int err = pthread_create(&t->tid, NULL, lane_main, t);
		if (err != 0) {
			log_error("could not start the relay lane dest=%s: %s", t->dest->name,
			          strerror(err));
			return -1;
		}
		t->started = true;
	}
	return 0;
}

static int start(const struct cfg *cfg, const char *instance_id, const char *publisher_kind,
                 const char *role, struct relay **out)
{
	struct relay *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (r == NULL) {
		log_error("out of memory starting the relay");
		return -1;
	}
	r->cfg = cfg;
	atomic_init(&r->stop, false);
	if (strcmp(publisher_kind, "sqs") == 0 &&
	    aws_env_load(&r->env, cfg->aws.region, cfg->aws.endpoint_url,
	                 cfg->s3.endpoint_url) < 0)
		goto fail;
	r->lanes = calloc(cfg->n_destinations ? cfg->n_destinations : 1, sizeof(*r->lanes));
	if (r->lanes == NULL) {
		log_error("out of memory starting the relay");
		goto fail;
	}
	r->n = cfg->n_destinations;
	for (size_t i = 0; i < r->n; i++) {
		if (lane_init(r, &r->lanes[i], &cfg->destinations[i], instance_id,
		              publisher_kind) < 0)
			goto fail;
	}
	if (relay_listen(r, instance_id, role) < 0 || relay_spawn(r) < 0)
		goto fail;
	log_info("relay started lanes=%zu publisher=%s", r->n, publisher_kind);
	*out = r;
	return 0;
fail:
	relay_stop(r);
	return -1;
}

int relay_start_publisher(const struct cfg *cfg, const char *instance_id,
                          const char *publisher_kind, struct relay **out)
{
	return start(cfg, instance_id, publisher_kind, DB_ROLE_RELAY, out);
}

int relay_start(const struct cfg *cfg, const char *instance_id, const char *role,
                struct relay **out)
{
	return start(cfg, instance_id, "sqs", role, out);
}

void relay_stop(struct relay *r)
{
	if (r == NULL)
		return;
	atomic_store(&r->stop, true);
	/* The listener first: it calls wake_lanes(), which uses the lanes. */
	relay_listener_stop(r->listener);
	for (size_t i = 0; i < r->n; i++) {
		struct relay_thread *t = &r->lanes[i];
		if (t->sync_ready)
			lane_wake(t);
	}
	for (size_t i = 0; i < r->n; i++) {
		struct relay_thread *t = &r->lanes[i];
		if (t->started)
			pthread_join(t->tid, NULL);
		relay_lane_free(t->lane);
		publisher_free(t->pub);
		if (t->sync_ready) {
			pthread_cond_destroy(&t->cv);
			pthread_mutex_destroy(&t->mu);
		}
	}
	free(r->lanes);
	aws_env_free(&r->env);
	free(r);
}
