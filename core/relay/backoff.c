/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/backoff.c: the relay's delays (see relay/backoff.h).
 */
#include "relay/backoff.h"

#include "common/backoff.h"

long relay_backoff_ms(int base_seconds, int max_seconds, int attempts)
{
	return backoff_doubling((long)base_seconds * 1000L, (long)max_seconds * 1000L, attempts);
}

long relay_reconnect_delay_ms(int failures)
{
	return backoff_doubling(RELAY_RECONNECT_FIRST_MS, RELAY_RECONNECT_MAX_MS, failures);
}
