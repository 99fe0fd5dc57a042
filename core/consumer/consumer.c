/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/consumer.c: starting and stopping the consumer (see consumer.h).
 *
 * Threads: consumer.workers per destination (each with its own database
 * connection and SQS client, so a slow or broken destination never starves
 * another), one dead-letter reader per destination with a dlq_url, one
 * heartbeat with two threads (leases, visibility) for the whole consumer
 * (consumer/heartbeat.h), the watch, and the deletions thread of the
 * destinations' shared deletion pools (consumer/delete_pool.h).
 */
#include "consumer/consumer.h"

#include "consumer/control.h"
#include "consumer/dlq.h"
#include "consumer/loop.h"
#include "consumer/batch.h"
#include "consumer/worker.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "consumer/delete_pool.h"
#include "consumer/suspect_turn.h"
#include "plugin/instance.h"

static size_t count_workers(const struct cfg *cfg)
{
	size_t n = 0;

	for (size_t i = 0; i < cfg->n_destinations; i++)
		n += (size_t)cfg->consumer.workers + (cfg->destinations[i].dlq_url != NULL ? 1 : 0);
	return n;
}

/* Element k of c->workers: worker j of destination i (j == workers: its
 * dead-letter reader, when it has a dlq_url; beyond: a replacement). */
static void init_worker(struct consumer *c, size_t k, size_t i, size_t j,
                        struct plugin_instance *inst)
{
	const struct cfg *cfg = c->cfg;
	const struct cfg_destination *d = &cfg->destinations[i];
	struct consumer_worker *w = &c->workers[k];

	w->c = c;
	w->dest = d;
	w->slot = k * (size_t)cfg->consumer.claim_max; /* a heartbeat slot per batch entry */
	w->receive_lock = &c->receive_locks[i];
	w->pace = &c->paces[i];
	w->dlq = d->dlq_url != NULL && j == (size_t)cfg->consumer.workers;
	w->inst = w->dlq ? NULL : inst;
	w->uses_sqs = true;
	atomic_init(&w->state, WORKER_RUNNING);
	atomic_init(&w->handler_slot, 0);
	consumer_sqs_port_init(&w->sqs_port, NULL, w->dlq ? d->dlq_url : d->queue_url, d->name,
	                       w->dlq || c->delete_pools == NULL ? NULL
	                                                         : delete_pools_of(c->delete_pools, i),
	                       &w->port);
	snprintf(w->claimed_by, sizeof(w->claimed_by), "%s/%s/%zu", c->instance_id, d->name, j);
}

static void setup_workers(struct consumer *c, struct plugin_instance *const *instances)
{
	const struct cfg *cfg = c->cfg;
	size_t k = 0;

	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const struct cfg_destination *d = &cfg->destinations[i];
		size_t total = (size_t)cfg->consumer.workers + (d->dlq_url != NULL ? 1 : 0);

		c->paces[i].max_in_flight = d->max_in_flight > 0 ? d->max_in_flight
		                                                 : cfg->consumer.workers;
		for (size_t j = 0; j < total; j++, k++)
			init_worker(c, k, i, j, instances[i]);
	}
}

/* True while an abandoned worker's thread has not returned from its
 * handler: what it uses (c->workers, the plugin instance) must stay. */
static bool abandoned_alive(struct consumer *c)
{
	for (size_t i = 0; i < c->n_workers; i++) {
		if (WORKER_PHASE(atomic_load(&c->workers[i].state)) == WORKER_ABANDONED)
			return true;
	}
	return false;
}

static void free_consumer(struct consumer *c)
{
	/* First: the workers are joined, their last deletions wait there. */
	delete_pools_stop(c->delete_pools);
	suspect_turn_give_consumer(c);
	for (size_t i = 0; i < c->n_workers; i++) {
		/* Joined: a session still open is counted (an abandoned worker's
		 * thread closed its own and left the count to the watch). */
		if (c->workers[i].conn != NULL)
			metrics_gauge_add(METRIC_WORKERS_UP, c->workers[i].dest->name, -1);
		PQfinish(c->workers[i].conn);
		aws_http_free(c->workers[i].sqs);
		consumer_batch_scratch_free(c->workers[i].scratch);
	}
	heartbeat_free(c->hb);
	aws_env_free(&c->env);
	for (size_t i = 0; c->receive_locks != NULL && i < c->cfg->n_destinations; i++)
		pthread_mutex_destroy(&c->receive_locks[i]);
	free(c->receive_locks);
	free(c->paces);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c->workers);
	free(c->instance_id);
	free(c);
}

