/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_consumer_rules.c: message parsing and the rule choice of spec
 * section 4 (core/consumer/message.c), without services.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "consumer/message.h"

#define JID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char good[] = "{\"event_id\":\"news:" JID ":1\",\"job_id\":\"" JID "\","
                           "\"job_type\":\"news\",\"destination\":\"news\","
                           "\"redrive_generation\":1}";

static struct ledger_job job_like(enum ledger_status st, int gen)
{
	struct ledger_job j = {0};

	snprintf(j.job_id, sizeof(j.job_id), "%s", JID);
	snprintf(j.job_type, sizeof(j.job_type), "news");
	snprintf(j.destination, sizeof(j.destination), "news");
	j.status = st;
	j.redrive_generation = gen;
	return j;
}

static void test_parse(void **state)
{
	struct consumer_msg m;
	char why[128];

	assert_int_equal(consumer_message_parse(good, strlen(good), &m, why, sizeof(why)), 0);
	assert_string_equal(m.job_id, JID);
	assert_int_equal(m.redrive_generation, 1);
	assert_false(m.has_price_window);
	static const char *const bad[] = {
		"garbage", "[]", "{}",
		"{\"event_id\":\"news:" JID ":0\",\"job_id\":\"" JID "\",\"job_type\":\"news\","
		"\"destination\":\"news\",\"redrive_generation\":1}",
		"{\"event_id\":\"news:abc:1\",\"job_id\":\"abc\",\"job_type\":\"news\","
		"\"destination\":\"news\",\"redrive_generation\":1}",
		"{\"event_id\":\"news:" JID ":-1\",\"job_id\":\"" JID "\",\"job_type\":\"news\","
		"\"destination\":\"news\",\"redrive_generation\":-1}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(consumer_message_parse(bad[i], strlen(bad[i]), &m, why, sizeof(why)),
		                 -1);
}

static void test_decide(void **state)
{
	struct consumer_msg m;
	char why[128];
	const char *reason;
	int defer;

	assert_int_equal(consumer_message_parse(good, strlen(good), &m, why, sizeof(why)), 0);
	assert_int_equal(consumer_message_decide("news", &m, NULL, &defer, &reason), CONSUMER_IGNORE);
	struct ledger_job j = job_like(LEDGER_PENDING, 1);
	assert_int_equal(consumer_message_decide("price", &m, &j, &defer, &reason), CONSUMER_IGNORE);
	assert_int_equal(consumer_message_decide("news", &m, &j, &defer, &reason), CONSUMER_CLAIM);
	j.due_in_seconds = 2.2;
	assert_int_equal(consumer_message_decide("news", &m, &j, &defer, &reason), CONSUMER_DEFER);
	assert_int_equal(defer, 3);
	j = job_like(LEDGER_SUCCEEDED, 1);
	assert_int_equal(consumer_message_decide("news", &m, &j, &defer, &reason),
	                 CONSUMER_DELETE_TERMINAL);
	j = job_like(LEDGER_PENDING, 2);
	assert_int_equal(consumer_message_decide("news", &m, &j, &defer, &reason),
	                 CONSUMER_DELETE_OBSOLETE);
	j = job_like(LEDGER_PENDING, 0);
	assert_int_equal(consumer_message_decide("news", &m, &j, &defer, &reason), CONSUMER_IGNORE);
	j = job_like(LEDGER_CLAIMED, 1);
	j.lease_live = true;
	j.lease_remaining_seconds = 7.2;
	assert_int_equal(consumer_message_decide("news", &m, &j, &defer, &reason), CONSUMER_LEAVE);
	assert_int_equal(defer, 8); /* hidden for the rest of the lease, rounded up */
	j.lease_remaining_seconds = 0.0;
	assert_int_equal(consumer_message_decide("news", &m, &j, &defer, &reason), CONSUMER_LEAVE);
	assert_int_equal(defer, 1);
	j.lease_live = false;
	assert_int_equal(consumer_message_decide("news", &m, &j, &defer, &reason), CONSUMER_CLAIM);
	snprintf(j.destination, sizeof(j.destination), "price");
	assert_int_equal(consumer_message_decide("news", &m, &j, &defer, &reason), CONSUMER_IGNORE);
}

static void test_backoff(void **state)
{
	assert_int_equal(consumer_backoff_seconds(2, 300, 1), 2);
	assert_int_equal(consumer_backoff_seconds(2, 300, 2), 4);
	assert_int_equal(consumer_backoff_seconds(2, 300, 8), 256);
	assert_int_equal(consumer_backoff_seconds(2, 300, 9), 300);
	assert_int_equal(consumer_backoff_seconds(2, 300, 1000000), 300);
	assert_int_equal(consumer_visibility_cap(0.1), 1);
	assert_int_equal(consumer_visibility_cap(-3), 0);
	assert_int_equal(consumer_visibility_cap(1e9), 43200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_backoff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
