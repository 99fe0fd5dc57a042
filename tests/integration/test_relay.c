/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_relay.c: the relay against a real PostgreSQL and fauxqs.
 *
 * Every test uses its own queues (names carry the pid) in one throwaway
 * database, and its own destination names, so tests and parallel runs do
 * not see each other's events or messages.  Exits 77 (SKIP) without the
 * test services.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aws_stub.h"
#include "outbox/producer.h"
#include "db/registry.h"
#include "relay/outbox_store.h"
#include "relay/publisher.h"
#include "relay/relay.h"
#include "aws/sqs.h"
#include "testdb.h"

static struct {
	char *conninfo;
	PGconn *db;
	struct aws_http *sqs;
	const char *endpoint;
} fx;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A fresh queue named relay-<what>-<pid>; caller frees the URL. */
static char *make_queue(const char *what)
{
	struct aws_result res;
	char name[80];
	char *url = NULL;

	snprintf(name, sizeof(name), "relay-%s-%ld", what, (long)getpid());
	assert_int_equal(sqs_create_queue(fx.sqs, name, NULL, 0, &url, &res), 0);
	return url;
}

/*
 * n events (and jobs) of dest; body_size 0 gives a small JSON body naming
 * the event, else body_size bytes of 'x'.  tag makes job ids unique.
 */
static void insert_events(const char *tag, const char *dest, int n, long body_size)
{
	char sql[2048];

	snprintf(sql, sizeof(sql),
	         "WITH j AS (INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload)"
	         "  SELECT encode(sha256(convert_to('%s-' || g, 'UTF8')), 'hex'), 'news', '%s',"
	         "         '{}', '{}' FROM generate_series(1, %d) g RETURNING job_id)"
	         " INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination,"
	         "                                   redrive_generation, body)"
	         " SELECT 'news:' || job_id || ':0', 'news', job_id, '%s', 0,"
	         "        CASE WHEN %ld > 0 THEN repeat('x', %ld)"
	         "             ELSE json_build_object('event_id', 'news:' || job_id || ':0')::text END"
	         " FROM j",
	         tag, dest, n, dest, body_size, body_size);
	testdb_exec(fx.db, sql);
}

static long count_where(const char *fmt, ...) OUTBOX_PRINTF(1, 2);
static long count_where(const char *fmt, ...)
{
	char *sql = NULL;
	va_list ap;
	long v;

	va_start(ap, fmt);
	assert_true(vasprintf(&sql, fmt, ap) > 0);
	va_end(ap);
	v = testdb_scalar(fx.db, sql);
	free(sql);
	return v;
}

/* Receives from url until want messages arrived (then one more empty poll
 * to catch extras) or 15 s passed.  Returns the number received; bodies
 * (when not NULL) collects them as a JSON array of strings. */
static size_t receive_all(const char *url, size_t want, json_t *bodies)
{
	const struct sqs_receive_options o = {10, 1, 120, false};
	struct aws_result res;
	size_t got = 0;
	double deadline = now_s() + 15;

	while (now_s() < deadline) {
		struct sqs_messages m = {0};
		assert_int_equal(sqs_receive_message(fx.sqs, url, &o, &m, &res), 0);
		for (size_t i = 0; bodies != NULL && i < m.n; i++)
			json_array_append_new(bodies, json_string(m.items[i].body));
		got += m.n;
		size_t n = m.n;
		sqs_messages_free(&m);
		if (got >= want && n == 0)
			break;
	}
	return got;
}

/* All n events of dest are PUBLISHED with a message id, and url holds
 * every one's own body: none missing, none twice. */
static void assert_published_once(const char *dest, const char *url, size_t n)
{
	json_t *bodies = json_array();
	char *text;

	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination"
	                             " = '%s' AND status = 'PUBLISHED' AND sqs_message_id IS NOT NULL",
	                             dest), n);
	assert_int_equal(receive_all(url, n, bodies), n);
	text = json_dumps(bodies, JSON_COMPACT);
	assert_int_equal(count_where("SELECT count(DISTINCT e.event_id) FROM outbox.outbox_events e,"
	                             " jsonb_array_elements_text('%s'::jsonb) b WHERE e.body = b",
	                             text), n);
	free(text);
	json_decref(bodies);
}