/* The workers' threads (an abandoned one is detached: not joined). */
static void join_all(struct consumer *c)
{
	for (size_t i = 0; i < c->n_workers; i++) {
		if (c->workers[i].started)
			pthread_join(c->workers[i].thread, NULL);
		c->workers[i].started = false;
	}
}

static void request_stop(struct consumer *c)
{
	pthread_mutex_lock(&c->lock);
	atomic_store(&c->stopping, true);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	suspect_turn_wake();
}

/* How often the watch looks for handlers to abandon. */
#define WATCH_INTERVAL_MS 250

static atomic_int exit_status;
static atomic_int n_abandoned; /* in the process, every consumer's */

int consumer_exit_status(void)
{
	return atomic_load(&exit_status);
}

/* The process stops gracefully, as on SIGTERM (the daemon's main thread
 * waits for it), and then exits CONSUMER_EXIT_ABANDONED. */
static void request_exit(void)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&exit_status, &expected, CONSUMER_EXIT_ABANDONED))
		(void)kill(getpid(), SIGTERM);
}

static int start_worker(struct consumer_worker *w)
{
	if (pthread_create(&w->thread, NULL, w->dlq ? consumer_dlq_main : consumer_worker_main,
	                   w) != 0) {
		log_error("could not start a consumer thread dest=%s", w->dest->name);
		return -1;
	}
	w->started = true;
	return 0;
}

/* A fresh worker in abandoned w's place: the same destination and plugin
 * instance; its own connection, SQS client, scratch, counters, heartbeat
 * slots and claimed_by.  Watch thread. */
static void replace(struct consumer *c, const struct consumer_worker *w)
{
	size_t k = c->n_workers;
	size_t i = (size_t)(w->dest - c->cfg->destinations);

	if (k == c->max_workers) {
		log_error("no room for another replacement worker; stopping dest=%s", w->dest->name);
		request_exit();
		return;
	}
	init_worker(c, k, i, (size_t)c->cfg->consumer.workers + 1 + c->n_replaced, w->inst);
	if (start_worker(&c->workers[k]) < 0) {
		request_exit();
		return;
	}
	c->n_workers++;
	c->n_replaced++;
}

/*
 * w (its state just set to ABANDONED) is out of the counts: its batch
 * and its call no longer count as running, its thread is detached, its
 * batch's other claims are given back.  Then it is replaced, unless the
 * process should stop instead.  Its element, connection, SQS client and
 * scratch stay its thread's, which frees them if it returns
 * (consumer/loop.c).
 */
static void abandon(struct consumer *c, struct consumer_worker *w, const char *job_id)
{
	const char *dest = w->dest->name;
	int limit = w->dest->handler_timeout_seconds;
	long long after = (long long)(heartbeat_abandon_after_ms(limit) / 1000);
	bool serial = (plugin_instance_descriptor(w->inst)->flags & OUTBOX_PLUGIN_CONCURRENT) == 0;
	int n = atomic_fetch_add(&n_abandoned, 1) + 1;

	heartbeat_abandon(c->hb, w->slot, (size_t)c->cfg->consumer.claim_max);
	pthread_detach(w->thread);
	w->started = false;
	pthread_mutex_lock(&c->lock);
	c->busy--;
	if (w->pace != NULL)
		w->pace->in_flight--;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	suspect_turn_give(w); /* its hung suspect holds no other suspect back */
	metrics_inc(METRIC_HANDLERS_ABANDONED, dest);
	if (serial) {
		log_error("handler still running %lld s after it started (time limit %d s); its"
		          " worker is abandoned and, since the plugin runs one execute() at a time,"
		          " outboxd stops to be restarted dest=%s job_id=%s", after, limit, dest, job_id);
		request_exit();
	} else if (n >= CONSUMER_MAX_ABANDONED) {
		log_error("handler still running %lld s after it started (time limit %d s); %d"
		          " workers of this process are abandoned, so outboxd stops to be restarted"
		          " dest=%s job_id=%s", after, limit, n, dest, job_id);
		request_exit();
	} else {
		log_error("handler still running %lld s after it started (time limit %d s); its"
		          " worker is abandoned and replaced (%d of %d before outboxd stops) dest=%s"
		          " job_id=%s", after, limit, n, CONSUMER_MAX_ABANDONED, dest, job_id);
		replace(c, w);
	}
}

