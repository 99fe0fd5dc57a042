/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/delete_pool.c: shared DeleteMessageBatch requests of a
 * destination's workers (see consumer/delete_pool.h).
 */
#include "consumer/delete_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aws/sqs.h"
#include "common/clock.h"
#include "common/log.h"

_Static_assert(SQS_MAX_BATCH_ENTRIES == 10, "delete_send() names ten entries");

struct delete_pool {
	struct delete_pools *owner; /* borrowed: its set (the lock) */
	const char *queue_url; /* borrowed from cfg */
	const char *dest;      /* borrowed from cfg */
	char *handles[SQS_MAX_BATCH_ENTRIES]; /* owned copies; n in use */
	size_t n;
	int64_t first_ms; /* CLOCK_MONOTONIC of handles[0]'s arrival */
};

struct delete_pools {
	struct delete_pool *pools; /* owned; n_pools */
	size_t n_pools;
	int max_age_ms;
	const struct aws_env *env; /* borrowed */
	struct aws_http *sqs;      /* owned by the thread; made at its first send */
	pthread_mutex_t lock;      /* guards every pool and stopping */
	pthread_cond_t cond;       /* a pool became non-empty, or stop */
	bool stopping;
	pthread_t thread;
};

unsigned delete_send(struct aws_http *sqs, const char *queue_url, const char *dest,
                     const char *const *handles, size_t n)
{
	struct sqs_handle_entry entries[SQS_MAX_BATCH_ENTRIES] = {{0}};
	struct sqs_entry_result results[SQS_MAX_BATCH_ENTRIES];
	static const char *const ids[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
	struct aws_result res;
	int rc;

	if (n == 0)
		return 0;
	if (n == 1) {
		rc = sqs_delete_message(sqs, queue_url, handles[0], &res);
	} else {
		for (size_t i = 0; i < n; i++)
			entries[i] = (struct sqs_handle_entry){ids[i], handles[i], 0};
		rc = sqs_delete_message_batch(sqs, queue_url, entries, n, results, &res);
	}
	if (rc < 0)
		log_warning("could not delete %zu message(s): %s %s dest=%s", n, res.code,
		            res.message, dest);
	for (size_t i = 0; rc == 0 && n > 1 && i < n; i++) {
		if (!results[i].ok)
			log_warning("could not delete a message: %s %s dest=%s", results[i].code,
			            results[i].message, dest);
	}
	return 1;
}

/* Sends the n handles taken from a pool (owned: freed here). */
static void send_taken(struct aws_http *sqs, const struct delete_pool *p, char **handles,
                       size_t n)
{
	if (sqs != NULL)
		(void)delete_send(sqs, p->queue_url, p->dest, (const char *const *)handles, n);
	for (size_t i = 0; i < n; i++)
		free(handles[i]);
}

/* Moves p's handles to out (room for ten); returns how many.  Lock held. */
static size_t take(struct delete_pool *p, char **out)
{
	size_t n = p->n;

	memcpy(out, p->handles, n * sizeof(*out));
	p->n = 0;
	return n;
}

void delete_pool_add(struct delete_pool *p, struct aws_http *sqs, const char *receipt_handle)
{
	struct delete_pools *ps = p->owner;
	char *taken[SQS_MAX_BATCH_ENTRIES];
	char *copy = strdup(receipt_handle);
	size_t n = 0;

	if (copy == NULL) {
		/* Out of memory: this one alone, now. */
		(void)delete_send(sqs, p->queue_url, p->dest, &receipt_handle, 1);
		return;
	}
	pthread_mutex_lock(&ps->lock);
	if (p->n == 0) {
		p->first_ms = now_ms();
		pthread_cond_signal(&ps->cond); /* a new deadline for the thread */
	}
	p->handles[p->n++] = copy;
	if (p->n == SQS_MAX_BATCH_ENTRIES)
		n = take(p, taken);
	pthread_mutex_unlock(&ps->lock);
	send_taken(sqs, p, taken, n);
}

/* The thread's client, made at its first send; NULL (logged) if it cannot be. */
static struct aws_http *thread_client(struct delete_pools *ps)
{
	if (ps->sqs != NULL)
		return ps->sqs;
	if (aws_http_new(ps->env, AWS_SERVICE_SQS, &ps->sqs) < 0) {
		ps->sqs = NULL;
		log_warning("could not create the SQS client of the deletions' thread; those"
		            " messages come back after their visibility timeout");
		return NULL;
	}
	/* One slow request must not hold every other pool's deletions behind
	 * it for the client's default 30 s. */
	aws_http_set_timeouts(ps->sqs, DELETE_POOL_SQS_TIMEOUT_MS / 3, DELETE_POOL_SQS_TIMEOUT_MS);
	return ps->sqs;
}

/*
 * The thread: sends each pool whose oldest deletion is max_age_ms old (all
 * of them once stopping), sleeping until the next such deadline.  Sends
 * outside the lock, so the workers' delete_pool_add() never waits on a
 * request.
 */
static void *pools_main(void *arg)
{
	struct delete_pools *ps = arg;

	pthread_mutex_lock(&ps->lock);
	for (;;) {
		int64_t now = now_ms(), next = INT64_MAX;
		struct delete_pool *due = NULL;

		for (size_t i = 0; i < ps->n_pools && due == NULL; i++) {
			struct delete_pool *p = &ps->pools[i];
			int64_t at = p->first_ms + ps->max_age_ms;

			if (p->n == 0)
				continue;
			if (ps->stopping || at <= now)
				due = p;
			else if (at < next)
				next = at;
		}
		if (due != NULL) {
			char *taken[SQS_MAX_BATCH_ENTRIES];
			size_t n = take(due, taken);

			pthread_mutex_unlock(&ps->lock);
			send_taken(thread_client(ps), due, taken, n);
			pthread_mutex_lock(&ps->lock);
			continue;
		}
		if (ps->stopping)
			break;
		if (next == INT64_MAX) {
			pthread_cond_wait(&ps->cond, &ps->lock);
		} else {
			struct timespec until;

			monotonic_deadline(&until, next - now);
			(void)pthread_cond_timedwait(&ps->cond, &ps->lock, &until);
		}
	}
	pthread_mutex_unlock(&ps->lock);
	return NULL;
}

static void free_pools(struct delete_pools *ps)
{
	for (size_t i = 0; i < ps->n_pools; i++) {
		for (size_t k = 0; k < ps->pools[i].n; k++)
			free(ps->pools[i].handles[k]);
	}
	aws_http_free(ps->sqs);
	pthread_cond_destroy(&ps->cond);
	pthread_mutex_destroy(&ps->lock);
	free(ps->pools);
	free(ps);
}

int delete_pools_start(const struct cfg *cfg, const struct aws_env *env, int max_age_ms,
                       struct delete_pools **out)
{
	struct delete_pools *ps = calloc(1, sizeof(*ps));

	*out = NULL;
	if (ps == NULL || (ps->pools = calloc(cfg->n_destinations ? cfg->n_destinations : 1,
	                                      sizeof(*ps->pools))) == NULL) {
		free(ps);
		log_error("out of memory");
		return -1;
	}
	ps->n_pools = cfg->n_destinations;
	ps->max_age_ms = max_age_ms;
	ps->env = env;
	for (size_t i = 0; i < ps->n_pools; i++)
		ps->pools[i] = (struct delete_pool){ps, cfg->destinations[i].queue_url,
		                                    cfg->destinations[i].name, {NULL}, 0, 0};
	pthread_mutex_init(&ps->lock, NULL);
	if (monotonic_cond_init(&ps->cond) != 0) {
		log_error("could not create the deletions' condition variable");
		pthread_mutex_destroy(&ps->lock);
		free(ps->pools);
		free(ps);
		return -1;
	}
	if (pthread_create(&ps->thread, NULL, pools_main, ps) != 0) {
		log_error("could not start the consumer's deletions thread");
		free_pools(ps);
		return -1;
	}
	*out = ps;
	return 0;
}

struct delete_pool *delete_pools_of(struct delete_pools *ps, size_t i)
{
	return &ps->pools[i];
}

void delete_pools_stop(struct delete_pools *ps)
{
	if (ps == NULL)
		return;
	pthread_mutex_lock(&ps->lock);
	ps->stopping = true;
	pthread_cond_signal(&ps->cond);
	pthread_mutex_unlock(&ps->lock);
	pthread_join(ps->thread, NULL);
	free_pools(ps);
}
