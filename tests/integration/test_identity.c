/*
 * test_identity.c: one definition of a job's identity.
 *
 * outbox.canonical_json() (SQL) and outbox_canonical_json() (jansson) must
 * print byte-identical text for every identity, or jobs enqueued before
 * migration V4 would stop deduplicating and producers in other languages
 * would get other ids.  Thousands of random identities (non-ASCII, control
 * characters, "/", quotes, integers at the 64-bit limits, doubles from
 * random bits, nesting, arbitrary key order) go to PostgreSQL in two
 * different spellings each; both must come back as jansson's text and id.
 * Then outbox.enqueue() refuses what it must, naming the problem, and
 * writes nothing, and outbox.confirm_price_window() does the price path in
 * the caller's transaction, as a worker in another language calls it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbox/producer.h"
#include "testdb.h"

static char *conninfo;
static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned long long next_random(void)
{
	/* xorshift64*: reproducible, so a failure can be replayed */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static unsigned pick(unsigned n)
{
	return (unsigned)(next_random() % n);
}

/* Appends the UTF-8 encoding of cp to buf at *len. */
static void put_utf8(char *buf, size_t *len, unsigned cp)
{
	if (cp < 0x80) {
		buf[(*len)++] = (char)cp;
	} else if (cp < 0x800) {
		buf[(*len)++] = (char)(0xc0 | (cp >> 6));
		buf[(*len)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		buf[(*len)++] = (char)(0xe0 | (cp >> 12));
		buf[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[(*len)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		buf[(*len)++] = (char)(0xf0 | (cp >> 18));
		buf[(*len)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		buf[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[(*len)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static unsigned random_codepoint(void)
{
	static const unsigned special[] = {'"', '\\', '/', '\b', '\f', '\n', '\r', '\t',
	                                   0x01, 0x0b, 0x1f, 0x7f, 0x80, 0xe9, 0x2028,
	                                   0x2029, 0xfeff, 0xfffd, 0x1f600, 0x10ffff};

	switch (pick(6)) {
	case 0:
		return special[pick(sizeof(special) / sizeof(special[0]))];
	case 1:
		return 1 + pick(0x7f);
	case 2:
		return 0x80 + pick(0x800 - 0x80);
	case 3: {
		unsigned cp = 0x800 + pick(0x10000 - 0x800);
		return (cp >= 0xd800 && cp <= 0xdfff) ? 0xfffd : cp; /* no lone surrogates */
	}
	case 4:
		return 0x10000 + pick(0x100000);
	default:
		return 'a' + pick(26);
	}
}

static json_t *random_string(void)
{
	char buf[200];
	size_t len = 0, n = pick(12);

	for (size_t i = 0; i < n; i++)
		put_utf8(buf, &len, random_codepoint());
	return json_stringn(buf, len);
}

static json_t *random_real(void)
{
	static const double special[] = {0.0, -0.0, 0.1, 1.0, 1e16, 1e17, 1e-4, 1e-5, 0.5,
	                                 123456789.125, 1.7976931348623157e308,
	                                 2.2250738585072014e-308, 4.9406564584124654e-324,
	                                 -3.25, 100.0, 1e21};
	double d;

	switch (pick(3)) {
	case 0:
		return json_real(special[pick(sizeof(special) / sizeof(special[0]))]);
	case 1:
		/* decimals a user would write: 12.34, -0.007, ... */
		return json_real((double)((long long)pick(2000001) - 1000000) /
		                 pow(10.0, (double)pick(8)));
	default:
		do {
			unsigned long long bits = next_random();
			memcpy(&d, &bits, sizeof(d));
		} while (!isfinite(d));
		return json_real(d);
	}
}

static json_t *random_integer(void)
{
	static const json_int_t special[] = {0, 1, -1, 9, 10, INT64_MAX, INT64_MIN,
	                                     INT64_MAX - 1, 4294967296LL, -9007199254740993LL};

	if (pick(2) == 0)
		return json_integer(special[pick(sizeof(special) / sizeof(special[0]))]);
	return json_integer((json_int_t)next_random() >> pick(63));
}

static json_t *random_value(int depth);

static json_t *random_object(int depth)
{
	json_t *o = json_object();
	unsigned n = pick(6);

	for (unsigned i = 0; i < n; i++) {
		json_t *key = random_string();
		json_object_set_new(o, json_string_value(key), random_value(depth + 1));
		json_decref(key);
	}
	return o;
}

static json_t *random_value(int depth)
{
	switch (pick(depth >= 3 ? 6 : 8)) {
	case 0:
		return random_string();
	case 1:
		return random_integer();
	case 2:
		return random_real();
	case 3:
		return json_true();
	case 4:
		return json_false();
	case 5:
		return json_null();
	case 6: {
		json_t *a = json_array();
		unsigned n = pick(4);
		for (unsigned i = 0; i < n; i++)
			json_array_append_new(a, random_value(depth + 1));
		return a;
	}
	default:
		return random_object(depth);
	}
}

/* SQL's canonical text and job id of text; both owned by the caller. */
static void sql_identity(PGconn *conn, const char *text, char **canonical, char **job_id)
{
	const char *params[1] = {text};
	PGresult *res = PQexecParams(conn,
	                             "SELECT outbox.canonical_json($1::json), outbox.job_id($1::json)",
	                             1, NULL, params, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("SQL refused %s: %s", text, PQresultErrorMessage(res));
	*canonical = strdup(PQgetvalue(res, 0, 0));
	*job_id = strdup(PQgetvalue(res, 0, 1));
	PQclear(res);
}

static void check_one(PGconn *conn, const json_t *identity, size_t flags)
{
	char *c_canonical = outbox_canonical_json(identity);
	char *text = json_dumps(identity, flags);
	char c_id[OUTBOX_JOB_ID_LEN + 1];
	char *sql_canonical, *sql_id;

	assert_non_null(c_canonical);
	assert_non_null(text);
	outbox_job_id(c_canonical, c_id);
	sql_identity(conn, text, &sql_canonical, &sql_id);
	if (strcmp(c_canonical, sql_canonical) != 0)
		fail_msg("canonical forms differ for %s:\n jansson: %s\n     SQL: %s", text,
		         c_canonical, sql_canonical);
	assert_string_equal(c_id, sql_id);
	free(sql_canonical);
	free(sql_id);
	free(text);
	free(c_canonical);
}

static void test_random_identities_are_byte_identical(void **state)
{
	PGconn *conn = testdb_connect(conninfo);
	int n = 0;

	for (int i = 0; i < 3000; i++) {
		json_t *identity = random_object(0);
		/* as jansson prints it, and spelt differently: indented, \u escapes, "\/" */
		check_one(conn, identity, JSON_COMPACT | JSON_PRESERVE_ORDER);
		check_one(conn, identity, JSON_INDENT(3) | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH |
		                          JSON_PRESERVE_ORDER);
		json_decref(identity);
		n++;
	}
	print_message("%d random identities: SQL and jansson agree byte for byte\n", n);
	PQfinish(conn);
}

/* Spellings jansson never prints, which other languages' JSON libraries do. */
static void test_other_spellings_of_one_number(void **state)
{
	static const char *const cases[][2] = {
		{"{\"n\":1E2}", "{\"n\":100.0}"},
		{"{\"n\":-0}", "{\"n\":0}"},
		{"{\"n\":1.50}", "{\"n\":1.5}"},
		{"{\"n\":0.1}", "{\"n\":0.10000000000000001}"},
		{"{\"n\":1e+017}", "{\"n\":1e17}"},
		{"{\"s\":\"\\u00e9\\/\\u001f\"}", "{\"s\":\"\xc3\xa9/\\u001F\"}"},
		{"{ \"b\" : [ ] , \"a\" : { } }", "{\"b\":[],\"a\":{}}"},
	};
	PGconn *conn = testdb_connect(conninfo);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *canonical, *id;
		json_t *j = json_loads(cases[i][0], 0, NULL);
		char *c = outbox_canonical_json(j);

		sql_identity(conn, cases[i][0], &canonical, &id);
		assert_string_equal(canonical, cases[i][1]);
		assert_string_equal(c, cases[i][1]);
		free(c);
		json_decref(j);
		free(canonical);
		free(id);
	}
	PQfinish(conn);
}

/* Whether SQL accepts the number text as an identity member. */
static int sql_accepts_number(PGconn *conn, const char *number)
{
	char text[128];
	const char *params[1] = {text};
	PGresult *res;
	int ok;

	snprintf(text, sizeof(text), "{\"n\":%s}", number);
	res = PQexecParams(conn, "SELECT outbox.canonical_json($1::json)", 1, NULL, params, NULL,
	                   NULL, 0);
	ok = PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok && strstr(PQresultErrorMessage(res), "round trip through a double") == NULL &&
	    strstr(PQresultErrorMessage(res), "out of range for type double precision") == NULL)
		fail_msg("%s: unexpected error %s", text, PQresultErrorMessage(res));
	PQclear(res);
	return ok;
}

/* A decimal number text of 14 to 20 significant digits: near a double's limit. */
static void random_decimal(char *out, size_t outlen)
{
	char digits[24];
	unsigned n = 14 + pick(7), point = 1 + pick(n - 1); /* digits before the "." */

	for (unsigned i = 0; i < n; i++)
		digits[i] = (char)('0' + (i == 0 ? 1 + pick(9) : pick(10)));
	digits[n] = '\0';
	snprintf(out, outlen, "%s%.*s.%s", pick(2) ? "-" : "", (int)point, digits, digits + point);
	if (pick(3) == 0)
		snprintf(out + strlen(out), outlen - strlen(out), "e%d", (int)pick(40) - 20);
}

/*
 * outbox_check_identity_numbers() and outbox.canonical_json() refuse the
 * same numbers: those a double cannot hold as written, which would make
 * two identities one job.
 */
static void test_numbers_a_double_cannot_hold(void **state)
{
	static const char *const fixed[] = {
		"9007199254740993.0", "9007199254740992.0", "-9007199254740993.0", "0.1",
		"0.10000000000000001", "1.00000000000000001", "1e-400", "1e400", "5e-324",
		"0.1000000000000000055511151231257827", "1152921504606846976.0", "1E2", "0e400",
		"123456789012345678.5", "2.5e-3",
	};
	PGconn *conn = testdb_connect(conninfo);
	int refused = 0, n = 0;
	char err[512], number[64], text[128];

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 3000; i++) {
		if (i < sizeof(fixed) / sizeof(fixed[0]))
			snprintf(number, sizeof(number), "%s", fixed[i]);
		else
			random_decimal(number, sizeof(number));
		snprintf(text, sizeof(text), "{\"n\":%s}", number);
		int c_ok = outbox_check_identity_numbers(text, err, sizeof(err)) == 0;
		int sql_ok = sql_accepts_number(conn, number);
		if (c_ok != sql_ok)
			fail_msg("%s: liboutbox %s it, SQL %s it", number, c_ok ? "accepts" : "refuses",
			         sql_ok ? "accepts" : "refuses");
		refused += !c_ok;
		n++;
	}
	/* the first is the collision the rule exists for */
	assert_false(sql_accepts_number(conn, "9007199254740993.0"));
	assert_true(sql_accepts_number(conn, "9007199254740992.0"));
	assert_true(refused > 100 && refused < n - 100);
	print_message("%d numbers, %d refused: liboutbox and SQL agree on every one\n", n, refused);
	PQfinish(conn);
}

/* A long string full of escapes (json_quote()'s slow path in V4) agrees with jansson. */
static void test_long_string_with_control_characters(void **state)
{
	static const char pieces[][8] = {"a", "\\", "\\u001a", "\x1a", "\x0b", "\"", "\n", "\x1f",
	                                 "\xc3\xa9", "/", "\x01", "\x0e"};
	size_t cap = 300000, len = 0;
	char *buf = malloc(cap + 16);
	json_t *identity;

	assert_non_null(buf);
	while (len < cap) {
		const char *piece = pieces[pick(sizeof(pieces) / sizeof(pieces[0]))];
		memcpy(buf + len, piece, strlen(piece));
		len += strlen(piece);
	}
	identity = json_pack("{s:s#}", "s", buf, (int)len);
	assert_non_null(identity);
	PGconn *conn = testdb_connect(conninfo);
	check_one(conn, identity, JSON_COMPACT | JSON_PRESERVE_ORDER);
	check_one(conn, identity, JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	PQfinish(conn);
	json_decref(identity);
	free(buf);
}

/* Runs sql; it must fail with a message containing expected and leave no rows. */
static void expect_refused(PGconn *conn, const char *sql, const char *expected)
{
	PGresult *res = PQexec(conn, sql);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	if (PQresultStatus(res) != PGRES_FATAL_ERROR || msg == NULL || strstr(msg, expected) == NULL)
		fail_msg("%s\n expected an error with \"%s\", got %s: %s", sql, expected,
		         PQresStatus(PQresultStatus(res)), msg ? msg : "(none)");
	PQclear(res);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.jobs"), 0);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.outbox_events"), 0);
}

static void test_bad_input_is_refused_at_enqueue(void **state)
{
	PGconn *conn = testdb_connect(conninfo);

	testdb_exec(conn, "TRUNCATE outbox.outbox_events, outbox.jobs, outbox.price_windows");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => '', destination => 'd',"
	               " identity => '{\"k\":1}', payload => '{}')", "job type must not be empty");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => NULL, destination => 'd',"
	               " identity => '{\"k\":1}', payload => '{}')", "job type must not be empty");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => '',"
	               " identity => '{\"k\":1}', payload => '{}')", "destination must not be empty");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'd',"
	               " identity => '[1]', payload => '{}')",
	               "job identity must be a JSON object, not array");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'd',"
	               " identity => '\"k\"', payload => '{}')",
	               "job identity must be a JSON object, not string");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'd',"
	               " identity => NULL, payload => '{}')",
	               "job identity must be a JSON object, not null");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'd',"
	               " identity => '{\"k\":1}', payload => '3')",
	               "job payload must be a JSON object or array, not number");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'd',"
	               " identity => '{\"k\":1,\"k\":2}', payload => '{}')",
	               "duplicate member \"k\" in a JSON object");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'd',"
	               " identity => '{\"k\":18446744073709551616}', payload => '{}')",
	               "out of range for a 64-bit integer");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => repeat('t', 51),"
	               " destination => 'd', identity => '{\"k\":1}', payload => '{}')",
	               "is longer than 50 bytes");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'd',"
	               " identity => '{\"k\":1}', payload => '{}', traceparent => 'nope')",
	               "invalid traceparent \"nope\"");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'd',"
	               " identity => '{\"k\":1}', payload => '{}', traceparent =>"
	               " '00-00000000000000000000000000000000-00f067aa0ba902b7-01')",
	               "invalid traceparent");
	/* a destination no relay.ini can name could never be sent */
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'News',"
	               " identity => '{\"k\":1}', payload => '{}')",
	               "invalid destination \"News\": must match [a-z0-9_-]{1,40}");
	expect_refused(conn, "SELECT * FROM outbox.enqueue(job_type => 't',"
	               " destination => repeat('d', 41), identity => '{\"k\":1}', payload => '{}')",
	               "must match [a-z0-9_-]{1,40}");
	/* the payload is not in the message: a large one is fine */
	testdb_exec(conn, "BEGIN");
	testdb_exec(conn, "SELECT * FROM outbox.enqueue(job_type => 't', destination => 'd',"
	            " identity => '{\"k\":1}', payload => jsonb_build_object('big', repeat('x', 2097152)))");
	assert_true(testdb_scalar(conn, "SELECT max(octet_length(body)) FROM outbox.outbox_events") < 400);
	testdb_exec(conn, "ROLLBACK");
	PQfinish(conn);
}

