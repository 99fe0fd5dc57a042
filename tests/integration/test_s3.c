/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_s3.c: the S3 client against fauxqs (OUTBOX_TEST_AWS_ENDPOINT) and,
 * for the conditional-write answers fauxqs does not give (it ignores
 * If-None-Match), against tests/harness/http-stub.mjs.
 * Exits 77 (SKIP) when OUTBOX_TEST_AWS_ENDPOINT is unset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aws_stub.h"
#include "aws/s3.h"

#define N_OBJECTS 5

struct fixture {
	struct aws_http *s3;
	struct aws_http *stub_http;
	struct aws_stub proc;
	char bucket_name[64];
	struct s3_bucket bucket;
	struct s3_bucket stub;
};

static struct fixture fx;

static int group_setup(void **state)
{
	struct aws_result res;

	fx.s3 = aws_stub_client(getenv("OUTBOX_TEST_AWS_ENDPOINT"), AWS_SERVICE_S3);
	if (fx.s3 == NULL || aws_stub_start(&fx.proc) < 0)
		return -1;
	fx.stub_http = aws_stub_client(fx.proc.endpoint, AWS_SERVICE_S3);
	if (fx.stub_http == NULL)
		return -1;
	snprintf(fx.bucket_name, sizeof(fx.bucket_name), "outbox-test-%ld", (long)getpid());
	fx.bucket = (struct s3_bucket){fx.s3, fx.bucket_name, false};
	fx.stub = (struct s3_bucket){fx.stub_http, "stub-bucket", false};
	if (s3_create_bucket(&fx.bucket, &res) < 0) {
		fprintf(stderr, "create bucket: %s: %s\n", res.code, res.message);
		return -1;
	}
	/* Creating it again is fine: we own it. */
	return s3_create_bucket(&fx.bucket, &res);
}

static int group_teardown(void **state)
{
	aws_stub_stop(&fx.proc);
	aws_http_free(fx.s3);
	aws_http_free(fx.stub_http);
	return 0;
}

/*
 * Keys that need encoding in the path and entities in the listing.  Each
 * starts with a distinct letter: fauxqs 1.9.2 sorts a listing with
 * localeCompare but resumes after the token in binary order, so keys that
 * differ first in punctuation would be listed twice (docs/aws.md).
 */
static const char *const keys[N_OBJECTS] = {
	"prices/2026/a b+c&d.json",
	"prices/2026/b plain.json",
	"prices/2026/c caf\xc3\xa9<1>.json",
	"prices/2026/d x=y?z.json",
	"prices/2026/e ~tilde'quote\".json",
};

static void test_put_get_head(void **state)
{
	static const char body[] = "{\"bars\":[1,2,3]}";
	enum s3_put_outcome outcome;
	struct aws_result res;
	char *got = NULL;
	size_t len = 0;
	struct s3_object_info info;

	assert_int_equal(s3_put_object_create_only(&fx.bucket, "single.json", body, strlen(body),
	                                           "application/json", &outcome, &res), 0);
	assert_int_equal(outcome, S3_PUT_CREATED);
	assert_int_equal(s3_get_object(&fx.bucket, "single.json", &got, &len, &res), 0);
	assert_int_equal(len, strlen(body));
	assert_memory_equal(got, body, len);
	free(got);
	assert_int_equal(s3_head_object(&fx.bucket, "single.json", &info, &res), 0);
	assert_int_equal(info.size, (long long)strlen(body));
	assert_true(strlen(info.etag) > 2);
	assert_int_equal(s3_delete_object(&fx.bucket, "single.json", &res), 0);

	assert_int_equal(s3_get_object(&fx.bucket, "single.json", &got, &len, &res), -1);
	assert_null(got);
	assert_int_equal(res.status, 404);
	assert_string_equal(res.code, "NoSuchKey");
	assert_int_equal(res.klass, AWS_ERR_PERMANENT);
	assert_int_equal(s3_head_object(&fx.bucket, "single.json", &info, &res), -1);
	assert_int_equal(res.status, 404);
	assert_int_equal(res.klass, AWS_ERR_PERMANENT);
}

