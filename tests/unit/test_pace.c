/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_pace.c: the arrival-rate estimate both hops linger by
 * (core/common/pace.h): the smoothing, a capped batch that never lowers
 * it, and the wait that counts from the last batch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/pace.h"

static void test_rate_smoothing(void **state)
{
	(void)state;
	/* half the old rate and half the newest sample */
	assert_float_equal(pace_rate(0, 10, 20, false), 0.25, 1e-9);
	assert_float_equal(pace_rate(1.0, 10, 20, false), 0.75, 1e-9);
	/* an elapsed time under 1 ms counts as 1 */
	assert_float_equal(pace_rate(0, 4, 0, false), 2.0, 1e-9);
	assert_float_equal(pace_rate(0, 4, -5, false), 2.0, 1e-9);
}

static void test_capped_never_lowers(void **state)
{
	(void)state;
	/* ten in 20 ms after a wait would lower 1.0 to 0.75: kept */
	assert_float_equal(pace_rate(1.0, 10, 20, true), 1.0, 1e-9);
	/* ten in 5 ms raises it, capped or not */
	assert_float_equal(pace_rate(1.0, 10, 5, true), 1.5, 1e-9);
}

static void test_wait(void **state)
{
	int64_t now = now_ms();
	int64_t wait;

	(void)state;
	/* no rate, no linger, or a batch slower than the linger: no wait */
	assert_true(pace_wait_ms(0, 10, 20, now) == INT64_MIN);
	assert_true(pace_wait_ms(1.0, 10, 0, now) == INT64_MIN);
	assert_true(pace_wait_ms(0.1, 10, 20, now) == INT64_MIN); /* 100 ms > 20 */
	/* ten at one per ms: 11 ms from since_ms, less what has passed */
	wait = pace_wait_ms(1.0, 10, 20, now);
	assert_true(wait <= 11 && wait > 0);
	wait = pace_wait_ms(1.0, 10, 20, now - 50);
	assert_true(wait <= -39);
	/* exactly the linger still waits */
	assert_true(pace_wait_ms(0.5, 10, 20, now) != INT64_MIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_smoothing),
		cmocka_unit_test(test_capped_never_lowers),
		cmocka_unit_test(test_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