static void test_same_identity_other_type_is_refused(void **state)
{
	PGconn *conn = testdb_connect(conninfo);

	testdb_exec(conn, "TRUNCATE outbox.outbox_events, outbox.jobs, outbox.price_windows");
	testdb_exec(conn, "SELECT * FROM outbox.enqueue(job_type => 'a', destination => 'd',"
	            " identity => '{\"k\":1}', payload => '{}')");
	PGresult *res = PQexec(conn, "SELECT * FROM outbox.enqueue(job_type => 'b', destination => 'd',"
	                       " identity => '{\"k\":1}', payload => '{}')");
	assert_int_equal(PQresultStatus(res), PGRES_FATAL_ERROR);
	assert_non_null(strstr(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY),
	                       "already exists with job type \"a\", not \"b\""));
	PQclear(res);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.jobs"), 1);
	PQfinish(conn);
}

/* One confirm_price_window() call; returns "generation|corrected|created|job_id". */
static char *confirm(PGconn *conn, const char *start, const char *sha, int backfill)
{
	const char *params[3] = {start, sha, backfill ? "true" : "false"};
	PGresult *res = PQexecParams(conn,
		"SELECT generation || '|' || corrected || '|' || coalesce(created::text, '-') || '|'"
		"       || coalesce(job_id, '-')"
		"  FROM outbox.confirm_price_window(destination => 'price', symbol => 'NVDA',"
		"       window_start => $1::timestamptz, artifact_key => 'bars/' || $2,"
		"       artifact_sha256 => $2, backfill => $3::boolean)", 3, NULL, params, NULL, NULL, 0);
	char *out;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("confirm_price_window: %s", PQresultErrorMessage(res));
	out = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return out;
}

