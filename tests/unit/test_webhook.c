/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_webhook.c: the webhook plugin's pure parts, built in from its
 * sources: Standard Webhooks secrets and signatures (against the
 * specification's published example), the escaping of what a receiver
 * sends, and the verdict of every kind of answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../plugins/webhook/webhook.h"

/* The example of the Standard Webhooks specification (and of its libraries' tests). */
static void test_signature_vector(void **state)
{
	static const char content[] = "msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{\"test\": 2432232314}";
	unsigned char *key = NULL;
	size_t len = 0;
	char err[256] = "";
	char sig[WH_SIGNATURE_LEN];

	assert_int_equal(wh_secret_decode("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &key, &len,
	                                  err, sizeof(err)), 0);
	assert_int_equal(len, 24);
	assert_int_equal(wh_sign(key, len, content, strlen(content), sig), 0);
	assert_string_equal(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	wh_key_free(key, len);
}

static void expect_refused(const char *secret, const char *why)
{
	unsigned char *key = (unsigned char *)"x";
	size_t len = 1;
	char err[256] = "";

	assert_int_equal(wh_secret_decode(secret, &key, &len, err, sizeof(err)), -1);
	assert_null(key);
	assert_int_equal(len, 0);
	if (strstr(err, why) == NULL)
		fail_msg("\"%s\": got \"%s\", expected \"%s\"", secret, err, why);
}

static void test_secrets(void **state)
{
	unsigned char *key = NULL;
	size_t len = 0;
	char err[256] = "";

	/* Padding counts: 25 bytes, "==" at the end. */
	assert_int_equal(wh_secret_decode("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGA==", &key, &len,
	                                  err, sizeof(err)), 0);
	assert_int_equal(len, 25);
	assert_int_equal(key[24], 24);
	wh_key_free(key, len);
	expect_refused("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "does not start with \"whsec_\"");
	expect_refused("whsec_", "not valid base64");
	expect_refused("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS", "not valid base64");
	expect_refused("whsec_MfKQ9r8GKYqrTwjU PD8ILPZIo2LaLaSw", "not valid base64");
	expect_refused("whsec_MfKQ9r8GKYqrTwjU=D8ILPZIo2LaLaSw", "not valid base64");
	expect_refused("whsec_AAECAwQFBgcICQoL", "is 12 bytes; it must have 24 to 1024");
}

static void test_escape(void **state)
{
	static const char in[] = "ok \\ \x01\x1b[0m\r\n\xc3\xa9\xff";
	char out[128];
	char small[8];

	wh_escape(in, sizeof(in) - 1, out, sizeof(out));
	assert_string_equal(out, "ok \\\\ \\x01\\x1b[0m\\x0d\\x0a\\xc3\\xa9\\xff");
	/* Cut short before an escape that does not fit, never inside it. */
	wh_escape("abcd\x01", 5, small, sizeof(small));
	assert_string_equal(small, "abcd");
	wh_escape("a\0b", 3, out, sizeof(out));
	assert_string_equal(out, "a\\x00b");
}

/* The verdict of a transport error rc (no answer). */
static enum outbox_verdict judge(CURLcode rc, char *msg, size_t msglen)
{
	struct wh_config cfg = {.shown_url = "https://hooks.example/jobs", .timeout_ms = 1500};
	struct wh_response r = {.rc = rc, .retry_after_s = -1};
	struct outbox_result res = {.msg = msg, .msg_size = msglen};

	msg[0] = '\0';
	return wh_verdict(&cfg, &r, &res);
}

static void test_verdicts(void **state)
{
	static const struct {
		long status;
		int64_t after;
		enum outbox_verdict v;
		int64_t after_ms;
		const char *msg;
	} cases[] = {
		{200, -1, OUTBOX_OK, 0, ""},
		{204, -1, OUTBOX_OK, 0, ""},
		{299, 30, OUTBOX_OK, 0, ""},
		{503, 7, OUTBOX_RETRY, 7000, "answered HTTP 503, Retry-After 7 s"},
		{429, 2, OUTBOX_RETRY, 2000, "answered HTTP 429, Retry-After 2 s"},
		{503, INT64_MAX / 10, OUTBOX_RETRY, 365LL * 86400 * 1000, "Retry-After 31536000 s"},
		{429, -1, OUTBOX_RETRY, 0, "answered HTTP 429"},
		{500, 5, OUTBOX_RETRY, 0, "answered HTTP 500"},
		{502, -1, OUTBOX_RETRY, 0, "answered HTTP 502"},
		{408, -1, OUTBOX_RETRY, 0, "answered HTTP 408"},
		{425, -1, OUTBOX_RETRY, 0, "answered HTTP 425"},
		{301, -1, OUTBOX_FAIL, 0, "HTTP 301 (redirect to \"?\"): redirects are not followed"},
		{400, 5, OUTBOX_FAIL, 0, "refused the job with HTTP 400: bad \\x00 input"},
		{404, -1, OUTBOX_FAIL, 0, "refused the job with HTTP 404: bad \\x00 input"},
		{101, -1, OUTBOX_RETRY, 0, "HTTP 101, which is not a final answer"},
		{600, -1, OUTBOX_RETRY, 0, "HTTP 600, which is not a final answer"},
	};
	char msg[1024];
	int64_t after_ms;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* A body with a NUL byte in it, as a hostile receiver sends. */
		struct wh_config cfg = {.shown_url = "https://hooks.example/jobs"};
		struct wh_response r = {.rc = CURLE_OK, .status = cases[i].status,
		                        .retry_after_s = cases[i].after, .excerpt_len = 11};
		struct outbox_result res = {.msg = msg, .msg_size = sizeof(msg)};
		memcpy(r.excerpt, "bad \0 input", 11);
		msg[0] = '\0';
		enum outbox_verdict v = wh_verdict(&cfg, &r, &res);
		after_ms = res.retry_after_ms;
		if (v != cases[i].v || after_ms != cases[i].after_ms || strstr(msg, cases[i].msg) == NULL)
			fail_msg("HTTP %ld: verdict %d, retry_after_ms %lld, \"%s\"", cases[i].status,
			         (int)v, (long long)after_ms, msg);
	}
}

static void test_transport_errors(void **state)
{
	char msg[1024];

	assert_int_equal(judge(CURLE_OPERATION_TIMEDOUT, msg, sizeof(msg)),
	                 OUTBOX_RETRY);
	assert_non_null(strstr(msg, "no complete answer within timeout_ms (1500 ms)"));
	assert_int_equal(judge(CURLE_COULDNT_CONNECT, msg, sizeof(msg)),
	                 OUTBOX_RETRY);
	assert_int_equal(judge(CURLE_RECV_ERROR, msg, sizeof(msg)),
	                 OUTBOX_RETRY);
	assert_int_equal(judge(CURLE_GOT_NOTHING, msg, sizeof(msg)),
	                 OUTBOX_RETRY);
	assert_int_equal(judge(CURLE_PEER_FAILED_VERIFICATION, msg, sizeof(msg)), OUTBOX_RETRY);
	/* Stopped at max_response_bytes: the status decides. */
	struct wh_config cfg = {.shown_url = "https://hooks.example/jobs"};
	struct wh_response r = {.rc = CURLE_WRITE_ERROR, .over_cap = 1, .status = 200};
	struct outbox_result res = {.msg = msg, .msg_size = sizeof(msg)};
	assert_int_equal(wh_verdict(&cfg, &r, &res), OUTBOX_OK);
	r.status = 422;
	assert_int_equal(wh_verdict(&cfg, &r, &res), OUTBOX_FAIL);
	/* A write error without the cap is a broken transfer. */
	r.over_cap = 0;
	assert_int_equal(wh_verdict(&cfg, &r, &res), OUTBOX_RETRY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signature_vector),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_transport_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
