/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/clock.c: monotonic and wall-clock milliseconds (see clock.h).
 */
#include "common/clock.h"

#include <time.h>

static int64_t clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

int64_t wall_clock_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

void monotonic_deadline(struct timespec *out, int64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, out);
	out->tv_sec += (time_t)(ms / 1000);
	out->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (out->tv_nsec >= 1000000000L) {
		out->tv_sec++;
		out->tv_nsec -= 1000000000L;
	}
}

int monotonic_cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t ca;
	int rc = pthread_condattr_init(&ca);

	if (rc != 0)
		return rc;
	rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (rc == 0)
		rc = pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
	return rc;
}
