/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/control.c: stop requests, sleeps and the busy count of a
 * consumer (see consumer/control.h).
 */
#include "consumer/control.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "common/clock.h"

bool consumer_stopping(struct consumer *c)
{
	return atomic_load(&c->stopping);
}

bool consumer_sleep(struct consumer *c, int ms)
{
	struct timespec until;

	monotonic_deadline(&until, ms);
	pthread_mutex_lock(&c->lock);
	while (!consumer_stopping(c)) {
		if (pthread_cond_timedwait(&c->cond, &c->lock, &until) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&c->lock);
	return consumer_stopping(c);
}

bool consumer_call_begin(struct consumer_worker *w)
{
	struct consumer *c = w->c;
	struct consumer_pace *p = w->pace;
	bool go;

	if (p == NULL)
		return !consumer_stopping(c);
	pthread_mutex_lock(&c->lock);
	while (!consumer_stopping(c) && p->in_flight >= p->max_in_flight)
		pthread_cond_wait(&c->cond, &c->lock);
	go = !consumer_stopping(c);
	if (go)
		p->in_flight++;
	pthread_mutex_unlock(&c->lock);
	return go;
}

void consumer_call_end(struct consumer_worker *w)
{
	struct consumer *c = w->c;

	if (w->pace == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	w->pace->in_flight--;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

void consumer_busy(struct consumer *c, int delta)
{
	pthread_mutex_lock(&c->lock);
	c->busy += delta;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

void consumer_handler_enter(struct consumer_worker *w, size_t slot)
{
	unsigned long long calls = (atomic_load(&w->state) >> 2) + 1;

	atomic_store(&w->handler_slot, slot);
	atomic_store(&w->state, calls << 2 | WORKER_IN_HANDLER);
}

bool consumer_handler_leave(struct consumer_worker *w)
{
	unsigned long long expected = atomic_load(&w->state);

	return WORKER_PHASE(expected) == WORKER_IN_HANDLER &&
	       atomic_compare_exchange_strong(&w->state, &expected,
	                                      WORKER_STATE(expected, WORKER_RUNNING));
}

bool consumer_worker_abandoned(struct consumer_worker *w)
{
	return WORKER_PHASE(atomic_load(&w->state)) == WORKER_ABANDONED;
}
