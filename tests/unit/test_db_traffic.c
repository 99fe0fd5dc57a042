/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_db_traffic.c: the round trip and statement counters of
 * core/db/traffic.h, which outbox-bench divides by the jobs of a phase.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "db/traffic.h"

static void test_count_statements(void **state)
{
	(void)state;
	assert_int_equal(db_traffic_count_statements("BEGIN"), 1);
	assert_int_equal(db_traffic_count_statements("COMMIT;"), 1);
	assert_int_equal(db_traffic_count_statements("SET a = 1; SET b = 2"), 2);
	assert_int_equal(db_traffic_count_statements("SET a = 1; SET b = 2;  \n"), 2);
	assert_int_equal(db_traffic_count_statements(""), 0);
	assert_int_equal(db_traffic_count_statements(" ; ;"), 0);
	assert_int_equal(db_traffic_count_statements(NULL), 0);
	/* a semicolon in a literal or a quoted name ends nothing */
	assert_int_equal(db_traffic_count_statements("SELECT 'a;b'; SELECT 1 AS \"x;y\""), 2);
}

static void test_note_adds_up(void **state)
{
	unsigned long trips = db_traffic_round_trips(), stmts = db_traffic_statements();

	(void)state;
	db_traffic_note(0);                     /* a PQprepare */
	db_traffic_note(1);                     /* an extended-protocol statement */
	db_traffic_note_simple("BEGIN; SELECT 1"); /* one string, two statements */
	assert_int_equal(db_traffic_round_trips() - trips, 3);
	assert_int_equal(db_traffic_statements() - stmts, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_statements),
		cmocka_unit_test(test_note_adds_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