/* Abandons w when its handler is overdue (heartbeat_overdue()). */
static void watch_worker(struct consumer *c, struct consumer_worker *w)
{
	char job_id[LEDGER_JOB_ID_LEN + 1];
	unsigned long long state = atomic_load(&w->state);
	bool connected;

	if (w->dlq || WORKER_PHASE(state) != WORKER_IN_HANDLER ||
	    !heartbeat_overdue(c->hb, atomic_load(&w->handler_slot), job_id, sizeof(job_id)))
		return;
	/* Read before the compare-and-set: the thread changes w->conn only
	 * after its own, which then fails. */
	connected = w->conn != NULL;
	if (!atomic_compare_exchange_strong(&w->state, &state,
	                                    WORKER_STATE(state, WORKER_ABANDONED)))
		return; /* that call returned just now */
	if (connected)
		metrics_gauge_add(METRIC_WORKERS_UP, w->dest->name, -1);
	abandon(c, w, job_id);
}

/* The watch thread: until the stop, every WATCH_INTERVAL_MS. */
static void *watch_main(void *arg)
{
	struct consumer *c = arg;

	while (!consumer_sleep(c, WATCH_INTERVAL_MS)) {
		for (size_t i = 0; i < c->n_workers; i++)
			watch_worker(c, &c->workers[i]);
	}
	return NULL;
}

static void join_watch(struct consumer *c)
{
	if (c->watch_started)
		pthread_join(c->watch, NULL);
	c->watch_started = false;
}

static int start_threads(struct consumer *c)
{
	for (size_t i = 0; i < c->n_workers; i++) {
		if (start_worker(&c->workers[i]) < 0)
			return -1;
	}
	if (pthread_create(&c->watch, NULL, watch_main, c) != 0) {
		log_error("could not start the consumer's watch thread");
		return -1;
	}
	c->watch_started = true;
	return 0;
}

int consumer_start(const struct cfg *cfg, struct consumer_services *svc,
                   struct plugin_instance *const *instances, size_t n,
                   const char *instance_id, struct consumer **out)
{
	struct consumer *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL) {
		log_error("out of memory");
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	if (monotonic_cond_init(&c->cond) != 0) {
		log_error("could not create the consumer's condition variable");
		pthread_mutex_destroy(&c->lock);
		free(c);
		return -1;
	}
	c->cfg = cfg;
	c->svc = svc;
	c->instance_id = strdup(instance_id != NULL ? instance_id : "outboxd");
	c->n_workers = count_workers(cfg);
	c->max_workers = c->n_workers + CONSUMER_MAX_ABANDONED;
	c->workers = calloc(c->max_workers, sizeof(*c->workers));
	c->receive_locks = calloc(cfg->n_destinations ? cfg->n_destinations : 1,
	                          sizeof(*c->receive_locks));
	c->paces = calloc(cfg->n_destinations ? cfg->n_destinations : 1, sizeof(*c->paces));
	for (size_t i = 0; c->receive_locks != NULL && i < cfg->n_destinations; i++)
		pthread_mutex_init(&c->receive_locks[i], NULL);
	if (n != cfg->n_destinations || c->instance_id == NULL || c->workers == NULL ||
	    c->receive_locks == NULL || c->paces == NULL) {
		log_error(n != cfg->n_destinations ? "consumer needs one plugin instance per destination"
		                                   : "out of memory");
		goto fail;
	}
	if (aws_env_load(&c->env, cfg->aws.region, cfg->aws.endpoint_url, cfg->s3.endpoint_url) < 0)
		goto fail;
	if (heartbeat_start(cfg, &c->env, c->max_workers * (size_t)cfg->consumer.claim_max,
	                    &c->hb) < 0)
		goto fail;
	/* Deletions are shared by a destination's workers unless nothing may
	 * wait for a batch (consumer/delete_pool.h). */
	if (cfg->consumer.linger_max_ms > 0 &&
	    delete_pools_start(cfg, &c->env, DELETE_POOL_MAX_AGE_MS, &c->delete_pools) < 0)
		goto fail;
	setup_workers(c, instances);
	if (start_threads(c) < 0) {
		request_stop(c);
		join_watch(c);
		join_all(c);
		goto fail;
	}
	log_info("consumer started: %zu destination(s), %d worker(s) each", cfg->n_destinations,
	         cfg->consumer.workers);
	*out = c;
	return 0;
fail:
	free_consumer(c);
	return -1;
}

