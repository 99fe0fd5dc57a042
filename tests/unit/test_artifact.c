/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_artifact.c: bars validation, the canonical artifact, its key and
 * the timestamp parser (core/price/artifact.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price/artifact.h"
#include "common/hexdigest.h"

#define WS "2026-11-27T14:35:00Z"

static const char good_bars[] =
	"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":181.11,\"h\":181.96,\"l\":181.03,\"c\":181.83,\"v\":1312000},\n"
	" {\"t\":\"2026-11-27T14:36:00Z\",\"o\":181.83,\"h\":183.92,\"l\":181.73,\"c\":183.83,\"v\":0}]";

/* The same bars written differently: spacing, member order, offsets, 100 vs 100.0. */
static const char same_bars_other_text[] =
	"[ {\"v\":1312000, \"c\":181.830, \"l\":181.03, \"h\":181.96, \"o\":181.11,"
	"   \"t\":\"2026-11-27 23:35+09:00\"},"
	"  {\"t\":\"2026-11-27T14:36:00.000Z\",\"o\":181.83,\"h\":183.92,\"l\":181.73,\"c\":183.83,\"v\":0} ]";

static void test_build_canonical(void **state)
{
	struct artifact a;
	char err[256] = "";
	char sha[ARTIFACT_SHA256_HEX_LEN + 1];

	assert_int_equal(artifact_build("NVDA", "2026-11-27T15:35:00+01:00", 300, good_bars,
	                                strlen(good_bars), "prices/", &a, err, sizeof(err)), 0);
	assert_string_equal(a.window_start_text, WS);
	assert_string_equal(a.body,
		"{\"symbol\":\"NVDA\",\"window_start\":\"2026-11-27T14:35:00Z\",\"bars\":["
		"{\"t\":\"2026-11-27T14:35:00Z\",\"o\":181.11,\"h\":181.96,\"l\":181.03,\"c\":181.83,\"v\":1312000},"
		"{\"t\":\"2026-11-27T14:36:00Z\",\"o\":181.83,\"h\":183.92,\"l\":181.73,\"c\":183.83,\"v\":0}]}");
	assert_int_equal(a.len, strlen(a.body));
	(void)sha256_hex(a.body, a.len, sha);
	assert_string_equal(a.sha256, sha);
	char *expected_key = NULL;
	assert_true(asprintf(&expected_key, "prices/NVDA/" WS "/%s.json", sha) > 0);
	assert_string_equal(a.key, expected_key);
	assert_true(artifact_key_is_artifact("prices/", a.key));
	free(expected_key);
	artifact_free(&a);
}

static void test_same_content_same_key(void **state)
{
	struct artifact a, b;
	char err[256] = "";

	assert_int_equal(artifact_build("NVDA", WS, 300, good_bars, strlen(good_bars), "p/", &a,
	                                err, sizeof(err)), 0);
	assert_int_equal(artifact_build("NVDA", WS, 300, same_bars_other_text,
	                                strlen(same_bars_other_text), "p/", &b, err, sizeof(err)), 0);
	assert_string_equal(a.body, b.body);
	assert_string_equal(a.key, b.key);
	artifact_free(&b);
	/* A different symbol is a different artifact. */
	assert_int_equal(artifact_build("AMD", WS, 300, good_bars, strlen(good_bars), "p/", &b,
	                                err, sizeof(err)), 0);
	assert_string_not_equal(a.sha256, b.sha256);
	artifact_free(&a);
	artifact_free(&b);
}

static void test_sha256_known_vector(void **state)
{
	char sha[ARTIFACT_SHA256_HEX_LEN + 1];

	(void)sha256_hex("abc", 3, sha);
	assert_string_equal(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

struct bad_case {
	const char *bars;
	const char *expected; /* substring of the message */
};

static const struct bad_case bad_cases[] = {
	{"[]", "bars must be a non-empty JSON array"},
	{"{\"t\":1}", "bars must be a non-empty JSON array"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1", "invalid JSON at line 1"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1},"
	 " {\"t\":\"2026-11-27T14:36:00Z\",\"o\":0.5,\"h\":2,\"l\":1,\"c\":1,\"v\":1}]",
	 "bar 1: open 0.5 and close 1 must lie within low 1 and high 2"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":2.5,\"v\":1}]",
	 "bar 0: open 1 and close 2.5 must lie within"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":1,\"l\":2,\"c\":1,\"v\":1}]",
	 "bar 0: low 2 is above high 1"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":-1,\"h\":2,\"l\":1,\"c\":1,\"v\":1}]",
	 "bar 0: \"o\" must be a positive price"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":\"2\",\"l\":1,\"c\":1,\"v\":1}]",
	 "bar 0: \"h\" must be a number"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1.5}]",
	 "bar 0: \"v\" must be an integer >= 0"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":-3}]",
	 "bar 0: \"v\" must be an integer >= 0"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1}]",
	 "bar 0: \"v\" must be an integer >= 0"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1,\"x\":0}]",
	 "bar 0: unknown member \"x\""},
	{"[{\"t\":\"2026-11-27T14:36:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1},"
	 " {\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1}]",
	 "bar 1: \"t\" 2026-11-27T14:35:00Z is not after the previous bar's"},
	{"[{\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1},"
	 " {\"t\":\"2026-11-27T14:35:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1}]",
	 "bar 1: \"t\" 2026-11-27T14:35:00Z is not after"},
	{"[{\"t\":\"2026-11-27T14:40:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1}]",
	 "bar 0: \"t\" 2026-11-27T14:40:00Z is outside the window"},
	{"[{\"t\":\"2026-11-27T14:34:00Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1}]",
	 "bar 0: \"t\" 2026-11-27T14:34:00Z is outside the window"},
	{"[{\"t\":\"2026-11-27T14:35:30Z\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1}]",
	 "bar 0: \"t\" 2026-11-27T14:35:30Z is not a whole minute"},
	{"[{\"t\":\"yesterday\",\"o\":1,\"h\":2,\"l\":1,\"c\":1,\"v\":1}]",
	 "bar 0: \"t\" must be an ISO 8601 timestamp"},
	{"[1]", "bar 0: must be an object"},
};