static struct relay_lane *make_lane(const char *dest, const char *url, struct publisher *pub)
{
	const struct relay_lane_settings s = {.batch_size = 10, .claim_max = 10, .synchronous_commit = true,
	                                     .retry_base_seconds = 1, .retry_max_seconds = 4,
	                                     .claim_lease_seconds = 30};
	struct relay_lane *lane = NULL;

	assert_int_equal(relay_lane_new(fx.conninfo, dest, url, "test:1", &s, pub, &lane), 0);
	return lane;
}

static struct publisher *sqs_publisher(void)
{
	struct aws_env env;
	struct publisher *pub = NULL;

	assert_int_equal(aws_env_load(&env, NULL, fx.endpoint, fx.endpoint), 0);
	assert_int_equal(publisher_sqs_new(&env, &pub), 0);
	aws_env_free(&env);
	return pub;
}

/* The child's connection: a global so that valgrind, which follows the
 * fork, sees it still reachable at _exit() instead of leaked. */
static PGconn *child_conn;

/* Child: enqueue n jobs through liboutbox, commit, die like SIGKILL. */
static void enqueue_and_die(int n)
{
	PGconn *c = PQconnectdb(fx.conninfo);
	char err[256];

	child_conn = c;

	if (PQstatus(c) != CONNECTION_OK)
		_exit(2);
	PQclear(PQexec(c, "BEGIN"));
	for (int i = 0; i < n; i++) {
		struct outbox_enqueued out;
		json_t *id = json_pack("{s:s, s:i}", "type", "crash", "n", i);
		if (outbox_enqueue_job((struct pg_conn *)c, "crash", "crash", id, id, &out, err,
		                       sizeof(err)) < 0)
			_exit(3);
		json_decref(id);
	}
	PQclear(PQexec(c, "COMMIT"));
	_exit(137);
}

/* 1: committed, process killed before any send: the next pass publishes all. */
static void test_crash_before_send(void **state)
{
	int status = 0;
	/* Fork before allocating anything the child would leak at _exit(). */
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		enqueue_and_die(20);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 137);

	char *url = make_queue("crash");
	struct publisher *pub = sqs_publisher();
	struct relay_lane *lane = make_lane("crash", url, pub);
	struct relay_pass_stats st;

	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events"
	                             " WHERE destination = '%s' AND status = 'NEW'", "crash"), 20);
	for (int i = 0; i < 5; i++)
		assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_published_once("crash", url, 20);
	relay_lane_free(lane);
	publisher_free(pub);
	free(url);
}

/* 3: 100 events drain in passes of at most 10, one request each, then idle. */
static void test_drain_in_batches(void **state)
{
	char *url = make_queue("drain");
	struct publisher *pub = sqs_publisher();
	struct relay_lane *lane = make_lane("drain", url, pub);
	struct relay_pass_stats st;
	size_t passes = 0, published = 0;

	insert_events("drain", "drain", 100, 0);
	for (;;) {
		assert_int_equal(relay_lane_pass(lane, &st), 0);
		if (st.claimed == 0)
			break;
		assert_true(st.claimed <= 10);
		assert_int_equal(st.requests, 1);
		assert_true(st.max_request_entries <= 10);
		published += st.published;
		assert_true(++passes <= 10);
	}
	assert_int_equal(passes, 10);
	assert_int_equal(published, 100);
	/* The idle pass: nothing claimed, nothing sent. */
	assert_int_equal(st.requests, 0);
	assert_int_equal(receive_all(url, 100, NULL), 100);
	relay_lane_free(lane);
	publisher_free(pub);
	free(url);
}

/*
 * 3b: a claim larger than SQS's ten: the limit doubles while claims come
 * back full (10, 20, 40, 80, 80 ...), each claim goes out as requests of
 * ten sent four at a time, every event arrives exactly once, and the
 * limit falls back once the backlog is gone.
 */
