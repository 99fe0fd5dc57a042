/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/suspect_turn.c: one suspect run at a time in the process (see
 * suspect_turn.h).  Process-wide, not per consumer: each destination of
 * outboxd has a consumer of its own, and a crash ends them all.
 */
#include "consumer/suspect_turn.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "consumer/control.h"
#include "consumer/ledger.h"

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_free;  /* on CLOCK_MONOTONIC (init_once()) */
static pthread_once_t turn_once = PTHREAD_ONCE_INIT;
/* Guarded by turn_lock: the worker that holds the turn, or NULL, and the
 * job it runs. */
static const struct consumer_worker *holder;
static char holder_job[LEDGER_JOB_ID_LEN + 1];

static void init_once(void)
{
	if (monotonic_cond_init(&turn_free) != 0)
		pthread_cond_init(&turn_free, NULL); /* realtime: a clock step shortens a wait */
}

enum suspect_turn suspect_turn_take(const struct consumer_worker *w, const char *job_id)
{
	enum suspect_turn t = SUSPECT_TURN_TAKEN;
	struct timespec until;
	char beside[LEDGER_JOB_ID_LEN + 1] = "";

	pthread_once(&turn_once, init_once);
	monotonic_deadline(&until, SUSPECT_TURN_WAIT_MAX_MS);
	pthread_mutex_lock(&turn_lock);
	while (!consumer_stopping(w->c) && holder != NULL) {
		if (pthread_cond_timedwait(&turn_free, &turn_lock, &until) == ETIMEDOUT &&
		    holder != NULL) {
			snprintf(beside, sizeof(beside), "%s", holder_job);
			t = SUSPECT_TURN_BESIDE;
			break;
		}
	}
	if (consumer_stopping(w->c)) {
		t = SUSPECT_TURN_STOPPING;
	} else if (t == SUSPECT_TURN_TAKEN) {
		holder = w;
		snprintf(holder_job, sizeof(holder_job), "%s", job_id);
	}
	pthread_mutex_unlock(&turn_lock);
	if (t == SUSPECT_TURN_BESIDE)
		log_warning("job crashed a process before and runs beside another such job, which"
		            " still runs after %d s; a crash now counts for both dest=%s job_id=%s"
		            " beside=%s", SUSPECT_TURN_WAIT_MAX_MS / 1000, w->dest->name, job_id,
		            beside);
	return t;
}

/* Under turn_lock. */
static void give_locked(void)
{
	holder = NULL;
	holder_job[0] = '\0';
	pthread_cond_broadcast(&turn_free);
}

void suspect_turn_give(const struct consumer_worker *w)
{
	pthread_mutex_lock(&turn_lock);
	if (holder == w)
		give_locked();
	pthread_mutex_unlock(&turn_lock);
}

void suspect_turn_give_consumer(const struct consumer *c)
{
	pthread_mutex_lock(&turn_lock);
	if (holder != NULL && holder->c == c)
		give_locked();
	pthread_mutex_unlock(&turn_lock);
}

void suspect_turn_wake(void)
{
	pthread_once(&turn_once, init_once);
	/* Taking the lock orders this after a waiter's test of the stop. */
	pthread_mutex_lock(&turn_lock);
	pthread_cond_broadcast(&turn_free);
	pthread_mutex_unlock(&turn_lock);
}
