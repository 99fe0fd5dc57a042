/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_delete_pool.c: the consumer's shared deletions (consumer/delete_pool.h)
 * against fauxqs (OUTBOX_TEST_AWS_ENDPOINT): the deletion that fills a
 * pool sends the ten before it returns; a pool that does not fill waits,
 * then goes out when its oldest deletion is max_age_ms old; whatever
 * waits goes out when the pools stop.  What a deletion did is read from
 * the queue itself: a received message that was deleted is no longer in
 * flight.  Exits 77 (SKIP) when OUTBOX_TEST_AWS_ENDPOINT is unset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aws_stub.h"
#include "aws/env.h"
#include "aws/sqs.h"
#include "common/clock.h"
#include "config/config.h"
#include "consumer/delete_pool.h"

#define N_MESSAGES 25

struct fixture {
	const char *endpoint;
	struct aws_http *sqs;
	struct aws_env env;
	char *queue_url;
	struct cfg cfg;
	struct cfg_destination dest;
	struct sqs_messages lists[N_MESSAGES];
	const struct sqs_message *received[N_MESSAGES];
	size_t n_received;
};

static struct fixture fx;

static int in_flight(void)
{
	static const char *const names[] = {"ApproximateNumberOfMessagesNotVisible"};
	struct aws_result res;
	json_t *attrs = NULL;
	const char *text;
	char *end;
	long n;

	assert_int_equal(sqs_get_queue_attributes(fx.sqs, fx.queue_url, names, 1, &attrs, &res), 0);
	text = json_string_value(json_object_get(attrs, names[0]));
	assert_non_null(text);
	n = strtol(text, &end, 10);
	assert_true(end != text && *end == '\0');
	json_decref(attrs);
	return (int)n;
}

/* Waits up to 10 s for the queue to have want messages in flight. */
static int wait_in_flight(int want)
{
	int64_t until = now_ms() + 10000;
	int n;

	while ((n = in_flight()) != want && now_ms() < until)
		usleep(20000);
	return n;
}

/* A fresh queue holding N_MESSAGES messages, all received (in flight). */
static int setup(void **state)
{
	const struct sqs_receive_options o = {10, 1, 600, false};
	struct aws_result res;
	char name[64];
	static int round;

	(void)state;
	snprintf(name, sizeof(name), "outbox-test-delete-pool-%ld-%d", (long)getpid(), round++);
	assert_int_equal(sqs_create_queue(fx.sqs, name, NULL, 0, &fx.queue_url, &res), 0);
	for (int i = 0; i < N_MESSAGES; i += SQS_MAX_BATCH_ENTRIES) {
		struct sqs_send_entry e[SQS_MAX_BATCH_ENTRIES];
		struct sqs_entry_result r[SQS_MAX_BATCH_ENTRIES];
		static const char *const ids[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
		size_t n = N_MESSAGES - i < SQS_MAX_BATCH_ENTRIES ? (size_t)(N_MESSAGES - i)
		                                                  : SQS_MAX_BATCH_ENTRIES;

		for (size_t k = 0; k < n; k++)
			e[k] = (struct sqs_send_entry){ids[k], "{}", 2, NULL};
		assert_int_equal(sqs_send_message_batch(fx.sqs, fx.queue_url, e, n, r, &res), 0);
	}
	fx.n_received = 0;
	memset(fx.lists, 0, sizeof(fx.lists));
	for (size_t l = 0; l < N_MESSAGES && fx.n_received < N_MESSAGES; l++) {
		assert_int_equal(sqs_receive_message(fx.sqs, fx.queue_url, &o, &fx.lists[l], &res), 0);
		for (size_t i = 0; i < fx.lists[l].n; i++)
			fx.received[fx.n_received++] = &fx.lists[l].items[i];
	}
	assert_int_equal(fx.n_received, N_MESSAGES);
	assert_int_equal(in_flight(), N_MESSAGES);
	fx.dest = (struct cfg_destination){.name = "news", .queue_url = fx.queue_url};
	fx.cfg = (struct cfg){.destinations = &fx.dest, .n_destinations = 1};
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t l = 0; l < N_MESSAGES; l++)
		sqs_messages_free(&fx.lists[l]);
	free(fx.queue_url); /* the emulator's queues go with it */
	fx.queue_url = NULL;
	return 0;
}

