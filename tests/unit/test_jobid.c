/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_jobid.c: canonical JSON, job ids and event ids (docs/identifiers.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outbox/producer.h"

/* The documented canonical form of the item below, written by hand. */
static const char expected_canonical[] =
	"{\"type\":\"news\",\"source\":\"Yonhap \xec\x97\xb0\xed\x95\xa9\","
	"\"url\":\"https://example.com/a?b=1&c=\\\"q\\\"\"}";

static const char item_a[] =
	"{\"source\": \"Yonhap \xec\x97\xb0\xed\x95\xa9\", \"url\": \"https://example.com/a?b=1&c=\\\"q\\\"\","
	" \"published_at\": \"2026-11-30T09:00:00Z\", \"title\": \"t\", \"body\": \"b\"}";
/* The same item with its members in another order and other white space. */
static const char item_b[] =
	"{\"body\":\"b\",\"title\":\"t\",\n\"url\":\"https://example.com/a?b=1&c=\\\"q\\\"\","
	"\"published_at\":\"2026-11-30T09:00:00Z\",   \"source\":\"Yonhap \xec\x97\xb0\xed\x95\xa9\"}";

static char *canonical_of(const char *text)
{
	char err[256];
	json_t *item = json_loads(text, 0, NULL);
	json_t *identity;
	char *canonical;

	assert_non_null(item);
	identity = outbox_news_identity(item, err, sizeof(err));
	assert_non_null(identity);
	canonical = outbox_canonical_json(identity);
	json_decref(identity);
	json_decref(item);
	return canonical;
}

static void test_canonical_is_order_independent(void **state)
{
	char *a = canonical_of(item_a), *b = canonical_of(item_b);

	assert_string_equal(a, expected_canonical);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* sha256sum(1) of the hand-written canonical form: an independent digest. */
static void sha256sum_of(const char *text, char out[65])
{
	char path[] = "/tmp/outbox-jobid-XXXXXX", cmd[128];
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), "sha256sum %s", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%64s", out), 1);
	pclose(f);
	unlink(path);
}

static void test_job_id_matches_sha256sum(void **state)
{
	char *canonical = canonical_of(item_b);
	char ours[65], theirs[65];

	outbox_job_id(canonical, ours);
	sha256sum_of(expected_canonical, theirs);
	assert_int_equal(strlen(ours), 64);
	assert_string_equal(ours, theirs);
	free(canonical);
}

static void test_event_id_format(void **state)
{
	char id[OUTBOX_EVENT_ID_MAX], small[10];
	const char *job = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

	assert_int_equal(outbox_event_id("news", job, 0, id, sizeof(id)), 0);
	assert_string_equal(id, "news:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:0");
	assert_int_equal(outbox_event_id("price", job, 12, id, sizeof(id)), 0);
	assert_string_equal(id + strlen(id) - 3, ":12");
	assert_int_equal(outbox_event_id("news", job, 0, small, sizeof(small)), -1);
}

static void test_news_item_validation(void **state)
{
	static const char *const bad[] = {
		"[]",
		"{\"source\":\"s\",\"published_at\":\"x\",\"title\":\"t\",\"body\":\"b\"}",
		"{\"source\":\"s\",\"url\":\"\",\"published_at\":\"x\",\"title\":\"t\",\"body\":\"b\"}",
		"{\"source\":\"s\",\"url\":\"u\",\"published_at\":\"x\",\"title\":\"t\",\"body\":\"b\",\"symbols\":\"AAPL\"}",
		"{\"source\":\"s\",\"url\":\"u\",\"published_at\":\"x\",\"title\":\"t\",\"body\":\"b\",\"symbols\":[1]}",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *item = json_loads(bad[i], 0, NULL);

		assert_non_null(item);
		err[0] = '\0';
		assert_null(outbox_news_identity(item, err, sizeof(err)));
		assert_true(strlen(err) > 0);
		json_decref(item);
	}
}

static void test_timestamp_normalisation(void **state)
{
	static const struct {
		const char *in;
		const char *out;
	} good[] = {
		{"2026-11-30T09:01:00Z", "2026-11-30T09:01:00Z"},
		{"2026-11-30T09:01Z", "2026-11-30T09:01:00Z"},
		{"2026-11-30 18:01:00+09:00", "2026-11-30T09:01:00Z"},
		{"2026-11-30T04:01:00.250-0500", "2026-11-30T09:01:00Z"},
		{"2026-12-01T01:00:00+09", "2026-11-30T16:00:00Z"},
	};
	static const char *const bad[] = {
		"", "yesterday", "2026-02-31T00:00:00Z", "2026-11-30T25:00:00Z", "2026-11-30T09:01:00+2",
		"2026-11-30T09:01:00Zjunk",
	};
	char out[21];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(outbox_normalize_timestamp(good[i].in, out), 0);
		assert_string_equal(out, good[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(outbox_normalize_timestamp(bad[i], out), -1);
}

/* Numbers a double holds as written, and numbers it does not (docs/identifiers.md). */
static void test_identity_numbers(void **state)
{
	static const char *const good[] = {
		"{\"n\":0.1}", "{\"n\":0.10000000000000001}", "{\"n\":1E2}", "{\"n\":-0.0}",
		"{\"n\":1.50}", "{\"n\":9007199254740992.0}", "{\"n\":9007199254740993}",
		"{\"n\":1e+017}", "{\"n\":5e-324}", "{\"n\":1.7976931348623157e308}",
		"{\"n\":0.1000000000000000055511151231257827}", "{\"n\":[1.25,-3.5e-3]}",
		"{\"s\":\"9007199254740993.0\",\"t\":\"\\\"1.00000000000000001\"}",
		"{\"n\":1152921504606846976.0}", "{\"n\":0e400}",
	};
	static const char *const bad[] = {
		"{\"n\":9007199254740993.0}", "{\"n\":1.00000000000000001}", "{\"n\":1e-400}",
		"{\"a\":{\"b\":[1, 0.30000000000000000000001]}}", "{\"n\":9007199254740993e0}",
		"{\"n\":-9007199254740993.0}", "{\"n\":1e400}",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		err[0] = '\0';
		if (outbox_check_identity_numbers(good[i], err, sizeof(err)) != 0)
			fail_msg("%s refused: %s", good[i], err);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (outbox_check_identity_numbers(bad[i], err, sizeof(err)) != -1)
			fail_msg("%s accepted", bad[i]);
		assert_non_null(strstr(err, "does not survive a round trip through a double"));
	}
	assert_int_equal(outbox_check_identity_numbers("{\"n\":9007199254740993.0}", err, sizeof(err)), -1);
	assert_string_equal(err, "number 9007199254740993.0 in a job identity does not survive a round"
	                    " trip through a double: it is read as 9007199254740992, which other"
	                    " numbers are read as too");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical_is_order_independent),
		cmocka_unit_test(test_job_id_matches_sha256sum),
		cmocka_unit_test(test_event_id_format),
		cmocka_unit_test(test_news_item_validation),
		cmocka_unit_test(test_timestamp_normalisation),
		cmocka_unit_test(test_identity_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
