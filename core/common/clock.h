/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/clock.h: the two clocks the core reads, named for what they are for.
 */
#ifndef OUTBOX_CORE_COMMON_CLOCK_H
#define OUTBOX_CORE_COMMON_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC: intervals, deadlines and timeouts.  It
 * never jumps, and it means nothing outside this process. */
int64_t now_ms(void);

/* Milliseconds since the epoch on CLOCK_REALTIME: for comparing with
 * times that other hosts wrote (S3's LastModified, the database's now()). */
int64_t wall_clock_ms(void);

/* *out = CLOCK_MONOTONIC now + ms (ms >= 0), normalised: the deadline of a
 * pthread_cond_timedwait() on a condition variable set to that clock. */
void monotonic_deadline(struct timespec *out, int64_t ms);

/* pthread_cond_init() of *cv on CLOCK_MONOTONIC, for timed waits whose
 * deadlines come from monotonic_deadline(): a change of the wall clock
 * neither cuts them short nor stretches them.  0, or an errno value. */
int monotonic_cond_init(pthread_cond_t *cv);

#endif
