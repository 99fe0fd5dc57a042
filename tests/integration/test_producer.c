/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_producer.c: liboutbox against a real PostgreSQL.
 *
 * The job row and its outbox event commit together or not at all, and
 * re-enqueueing (sequentially or concurrently) leaves one of each.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "outbox/producer.h"
#include "testdb.h"

static char *conninfo;

static const char news_item[] =
	"{\"source\":\"reuters\",\"url\":\"https://example.com/n/1\",\"published_at\":"
	"\"2026-11-30T09:00:00Z\",\"title\":\"Chip maker beats\",\"body\":\"...\",\"symbols\":[\"NVDA\"]}";

static int reset(void **state)
{
	PGconn *conn = testdb_connect(conninfo);

	testdb_exec(conn, "TRUNCATE outbox.outbox_events, outbox.jobs, outbox.price_windows");
	PQfinish(conn);
	return 0;
}

static long count(PGconn *conn, const char *table)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM outbox.%s", table);
	return testdb_scalar(conn, sql);
}

static void enqueue_news(PGconn *conn, struct outbox_enqueued *out)
{
	char err[512];
	json_t *item = json_loads(news_item, 0, NULL);

	assert_non_null(item);
	if (outbox_enqueue_news_job(conn, "news", item, out, err, sizeof(err)) != 0)
		fail_msg("enqueue failed: %s", err);
	json_decref(item);
}

static void test_rollback_writes_nothing(void **state)
{
	PGconn *conn = testdb_connect(conninfo);
	struct outbox_enqueued out;

	testdb_exec(conn, "BEGIN");
	enqueue_news(conn, &out);
	assert_int_equal(out.created, 1);
	assert_int_equal(count(conn, "jobs"), 1); /* visible inside the transaction */
	assert_int_equal(count(conn, "outbox_events"), 1);
	testdb_exec(conn, "ROLLBACK");
	assert_int_equal(count(conn, "jobs"), 0);
	assert_int_equal(count(conn, "outbox_events"), 0);
	PQfinish(conn);
}

static void test_commit_writes_both(void **state)
{
	PGconn *conn = testdb_connect(conninfo);
	struct outbox_enqueued out;
	char sql[640];

	testdb_exec(conn, "BEGIN");
	enqueue_news(conn, &out);
	testdb_exec(conn, "COMMIT");
	snprintf(sql, sizeof(sql),
	         "SELECT count(*) FROM outbox.jobs j JOIN outbox.outbox_events e USING (job_id)"
	         " WHERE j.job_id = '%s' AND e.event_id = '%s' AND j.status = 'PENDING'"
	         " AND e.status = 'NEW' AND e.body::jsonb->>'event_id' = e.event_id",
	         out.job_id, out.event_id);
	assert_int_equal(testdb_scalar(conn, sql), 1);
	PQfinish(conn);
}

static void test_enqueue_twice_is_a_noop(void **state)
{
	PGconn *conn = testdb_connect(conninfo);
	struct outbox_enqueued first, second;

	enqueue_news(conn, &first); /* autocommit: each call is its own transaction */
	enqueue_news(conn, &second);
	assert_int_equal(first.created, 1);
	assert_int_equal(second.created, 0);
	assert_string_equal(first.job_id, second.job_id);
	assert_string_equal(first.event_id, second.event_id);
	assert_int_equal(count(conn, "jobs"), 1);
	assert_int_equal(count(conn, "outbox_events"), 1);
	PQfinish(conn);
}

struct racer {
	PGconn *conn;
	struct outbox_enqueued out;
};

static void *race_enqueue(void *arg)
{
	struct racer *r = arg;

	enqueue_news(r->conn, &r->out);
	return NULL;
}

/* Waits (bounded) until some backend is blocked on a lock. */
static void wait_for_lock_waiter(PGconn *observer)
{
	for (int i = 0; i < 500; i++) {
		if (testdb_scalar(observer, "SELECT count(*) FROM pg_stat_activity"
		                  " WHERE wait_event_type = 'Lock'") > 0)
			return;
		usleep(10000);
	}
	fail_msg("the second enqueue never waited for the first");
}

