/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/suspect_turn.c: one suspect run at a time in the process (see
 * suspect_turn.h).  Process-wide, not per consumer: each destination of
 * outboxd has a consumer of its own, and a crash ends them all.
 */
#include "consumer/suspect_turn.h"

#include <pthread.h>

#include "consumer/control.h"

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_free = PTHREAD_COND_INITIALIZER;
static const struct consumer_worker *holder; /* guarded by turn_lock */

bool suspect_turn_take(const struct consumer_worker *w)
{
	bool go;

	pthread_mutex_lock(&turn_lock);
	while (!consumer_stopping(w->c) && holder != NULL)
		pthread_cond_wait(&turn_free, &turn_lock);
	go = !consumer_stopping(w->c);
	if (go)
		holder = w;
	pthread_mutex_unlock(&turn_lock);
	return go;
}

void suspect_turn_give(const struct consumer_worker *w)
{
	pthread_mutex_lock(&turn_lock);
	if (holder == w) {
		holder = NULL;
		pthread_cond_broadcast(&turn_free);
	}
	pthread_mutex_unlock(&turn_lock);
}

void suspect_turn_give_consumer(const struct consumer *c)
{
	pthread_mutex_lock(&turn_lock);
	if (holder != NULL && holder->c == c) {
		holder = NULL;
		pthread_cond_broadcast(&turn_free);
	}
	pthread_mutex_unlock(&turn_lock);
}

void suspect_turn_wake(void)
{
	/* Taking the lock orders this after a waiter's test of the stop. */
	pthread_mutex_lock(&turn_lock);
	pthread_cond_broadcast(&turn_free);
	pthread_mutex_unlock(&turn_lock);
}
