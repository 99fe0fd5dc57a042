/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_relay_backoff.c: the relay's delay schedule (core/relay/backoff.h),
 * which must match what the mark statement writes (docs/relay.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "relay/backoff.h"

static void test_event_schedule(void **state)
{
	(void)state;
	/* base 2 s, max 300 s: 2, 4, 8, ... 256, then capped at 300 */
	assert_int_equal(relay_backoff_ms(2, 300, 1), 2000);
	assert_int_equal(relay_backoff_ms(2, 300, 2), 4000);
	assert_int_equal(relay_backoff_ms(2, 300, 3), 8000);
	assert_int_equal(relay_backoff_ms(2, 300, 8), 256000);
	assert_int_equal(relay_backoff_ms(2, 300, 9), 300000);
	assert_int_equal(relay_backoff_ms(2, 300, 1000000), 300000);
}

static void test_degenerate(void **state)
{
	(void)state;
	assert_int_equal(relay_backoff_ms(0, 300, 3), 0);
	assert_int_equal(relay_backoff_ms(2, 300, 0), 0);
	/* base above max: the cap wins, as least() does in SQL */
	assert_int_equal(relay_backoff_ms(10, 5, 1), 5000);
}

static void test_reconnect(void **state)
{
	(void)state;
	assert_int_equal(relay_reconnect_delay_ms(1), RELAY_RECONNECT_FIRST_MS);
	assert_int_equal(relay_reconnect_delay_ms(2), 2 * RELAY_RECONNECT_FIRST_MS);
	assert_int_equal(relay_reconnect_delay_ms(100), RELAY_RECONNECT_MAX_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_schedule),
		cmocka_unit_test(test_degenerate),
		cmocka_unit_test(test_reconnect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
