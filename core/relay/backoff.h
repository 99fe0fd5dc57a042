/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/backoff.h: the relay's delays, in one place so the lane threads,
 * the listener and docs/relay.md agree.
 */
#ifndef OUTBOX_CORE_RELAY_BACKOFF_H
#define OUTBOX_CORE_RELAY_BACKOFF_H

/* Database reconnects: 250 ms, doubling, at most 10 s. */
#define RELAY_RECONNECT_FIRST_MS 250L
#define RELAY_RECONNECT_MAX_MS 10000L

/*
 * Delay after the attempts-th consecutive failure (attempts >= 1) of an
 * event or a lane: min(base * 2^(attempts - 1), max) seconds, the same
 * schedule the mark statement writes into next_attempt_at (where attempts
 * counts the failures before this one).  Non-positive inputs give 0.
 */
long relay_backoff_ms(int base_seconds, int max_seconds, int attempts);

/* Delay before reconnect attempt number failures (>= 1) to PostgreSQL. */
long relay_reconnect_delay_ms(int failures);

#endif