static void test_large_claims_sent_concurrently(void **state)
{
	const struct relay_lane_settings s = {.batch_size = 10, .claim_max = 80,
	                                     .retry_base_seconds = 1, .retry_max_seconds = 4,
	                                     .claim_lease_seconds = 30};
	char *url = make_queue("wide");
	struct aws_env env;
	struct publisher *pub = NULL;
	struct relay_lane *lane = NULL;
	struct relay_pass_stats st;
	const size_t want_limits[] = {10, 20, 40, 80, 80, 80};
	size_t passes = 0, published = 0, requests = 0;

	(void)state;
	assert_int_equal(aws_env_load(&env, NULL, fx.endpoint, fx.endpoint), 0);
	assert_int_equal(publisher_sqs_new_concurrent(&env, 4, &pub), 0);
	aws_env_free(&env);
	assert_int_equal(relay_lane_new(fx.conninfo, "wide", url, "test:1", &s, pub, &lane), 0);
	insert_events("wide", "wide", 300, 0);
	for (;;) {
		assert_int_equal(relay_lane_pass(lane, &st), 0);
		if (st.claimed == 0)
			break;
		if (passes < sizeof(want_limits) / sizeof(want_limits[0]))
			assert_int_equal(st.limit, want_limits[passes]);
		assert_int_equal(st.failed_requests, 0);
		assert_int_equal(st.requests, (st.claimed + 9) / 10);
		assert_true(st.max_request_entries <= 10);
		published += st.published;
		requests += st.requests;
		assert_true(++passes <= 20);
	}
	assert_int_equal(published, 300);
	assert_int_equal(requests, 30);
	/* The backlog is gone: the claims shrink again. */
	assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_int_equal(st.limit, 40);
	assert_published_once("wide", url, 300);
	relay_lane_free(lane);
	publisher_free(pub);
	free(url);
}

/*
 * 3c: a paced lane (relay_lane_set_paced: the daemon lingers between its
 * passes) claims one batch at a time even from a backlog, so every request
 * is full; unpaced again, the limit grows as in 3b.
 */
static void test_paced_claims_one_batch(void **state)
{
	const struct relay_lane_settings s = {.batch_size = 10, .claim_max = 80,
	                                     .retry_base_seconds = 1, .retry_max_seconds = 4,
	                                     .claim_lease_seconds = 30};
	char *url = make_queue("paced");
	struct publisher *pub = sqs_publisher();
	struct relay_lane *lane = NULL;
	struct relay_pass_stats st;

	(void)state;
	assert_int_equal(relay_lane_new(fx.conninfo, "paced", url, "test:1", &s, pub, &lane), 0);
	insert_events("paced", "paced", 65, 0);
	relay_lane_set_paced(lane, true);
	for (int pass = 0; pass < 3; pass++) {
		assert_int_equal(relay_lane_pass(lane, &st), 0);
		assert_int_equal(st.limit, 10);
		assert_int_equal(st.claimed, 10);
		assert_true(st.full);
		assert_int_equal(st.requests, 1);
		assert_int_equal(st.max_request_entries, 10);
	}
	relay_lane_set_paced(lane, false);
	assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_int_equal(st.limit, 10);
	assert_int_equal(st.claimed, 10);
	assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_int_equal(st.limit, 20); /* a backlog again: it grows */
	assert_int_equal(st.claimed, 20);
	assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_int_equal(st.claimed, 5);
	assert_published_once("paced", url, 65);
	relay_lane_free(lane);
	publisher_free(pub);
	free(url);
}

