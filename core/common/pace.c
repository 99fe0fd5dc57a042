/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/pace.c: the arrival-rate estimate of both hops (see common/pace.h).
 */
#include "common/pace.h"

#include "common/clock.h"

/* Weight of the newest sample in the estimate. */
#define PACE_WEIGHT 0.5

double pace_rate(double rate, size_t n, double elapsed_ms, bool capped)
{
	double next;

	if (elapsed_ms < 1)
		elapsed_ms = 1;
	next = rate * (1 - PACE_WEIGHT) + PACE_WEIGHT * (double)n / elapsed_ms;
	return capped && next < rate ? rate : next;
}

int64_t pace_wait_ms(double rate, int batch, int linger_max_ms, int64_t since_ms)
{
	double fill_ms;

	if (linger_max_ms <= 0 || rate <= 0)
		return INT64_MIN;
	fill_ms = (double)batch / rate;
	if (fill_ms > linger_max_ms)
		return INT64_MIN;
	return since_ms + (int64_t)fill_ms + 1 - now_ms();
}
