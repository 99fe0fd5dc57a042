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

bool consumer_stopping(struct consumer *c)
{
	return atomic_load(&c->stopping);
}

void consumer_deadline_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

bool consumer_sleep(struct consumer *c, int ms)
{
	struct timespec until;

	consumer_deadline_in(&until, ms);
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
