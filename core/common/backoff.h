/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/backoff.h: the one doubling backoff with a cap that every layer
 * uses (relay events and reconnects, consumer retries, reconnects and the
 * database gate, maintenance reconnects).
 */
#ifndef OUTBOX_CORE_COMMON_BACKOFF_H
#define OUTBOX_CORE_COMMON_BACKOFF_H

/*
 * The delay after the n-th consecutive failure (n >= 1):
 * min(first * 2^(n - 1), max), without overflow.  0 when first, max or n
 * is not positive.
 */
long backoff_doubling(long first, long max, int n);

#endif
