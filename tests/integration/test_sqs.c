/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_sqs.c: the SQS client against fauxqs (OUTBOX_TEST_AWS_ENDPOINT) and
 * against tests/harness/http-stub.mjs for the answers fauxqs never gives
 * (500, 403 throttling/denied, hangs, partial batches, bad MD5).
 * Exits 77 (SKIP) when OUTBOX_TEST_AWS_ENDPOINT is unset.
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
#include <unistd.h>

#include "aws_stub.h"
#include "aws/sqs.h"

struct fixture {
	struct aws_http *sqs;  /* fauxqs */
	struct aws_http *stub; /* http-stub.mjs */
	struct aws_stub proc;
	char *queue_url;
	char *dlq_url;
};

static struct fixture fx;

static void create_queues(void)
{
	struct aws_result res;
	char name[64];
	json_t *attrs = NULL;
	static const char *const arn_name[] = {"QueueArn"};

	snprintf(name, sizeof(name), "outbox-test-dlq-%ld", (long)getpid());
	assert_int_equal(sqs_create_queue(fx.sqs, name, NULL, 0, &fx.dlq_url, &res), 0);
	assert_int_equal(sqs_get_queue_attributes(fx.sqs, fx.dlq_url, arn_name, 1, &attrs, &res), 0);
	const char *arn = json_string_value(json_object_get(attrs, "QueueArn"));
	assert_non_null(arn);
	char *policy = sqs_redrive_policy(arn, 3);
	assert_non_null(policy);
	const struct sqs_attribute qattrs[] = {
		{"VisibilityTimeout", "30"},
		{"RedrivePolicy", policy},
	};
	snprintf(name, sizeof(name), "outbox-test-%ld", (long)getpid());
	assert_int_equal(sqs_create_queue(fx.sqs, name, qattrs, 2, &fx.queue_url, &res), 0);
	free(policy);
	json_decref(attrs);
}

static int group_setup(void **state)
{
	const char *endpoint = getenv("OUTBOX_TEST_AWS_ENDPOINT");

	fx.sqs = aws_stub_client(endpoint, AWS_SERVICE_SQS);
	if (fx.sqs == NULL || aws_stub_start(&fx.proc) < 0)
		return -1;
	fx.stub = aws_stub_client(fx.proc.endpoint, AWS_SERVICE_SQS);
	if (fx.stub == NULL)
		return -1;
	create_queues();
	return 0;
}

static int group_teardown(void **state)
{
	aws_stub_stop(&fx.proc);
	aws_http_free(fx.sqs);
	aws_http_free(fx.stub);
	free(fx.queue_url);
	free(fx.dlq_url);
	return 0;
}

static void test_queue_setup(void **state)
{
	struct aws_result res;
	json_t *attrs = NULL;
	char *url = NULL;
	char name[64];

	assert_int_equal(sqs_get_queue_attributes(fx.sqs, fx.queue_url, NULL, 0, &attrs, &res), 0);
	const char *policy = json_string_value(json_object_get(attrs, "RedrivePolicy"));
	assert_non_null(policy);
	assert_non_null(strstr(policy, "outbox-test-dlq-"));
	assert_non_null(strstr(policy, "\"maxReceiveCount\""));
	json_decref(attrs);

	snprintf(name, sizeof(name), "outbox-test-%ld", (long)getpid());
	assert_int_equal(sqs_get_queue_url(fx.sqs, name, &url, &res), 0);
	assert_string_equal(url, fx.queue_url);
	free(url);
}

/* Receives until want messages arrived or 20 rounds of 1 s long polls. */
static size_t receive_all(struct sqs_messages *lists, size_t max_lists, size_t want)
{
	const struct sqs_receive_options o = {10, 1, 60, false};
	struct aws_result res;
	size_t got = 0;
	size_t used = 0;

	for (int round = 0; round < 20 && got < want && used < max_lists; round++) {
		assert_int_equal(sqs_receive_message(fx.sqs, fx.queue_url, &o, &lists[used], &res), 0);
		got += lists[used].n;
		used++;
	}
	return got;
}