static void add(struct delete_pool *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		delete_pool_add(p, fx.sqs, fx.received[i]->receipt_handle);
}

/* Ten fill the pool: sent before the tenth add returns.  A minute's age
 * keeps the thread out of it. */
static void test_full_pool_is_sent_at_once(void **state)
{
	struct delete_pools *ps;

	(void)state;
	assert_int_equal(delete_pools_start(&fx.cfg, &fx.env, 60000, &ps), 0);
	add(delete_pools_of(ps, 0), 0, 9);
	assert_int_equal(in_flight(), N_MESSAGES); /* nine wait */
	add(delete_pools_of(ps, 0), 9, 21);
	assert_int_equal(in_flight(), N_MESSAGES - 20); /* two requests of ten; one waits */
	delete_pools_stop(ps);
	assert_int_equal(in_flight(), N_MESSAGES - 21); /* the stop sent it */
}

/* A pool that does not fill goes out once its oldest deletion is
 * max_age_ms old, without another add and without the stop. */
static void test_partial_pool_is_sent_when_old(void **state)
{
	struct delete_pools *ps;

	(void)state;
	assert_int_equal(delete_pools_start(&fx.cfg, &fx.env, 50, &ps), 0);
	add(delete_pools_of(ps, 0), 0, 3);
	assert_int_equal(wait_in_flight(N_MESSAGES - 3), N_MESSAGES - 3);
	add(delete_pools_of(ps, 0), 3, 5); /* the thread sleeps until a new one comes */
	assert_int_equal(wait_in_flight(N_MESSAGES - 5), N_MESSAGES - 5);
	delete_pools_stop(ps);
	assert_int_equal(in_flight(), N_MESSAGES - 5);
}

/* Stopping with nothing waiting sends nothing and returns; so does NULL. */
static void test_stop_empty(void **state)
{
	struct delete_pools *ps;

	(void)state;
	assert_int_equal(delete_pools_start(&fx.cfg, &fx.env, 60000, &ps), 0);
	delete_pools_stop(ps);
	delete_pools_stop(NULL);
	assert_int_equal(in_flight(), N_MESSAGES);
}

/* The unpooled send: one entry is a DeleteMessage, more a batch; a stale
 * handle in a batch is logged, the others deleted. */
static void test_delete_send(void **state)
{
	const char *handles[3] = {fx.received[0]->receipt_handle, "not-a-receipt-handle",
	                          fx.received[1]->receipt_handle};

	(void)state;
	assert_int_equal(delete_send(fx.sqs, fx.queue_url, "news", handles, 0), 0);
	assert_int_equal(delete_send(fx.sqs, fx.queue_url, "news", &handles[2], 1), 1);
	assert_int_equal(in_flight(), N_MESSAGES - 1);
	assert_int_equal(delete_send(fx.sqs, fx.queue_url, "news", handles, 2), 1);
	assert_int_equal(in_flight(), N_MESSAGES - 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_pool_is_sent_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_pool_is_sent_when_old, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_send, setup, teardown),
	};
	int rc;

	fx.endpoint = getenv("OUTBOX_TEST_AWS_ENDPOINT");
	if (fx.endpoint == NULL || *fx.endpoint == '\0') {
		fprintf(stderr, "OUTBOX_TEST_AWS_ENDPOINT not set; skipping\n");
		return 77;
	}
	fx.sqs = aws_stub_client(fx.endpoint, AWS_SERVICE_SQS);
	if (fx.sqs == NULL || aws_env_load(&fx.env, NULL, fx.endpoint, fx.endpoint) < 0) {
		fprintf(stderr, "could not make an SQS client for %s\n", fx.endpoint);
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	aws_env_free(&fx.env);
	aws_http_free(fx.sqs);
	return rc;
}