/* 4: one oversize and one invalid event die unsent; big bodies are split. */
static void test_oversize_and_split(void **state)
{
	char *url = make_queue("size");
	struct publisher *pub = sqs_publisher();
	struct relay_lane *lane = make_lane("size", url, pub);
	struct relay_pass_stats st;

	insert_events("size-good", "size", 9, 0);
	insert_events("size-big", "size", 1, SQS_MAX_MESSAGE_BYTES + 1);
	assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_int_equal(st.claimed, 10);
	assert_int_equal(st.published, 9);
	assert_int_equal(st.dead, 1);
	assert_int_equal(st.jobs_dead, 1);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events e JOIN outbox.jobs j"
	                             " USING (job_id) WHERE e.destination = '%s' AND e.status = 'DEAD'"
	                             " AND e.dead_reason = 'OVERSIZE' AND e.last_error IS NOT NULL"
	                             " AND j.status = 'DEAD' AND j.dead_reason = 'UNROUTABLE'"
	                             " AND j.last_error LIKE '%%OVERSIZE%%'", "size"), 1);

	insert_events("size-invalid", "size", 1, 0);
	testdb_exec(fx.db, "UPDATE outbox.outbox_events SET body = E'bad \\x01 char'"
	                   " WHERE status = 'NEW' AND destination = 'size'");
	assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_int_equal(st.dead, 1);
	assert_int_equal(st.requests, 0);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination"
	                             " = '%s' AND dead_reason = 'INVALID_BODY'", "size"), 1);

	/* 10 x 200 KiB = 2 MB: over the batch limit, sent as several requests. */
	insert_events("size-split", "size", 10, 200 * 1024);
	assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_int_equal(st.claimed, 10);
	assert_int_equal(st.published, 10);
	assert_true(st.requests >= 2);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination"
	                             " = '%s' AND status = 'PUBLISHED'", "size"), 19);
	assert_int_equal(receive_all(url, 19, NULL), 19);
	relay_lane_free(lane);
	publisher_free(pub);
	free(url);
}

static struct cfg *load_cfg(const char *text)
{
	char path[] = "/tmp/test-relay-ini.XXXXXX";
	struct cfg_errors errs = {0};
	struct cfg *cfg = NULL;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	if (cfg_load(path, &cfg, &errs) < 0)
		cfg_errors_print(&errs, stderr);
	cfg_errors_free(&errs);
	unlink(path);
	assert_non_null(cfg);
	return cfg;
}

/* An ini with destinations name1=url1 [, name2=url2]; caller frees. */
static char *ini_text(int poll_ms, const char *d1, const char *u1, const char *d2, const char *u2)
{
	char *text = NULL;

	assert_true(asprintf(&text,
	                     "[database]\nconninfo = %s\n[aws]\nregion = us-east-1\nendpoint_url = %s\n"
	                     "[relay]\npoll_interval_ms = %d\nretry_base_seconds = 1\n"
	                     "retry_max_seconds = 4\nclaim_lease_seconds = 30\n"
	                     "[destination:%s]\nqueue_url = %s\nplugin = example\n"
	                     "%s%s%s%s%s",
	                     fx.conninfo, fx.endpoint, poll_ms, d1, u1,
	                     d2 ? "[destination:" : "", d2 ? d2 : "", d2 ? "]\nqueue_url = " : "",
	                     u2 ? u2 : "", d2 ? "\nplugin = example\n" : "") > 0);
	return text;
}

/* Polls until dest has want PUBLISHED events, at most seconds. */
static int wait_count(const char *dest, long want, double seconds)
{
	double deadline = now_s() + seconds;

	while (now_s() < deadline) {
		if (count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination = '%s'"
		                " AND status = 'PUBLISHED'", dest) == want)
			return 1;
		sleep_ms(20);
	}
	return 0;
}

/* Watches a failing event: each new attempt must be due base * 2^(attempts-1), capped. */
static void check_backoff_schedule(void)
{
	int seen = 0;
	double deadline = now_s() + 15;

	while (seen < 4 && now_s() < deadline) {
		PGresult *r = PQexec(fx.db, "SELECT attempts, extract(epoch FROM next_attempt_at - now()),"
		                            " last_error FROM outbox.outbox_events WHERE destination ="
		                            " 'bodest' ORDER BY event_id LIMIT 1");
		assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
		int attempts = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
		double left = strtod(PQgetvalue(r, 0, 1), NULL);
		if (attempts > seen) {
			double want = attempts >= 3 ? 4.0 : (double)(1 << (attempts - 1));
			/* observed within one 20 ms poll (+ slack) of the mark */
			assert_true(left <= want + 0.05);
			assert_true(left >= want - 0.4);
			assert_non_null(strstr(PQgetvalue(r, 0, 2), "QueueDoesNotExist"));
			seen = attempts;
		}
		PQclear(r);
		sleep_ms(20);
	}
	assert_int_equal(seen, 4);
}

