/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/backoff.c: doubling with a cap (see common/backoff.h).
 */
#include "common/backoff.h"

long backoff_doubling(long first, long max, int n)
{
	long v = first;

	if (first <= 0 || max <= 0 || n < 1)
		return 0;
	for (int i = 1; i < n && v < max; i++)
		v *= 2;
	return v < max ? v : max;
}