static void test_bad_bars(void **state)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct artifact a;
		char err[256] = "";
		int rc = artifact_build("NVDA", WS, 300, bad_cases[i].bars, strlen(bad_cases[i].bars),
		                        "p/", &a, err, sizeof(err));
		if (rc == 0 || strstr(err, bad_cases[i].expected) == NULL)
			fail_msg("case %zu: rc %d, message \"%s\", expected \"%s\"", i, rc, err,
			         bad_cases[i].expected);
		assert_null(a.body);
	}
}

static void test_bad_identity(void **state)
{
	struct artifact a;
	char err[256] = "";

	assert_int_equal(artifact_build("NV DA", WS, 300, good_bars, strlen(good_bars), "p/", &a,
	                                err, sizeof(err)), -1);
	assert_non_null(strstr(err, "invalid symbol \"NV DA\""));
	assert_int_equal(artifact_build("../x", WS, 300, good_bars, strlen(good_bars), "p/", &a,
	                                err, sizeof(err)), -1);
	assert_int_equal(artifact_build("NVDA", "2026-11-27T14:35:10Z", 300, good_bars,
	                                strlen(good_bars), "p/", &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not a whole minute"));
	assert_int_equal(artifact_build("NVDA", "soon", 300, good_bars, strlen(good_bars), "p/",
	                                &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "invalid window start \"soon\""));
}

static void test_parse_time(void **state)
{
	int64_t t;
	char out[ARTIFACT_TIME_LEN + 1];

	assert_int_equal(artifact_parse_time("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(artifact_parse_time("2026-11-27T14:35Z", &t), 0);
	artifact_format_time(t, out);
	assert_string_equal(out, "2026-11-27T14:35:00Z");
	assert_int_equal(artifact_parse_time("2026-11-28T00:05:00+0930", &t), 0);
	artifact_format_time(t, out);
	assert_string_equal(out, "2026-11-27T14:35:00Z");
	assert_int_equal(artifact_parse_time("2026-11-27T09:35:00-05", &t), 0);
	artifact_format_time(t, out);
	assert_string_equal(out, "2026-11-27T14:35:00Z");
	assert_int_equal(artifact_parse_time("2024-02-29T00:00:00.000Z", &t), 0);
	assert_int_equal(artifact_parse_time("2025-02-29T00:00:00Z", &t), -1);
	assert_int_equal(artifact_parse_time("2026-11-27T14:35:00.5Z", &t), -1);
	assert_int_equal(artifact_parse_time("2026-11-27T24:00:00Z", &t), -1);
	assert_int_equal(artifact_parse_time("2026-11-27T14:35:00", &t), -1);
	assert_int_equal(artifact_parse_time("2026-11-27T14:35:00Zjunk", &t), -1);
	assert_int_equal(artifact_parse_time("2026-13-01T00:00:00Z", &t), -1);
	assert_int_equal(artifact_parse_time(NULL, &t), -1);
}

static void test_parse_roundtrip(void **state)
{
	struct artifact a, b;
	char err[256] = "";

	assert_int_equal(artifact_build("NVDA", WS, 300, good_bars, strlen(good_bars), NULL, &a,
	                                err, sizeof(err)), 0);
	assert_null(a.key);
	assert_int_equal(artifact_parse(a.body, a.len, &b, err, sizeof(err)), 0);
	assert_string_equal(b.symbol, "NVDA");
	assert_string_equal(b.window_start_text, WS);
	assert_string_equal(b.sha256, a.sha256);
	assert_int_equal(b.bars.n, 2);
	assert_true(b.bars.bars[1].c == 183.83);
	assert_int_equal(b.bars.bars[0].v, 1312000);
	artifact_free(&a);
	artifact_free(&b);
	assert_int_equal(artifact_parse("[1]", 3, &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a JSON object"));
	static const char no_bars[] = "{\"symbol\":\"NVDA\",\"window_start\":\"" WS "\",\"bars\":[]}";
	assert_int_equal(artifact_parse(no_bars, strlen(no_bars), &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "non-empty"));
}

static void test_key_shape(void **state)
{
	static const char sha[] = "8d0bb2933d69bb553804976ecfc59100f1b71a1029cad67e78f74fa0046b4f50";
	char *key = artifact_make_key("prices/", "NVDA", WS, sha);

	assert_non_null(key);
	assert_true(artifact_key_is_artifact("prices/", key));
	assert_false(artifact_key_is_artifact("other/", key));
	free(key);
	assert_false(artifact_key_is_artifact("prices/", "prices/readme.txt"));
	assert_false(artifact_key_is_artifact("prices/", "prices/NVDA/" WS "/abc.json"));
	assert_false(artifact_key_is_artifact("prices/", "prices/NVDA/2026-11-27T14:35:00+00:00/"
	                                      "8d0bb2933d69bb553804976ecfc59100f1b71a1029cad67e78f74fa0046b4f50.json"));
	assert_false(artifact_key_is_artifact("prices/", "prices/NV DA/" WS "/"
	                                      "8d0bb2933d69bb553804976ecfc59100f1b71a1029cad67e78f74fa0046b4f50.json"));
	assert_false(artifact_key_is_artifact("prices/", "prices/NVDA/" WS "/"
	                                      "8D0BB2933d69bb553804976ecfc59100f1b71a1029cad67e78f74fa0046b4f50.json"));
	assert_true(artifact_key_is_artifact("", "NVDA/" WS "/"
	                                     "8d0bb2933d69bb553804976ecfc59100f1b71a1029cad67e78f74fa0046b4f50.json"));
}

/*
 * Found by fuzzing: years 0000..0999 and >= 10000 (after the offset) parsed
 * but formatted as "", so ingest-window uploaded "prices/SYM//SHA.json".
 * Every time that parses now formats as its 20-character canonical text.
 */
static void test_years_outside_four_digits(void **state)
{
	static const char *const refused[] = {
		"0000-01-01T00:00:00Z", "0999-12-31T23:59:00Z", "1000-01-01T00:30:00+01:00",
		"9999-12-31T23:59:00-00:01", "9999-12-31T23:30:00-01",
	};
	struct artifact a;
	char out[ARTIFACT_TIME_LEN + 1];
	char err[256] = "";
	int64_t t;

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(artifact_parse_time(refused[i], &t), -1);
		assert_string_equal(artifact_time_problem(refused[i]),
		                    "the year (in UTC) must be from 1000 to 9999");
	}
	assert_string_equal(artifact_time_problem("soon"), "expected an ISO 8601 timestamp");
	assert_null(artifact_time_problem("2026-11-27T14:35:00Z"));
	assert_int_equal(artifact_parse_time("1000-01-01T00:00:00Z", &t), 0);
	assert_true(t == ARTIFACT_TIME_MIN);
	artifact_format_time(t, out);
	assert_string_equal(out, "1000-01-01T00:00:00Z");
	assert_int_equal(artifact_parse_time("9999-12-31T23:59:59Z", &t), 0);
	assert_true(t == ARTIFACT_TIME_MAX);
	artifact_format_time(t, out);
	assert_string_equal(out, "9999-12-31T23:59:59Z");
	artifact_format_time(ARTIFACT_TIME_MAX + 1, out);
	assert_string_equal(out, "");
	static const char bars[] = "[{\"t\":\"0999-12-31T23:55:00Z\",\"o\":1,\"h\":1,\"l\":1,"
	                           "\"c\":1,\"v\":1}]";
	assert_int_equal(artifact_build("NVDA", "0999-12-31T23:55:00Z", 300, bars, strlen(bars),
	                                "prices/", &a, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid window start \"0999-12-31T23:55:00Z\": the year (in UTC) "
	                    "must be from 1000 to 9999");
	static const char doc[] = "{\"symbol\":\"NVDA\",\"window_start\":\"2026-11-27T14:35:00Z\","
	                          "\"bars\":[{\"t\":\"0999-12-31T23:55:00Z\",\"o\":1,\"h\":1,"
	                          "\"l\":1,\"c\":1,\"v\":1}]}";
	assert_int_equal(artifact_parse(doc, strlen(doc), &a, err, sizeof(err)), -1);
	assert_string_equal(err, "bar 0: \"t\": the year (in UTC) must be from 1000 to 9999");
}

/* The reconciler reports keys in its namespace that it cannot parse. */
static void test_key_classify(void **state)
{
#define SHA "8d0bb2933d69bb553804976ecfc59100f1b71a1029cad67e78f74fa0046b4f50"
	static const struct {
		const char *key;
		enum artifact_key_kind kind;
		const char *problem;
	} cases[] = {
		{"prices/NVDA/" WS "/" SHA ".json", ARTIFACT_KEY_ARTIFACT, NULL},
		{"other/NVDA/" WS "/" SHA ".json", ARTIFACT_KEY_FOREIGN, NULL},
		{"prices/readme.txt", ARTIFACT_KEY_FOREIGN, NULL},
		{"prices/NVDA/notes.txt", ARTIFACT_KEY_FOREIGN, NULL},
		{"prices/NV DA/" WS "/" SHA ".json", ARTIFACT_KEY_FOREIGN, NULL},
		{"prices/NVDA//" SHA ".json", ARTIFACT_KEY_UNPARSEABLE,
		 "the window start is not of the form YYYY-MM-DDTHH:MM:SSZ"},
		{"prices/NVDA/0999-12-31T23:55:00Z/" SHA ".json", ARTIFACT_KEY_UNPARSEABLE,
		 "the window start's year is not from 1000 to 9999"},
		{"prices/NVDA/2026-11-27T14:35:00z/" SHA ".json", ARTIFACT_KEY_UNPARSEABLE,
		 "the window start is not in canonical form (YYYY-MM-DDTHH:MM:SSZ)"},
		{"prices/NVDA/2026-02-30T14:35:00Z/" SHA ".json", ARTIFACT_KEY_UNPARSEABLE,
		 "the window start is not a valid time"},
		{"prices/NVDA/" WS "/abc.json", ARTIFACT_KEY_UNPARSEABLE,
		 "the file name is not the artifact's SHA-256 in lower-case hex"},
		{"prices/NVDA/x/" WS "/" SHA ".json", ARTIFACT_KEY_UNPARSEABLE,
		 "expected PREFIX/SYMBOL/WINDOW_START/SHA256.json"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *key = cases[i].key;
		const char *problem = "unset";

		assert_int_equal(artifact_key_classify("prices/", key, &problem), cases[i].kind);
		if (cases[i].problem == NULL)
			assert_null(problem);
		else
			assert_string_equal(problem, cases[i].problem);
		assert_int_equal(artifact_key_is_artifact("prices/", key),
		                 cases[i].kind == ARTIFACT_KEY_ARTIFACT);
	}
#undef SHA
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_canonical),
		cmocka_unit_test(test_same_content_same_key),
		cmocka_unit_test(test_sha256_known_vector),
		cmocka_unit_test(test_bad_bars),
		cmocka_unit_test(test_bad_identity),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_parse_roundtrip),
		cmocka_unit_test(test_key_shape),
		cmocka_unit_test(test_years_outside_four_digits),
		cmocka_unit_test(test_key_classify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
