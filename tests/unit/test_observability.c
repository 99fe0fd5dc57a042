/*
 * test_observability.c: the pieces of outboxd's observability that need no
 * service: log context parsing and JSON lines, [metrics] listen parsing,
 * the metrics registry and its Prometheus text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

#include <jansson.h>

#include "common/log_fields.h"
#include "common/metrics.h"
#include "common/process_metrics.h"
#include "config/listen.h"

static void expect_fields(const char *msg, const char *want_json)
{
	json_t *got = log_fields_parse(msg);
	json_t *want = json_loads(want_json, 0, NULL);

	assert_non_null(got);
	assert_non_null(want);
	if (!json_equal(got, want)) {
		char *text = json_dumps(got, JSON_COMPACT | JSON_PRESERVE_ORDER);
		print_error("%s -> %s, expected %s\n", msg, text, want_json);
		free(text);
		fail();
	}
	json_decref(got);
	json_decref(want);
}

static void test_log_fields(void **state)
{
	expect_fields("job succeeded dest=news job_id=ab12 attempt=1",
	              "{\"message\":\"job succeeded\",\"dest\":\"news\",\"job_id\":\"ab12\",\"attempt\":\"1\"}");
	expect_fields("no context here", "{\"message\":\"no context here\"}");
	/* A quoted value may hold spaces, quotes and backslashes. */
	expect_fields("dead dest=news error=\"a \\\"b\\\" c\\\\\" n=2",
	              "{\"message\":\"dead\",\"dest\":\"news\",\"error\":\"a \\\"b\\\" c\\\\\",\"n\":\"2\"}");
	/* key=value in the middle of the text is text. */
	expect_fields("x=1 is not context here", "{\"message\":\"x=1 is not context here\"}");
	/* An unterminated quote makes the tail text, not fields. */
	expect_fields("oops error=\"never closed", "{\"message\":\"oops error=\\\"never closed\"}");
	/* A repeated key keeps its first value. */
	expect_fields("m a=1 a=2", "{\"message\":\"m\",\"a\":\"1\"}");
}

static void test_log_json_line(void **state)
{
	char out[4096];
	size_t len = log_fields_json("2026-01-02T03:04:05.678Z", "ERROR", "outboxd",
	                             "bad \xff byte\n\"q\" dest=news", out, sizeof(out));
	json_error_t err;
	json_t *line;

	assert_int_equal(len, strlen(out));
	assert_null(strchr(out, '\n')); /* one line, whatever the message holds */
	line = json_loads(out, 0, &err);
	assert_non_null(line);
	assert_string_equal(json_string_value(json_object_get(line, "level")), "ERROR");
	assert_string_equal(json_string_value(json_object_get(line, "program")), "outboxd");
	assert_string_equal(json_string_value(json_object_get(line, "message")), "bad ? byte\n\"q\"");
	assert_string_equal(json_string_value(json_object_get(line, "dest")), "news");
	assert_string_equal(json_string_value(json_object_get(line, "time")), "2026-01-02T03:04:05.678Z");
	json_decref(line);
}

static void test_log_json_too_long(void **state)
{
	char msg[3000], out[512];
	json_t *line;

	memset(msg, '"', sizeof(msg) - 1); /* each escapes to two bytes */
	msg[sizeof(msg) - 1] = '\0';
	log_fields_json("2026-01-02T03:04:05.678Z", "LOG", "outboxd", msg, out, sizeof(out));
	line = json_loads(out, 0, NULL);
	assert_non_null(line);
	assert_true(json_is_true(json_object_get(line, "truncated")));
	json_decref(line);
}