/* 5: a lane on a missing queue backs off on schedule; the others flow. */
static void test_lane_isolation_and_backoff(void **state)
{
	char *good = make_queue("iso");
	char missing[256];
	struct relay *r = NULL;

	snprintf(missing, sizeof(missing), "%s/000000000000/relay-missing-%ld", fx.endpoint,
	         (long)getpid());
	char *ini = ini_text(100, "bodest", missing, "isodest", good);
	struct cfg *cfg = load_cfg(ini);
	assert_int_equal(relay_start(cfg, "test:iso", DB_ROLE_RELAY, &r), 0);
	insert_events("bo", "bodest", 5, 0);
	insert_events("iso1", "isodest", 5, 0);
	assert_true(wait_count("isodest", 5, 3));
	check_backoff_schedule();
	/* while the other lane is deep in its backoff, new events still flow */
	double t0 = now_s();
	insert_events("iso2", "isodest", 5, 0);
	assert_true(wait_count("isodest", 10, 3));
	assert_true(now_s() - t0 < 1.5);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination"
	                             " = '%s' AND status = 'NEW'", "bodest"), 5);
	relay_stop(r);
	cfg_free(cfg);
	free(ini);
	free(good);
}

/* The listener's backend once it ran a statement: LISTEN comes first. */
static long listener_pid(void)
{
	/* Listening: its last statement is LISTEN or a later one, not the
	 * session settings (SET ...) that come first. */
	return testdb_scalar(fx.db, "SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE"
	                            " datname = current_database() AND application_name ="
	                            " 'outboxd relay listener' AND query <> ''"
	                            " AND query NOT LIKE 'SET %' AND state = 'idle'");
}

static long wait_listener(long not_pid)
{
	double deadline = now_s() + 5;
	long pid = 0;

	while (now_s() < deadline) {
		pid = listener_pid();
		if (pid != 0 && pid != not_pid)
			return pid;
		sleep_ms(20);
	}
	fail_msg("no relay listener connected");
	return 0;
}

/* Waits until the lane of dest has asked producers to notify it (its
 * outbox.relay_idle row): it is asleep waiting for a notification. */
static void wait_idle(const char *dest)
{
	double deadline = now_s() + 5;

	while (now_s() < deadline) {
		if (count_where("SELECT count(*) FROM outbox.relay_idle WHERE destination = '%s'",
		                dest) == 1)
			return;
		sleep_ms(20);
	}
	fail_msg("the lane of \"%s\" never went idle", dest);
}

/* NOTIFY wakes an idle lane long before its 30 s poll, also after the
 * listener's connection was killed and came back; a busy lane's row is
 * gone, and a stopped relay leaves none. */
static void test_notify_wakes_lane(void **state)
{
	char *url = make_queue("notify");
	char *ini = ini_text(30000, "notifydest", url, NULL, NULL);
	struct cfg *cfg = load_cfg(ini);
	struct relay *r = NULL;
	char sql[256];

	assert_int_equal(relay_start(cfg, "test:notify", DB_ROLE_RELAY, &r), 0);
	long pid = wait_listener(0);
	wait_idle("notifydest");
	insert_events("notify1", "notifydest", 3, 0);
	assert_true(wait_count("notifydest", 3, 3));

	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%ld)", pid);
	testdb_exec(fx.db, sql);
	wait_listener(pid);
	wait_idle("notifydest");
	insert_events("notify2", "notifydest", 3, 0);
	assert_true(wait_count("notifydest", 6, 3));
	relay_stop(r);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.relay_idle WHERE destination"
	                             " = '%s'", "notifydest"), 0);
	cfg_free(cfg);
	free(ini);
	free(url);
}

