/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_aws_error.c: the AWS error classifier and parsers, table-driven,
 * plus the pre-send SQS body validator and endpoint/region resolution.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "aws/env.h"
#include "aws/error.h"
#include "aws/sqs.h"
#include "aws/xml.h"

#define T AWS_ERR_TRANSIENT
#define P AWS_ERR_PERMANENT
#define N AWS_ERR_NONE

static void test_classify_table(void **state)
{
	static const struct {
		long status;
		const char *code;
		int curl;
		enum aws_error_class want;
	} cases[] = {
		{200, NULL, CURLE_OK, N},
		{204, "", CURLE_OK, N},
		{403, "RequestThrottled", CURLE_OK, T},      /* throttling as 403 */
		{403, "AccessDenied", CURLE_OK, P},
		{400, "AccessDeniedException", CURLE_OK, P},
		{403, "InvalidClientTokenId", CURLE_OK, P},
		{400, "ThrottlingException", CURLE_OK, T},
		{400, "KMS.ThrottlingException", CURLE_OK, T},
		{503, "SlowDown", CURLE_OK, T},
		{400, "RequestTimeout", CURLE_OK, T},
		{400, "RequestExpired", CURLE_OK, T},        /* clock skew */
		{403, "RequestTimeTooSkewed", CURLE_OK, T},
		{403, "SignatureDoesNotMatch", CURLE_OK, P},
		{400, "QueueDoesNotExist", CURLE_OK, P},
		{400, "AWS.SimpleQueueService.NonExistentQueue", CURLE_OK, P},
		{400, "InvalidMessageContents", CURLE_OK, P},
		{400, "InvalidParameterValue", CURLE_OK, P},
		{400, "BatchRequestTooLong", CURLE_OK, P},
		{400, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", CURLE_OK, P},
		{404, "ReceiptHandleIsInvalid", CURLE_OK, P},
		{403, "OverLimit", CURLE_OK, T},
		{403, "AWS.SimpleQueueService.PurgeQueueInProgress", CURLE_OK, T},
		{409, "ConditionalRequestConflict", CURLE_OK, T},
		{412, "PreconditionFailed", CURLE_OK, P},
		{500, NULL, CURLE_OK, T},
		{502, "", CURLE_OK, T},
		{503, "ServiceUnavailable", CURLE_OK, T},
		{504, NULL, CURLE_OK, T},
		{500, "SomethingNew", CURLE_OK, T},          /* unknown code: status decides */
		{400, "SomethingNew", CURLE_OK, P},
		{429, NULL, CURLE_OK, T},
		{404, NULL, CURLE_OK, P},
		{301, NULL, CURLE_OK, P},
		{0, NULL, CURLE_COULDNT_CONNECT, T},
		{0, NULL, CURLE_OPERATION_TIMEDOUT, T},
		{0, NULL, CURLE_SEND_ERROR, T},
		{0, NULL, CURLE_RECV_ERROR, T},
		{0, NULL, CURLE_GOT_NOTHING, T},
		{0, NULL, CURLE_PARTIAL_FILE, T},
		{0, NULL, CURLE_PEER_FAILED_VERIFICATION, P},
		{0, NULL, CURLE_URL_MALFORMAT, P},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum aws_error_class got = aws_error_classify(cases[i].status, cases[i].code, cases[i].curl);
		if (got != cases[i].want)
			fail_msg("case %zu (%ld %s curl %d): got %s, want %s", i, cases[i].status,
			         cases[i].code != NULL ? cases[i].code : "(null)", cases[i].curl,
			         aws_error_class_name(got), aws_error_class_name(cases[i].want));
	}
}

static void test_slow_and_skew(void **state)
{
	assert_true(aws_error_is_slow_clearing("OverLimit"));
	assert_true(aws_error_is_slow_clearing("AWS.SimpleQueueService.QueueDeletedRecently"));
	assert_false(aws_error_is_slow_clearing("RequestThrottled"));
	assert_false(aws_error_is_slow_clearing(NULL));
	assert_true(aws_error_is_clock_skew("RequestTimeTooSkewed"));
	assert_true(aws_error_is_clock_skew("RequestExpired"));
	assert_false(aws_error_is_clock_skew("SignatureDoesNotMatch"));
}

static void test_normalize_table(void **state)
{
	static const struct {
		const char *in;
		const char *want;
	} cases[] = {
		{"com.amazonaws.sqs#QueueDoesNotExist", "QueueDoesNotExist"},
		{"com.amazon.coral.service#AccessDeniedException:http://internal", "AccessDeniedException"},
		{"RequestThrottled;Sender", "RequestThrottled"},
		{"AWS.SimpleQueueService.NonExistentQueue;Sender", "QueueDoesNotExist"},
		{"QueueAlreadyExists;Sender", "QueueNameExists"},
		{"a#b#ThrottlingException", "ThrottlingException"},
		{"  SlowDown  ", "SlowDown"},
		{"", ""},
		{NULL, ""},
	};
	char out[AWS_RESULT_CODE_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		aws_error_normalize_code(cases[i].in, out, sizeof(out));
		assert_string_equal(out, cases[i].want);
	}
}

static void test_parse_json_table(void **state)
{
	static const struct {
		const char *body;
		const char *type_hdr;
		const char *query_hdr;
		const char *code;
		const char *message;
	} cases[] = {
		{"{\"__type\":\"com.amazonaws.sqs#QueueDoesNotExist\",\"message\":\"The specified queue does not exist.\"}",
		 NULL, "AWS.SimpleQueueService.NonExistentQueue;Sender", "QueueDoesNotExist",
		 "The specified queue does not exist."},
		{"{\"__type\":\"com.amazonaws.sqs#RequestThrottled\",\"Message\":\"slow down\"}", NULL, NULL,
		 "RequestThrottled", "slow down"},
		{"{\"message\":\"no type\"}", NULL, "AWS.SimpleQueueService.NonExistentQueue;Sender",
		 "QueueDoesNotExist", "no type"},
		{"<html>bad gateway</html>", "ServiceUnavailable:http://x", NULL, "ServiceUnavailable", ""},
		{"", NULL, NULL, "", ""},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aws_result r;
		aws_result_reset(&r);
		aws_error_parse_json(cases[i].body, strlen(cases[i].body), cases[i].type_hdr,
		                     cases[i].query_hdr, &r);
		assert_string_equal(r.code, cases[i].code);
		assert_string_equal(r.message, cases[i].message);
	}
}

static void test_parse_xml(void **state)
{
	static const char doc[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>"
		"<Message>Please reduce your request rate &amp; retry &lt;later&gt; &#233;&#x1F600;</Message>"
		"<RequestId>ABC123</RequestId><HostId>h</HostId></Error>";
	struct aws_result r;

	aws_result_reset(&r);
	aws_error_parse_xml(doc, strlen(doc), &r);
	assert_string_equal(r.code, "SlowDown");
	assert_string_equal(r.message, "Please reduce your request rate & retry <later> \xc3\xa9\xf0\x9f\x98\x80");
	assert_string_equal(r.request_id, "ABC123");

	aws_result_reset(&r);
	aws_error_parse_xml("not xml", 7, &r);
	assert_string_equal(r.code, "");
}

/* Reads doc and returns the text of its first element name, or NULL. */
static char *first_text(const char *doc, const char *name)
{
	xmlDoc *d = aws_xml_read(doc, strlen(doc));
	char *text = NULL;

	if (d != NULL)
		text = aws_xml_text(aws_xml_find(xmlDocGetRootElement(d), name));
	xmlFreeDoc(d);
	return text;
}

static void test_xml_find(void **state)
{
	static const char doc[] = "<R><KeyCount>2</KeyCount><Key>a&apos;b</Key><Empty/><Key>second</Key></R>";
	static const char dtd[] = "<!DOCTYPE R [<!ENTITY e \"x\">]><R>&e;</R>";
	xmlDoc *d = aws_xml_read(doc, strlen(doc));
	xmlNode *root, *key;
	char buf[32];
	char *t;

	(void)state;
	assert_non_null(d);
	root = xmlDocGetRootElement(d);
	key = aws_xml_child(root, "Key");
	assert_non_null(key);
	aws_xml_text_buf(key, buf, sizeof(buf));
	assert_string_equal(buf, "a'b");
	assert_non_null(aws_xml_find(key->next, "Key"));
	aws_xml_text_buf(aws_xml_find(key->next, "Key"), buf, sizeof(buf));
	assert_string_equal(buf, "second");
	t = aws_xml_text(aws_xml_child(root, "Empty"));
	assert_string_equal(t, "");
	free(t);
	assert_null(aws_xml_child(root, "Missing"));
	aws_xml_text_buf(NULL, buf, sizeof(buf));
	assert_string_equal(buf, "");
	xmlFreeDoc(d);
	/* Malformed bodies are refused whole. */
	assert_null(aws_xml_read("<Key>unterminated", 17));
	assert_null(first_text("<R>a&bogus;b</R>", "R"));
	assert_null(first_text("<R>a&#0;b</R>", "R"));
	assert_null(first_text("<R>dangling &amp</R>", "R"));
	assert_null(aws_xml_read("", 0));
	/* A DOCTYPE (entities to expand) is refused. */
	assert_null(aws_xml_read(dtd, strlen(dtd)));
	assert_null(aws_xml_read("<!DOCTYPE R><R/>", 16));
	t = first_text("<R>&#233;</R>", "R"); /* what is refused is the DOCTYPE */
	assert_string_equal(t, "\xc3\xa9");
	free(t);
}

static void test_result_fail(void **state)
{
	struct aws_result r;

	assert_int_equal(aws_result_fail(&r, "AWS.SimpleQueueService.BatchRequestTooLong", "n=%d", 3), -1);
	assert_string_equal(r.code, "BatchRequestTooLong");
	assert_string_equal(r.message, "n=3");
	assert_int_equal(r.klass, AWS_ERR_PERMANENT);
	assert_int_equal(r.status, 0);
	/* A code nobody knows still must not read as success. */
	assert_int_equal(aws_result_fail(&r, "LocalOops", "x"), -1);
	assert_int_equal(r.klass, AWS_ERR_PERMANENT);
}

static void test_validate_body_table(void **state)
{
	static const struct {
		const char *body;
		size_t len;
		int rc;
		const char *code;
	} cases[] = {
		{"{\"a\":1}\t\r\n", 10, 0, ""},
		{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, 0, ""},
		{"", 0, -1, "InvalidParameterValue"},
		{"a\x01z", 3, -1, "InvalidMessageContents"},         /* control char */
		{"a\0z", 3, -1, "InvalidMessageContents"},           /* NUL */
		{"\xc3\x28", 2, -1, "InvalidMessageContents"},       /* bad continuation */
		{"\xc0\xaf", 2, -1, "InvalidMessageContents"},       /* overlong '/' */
		{"\xed\xa0\x80", 3, -1, "InvalidMessageContents"},   /* surrogate */
		{"\xef\xbf\xbe", 3, -1, "InvalidMessageContents"},   /* U+FFFE */
		{"\xf4\x90\x80\x80", 4, -1, "InvalidMessageContents"}, /* > U+10FFFF */
		{"\xe2\x82", 2, -1, "InvalidMessageContents"},       /* truncated */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aws_result r;
		int rc = sqs_validate_body(cases[i].body, cases[i].len, &r);
		if (rc != cases[i].rc || strcmp(r.code, cases[i].code) != 0)
			fail_msg("case %zu: rc %d code \"%s\"", i, rc, r.code);
		if (rc < 0)
			assert_int_equal(r.klass, AWS_ERR_PERMANENT);
	}
}

static void test_validate_body_size(void **state)
{
	size_t len = SQS_MAX_MESSAGE_BYTES + 1;
	char *big = malloc(len);
	struct aws_result r;

	assert_non_null(big);
	memset(big, 'x', len);
	assert_int_equal(sqs_validate_body(big, len, &r), -1);
	assert_string_equal(r.code, "InvalidParameterValue");
	assert_int_equal(r.klass, AWS_ERR_PERMANENT);
	assert_int_equal(sqs_validate_body(big, len - 1, &r), 0);
	free(big);
}

static void clear_aws_env(void)
{
	static const char *const vars[] = {
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS",
		"AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
		"AWS_ENDPOINT_URL_STS",
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void expect_str(char *got, const char *want)
{
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_env_resolution(void **state)
{
	clear_aws_env();
	expect_str(aws_env_region(NULL), "us-east-1");
	setenv("AWS_DEFAULT_REGION", "eu-west-1", 1);
	expect_str(aws_env_region(NULL), "eu-west-1");
	setenv("AWS_REGION", "ap-northeast-2", 1);
	expect_str(aws_env_region(""), "ap-northeast-2");
	expect_str(aws_env_region("us-west-2"), "us-west-2");

	expect_str(aws_env_endpoint(AWS_SERVICE_SQS, NULL, "eu-west-1"), "https://sqs.eu-west-1.amazonaws.com");
	expect_str(aws_env_endpoint(AWS_SERVICE_S3, NULL, "eu-west-1"), "https://s3.eu-west-1.amazonaws.com");
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566/", 1);
	expect_str(aws_env_endpoint(AWS_SERVICE_SQS, NULL, "x"), "http://127.0.0.1:4566");
	setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000", 1);
	expect_str(aws_env_endpoint(AWS_SERVICE_S3, NULL, "x"), "http://127.0.0.1:9000");
	expect_str(aws_env_endpoint(AWS_SERVICE_SQS, NULL, "x"), "http://127.0.0.1:4566");
	expect_str(aws_env_endpoint(AWS_SERVICE_SQS, "http://explicit:1", "x"), "http://explicit:1");
	clear_aws_env();
}

static void test_env_credentials(void **state)
{
	struct aws_env env;

	char err[AWS_CREDS_ERR_LEN];
	struct aws_creds *c;

	clear_aws_env();
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
	setenv("AWS_SESSION_TOKEN", "tok", 1);
	assert_int_equal(aws_env_load(&env, "eu-central-1", NULL, "http://s3.local:9000"), 0);
	c = aws_credentials_get(env.credentials, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(c->access_key_id, "AKID");
	assert_string_equal(c->session_token, "tok");
	assert_string_equal(aws_credentials_source(env.credentials), "environment");
	aws_creds_unref(c);
	assert_string_equal(env.region, "eu-central-1");
	assert_string_equal(env.sqs_endpoint, "https://sqs.eu-central-1.amazonaws.com");
	assert_string_equal(env.s3_endpoint, "http://s3.local:9000");
	expect_str(aws_env_endpoint(AWS_SERVICE_STS, NULL, "eu-central-1"),
	           "https://sts.eu-central-1.amazonaws.com");
	setenv("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:1/", 1);
	expect_str(aws_env_endpoint(AWS_SERVICE_STS, NULL, "x"), "http://127.0.0.1:1");
	aws_env_free(&env);
	assert_null(env.credentials);
	clear_aws_env();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_slow_and_skew),
		cmocka_unit_test(test_normalize_table),
		cmocka_unit_test(test_parse_json_table),
		cmocka_unit_test(test_parse_xml),
		cmocka_unit_test(test_xml_find),
		cmocka_unit_test(test_result_fail),
		cmocka_unit_test(test_validate_body_table),
		cmocka_unit_test(test_validate_body_size),
		cmocka_unit_test(test_env_resolution),
		cmocka_unit_test(test_env_credentials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