static void test_concurrent_enqueue_leaves_one(void **state)
{
	PGconn *a = testdb_connect(conninfo), *observer = testdb_connect(conninfo);
	struct racer b = {testdb_connect(conninfo), {{0}, {0}, 0}};
	struct outbox_enqueued first;
	pthread_t thread;

	testdb_exec(a, "BEGIN");
	testdb_exec(b.conn, "BEGIN");
	enqueue_news(a, &first);
	assert_int_equal(pthread_create(&thread, NULL, race_enqueue, &b), 0);
	wait_for_lock_waiter(observer); /* b now waits on a's uncommitted job row */
	testdb_exec(a, "COMMIT");
	assert_int_equal(pthread_join(thread, NULL), 0);
	testdb_exec(b.conn, "COMMIT");
	assert_int_equal(first.created, 1);
	assert_int_equal(b.out.created, 0);
	assert_int_equal(count(observer, "jobs"), 1);
	assert_int_equal(count(observer, "outbox_events"), 1);
	PQfinish(a);
	PQfinish(b.conn);
	PQfinish(observer);
}

static void confirm_window(PGconn *conn, const char *sha, int backfill,
                           struct outbox_price_enqueued *out)
{
	struct outbox_price_window w = {
		.symbol = "NVDA", .window_start = "2026-11-30T18:01:00+09:00",
		.artifact_key = "prices/NVDA/x.json", .artifact_sha256 = sha, .backfill = backfill,
	};
	char err[512];

	if (outbox_enqueue_price_job(conn, "price", &w, out, err, sizeof(err)) != 0)
		fail_msg("price enqueue failed: %s", err);
}

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static void test_price_correction_raises_generation_atomically(void **state)
{
	PGconn *producer = testdb_connect(conninfo), *observer = testdb_connect(conninfo);
	struct outbox_price_enqueued first, again, corr;

	confirm_window(producer, SHA_A, 0, &first);
	assert_int_equal(first.generation, 1);
	assert_int_equal(first.corrected, 0);
	assert_int_equal(first.job_written, 1);
	confirm_window(producer, SHA_A, 0, &again); /* same bars: nothing changes */
	assert_int_equal(again.generation, 1);
	assert_int_equal(again.corrected, 0);
	assert_string_equal(again.job.job_id, first.job.job_id);
	assert_int_equal(again.job.created, 0);

	testdb_exec(producer, "BEGIN");
	confirm_window(producer, SHA_B, 0, &corr);
	assert_int_equal(corr.generation, 2);
	assert_int_equal(corr.corrected, 1);
	assert_string_not_equal(corr.job.job_id, first.job.job_id);
	/* Before the commit another session sees generation 1 and one job. */
	assert_int_equal(testdb_scalar(observer, "SELECT generation FROM outbox.price_windows"), 1);
	assert_int_equal(count(observer, "jobs"), 1);
	assert_int_equal(count(observer, "outbox_events"), 1);
	testdb_exec(producer, "COMMIT");
	assert_int_equal(testdb_scalar(observer, "SELECT generation FROM outbox.price_windows"), 2);
	assert_int_equal(testdb_scalar(observer, "SELECT count(*) FROM outbox.jobs j"
	                 " JOIN outbox.outbox_events e USING (job_id) WHERE j.window_generation = 2"
	                 " AND (e.body::jsonb->>'window_generation')::int = 2"), 1);
	assert_int_equal(count(observer, "jobs"), 2);
	PQfinish(producer);
	PQfinish(observer);
}

static void test_backfill_writes_window_only(void **state)
{
	PGconn *conn = testdb_connect(conninfo);
	struct outbox_price_enqueued out;

	confirm_window(conn, SHA_A, 1, &out);
	assert_int_equal(out.generation, 1);
	assert_int_equal(out.job_written, 0);
	assert_int_equal(count(conn, "price_windows"), 1);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.price_windows WHERE backfill"), 1);
	assert_int_equal(count(conn, "jobs"), 0);
	assert_int_equal(count(conn, "outbox_events"), 0);
	PQfinish(conn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_rollback_writes_nothing, reset),
		cmocka_unit_test_setup(test_commit_writes_both, reset),
		cmocka_unit_test_setup(test_enqueue_twice_is_a_noop, reset),
		cmocka_unit_test_setup(test_concurrent_enqueue_leaves_one, reset),
		cmocka_unit_test_setup(test_price_correction_raises_generation_atomically, reset),
		cmocka_unit_test_setup(test_backfill_writes_window_only, reset),
	};
	int rc;

	testdb_require();
	conninfo = testdb_create("outbox_test_producer");
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(conninfo);
	return rc;
}
