/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/backoff.c: the relay's delays (see relay/backoff.h).
 */
#include "relay/backoff.h"

/* Doubles start (attempts - 1) times without overflowing, capped at max. */
static long capped_double(long start, long max, int attempts)
{
	long v = start;

	if (start <= 0 || max <= 0 || attempts < 1)
		return 0;
	for (int i = 1; i < attempts && v < max; i++)
		v *= 2;
	return v < max ? v : max;
}

long relay_backoff_ms(int base_seconds, int max_seconds, int attempts)
{
	return capped_double((long)base_seconds * 1000L, (long)max_seconds * 1000L, attempts);
}

long relay_reconnect_delay_ms(int failures)
{
	return capped_double(RELAY_RECONNECT_FIRST_MS, RELAY_RECONNECT_MAX_MS, failures);
}