/* Events of unconfigured destinations die after the 60 s grace, with their job. */
static void test_unknown_destination_sweep(void **state)
{
	const char *known[] = {"sweepknown"};
	char err[512];
	size_t count = 0;

	insert_events("sweep-old", "nowhere", 1, 0);
	insert_events("sweep-new", "nowhere", 1, 0);
	insert_events("sweep-known", "sweepknown", 1, 0);
	testdb_exec(fx.db, "UPDATE outbox.outbox_events SET created_at = now() - interval '61 s',"
	                   " next_attempt_at = now() - interval '61 s'"
	                   " WHERE job_id = encode(sha256(convert_to('sweep-old-1', 'UTF8')), 'hex')"
	                   " OR destination = 'sweepknown'");
	assert_int_equal(outbox_store_sweep_unknown(fx.db, known, 1,
	                                            OUTBOX_UNKNOWN_DESTINATION_GRACE_SECONDS,
	                                            NULL, NULL, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 1);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events e JOIN outbox.jobs j"
	                             " USING (job_id) WHERE e.destination = '%s' AND e.status = 'DEAD'"
	                             " AND e.dead_reason = 'UNKNOWN_DESTINATION' AND j.status = 'DEAD'"
	                             " AND j.dead_reason = 'UNROUTABLE'", "nowhere"), 1);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE status = 'NEW'"
	                             " AND destination IN ('%s', 'sweepknown')", "nowhere"), 2);
}

/*
 * A retry the consumer re-armed (created long ago, due again now or later)
 * gets the grace a fresh enqueue gets, counted from when it became due.
 */
static void test_sweep_grace_from_rearm(void **state)
{
	const char *known[] = {"sweepknown"};
	char err[512];
	size_t count = 0;

	insert_events("rearm-now", "ghost", 1, 0);
	insert_events("rearm-later", "ghost", 1, 0);
	insert_events("rearm-due", "ghost", 1, 0);
	testdb_exec(fx.db, "UPDATE outbox.outbox_events SET created_at = now() - interval '1 hour',"
	                   " attempts = 1, next_attempt_at = CASE"
	                   "   WHEN job_id = encode(sha256(convert_to('rearm-now-1', 'UTF8')), 'hex')"
	                   "     THEN now()"
	                   "   WHEN job_id = encode(sha256(convert_to('rearm-later-1', 'UTF8')), 'hex')"
	                   "     THEN now() + interval '10 min'"
	                   "   ELSE now() - interval '61 s' END"
	                   " WHERE destination = 'ghost'");
	assert_int_equal(outbox_store_sweep_unknown(fx.db, known, 1,
	                                            OUTBOX_UNKNOWN_DESTINATION_GRACE_SECONDS,
	                                            NULL, NULL, &count, err, sizeof(err)), 0);
	/* Only the one due for longer than the grace. */
	assert_int_equal(count, 1);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination = '%s'"
	                             " AND status = 'DEAD' AND job_id = encode(sha256(convert_to("
	                             "'rearm-due-1', 'UTF8')), 'hex')", "ghost"), 1);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination = '%s'"
	                             " AND status = 'NEW'", "ghost"), 2);
}