static void test_listen(void **state)
{
	static const struct {
		const char *v;
		int ok, port, family;
		const char *host;
	} cases[] = {
		{"127.0.0.1:9187", 1, 9187, AF_INET, "127.0.0.1"},
		{"0.0.0.0:1", 1, 1, AF_INET, "0.0.0.0"},
		{"[::1]:65535", 1, 65535, AF_INET6, "::1"},
		{"localhost:9187", 0, 0, 0, NULL},
		{"127.0.0.1", 0, 0, 0, NULL},
		{"127.0.0.1:0", 0, 0, 0, NULL},
		{"127.0.0.1:65536", 0, 0, 0, NULL},
		{"127.0.0.1:+80", 0, 0, 0, NULL},
		{"127.0.0.1:80x", 0, 0, 0, NULL},
		{"::1:80", 0, 0, 0, NULL},
		{"[::1]80", 0, 0, 0, NULL},
		{"[127.0.0.1]:80", 0, 0, 0, NULL},
		{":80", 0, 0, 0, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfg_listen l;
		const char *why = cfg_listen_parse(cases[i].v, &l);

		if ((why == NULL) != cases[i].ok) {
			print_error("%s: %s\n", cases[i].v, why ? why : "accepted");
			fail();
		}
		if (!cases[i].ok)
			continue;
		assert_int_equal(l.port, cases[i].port);
		assert_int_equal(l.family, cases[i].family);
		assert_string_equal(l.host, cases[i].host);
	}
}

/* The registry's exposition into *text (caller frees). */
static void exposition(char **text, size_t *len)
{
	FILE *f = open_memstream(text, len);

	assert_non_null(f);
	assert_int_equal(metrics_write_prometheus(f), 0);
	fclose(f);
}

static void test_metrics(void **state)
{
	const char *names[] = {"news", "we\"ird"};
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(metrics_init(names, 2), 0);
	assert_int_equal(metrics_init(names, 2), -1); /* once only */
	metrics_inc(METRIC_JOBS_SUCCEEDED, "news");
	metrics_add(METRIC_JOBS_SUCCEEDED, "news", 2);
	metrics_inc(METRIC_JOBS_DEAD_STALE, "news");
	metrics_inc(METRIC_JOBS_SUCCEEDED, "not-registered"); /* ignored */
	metrics_gauge_add(METRIC_WORKERS_UP, "news", 3);
	metrics_gauge_add(METRIC_WORKERS_UP, "news", -1);
	metrics_observe(METRIC_PUBLISH_BATCH_SIZE, "news", 3);
	metrics_observe(METRIC_PUBLISH_BATCH_SIZE, "news", 10);
	metrics_observe(METRIC_PUBLISH_BATCH_SIZE, "news", 11); /* +Inf only */
	metrics_observe(METRIC_EXECUTE_SECONDS, "news", -1);    /* counted at 0 */
	metrics_observe(METRIC_EXECUTE_SECONDS, "news", NAN);   /* dropped */
	assert_int_equal(metrics_counter_value(METRIC_JOBS_SUCCEEDED, 0), 3);
	assert_int_equal(metrics_gauge_value(METRIC_WORKERS_UP, 0), 2);
	exposition(&text, &len);
	assert_non_null(strstr(text, "# TYPE outboxd_jobs_succeeded_total counter\n"));
	assert_non_null(strstr(text, "outboxd_jobs_succeeded_total{destination=\"news\"} 3\n"));
	assert_non_null(strstr(text, "outboxd_jobs_dead_total{destination=\"news\",reason=\"STALE\"} 1\n"));
	/* One HELP/TYPE per family, however many label values it has. */
	assert_null(strstr(strstr(text, "# TYPE outboxd_jobs_dead_total") + 1, "# TYPE outboxd_jobs_dead_total"));
	assert_non_null(strstr(text, "outboxd_consumer_workers_connected{destination=\"news\"} 2\n"));
	/* The deprecated name, until the next release. */
	assert_non_null(strstr(text, "outboxd_consumer_workers_up{destination=\"news\"} 2\n"));
	metrics_inc(METRIC_JOBS_DEAD_CRASHED, "news");
	/* Label values are escaped. */
	assert_non_null(strstr(text, "outboxd_jobs_succeeded_total{destination=\"we\\\"ird\"} 0\n"));
	/* Buckets are cumulative; +Inf equals _count. */
	assert_non_null(strstr(text, "outboxd_publish_batch_size_bucket{destination=\"news\",le=\"2\"} 0\n"));
	assert_non_null(strstr(text, "outboxd_publish_batch_size_bucket{destination=\"news\",le=\"3\"} 1\n"));
	assert_non_null(strstr(text, "outboxd_publish_batch_size_bucket{destination=\"news\",le=\"10\"} 2\n"));
	assert_non_null(strstr(text, "outboxd_publish_batch_size_bucket{destination=\"news\",le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(text, "outboxd_publish_batch_size_sum{destination=\"news\"} 24.000000\n"));
	assert_non_null(strstr(text, "outboxd_publish_batch_size_count{destination=\"news\"} 3\n"));
	assert_non_null(strstr(text, "outboxd_handler_execute_duration_seconds_bucket{destination=\"news\",le=\"0.001\"} 1\n"));
	assert_non_null(strstr(text, "outboxd_handler_execute_duration_seconds_count{destination=\"news\"} 1\n"));
	free(text);
	exposition(&text, &len);
	assert_non_null(strstr(text, "outboxd_jobs_dead_total{destination=\"news\",reason=\"CRASHED\"} 1\n"));
	assert_non_null(strstr(text, "outboxd_jobs_dead_total{destination=\"we\\\"ird\",reason=\"CANCELLED\"} 0\n"));
	free(text);
	metrics_shutdown();
	/* After shutdown recording is a no-op, not a crash. */
	metrics_inc(METRIC_JOBS_SUCCEEDED, "news");
	assert_int_equal(metrics_n_destinations(), 0);
}

/* Many threads adding the same few keys at once: each key gets one slot. */
static void *observe_keys(void *arg)
{
	static const char *const keys[] = {"k0", "k1", "k2", "k3"};

	(void)arg;
	for (int i = 0; i < 1000; i++)
		metrics_observe_keyed(METRIC_DB_STATEMENT_SECONDS, keys[i % 4], 0.002);
	return NULL;
}

static void test_keyed_histograms(void **state)
{
	pthread_t t[8];
	char *text = NULL, key[32];
	size_t len = 0;
	const char *p;
	int n = 0;

	(void)state;
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, observe_keys, NULL), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	metrics_observe_keyed(METRIC_SQS_REQUEST_SECONDS, "ReceiveMessage", 19.5);
	metrics_observe_keyed(METRIC_SQS_REQUEST_SECONDS, "ReceiveMessage", NAN); /* dropped */
	metrics_process_inc(METRIC_CREDENTIAL_REFRESH_FAILURES);
	/* Past the table's room keys are dropped, not written over others. */
	for (int i = 0; i < METRICS_MAX_KEYS + 5; i++) {
		snprintf(key, sizeof(key), "extra%d", i);
		metrics_observe_keyed(METRIC_SQS_REQUEST_SECONDS, key, 0.01);
	}
	exposition(&text, &len);
	assert_non_null(strstr(text, "# TYPE outboxd_db_statement_duration_seconds histogram\n"));
	for (p = strstr(text, "outboxd_db_statement_duration_seconds_count{"); p != NULL;
	     p = strstr(p + 1, "outboxd_db_statement_duration_seconds_count{"))
		n++;
	assert_int_equal(n, 4);
	assert_non_null(strstr(text, "outboxd_db_statement_duration_seconds_count{statement=\"k2\"} 2000\n"));
	assert_non_null(strstr(text, "outboxd_db_statement_duration_seconds_bucket{statement=\"k2\",le=\"0.001\"} 0\n"));
	assert_non_null(strstr(text, "outboxd_db_statement_duration_seconds_bucket{statement=\"k2\",le=\"0.0025\"} 2000\n"));
	assert_non_null(strstr(text, "outboxd_sqs_request_duration_seconds_bucket{action=\"ReceiveMessage\",le=\"15\"} 0\n"));
	assert_non_null(strstr(text, "outboxd_sqs_request_duration_seconds_bucket{action=\"ReceiveMessage\",le=\"20\"} 1\n"));
	assert_non_null(strstr(text, "outboxd_sqs_request_duration_seconds_count{action=\"ReceiveMessage\"} 1\n"));
	assert_non_null(strstr(text, "outboxd_sqs_request_duration_seconds_count{action=\"extra0\"} 1\n"));
	assert_null(strstr(text, "action=\"extra" "47\""));
	assert_non_null(strstr(text, "outboxd_aws_credential_refresh_failures_total 1\n"));
	assert_non_null(strstr(text, "outboxd_aws_credential_refreshes_total 0\n"));
	free(text);
}

static void test_process_metrics(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	double start = 0, rss = 0, fds = 0;
	const char *p;

	(void)state;
	assert_non_null(out);
	assert_int_equal(process_metrics_write(out), 0);
	fclose(out);
	assert_non_null(strstr(text, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total "));
	p = strstr(text, "\nprocess_start_time_seconds ");
	assert_non_null(p);
	start = strtod(p + 28, NULL);
	assert_true(start > (double)time(NULL) - 3600 && start <= (double)time(NULL) + 1);
	p = strstr(text, "\nprocess_resident_memory_bytes ");
	assert_non_null(p);
	rss = strtod(p + 31, NULL);
	assert_true(rss > 100000);
	p = strstr(text, "\nprocess_open_fds ");
	assert_non_null(p);
	fds = strtod(p + 18, NULL);
	assert_true(fds >= 3); /* stdin, stdout, stderr at least */
	assert_non_null(strstr(text, "\nprocess_max_fds "));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_fields),
		cmocka_unit_test(test_log_json_line),
		cmocka_unit_test(test_log_json_too_long),
		cmocka_unit_test(test_listen),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_keyed_histograms),
		cmocka_unit_test(test_process_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