/* Waits until no handler of c runs or until (CLOCK_MONOTONIC); true if idle. */
static bool wait_idle_until(struct consumer *c, const struct timespec *until)
{
	bool idle;

	pthread_mutex_lock(&c->lock);
	while (c->busy > 0) {
		if (pthread_cond_timedwait(&c->cond, &c->lock, until) == ETIMEDOUT)
			break;
	}
	idle = c->busy == 0;
	pthread_mutex_unlock(&c->lock);
	return idle;
}

static bool is_idle(struct consumer *c)
{
	bool idle;

	pthread_mutex_lock(&c->lock);
	idle = c->busy == 0;
	pthread_mutex_unlock(&c->lock);
	return idle;
}

/*
 * Stops the n consumers of cs together, so their grace periods overlap:
 * stop receiving, wait until every one is idle or the grace period ended,
 * release the claims still running, give their handlers
 * CONSUMER_RELEASE_WAIT_SECONDS.  A consumer still busy then is left
 * running (cs[i] set to NULL: never freed, its threads keep what they
 * use) unless may_exit, which ends the process instead.  The others are
 * joined and freed.  Returns true when every consumer was freed.
 */
static bool stop_set(struct consumer **cs, size_t n, bool may_exit)
{
	struct timespec until;
	bool all_idle = true, all_freed = true;
	int grace = 0;

	for (size_t i = 0; i < n; i++) {
		if (cs[i] == NULL)
			continue;
		request_stop(cs[i]);
		if (cs[i]->cfg->consumer.shutdown_grace_seconds > grace)
			grace = cs[i]->cfg->consumer.shutdown_grace_seconds;
	}
	for (size_t i = 0; i < n; i++) {
		if (cs[i] != NULL)
			join_watch(cs[i]); /* nothing is abandoned while stopping */
	}
	log_info("consumer stopping: waiting up to %d s for running handlers", grace);
	monotonic_deadline(&until, (long)grace * 1000);
	for (size_t i = 0; i < n; i++)
		all_idle &= cs[i] == NULL || wait_idle_until(cs[i], &until);
	if (!all_idle) {
		for (size_t i = 0; i < n; i++) {
			if (cs[i] != NULL && !is_idle(cs[i]))
				log_warning("released %zu claim(s) of handlers still running",
				            heartbeat_release_all(cs[i]->hb));
		}
		monotonic_deadline(&until, (long)CONSUMER_RELEASE_WAIT_SECONDS * 1000);
		for (size_t i = 0; i < n; i++) {
			if (cs[i] == NULL || wait_idle_until(cs[i], &until))
				continue;
			/* A handler that never returns cannot be joined; its claim is
			 * released, so ending the process (or leaving the thread) loses
			 * nothing. */
			if (may_exit) {
				log_error("handlers did not return %d s after their claims were released;"
				          " exiting", CONSUMER_RELEASE_WAIT_SECONDS);
				_exit(consumer_exit_status());
			}
			log_error("handlers did not return %d s after their claims were released;"
			          " their threads and plugin instance are left behind",
			          CONSUMER_RELEASE_WAIT_SECONDS);
			suspect_turn_give_consumer(cs[i]);
			cs[i] = NULL;
			all_freed = false;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (cs[i] != NULL)
			join_all(cs[i]);
	}
	for (size_t i = 0; i < n; i++) {
		if (cs[i] == NULL || !abandoned_alive(cs[i]))
			continue;
		/* The other workers finished their jobs; the abandoned thread's
		 * job is recorded RETRY already.  Its plugin instance must not be
		 * destroyed under it. */
		if (may_exit) {
			log_error("an abandoned worker's handler is still running; exiting");
			_exit(consumer_exit_status());
		}
		log_error("an abandoned worker's handler is still running; its thread and plugin"
		          " instance are left behind");
		cs[i] = NULL;
		all_freed = false;
	}
	for (size_t i = 0; i < n; i++) {
		if (cs[i] == NULL)
			continue;
		log_info("consumer stopped; %ld terminal skip(s)",
		         (long)atomic_load(&cs[i]->terminal_skips));
		free_consumer(cs[i]);
		cs[i] = NULL;
	}
	return all_freed;
}

void consumer_stop(struct consumer *c)
{
	if (c != NULL)
		(void)stop_set(&c, 1, true);
}

void consumer_stop_all(struct consumer **cs, size_t n)
{
	(void)stop_set(cs, n, true);
}

bool consumer_drain(struct consumer *c)
{
	return c == NULL || stop_set(&c, 1, false);
}