/* A destination another live relay serves is never swept; a stale row protects nothing. */
static void test_sweep_spares_other_relays(void **state)
{
	const char *known[] = {"sweepknown"};
	char err[512];
	size_t count = 0;

	insert_events("sweep-other", "elsewhere", 1, 0);
	testdb_exec(fx.db, "UPDATE outbox.outbox_events SET created_at = now() - interval '10 min',"
	                   " next_attempt_at = now() - interval '10 min' WHERE destination = 'elsewhere'");
	testdb_exec(fx.db, "INSERT INTO outbox.relay_instances (instance_id, destinations)"
	                   " VALUES ('other-host:1', '[\"elsewhere\"]')");
	assert_int_equal(outbox_store_sweep_unknown(fx.db, known, 1,
	                                            OUTBOX_UNKNOWN_DESTINATION_GRACE_SECONDS,
	                                            NULL, NULL, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 0);
	testdb_exec(fx.db, "UPDATE outbox.relay_instances SET heartbeat_at = now() - interval '5 min'"
	                   " WHERE instance_id = 'other-host:1'");
	assert_int_equal(outbox_store_sweep_unknown(fx.db, known, 1,
	                                            OUTBOX_UNKNOWN_DESTINATION_GRACE_SECONDS,
	                                            NULL, NULL, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 1);
	assert_int_equal(db_registry_beat(fx.db, "me:2", DB_ROLE_RELAY, known, 1, err, sizeof(err)),
	                 0);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.relay_instances WHERE instance_id = '%s'"
	                             " AND destinations = '[\"sweepknown\"]' AND role = 'relay'",
	                             "me:2"), 1);
	assert_int_equal(db_registry_leave(fx.db, "me:2", err, sizeof(err)), 0);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.relay_instances WHERE instance_id = '%s'",
	                             "me:2"), 0);
	testdb_exec(fx.db, "DELETE FROM outbox.relay_instances");
}

/* Only a process that runs the relay can send an event: a live consumer-only
 * row naming the destination does not keep its events alive past the grace,
 * a live row of a process running both halves does. */
static void test_sweep_ignores_consumer_rows(void **state)
{
	const char *known[] = {"sweepknown"};
	const char *theirs[] = {"consumed"};
	char err[512];
	size_t count = 0;

	(void)state;
	insert_events("sweep-consumed", "consumed", 2, 0);
	testdb_exec(fx.db, "UPDATE outbox.outbox_events SET created_at = now() - interval '10 min',"
	                   " next_attempt_at = now() - interval '10 min' WHERE destination = 'consumed'");
	assert_int_equal(db_registry_beat(fx.db, "both-host:1", DB_ROLE_ALL, theirs, 1, err,
	                                  sizeof(err)), 0);
	assert_int_equal(outbox_store_sweep_unknown(fx.db, known, 1,
	                                            OUTBOX_UNKNOWN_DESTINATION_GRACE_SECONDS,
	                                            NULL, NULL, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 0);
	assert_int_equal(db_registry_leave(fx.db, "both-host:1", err, sizeof(err)), 0);
	assert_int_equal(db_registry_beat(fx.db, "consumer-host:1", DB_ROLE_CONSUMER, theirs, 1, err,
	                                  sizeof(err)), 0);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.relay_instances WHERE instance_id = '%s'"
	                             " AND role = 'consumer' AND heartbeat_at > now() - interval '5 s'",
	                             "consumer-host:1"), 1);
	assert_int_equal(outbox_store_sweep_unknown(fx.db, known, 1,
	                                            OUTBOX_UNKNOWN_DESTINATION_GRACE_SECONDS,
	                                            NULL, NULL, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 2);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination = '%s'"
	                             " AND status = 'DEAD' AND dead_reason = 'UNKNOWN_DESTINATION'",
	                             "consumed"), 2);
	testdb_exec(fx.db, "DELETE FROM outbox.relay_instances");
}

