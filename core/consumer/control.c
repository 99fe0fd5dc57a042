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

void consumer_busy(struct consumer *c, int delta)
{
	pthread_mutex_lock(&c->lock);
	c->busy += delta;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}