static void expect_confirm(PGconn *conn, const char *start, const char *sha, int backfill,
                           const char *want_prefix, const char *want_job)
{
	char *got = confirm(conn, start, sha, backfill);
	size_t n = strlen(want_prefix);

	if (strncmp(got, want_prefix, n) != 0 || strcmp(got + n, want_job) != 0)
		fail_msg("confirm %s %s: got %s, wanted %s%s", start, sha, got, want_prefix, want_job);
	free(got);
}

static void test_price_window_in_sql(void **state)
{
	static const char a[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char b[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	PGconn *conn = testdb_connect(conninfo);
	json_t *id1 = json_pack("{s:s, s:s, s:s, s:i}", "type", "price", "symbol", "NVDA",
	                        "window_start", "2026-11-27T14:35:00Z", "generation", 1);
	json_t *id2 = json_pack("{s:s, s:s, s:s, s:i}", "type", "price", "symbol", "NVDA",
	                        "window_start", "2026-11-27T14:35:00Z", "generation", 2);
	char *c1 = outbox_canonical_json(id1), *c2 = outbox_canonical_json(id2);
	char j1[OUTBOX_JOB_ID_LEN + 1], j2[OUTBOX_JOB_ID_LEN + 1];

	outbox_job_id(c1, j1);
	outbox_job_id(c2, j2);
	testdb_exec(conn, "TRUNCATE outbox.outbox_events, outbox.jobs, outbox.price_windows");
	/* the worker's transaction rolls back: no window, no job, no event */
	testdb_exec(conn, "BEGIN");
	expect_confirm(conn, "2026-11-27 23:35:00.25+09", a, 0, "1|false|true|", j1);
	testdb_exec(conn, "ROLLBACK");
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.price_windows"), 0);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.jobs"), 0);
	/* committed; then the same artifact again is a no-op with the same job */
	expect_confirm(conn, "2026-11-27T14:35:00Z", a, 0, "1|false|true|", j1);
	expect_confirm(conn, "2026-11-27T14:35:00Z", a, 0, "1|false|false|", j1);
	/* a correction: generation 2, a new job tied to the window */
	expect_confirm(conn, "2026-11-27T14:35:00Z", b, 0, "2|true|true|", j2);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.jobs WHERE window_symbol = 'NVDA'"
	                                     " AND window_start = '2026-11-27T14:35:00Z'"
	                                     " AND window_generation = 2 AND payload->>'artifact_sha256' = '"
	                                     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'"), 1);
	/* a backfill writes the window only */
	expect_confirm(conn, "2026-11-27T14:40:00Z", a, 1, "1|false|-|", "-");
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.price_windows"), 2);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.jobs"), 2);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.outbox_events"), 2);
	free(c1);
	free(c2);
	json_decref(id1);
	json_decref(id2);
	PQfinish(conn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_identities_are_byte_identical),
		cmocka_unit_test(test_other_spellings_of_one_number),
		cmocka_unit_test(test_numbers_a_double_cannot_hold),
		cmocka_unit_test(test_long_string_with_control_characters),
		cmocka_unit_test(test_bad_input_is_refused_at_enqueue),
		cmocka_unit_test(test_same_identity_other_type_is_refused),
		cmocka_unit_test(test_price_window_in_sql),
	};

	testdb_require();
	conninfo = testdb_create("outbox_test_identity");
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(conninfo);
	return rc;
}