static void test_batch_roundtrip(void **state)
{
	struct sqs_send_entry e[SQS_MAX_BATCH_ENTRIES];
	struct sqs_entry_result r[SQS_MAX_BATCH_ENTRIES];
	struct sqs_handle_entry h[SQS_MAX_BATCH_ENTRIES];
	struct sqs_messages lists[20];
	char ids[SQS_MAX_BATCH_ENTRIES][24];
	char bodies[SQS_MAX_BATCH_ENTRIES][64];
	static const char trace[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
	struct aws_result res;
	size_t k = 0;
	int n;

	memset(lists, 0, sizeof(lists));
	for (int i = 0; i < SQS_MAX_BATCH_ENTRIES; i++) {
		snprintf(ids[i], sizeof(ids[i]), "e%d", i);
		snprintf(bodies[i], sizeof(bodies[i]), "{\"n\":%d,\"s\":\"caf\xc3\xa9 \\\"q\\\"\"}", i);
		/* even entries carry a trace context as a message attribute */
		e[i] = (struct sqs_send_entry){ids[i], bodies[i], strlen(bodies[i]),
		                               i % 2 ? NULL : trace};
	}
	assert_int_equal(sqs_send_message_batch(fx.sqs, fx.queue_url, e, 10, r, &res), 0);
	for (int i = 0; i < 10; i++) {
		assert_true(r[i].ok);
		assert_int_equal(r[i].klass, AWS_ERR_NONE);
		assert_true(strlen(r[i].message_id) > 0);
	}

	assert_int_equal(receive_all(lists, 20, 10), 10);
	for (size_t l = 0; l < 20; l++) {
		for (size_t i = 0; i < lists[l].n; i++) {
			const struct sqs_message *m = &lists[l].items[i];
			assert_int_equal(m->receive_count, 1);
			assert_true(m->sent_timestamp_ms > 0);
			assert_non_null(json_object_get(m->attributes, "ApproximateFirstReceiveTimestamp"));
			assert_non_null(strstr(m->body, "caf\xc3\xa9 \\\"q\\\""));
			assert_int_equal(sscanf(m->body, "{\"n\":%d", &n), 1);
			if (n % 2 == 0)
				assert_string_equal(sqs_message_traceparent(m), trace);
			else
				assert_null(sqs_message_traceparent(m));
			snprintf(ids[k], sizeof(ids[k]), "h%zu", k);
			h[k] = (struct sqs_handle_entry){ids[k], m->receipt_handle, 120};
			k++;
		}
	}
	assert_int_equal(k, 10);
	assert_int_equal(sqs_change_message_visibility_batch(fx.sqs, fx.queue_url, h, 10, r, &res), 0);
	for (int i = 0; i < 10; i++)
		assert_true(r[i].ok);
	assert_int_equal(sqs_change_message_visibility(fx.sqs, fx.queue_url, h[0].receipt_handle, 90, &res), 0);
	assert_int_equal(sqs_delete_message(fx.sqs, fx.queue_url, h[0].receipt_handle, &res), 0);
	assert_int_equal(sqs_delete_message_batch(fx.sqs, fx.queue_url, h + 1, 9, r, &res), 0);
	for (int i = 0; i < 9; i++)
		assert_true(r[i].ok);
	for (size_t l = 0; l < 20; l++)
		sqs_messages_free(&lists[l]);

	/* Deleted means gone: a short poll of the now-empty queue finds nothing. */
	const struct sqs_receive_options o = {10, 1, -1, false};
	assert_int_equal(sqs_receive_message(fx.sqs, fx.queue_url, &o, &lists[0], &res), 0);
	assert_int_equal(lists[0].n, 0);
	sqs_messages_free(&lists[0]);
}

/* A main queue's consumer asks for the trace context alone: the answer
 * carries no system attribute and no other message attribute. */
static void test_receive_trace_only(void **state)
{
	static const char trace[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
	const struct sqs_send_entry e[2] = {{"t0", "{\"n\":0}", 7, trace},
	                                    {"t1", "{\"n\":1}", 7, NULL}};
	const struct sqs_receive_options o = {.max_messages = 10, .wait_time_seconds = 1,
	                                      .visibility_timeout = 60, .trace_only = true};
	struct sqs_entry_result r[2];
	struct sqs_handle_entry h[2];
	struct sqs_messages lists[20];
	struct aws_result res;
	size_t k = 0;
	int n;

	(void)state;
	memset(lists, 0, sizeof(lists));
	assert_int_equal(sqs_send_message_batch(fx.sqs, fx.queue_url, e, 2, r, &res), 0);
	for (size_t l = 0; l < 20 && k < 2; l++) {
		assert_int_equal(sqs_receive_message(fx.sqs, fx.queue_url, &o, &lists[l], &res), 0);
		for (size_t i = 0; i < lists[l].n; i++) {
			const struct sqs_message *m = &lists[l].items[i];

			assert_true(json_object_size(m->attributes) == 0);
			assert_int_equal(m->receive_count, 0);
			assert_int_equal(m->sent_timestamp_ms, 0);
			assert_int_equal(sscanf(m->body, "{\"n\":%d", &n), 1);
			if (n == 0) {
				assert_string_equal(sqs_message_traceparent(m), trace);
				assert_int_equal(json_object_size(m->message_attributes), 1);
			} else {
				assert_null(sqs_message_traceparent(m));
			}
			assert_true(k < 2);
			h[k] = (struct sqs_handle_entry){k == 0 ? "d0" : "d1", m->receipt_handle, 0};
			k++;
		}
	}
	assert_int_equal(k, 2);
	assert_int_equal(sqs_delete_message_batch(fx.sqs, fx.queue_url, h, 2, r, &res), 0);
	for (size_t l = 0; l < 20; l++)
		sqs_messages_free(&lists[l]);
}

static void test_batch_over_limit_refused(void **state)
{
	size_t len = 600 * 1024;
	char *body = malloc(len);
	struct sqs_entry_result r[2];
	struct aws_result res;

	assert_non_null(body);
	memset(body, 'a', len);
	const struct sqs_send_entry e[] = {{"a", body, len, NULL}, {"b", body, len, NULL}};
	/* The stub would answer InvalidAction if anything were sent. */
	assert_int_equal(sqs_send_message_batch(fx.stub, "http://x/000/nothing", e, 2, r, &res), -1);
	assert_string_equal(res.code, "BatchRequestTooLong");
	assert_int_equal(res.klass, AWS_ERR_PERMANENT);
	assert_int_equal(res.status, 0);
	assert_non_null(strstr(res.message, "split"));
	free(body);
}

static void test_single_over_limit_permanent(void **state)
{
	size_t len = SQS_MAX_MESSAGE_BYTES + 1;
	char *body = malloc(len);
	struct sqs_entry_result r[2];
	struct aws_result res;

	assert_non_null(body);
	memset(body, 'a', len);
	const struct sqs_send_entry e[] = {{"big", body, len, NULL}, {"small", "ok", 2, NULL}};
	assert_int_equal(sqs_send_message_batch(fx.sqs, fx.queue_url, e, 2, r, &res), 0);
	assert_false(r[0].ok);
	assert_int_equal(r[0].klass, AWS_ERR_PERMANENT);
	assert_true(r[0].sender_fault);
	assert_string_equal(r[0].code, "InvalidParameterValue");
	assert_true(r[1].ok); /* the valid entry is still sent */
	free(body);

	/* Drain the small one so later tests see an empty queue. */
	struct sqs_messages m;
	memset(&m, 0, sizeof(m));
	assert_int_equal(receive_all(&m, 1, 1), 1);
	assert_int_equal(sqs_delete_message(fx.sqs, fx.queue_url, m.items[0].receipt_handle, &res), 0);
	sqs_messages_free(&m);
}

static void test_invalid_characters_permanent(void **state)
{
	struct sqs_entry_result r[1];
	struct aws_result res;
	const struct sqs_send_entry e[] = {{"ctl", "bad \x01 char", 11, NULL}};

	assert_int_equal(sqs_send_message_batch(fx.stub, "http://x/000/nothing", e, 1, r, &res), 0);
	assert_false(r[0].ok);
	assert_string_equal(r[0].code, "InvalidMessageContents");
	assert_int_equal(r[0].klass, AWS_ERR_PERMANENT);
}

static void test_batch_ids_checked(void **state)
{
	struct sqs_entry_result r[2];
	struct aws_result res;
	const struct sqs_send_entry dup[] = {{"x", "1", 1, NULL}, {"x", "2", 1, NULL}};
	const struct sqs_send_entry bad[] = {{"has space", "1", 1, NULL}};

	assert_int_equal(sqs_send_message_batch(fx.stub, "http://x/000/nothing", dup, 2, r, &res), -1);
	assert_string_equal(res.code, "BatchEntryIdsNotDistinct");
	assert_int_equal(sqs_send_message_batch(fx.stub, "http://x/000/nothing", bad, 1, r, &res), -1);
	assert_string_equal(res.code, "InvalidBatchEntryId");
	assert_int_equal(sqs_send_message_batch(fx.stub, "http://x/000/nothing", bad, 0, r, &res), -1);
	assert_string_equal(res.code, "EmptyBatchRequest");
}

static void test_missing_queue_permanent(void **state)
{
	struct aws_result res;
	char *url = NULL;

	assert_int_equal(sqs_get_queue_url(fx.sqs, "outbox-no-such-queue", &url, &res), -1);
	assert_null(url);
	assert_string_equal(res.code, "QueueDoesNotExist");
	assert_int_equal(res.klass, AWS_ERR_PERMANENT);
	assert_int_equal(res.status, 400);
}

/* One DeleteMessage against a stub scenario. */
static void stub_delete(const char *scenario, struct aws_result *res)
{
	char url[128];

	snprintf(url, sizeof(url), "http://sqs.us-east-1.localhost/000000000000/%s", scenario);
	assert_int_equal(sqs_delete_message(fx.stub, url, "rh", res), -1);
}

static void test_stub_classification(void **state)
{
	struct aws_result res;

	stub_delete("http500", &res);
	assert_int_equal(res.status, 500);
	assert_int_equal(res.klass, AWS_ERR_TRANSIENT);

	stub_delete("throttled", &res);
	assert_int_equal(res.status, 403);
	assert_string_equal(res.code, "RequestThrottled");
	assert_string_equal(res.request_id, "stub-RequestThrottled");
	assert_int_equal(res.klass, AWS_ERR_TRANSIENT);

	stub_delete("denied", &res);
	assert_int_equal(res.status, 403);
	assert_string_equal(res.code, "AccessDenied");
	assert_int_equal(res.klass, AWS_ERR_PERMANENT);

	stub_delete("legacy", &res);
	assert_string_equal(res.code, "QueueDoesNotExist");
	assert_string_equal(res.message, "The specified queue does not exist.");
	assert_int_equal(res.klass, AWS_ERR_PERMANENT);
}

static void test_unreachable_transient(void **state)
{
	int fd = -1;
	int port = aws_stub_closed_port(&fd);
	char endpoint[64];
	struct aws_result res;

	assert_true(port > 0);
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", port);
	struct aws_http *c = aws_stub_client(endpoint, AWS_SERVICE_SQS);
	assert_non_null(c);
	assert_int_equal(sqs_delete_message(c, "http://x/000/q", "rh", &res), -1);
	assert_int_equal(res.status, 0);
	assert_int_equal(res.curl_code, CURLE_COULDNT_CONNECT);
	assert_int_equal(res.klass, AWS_ERR_TRANSIENT);
	aws_http_free(c);
	close(fd);
}

static void test_timeout_transient(void **state)
{
	struct aws_result res;

	aws_http_set_timeouts(fx.stub, 0, 300);
	stub_delete("hang", &res);
	aws_http_set_timeouts(fx.stub, 0, AWS_HTTP_DEFAULT_TIMEOUT_MS);
	assert_int_equal(res.curl_code, CURLE_OPERATION_TIMEDOUT);
	assert_int_equal(res.klass, AWS_ERR_TRANSIENT);
}

static void test_response_bounded(void **state)
{
	struct aws_result res;

	aws_http_set_max_response_bytes(fx.stub, 1024 * 1024);
	stub_delete("bigbody", &res);
	aws_http_set_max_response_bytes(fx.stub, AWS_HTTP_DEFAULT_MAX_RESPONSE_BYTES);
	assert_string_equal(res.code, "ResponseTooLarge");
	assert_int_equal(res.klass, AWS_ERR_PERMANENT);
}

static void test_partial_batch(void **state)
{
	struct sqs_entry_result r[3];
	struct aws_result res;
	const struct sqs_send_entry e[] = {{"good", "g", 1, NULL}, {"bad", "b", 1, NULL}, {"busy", "u", 1, NULL}};

	assert_int_equal(sqs_send_message_batch(fx.stub, "http://x/000/partial", e, 3, r, &res), 0);
	assert_true(r[0].ok);
	assert_string_equal(r[0].message_id, "m-good");
	assert_false(r[1].ok);
	assert_true(r[1].sender_fault);
	assert_int_equal(r[1].klass, AWS_ERR_PERMANENT);
	assert_false(r[2].ok);
	assert_false(r[2].sender_fault);
	assert_int_equal(r[2].klass, AWS_ERR_TRANSIENT);

	assert_int_equal(sqs_send_message_batch(fx.stub, "http://x/000/md5bad", e, 1, r, &res), 0);
	assert_false(r[0].ok);
	assert_string_equal(r[0].code, "ChecksumMismatch");
	assert_int_equal(r[0].klass, AWS_ERR_TRANSIENT);

	/* An entry the answer does not mention was not sent, as far as we know. */
	const struct sqs_send_entry lost[] = {{"kept", "k", 1, NULL}, {"lost", "l", 1, NULL}};
	assert_int_equal(sqs_send_message_batch(fx.stub, "http://x/000/short", lost, 2, r, &res), 0);
	assert_true(r[0].ok);
	assert_false(r[1].ok);
	assert_false(r[1].sender_fault);
	assert_string_equal(r[1].code, "MalformedResponse");
	assert_string_equal(r[1].message, "entry missing from the batch answer");
	assert_int_equal(r[1].klass, AWS_ERR_TRANSIENT);
}

/* What each kind of receive asks for, as the stub saw the request. */
static void check_asked_for(bool trace_only, const char *expected)
{
	const struct sqs_receive_options o = {.max_messages = 10, .wait_time_seconds = 0,
	                                      .visibility_timeout = -1, .trace_only = trace_only};
	struct sqs_messages m = {0};
	struct aws_result res;

	assert_int_equal(sqs_receive_message(fx.stub, "http://x/000/askedfor", &o, &m, &res), 0);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.items[0].body, expected);
	sqs_messages_free(&m);
}

static void test_receive_asks_for(void **state)
{
	(void)state;
	check_asked_for(true, "{\"AttributeNames\":null,\"MessageSystemAttributeNames\":null,"
	                      "\"MessageAttributeNames\":[\"traceparent\"]}");
	check_asked_for(false, "{\"AttributeNames\":[\"All\"],\"MessageSystemAttributeNames\":[\"All\"],"
	                       "\"MessageAttributeNames\":[\"All\"]}");
}

/* A received message whose MD5OfBody does not match its body is dropped
 * (it comes back after its visibility timeout); the others are kept. */
static void test_receive_md5_mismatch_dropped(void **state)
{
	const struct sqs_receive_options o = {.max_messages = 10, .wait_time_seconds = 0,
	                                      .visibility_timeout = -1, .trace_only = true};
	struct sqs_messages m = {0};
	struct aws_result res;

	(void)state;
	assert_int_equal(sqs_receive_message(fx.stub, "http://x/000/md5bad", &o, &m, &res), 0);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.items[0].message_id, "good");
	assert_string_equal(m.items[0].body, "{\"id\":\"good\"}");
	sqs_messages_free(&m);
}

