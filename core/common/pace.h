/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/pace.h: the arrival-rate estimate that both hops linger by, the
 * relay's lanes before a claim and the consumer's pollers before a
 * receive (docs/performance.md, "Batches"): wait for a full batch only
 * when the smoothed rate says it comes within the linger.
 */
#ifndef OUTBOX_CORE_COMMON_PACE_H
#define OUTBOX_CORE_COMMON_PACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The smoothed rate (arrivals per ms) after n arrived in elapsed_ms (< 1
 * counts as 1), the newest weighing one half.  capped: n is the batch's
 * cap after a wait, so at least n arrived; then the rate never falls
 * (else each such batch would wait longer while more were left behind).
 */
double pace_rate(double rate, size_t n, double elapsed_ms, bool capped);

/*
 * How long from now to wait for batch arrivals counted from since_ms
 * (CLOCK_MONOTONIC), at rate: since_ms + batch / rate + 1 - now_ms.  May
 * be 0 or less (they had time to arrive already).  INT64_MIN when no wait
 * applies: no rate, or a batch takes longer than linger_max_ms to come.
 */
int64_t pace_wait_ms(double rate, int batch, int linger_max_ms, int64_t since_ms);

#endif
