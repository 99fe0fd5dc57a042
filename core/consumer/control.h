/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/control.h: what every thread of a consumer asks its owner
 * without calling back up into consumer.c: is a stop requested, a sleep
 * a stop cuts short, and the count of handlers between claim and
 * completion that consumer_stop() waits for.  c->cond runs on
 * CLOCK_MONOTONIC (monotonic_cond_init): every timed wait on it takes a
 * monotonic_deadline().
 */
#ifndef OUTBOX_CORE_CONSUMER_CONTROL_H
#define OUTBOX_CORE_CONSUMER_CONTROL_H

#include <stdbool.h>

#include "consumer/worker.h"

/* True once consumer_stop() began. */
bool consumer_stopping(struct consumer *c);
/* Sleep ms (CLOCK_MONOTONIC) or until stop is requested; returns
 * consumer_stopping(). */
bool consumer_sleep(struct consumer *c, int ms);
/* Count a handler in (+1) or out (-1) for the shutdown wait. */
void consumer_busy(struct consumer *c, int delta);
/*
 * Waits until fewer than the destination's max_in_flight handler calls of
 * w's destination run, and counts one more; false (nothing counted) when a
 * stop is requested first.  Every true is followed by consumer_call_end().
 * Without a pace (consumer_runner) there is no bound.
 */
bool consumer_call_begin(struct consumer_worker *w);
void consumer_call_end(struct consumer_worker *w);

/*
 * A hung handler's worker (docs/consumer.md, "Time limits"): the thread
 * calls consumer_handler_enter() right before execute() of heartbeat slot
 * slot and consumer_handler_leave() right after it.  leave() is false
 * when the consumer's watch abandoned the worker meanwhile: the watch
 * already took the call and the batch out of the counts, released what
 * the batch held and started a replacement, so the thread must touch
 * nothing shared any more, only free what it owns (the batch's jobs and
 * messages, its connection, SQS client and scratch: consumer/loop.c) and
 * end.
 */
void consumer_handler_enter(struct consumer_worker *w, size_t slot);
bool consumer_handler_leave(struct consumer_worker *w);
/* True once w was abandoned. */
bool consumer_worker_abandoned(struct consumer_worker *w);

#endif