/* A relay whose lease expired and was taken over applies nothing. */
static void test_lost_claim(void **state)
{
	struct outbox_claim a, b, c;
	struct outbox_mark_stats ms;
	char err[512];

	insert_events("lease", "leasedest", 1, 0);
	assert_int_equal(outbox_store_claim(fx.db, "leasedest", "A", 10, 30, &a, err, sizeof(err)), 0);
	assert_int_equal(a.n, 1);
	/* leased: nobody else gets it */
	assert_int_equal(outbox_store_claim(fx.db, "leasedest", "C", 10, 30, &c, err, sizeof(err)), 0);
	assert_int_equal(c.n, 0);
	testdb_exec(fx.db, "UPDATE outbox.outbox_events SET claim_until = now() - interval '1 s'"
	                   " WHERE destination = 'leasedest'");
	assert_int_equal(outbox_store_claim(fx.db, "leasedest", "B", 10, 30, &b, err, sizeof(err)), 0);
	assert_int_equal(b.n, 1);
	const struct outbox_mark m = {a.events[0].event_id, OUTBOX_OUTCOME_PUBLISHED, "mid-a",
	                              NULL, NULL};
	assert_int_equal(outbox_store_mark(fx.db, "A", &m, 1, 1, 4, &ms, err, sizeof(err)), 0);
	assert_int_equal(ms.applied, 0);
	const struct outbox_mark mb = {b.events[0].event_id, OUTBOX_OUTCOME_RETRY, NULL,
	                               "Throttling: slow down", NULL};
	assert_int_equal(outbox_store_mark(fx.db, "B", &mb, 1, 1, 4, &ms, err, sizeof(err)), 0);
	assert_int_equal(ms.applied, 1);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination"
	                             " = '%s' AND status = 'NEW' AND attempts = 1 AND claimed_by IS"
	                             " NULL AND next_attempt_at > now()", "leasedest"), 1);
	outbox_store_claim_free(&a);
	outbox_store_claim_free(&b);
	outbox_store_claim_free(&c);
}

/* The fake publisher records exactly what a pass sent. */
static void test_fake_publisher(void **state)
{
	struct publisher *pub = NULL;
	struct publisher_fake_message msg;
	struct relay_pass_stats st;

	assert_int_equal(publisher_fake_new(&pub), 0);
	struct relay_lane *lane = make_lane("fakedest", "fake://queue", pub);
	insert_events("fake", "fakedest", 12, 0);
	assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_true(st.full);
	assert_int_equal(relay_lane_pass(lane, &st), 0);
	assert_false(st.full);
	assert_int_equal(publisher_fake_count(pub), 12);
	assert_int_equal(publisher_fake_requests(pub), 2);
	assert_int_equal(publisher_fake_message(pub, 0, &msg), 0);
	assert_string_equal(msg.queue_url, "fake://queue");
	assert_non_null(strstr(msg.body, "\"event_id\""));
	assert_int_equal(publisher_fake_message(pub, 12, &msg), -1);
	assert_int_equal(count_where("SELECT count(*) FROM outbox.outbox_events WHERE destination"
	                             " = '%s' AND sqs_message_id LIKE 'fake-%%'", "fakedest"), 12);
	relay_lane_free(lane);
	publisher_free(pub);
}

static int group_setup(void **state)
{
	char name[64];

	fx.endpoint = getenv("OUTBOX_TEST_AWS_ENDPOINT");
	snprintf(name, sizeof(name), "relay_c_%ld", (long)getpid());
	fx.conninfo = testdb_create(name);
	fx.db = testdb_connect(fx.conninfo);
	fx.sqs = aws_stub_client(fx.endpoint, AWS_SERVICE_SQS);
	return fx.sqs != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
	aws_http_free(fx.sqs);
	PQfinish(fx.db);
	free(fx.conninfo);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_before_send),
		cmocka_unit_test(test_drain_in_batches),
		cmocka_unit_test(test_large_claims_sent_concurrently),
		cmocka_unit_test(test_paced_claims_one_batch),
		cmocka_unit_test(test_oversize_and_split),
		cmocka_unit_test(test_lost_claim),
		cmocka_unit_test(test_unknown_destination_sweep),
		cmocka_unit_test(test_sweep_spares_other_relays),
		cmocka_unit_test(test_sweep_ignores_consumer_rows),
		cmocka_unit_test(test_sweep_grace_from_rearm),
		cmocka_unit_test(test_fake_publisher),
		cmocka_unit_test(test_notify_wakes_lane),
		cmocka_unit_test(test_lane_isolation_and_backoff),
	};
	int rc;

	testdb_require();
	if (getenv("OUTBOX_TEST_AWS_ENDPOINT") == NULL) {
		fprintf(stderr, "SKIP: OUTBOX_TEST_AWS_ENDPOINT is not set (run tests/run.sh)\n");
		return 77;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	curl_global_cleanup();
	return rc;
}
