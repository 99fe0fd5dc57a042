/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/consumer.c: starting and stopping the consumer (see consumer.h).
 *
 * Threads: consumer.workers per destination (each with its own database
 * connection and SQS client, so a slow or broken destination never starves
 * another), one dead-letter reader per destination with a dlq_url, and one
 * heartbeat with two threads (leases, visibility) for the whole consumer
 * (consumer/heartbeat.h).
 */
#include "consumer/consumer.h"

#include "consumer/control.h"
#include "consumer/dlq.h"
#include "consumer/loop.h"
#include "consumer/batch.h"
#include "consumer/worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

static size_t count_workers(const struct cfg *cfg)
{
	size_t n = 0;

	for (size_t i = 0; i < cfg->n_destinations; i++)
		n += (size_t)cfg->consumer.workers + (cfg->destinations[i].dlq_url != NULL ? 1 : 0);
	return n;
}

static void setup_workers(struct consumer *c, struct plugin_instance *const *instances)
{
	const struct cfg *cfg = c->cfg;
	size_t k = 0;

	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const struct cfg_destination *d = &cfg->destinations[i];
		size_t total = (size_t)cfg->consumer.workers + (d->dlq_url != NULL ? 1 : 0);

		for (size_t j = 0; j < total; j++, k++) {
			struct consumer_worker *w = &c->workers[k];

			w->c = c;
			w->dest = d;
			w->slot = k * (size_t)cfg->consumer.claim_max; /* a heartbeat slot per batch entry */
			w->receive_lock = &c->receive_locks[i];
			w->pace = &c->paces[i];
			c->paces[i].max_in_flight = d->max_in_flight > 0 ? d->max_in_flight
			                                                 : cfg->consumer.workers;
			w->dlq = j == (size_t)cfg->consumer.workers;
			w->inst = w->dlq ? NULL : instances[i];
			w->uses_sqs = true;
			consumer_sqs_port_init(&w->sqs_port, NULL, w->dlq ? d->dlq_url : d->queue_url,
			                       d->name, &w->port);
			snprintf(w->claimed_by, sizeof(w->claimed_by), "%s/%s/%zu", c->instance_id,
			         d->name, j);
		}
	}
}

static void free_consumer(struct consumer *c)
{
	for (size_t i = 0; i < c->n_workers; i++) {
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

static void join_all(struct consumer *c)
{
	for (size_t i = 0; i < c->n_workers; i++) {
		if (c->workers[i].started)
			pthread_join(c->workers[i].thread, NULL);
		c->workers[i].started = false;
	}
}

static int start_threads(struct consumer *c)
{
	for (size_t i = 0; i < c->n_workers; i++) {
		struct consumer_worker *w = &c->workers[i];

		if (pthread_create(&w->thread, NULL, w->dlq ? consumer_dlq_main : consumer_worker_main,
		                   w) != 0) {
			log_error("could not start a consumer thread dest=%s", w->dest->name);
			return -1;
		}
		w->started = true;
	}
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
	c->workers = calloc(c->n_workers ? c->n_workers : 1, sizeof(*c->workers));
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
	if (heartbeat_start(cfg, &c->env, c->n_workers * (size_t)cfg->consumer.claim_max, &c->hb) < 0)
		goto fail;
	setup_workers(c, instances);
	if (start_threads(c) < 0) {
		atomic_store(&c->stopping, true);
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

static void request_stop(struct consumer *c)
{
	pthread_mutex_lock(&c->lock);
	atomic_store(&c->stopping, true);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
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
				_exit(0);
			}
			log_error("handlers did not return %d s after their claims were released;"
			          " their threads and plugin instance are left behind",
			          CONSUMER_RELEASE_WAIT_SECONDS);
			cs[i] = NULL;
			all_freed = false;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (cs[i] == NULL)
			continue;
		join_all(cs[i]);
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