static void test_list_pages(void **state)
{
	struct aws_result res;
	enum s3_put_outcome outcome;
	struct s3_list_page page;
	struct s3_list_request req = {.prefix = "prices/2026/", .max_keys = 2};
	bool seen[N_OBJECTS] = {false};
	char *token = NULL;
	int pages = 0;
	size_t total = 0;

	for (int i = 0; i < N_OBJECTS; i++)
		assert_int_equal(s3_put_object_create_only(&fx.bucket, keys[i], keys[i], strlen(keys[i]),
		                                           NULL, &outcome, &res), 0);
	/* A key outside the prefix must not be listed. */
	assert_int_equal(s3_put_object_create_only(&fx.bucket, "other/x", "x", 1, NULL, &outcome, &res), 0);
	do {
		req.continuation_token = token;
		assert_int_equal(s3_list_objects_v2(&fx.bucket, &req, &page, &res), 0);
		assert_true(page.n <= 2);
		for (size_t i = 0; i < page.n; i++) {
			int found = -1;
			for (int k = 0; k < N_OBJECTS; k++) {
				if (strcmp(page.entries[i].key, keys[k]) == 0)
					found = k;
			}
			if (found < 0)
				fail_msg("unexpected key \"%s\"", page.entries[i].key);
			assert_false(seen[found]);
			seen[found] = true;
			assert_int_equal(page.entries[i].size, (long long)strlen(keys[found]));
			assert_true(strlen(page.entries[i].last_modified) >= 20);
		}
		total += page.n;
		free(token);
		token = page.is_truncated ? strdup(page.next_token) : NULL;
		s3_list_page_free(&page);
		pages++;
	} while (token != NULL && pages < 10);
	free(token);
	assert_int_equal(total, N_OBJECTS);
	assert_true(pages >= 3);

	for (int i = 0; i < N_OBJECTS; i++)
		assert_int_equal(s3_delete_object(&fx.bucket, keys[i], &res), 0);
	assert_int_equal(s3_delete_object(&fx.bucket, "other/x", &res), 0);
	req.continuation_token = NULL;
	assert_int_equal(s3_list_objects_v2(&fx.bucket, &req, &page, &res), 0);
	assert_int_equal(page.n, 0);
	assert_false(page.is_truncated);
	s3_list_page_free(&page);
}

static void test_create_only_semantics(void **state)
{
	static const char body[] = "window 09:00-09:05";
	enum s3_put_outcome outcome;
	struct aws_result res;

	assert_int_equal(s3_put_object_create_only(&fx.stub, "w/1.json", body, strlen(body), NULL,
	                                           &outcome, &res), 0);
	assert_int_equal(outcome, S3_PUT_CREATED);
	/* A retried write of the same content (its first answer lost). */
	assert_int_equal(s3_put_object_create_only(&fx.stub, "w/1.json", body, strlen(body), NULL,
	                                           &outcome, &res), 0);
	assert_int_equal(outcome, S3_PUT_ALREADY_PRESENT);
	assert_int_equal(res.klass, AWS_ERR_NONE);
	/* Someone else's content under our key. */
	assert_int_equal(s3_put_object_create_only(&fx.stub, "w/1.json", "other", 5, NULL,
	                                           &outcome, &res), -1);
	assert_int_equal(outcome, S3_PUT_CONFLICT);
	assert_string_equal(res.code, "PreconditionFailed");
	assert_int_equal(res.klass, AWS_ERR_PERMANENT);
	/* A concurrent conditional write: retry later. */
	assert_int_equal(s3_put_object_create_only(&fx.stub, "conflict/1", body, strlen(body), NULL,
	                                           &outcome, &res), -1);
	assert_int_equal(res.status, 409);
	assert_string_equal(res.code, "ConditionalRequestConflict");
	assert_int_equal(res.klass, AWS_ERR_TRANSIENT);
	assert_string_equal(res.request_id, "stub-ConditionalRequestConflict");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_head),
		cmocka_unit_test(test_list_pages),
		cmocka_unit_test(test_create_only_semantics),
	};
	int rc = aws_stub_prepare();

	if (rc != 0)
		return rc;
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	curl_global_cleanup();
	return rc;
}