static void test_request_headers(void **state)
{
	struct aws_result res;
	char *report = NULL;

	assert_int_equal(sqs_get_queue_url(fx.stub, "headers", &report, &res), 0);
	json_t *h = json_loads(report, 0, NULL);
	assert_non_null(h);
	const char *auth = json_string_value(json_object_get(h, "authorization"));
	assert_non_null(auth);
	assert_true(strncmp(auth, "AWS4-HMAC-SHA256 Credential=", 28) == 0);
	assert_non_null(strstr(auth, "/us-east-1/sqs/aws4_request"));
	assert_non_null(strstr(auth, "x-amz-target"));
	assert_int_equal(strlen(json_string_value(json_object_get(h, "date"))), 16);
	assert_string_equal(json_string_value(json_object_get(h, "expect")), "");
	assert_string_equal(json_string_value(json_object_get(h, "target")), "AmazonSQS.GetQueueUrl");
	assert_string_equal(json_string_value(json_object_get(h, "contentType")), "application/x-amz-json-1.0");
	assert_string_equal(json_string_value(json_object_get(h, "token")), "");
	json_decref(h);
	free(report);

	/* Temporary credentials: the token is sent, and signed. */
	setenv("AWS_SESSION_TOKEN", "session-token-for-test", 1);
	struct aws_http *c = aws_stub_client(fx.proc.endpoint, AWS_SERVICE_SQS);
	unsetenv("AWS_SESSION_TOKEN");
	assert_non_null(c);
	assert_int_equal(sqs_get_queue_url(c, "headers", &report, &res), 0);
	h = json_loads(report, 0, NULL);
	assert_non_null(h);
	assert_string_equal(json_string_value(json_object_get(h, "token")), "session-token-for-test");
	assert_non_null(strstr(json_string_value(json_object_get(h, "authorization")), "x-amz-security-token"));
	json_decref(h);
	free(report);
	aws_http_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_setup),
		cmocka_unit_test(test_batch_roundtrip),
		cmocka_unit_test(test_receive_trace_only),
		cmocka_unit_test(test_batch_over_limit_refused),
		cmocka_unit_test(test_single_over_limit_permanent),
		cmocka_unit_test(test_invalid_characters_permanent),
		cmocka_unit_test(test_batch_ids_checked),
		cmocka_unit_test(test_missing_queue_permanent),
		cmocka_unit_test(test_stub_classification),
		cmocka_unit_test(test_unreachable_transient),
		cmocka_unit_test(test_timeout_transient),
		cmocka_unit_test(test_response_bounded),
		cmocka_unit_test(test_partial_batch),
		cmocka_unit_test(test_receive_asks_for),
		cmocka_unit_test(test_receive_md5_mismatch_dropped),
		cmocka_unit_test(test_request_headers),
	};
	int rc = aws_stub_prepare();

	if (rc != 0)
		return rc;
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	curl_global_cleanup();
	return rc;
}
