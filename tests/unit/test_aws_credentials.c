/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_aws_credentials.c: the credential provider (one refresher however
 * many threads ask, a refused snapshot refetched once, what happens when a
 * refresh fails), the refresh window, the parsers of the answers the
 * sources get (STS XML, the JSON document, ISO 8601 times), the shared
 * files, and the chain's order and "tried" list.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "aws/clock_skew.h"
#include "aws/credential_chain.h"
#include "aws/credential_json.h"
#include "aws/credentials.h"
#include "aws/profile.h"
#include "aws/sts.h"

/* A source that counts its fetches and takes fetch_ms to answer, like a
 * slow STS, so concurrent callers really overlap. */
struct fake {
	pthread_mutex_t mu;
	int fetches;
	int fail;
	long fetch_ms;
	long long lifetime;
	/* gate: fetch() waits until released (set under mu, cv signalled) */
	int gate;
	int released;
	pthread_cond_t cv;
};

static int fake_fetch(void *ctx, struct aws_creds **out, char *err, size_t err_size)
{
	struct fake *f = ctx;
	struct timespec ts = {0, f->fetch_ms * 1000000L};
	char key[32];

	nanosleep(&ts, NULL);
	pthread_mutex_lock(&f->mu);
	int n = ++f->fetches;
	while (f->gate && !f->released)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
	if (f->fail) {
		snprintf(err, err_size, "stub STS is down");
		return -1;
	}
	snprintf(key, sizeof(key), "ASIAFAKE%d", n);
	*out = aws_creds_new(key, "fake-secret", "fake-token", (long long)time(NULL) + f->lifetime);
	return *out != NULL ? 0 : -1;
}

static struct aws_credentials *fake_provider(struct fake *f, long long first_expiry)
{
	struct aws_credential_source *src = calloc(1, sizeof(*src));

	assert_non_null(src);
	src->name = strdup("fake source");
	src->fetch = fake_fetch;
	src->ctx = f;
	src->refreshable = true;
	return aws_credentials_new(src, aws_creds_new("ASIAFIRST", "first-secret", "t", first_expiry));
}

/* Waits for the wall clock to reach t: the provider's refresh window is
 * in whole seconds of real time. */
static void wait_until(long long t)
{
	struct timespec ts = {0, 20 * 1000000L};

	for (int i = 0; i < 200 && (long long)time(NULL) < t; i++)
		nanosleep(&ts, NULL);
}

struct getter {
	struct aws_credentials *p;
	struct fake *f;
	int *done; /* getters finished, under f->mu */
	char key[32];
};

static void *get_thread(void *arg)
{
	struct getter *g = arg;
	char err[AWS_CREDS_ERR_LEN];
	struct aws_creds *c = aws_credentials_get(g->p, err, sizeof(err));

	snprintf(g->key, sizeof(g->key), "%s", c != NULL ? c->access_key_id : "(none)");
	aws_creds_unref(c);
	if (g->f != NULL) {
		pthread_mutex_lock(&g->f->mu);
		(*g->done)++;
		pthread_mutex_unlock(&g->f->mu);
	}
	return NULL;
}

#define THREADS 16

static void start_getters(struct aws_credentials *p, struct getter *g, pthread_t *t)
{
	for (int i = 0; i < THREADS; i++) {
		g[i].p = p;
		assert_int_equal(pthread_create(&t[i], NULL, get_thread, &g[i]), 0);
	}
}

static void run_getters(struct aws_credentials *p, struct getter *g)
{
	pthread_t t[THREADS];

	memset(g, 0, sizeof(*g) * THREADS);
	start_getters(p, g, t);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

static void test_expired_one_refresher(void **state)
{
	struct fake f = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 200, 3600, 0, 0, PTHREAD_COND_INITIALIZER};
	struct aws_credentials *p = fake_provider(&f, (long long)time(NULL) - 1);
	struct getter g[THREADS];

	run_getters(p, g);
	assert_int_equal(f.fetches, 1);
	for (int i = 0; i < THREADS; i++)
		assert_string_equal(g[i].key, "ASIAFAKE1");
	assert_int_equal(aws_credentials_fetches(p), 2);
	aws_credentials_unref(p);
}

static void test_due_but_valid_no_waiting(void **state)
{
	/* Due for refresh (inside the window) but still valid: one thread
	 * refreshes, the others keep signing with the old snapshot. */
	struct fake f = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 3600, 1, 0, PTHREAD_COND_INITIALIZER};
	long long t0 = (long long)time(NULL);
	/* lives 6 s from t0: due from t0 + 3 */
	struct aws_credentials *p = fake_provider(&f, t0 + 6);
	struct getter g[THREADS] = {{0}};
	pthread_t t[THREADS];
	struct timespec pause = {0, 10 * 1000000L};
	int done = 0, old = 0;

	wait_until(t0 + 3);
	for (int i = 0; i < THREADS; i++) {
		g[i].f = &f;
		g[i].done = &done;
	}
	start_getters(p, g, t);
	/* The refresher is held inside fetch(); every other thread must come
	 * back without waiting for it. */
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&f.mu);
		int n = done;
		pthread_mutex_unlock(&f.mu);
		if (n == THREADS - 1)
			break;
		nanosleep(&pause, NULL);
	}
	pthread_mutex_lock(&f.mu);
	assert_int_equal(done, THREADS - 1);
	assert_int_equal(f.fetches, 1);
	for (int i = 0; i < THREADS; i++)
		old += strcmp(g[i].key, "ASIAFIRST") == 0;
	f.released = 1;
	pthread_cond_broadcast(&f.cv);
	pthread_mutex_unlock(&f.mu);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(old, THREADS - 1);
	assert_int_equal(f.fetches, 1);
	aws_credentials_unref(p);
}

static void test_invalidate_once(void **state)
{
	struct fake f = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 50, 3600, 0, 0, PTHREAD_COND_INITIALIZER};
	struct aws_credentials *p = fake_provider(&f, (long long)time(NULL) + 3600);
	char err[AWS_CREDS_ERR_LEN];
	struct aws_creds *used = aws_credentials_get(p, err, sizeof(err));
	struct getter g[THREADS];

	assert_string_equal(used->access_key_id, "ASIAFIRST");
	/* Many requests refused with the same snapshot: one refetch. */
	for (int i = 0; i < THREADS; i++)
		assert_true(aws_credentials_invalidate(p, used));
	run_getters(p, g);
	assert_int_equal(f.fetches, 1);
	for (int i = 0; i < THREADS; i++)
		assert_string_equal(g[i].key, "ASIAFAKE1");
	/* A late refusal of the replaced snapshot changes nothing. */
	assert_true(aws_credentials_invalidate(p, used));
	aws_creds_unref(used);
	used = aws_credentials_get(p, err, sizeof(err));
	assert_string_equal(used->access_key_id, "ASIAFAKE1");
	assert_int_equal(f.fetches, 1);
	aws_creds_unref(used);
	aws_credentials_unref(p);
}

static void test_refresh_fails(void **state)
{
	struct fake f = {PTHREAD_MUTEX_INITIALIZER, 0, 1, 0, 3600, 0, 0, PTHREAD_COND_INITIALIZER};
	long long t0 = (long long)time(NULL);
	struct aws_credentials *p = fake_provider(&f, t0 + 4);
	char err[AWS_CREDS_ERR_LEN] = "";
	struct aws_creds *c;

	/* Due, refresh fails: the still valid snapshot is used. */
	wait_until(t0 + 2);
	c = aws_credentials_get(p, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(c->access_key_id, "ASIAFIRST");
	assert_int_equal(f.fetches, 1);
	aws_creds_unref(c);
	aws_credentials_unref(p);

	/* Expired and the refresh fails: no snapshot, the reason named. */
	p = fake_provider(&f, (long long)time(NULL) - 1);
	f.fetches = 0;
	c = aws_credentials_get(p, err, sizeof(err));
	assert_null(c);
	assert_non_null(strstr(err, "fake source"));
	assert_non_null(strstr(err, "stub STS is down"));
	assert_null(strstr(err, "first-secret"));
	assert_true(f.fetches >= 1);
	aws_credentials_unref(p);
}

static void test_static_not_refreshed(void **state)
{
	struct aws_credential_source *src = calloc(1, sizeof(*src));
	struct aws_credentials *p;
	char err[AWS_CREDS_ERR_LEN];
	struct aws_creds *c;

	src->name = strdup("environment");
	p = aws_credentials_new(src, aws_creds_new("AKID", "s", NULL, 0));
	c = aws_credentials_get(p, err, sizeof(err));
	assert_null(c->session_token);
	/* Long-term keys do not change: a refusal is not retried. */
	assert_false(aws_credentials_invalidate(p, c));
	aws_creds_unref(c);
	aws_credentials_unref(p);
	assert_null(aws_creds_new("", "s", NULL, 0));
	assert_null(aws_creds_new("AKID", NULL, NULL, 0));
}

static void test_refresh_window(void **state)
{
	assert_int_equal(aws_credentials_refresh_at(1000, 0), 0);
	/* six hours (IMDS): five minutes before */
	assert_int_equal(aws_credentials_refresh_at(0, 21600), 21300);
	/* one hour (STS default) */
	assert_int_equal(aws_credentials_refresh_at(0, 3600), 3300);
	/* short-lived: halfway */
	assert_int_equal(aws_credentials_refresh_at(100, 104), 102);
	assert_int_equal(aws_credentials_refresh_at(100, 90), 90);
}

static void test_iso8601(void **state)
{
	long long t = 0;

	assert_int_equal(aws_parse_iso8601("2026-12-01T10:00:00Z", &t), 0);
	assert_int_equal(t, 1796119200LL);
	assert_int_equal(aws_parse_iso8601("2026-12-01T10:00:00.123Z", &t), 0);
	assert_int_equal(t, 1796119200LL);
	assert_int_equal(aws_parse_iso8601("2026-12-01T10:00:00+00:00", &t), 0);
	assert_int_equal(aws_parse_iso8601("2026-12-01T10:00:00", &t), -1);
	assert_int_equal(aws_parse_iso8601("2026-12-01 10:00:00Z", &t), -1);
	assert_int_equal(aws_parse_iso8601("2026-13-01T10:00:00Z", &t), -1);
	assert_int_equal(aws_parse_iso8601("2026-12-01T10:00:00+02:00", &t), -1);
	assert_int_equal(aws_parse_iso8601("", &t), -1);
}

static void test_sts_xml(void **state)
{
	static const char ok[] =
		"<?xml version=\"1.0\"?>\n"
		"<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
		"<AssumeRoleWithWebIdentityResult>"
		"<SubjectFromWebIdentityToken>system:serviceaccount:ns:sa</SubjectFromWebIdentityToken>"
		"<Credentials><AccessKeyId>ASIAXML</AccessKeyId>"
		"<SecretAccessKey>se&amp;cret</SecretAccessKey>"
		"<SessionToken>to&lt;ken</SessionToken>"
		"<Expiration>2026-12-01T10:00:00Z</Expiration></Credentials>"
		"</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
	static const char refused[] =
		"<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error>"
		"<Type>Sender</Type><Code>InvalidIdentityToken</Code>"
		"<Message>No OpenIDConnect provider found</Message></Error>"
		"<RequestId>r1</RequestId></ErrorResponse>";
	static const char partial[] =
		"<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId>"
		"</Credentials></AssumeRoleResult></AssumeRoleResponse>";
	char err[AWS_CREDS_ERR_LEN];
	struct aws_creds *c = NULL;

	assert_int_equal(sts_parse_credentials(ok, sizeof(ok) - 1, &c, err, sizeof(err)), 0);
	assert_string_equal(c->access_key_id, "ASIAXML");
	assert_string_equal(c->secret_access_key, "se&cret");
	assert_string_equal(c->session_token, "to<ken");
	assert_int_equal(c->expires_at, 1796119200LL);
	aws_creds_unref(c);

	assert_int_equal(sts_parse_credentials(refused, sizeof(refused) - 1, &c, err, sizeof(err)), -1);
	assert_null(c);
	assert_non_null(strstr(err, "InvalidIdentityToken"));
	assert_non_null(strstr(err, "No OpenIDConnect provider found"));
	assert_int_equal(sts_parse_credentials(partial, sizeof(partial) - 1, &c, err, sizeof(err)), -1);
	assert_int_equal(sts_parse_credentials("<a><b>", 6, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not well-formed"));
}

static void test_credential_json(void **state)
{
	static const struct {
		const char *doc;
		int rc;
		const char *key;
		const char *token;
	} cases[] = {
		{"{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Token\":\"T\",\"Expiration\":\"2026-12-01T10:00:00Z\"}", 0, "A", "T"},
		{"{\"Version\":1,\"AccessKeyId\":\"B\",\"SecretAccessKey\":\"S\",\"SessionToken\":\"U\"}", 0, "B", "U"},
		{"{\"Version\":1,\"AccessKeyId\":\"C\",\"SecretAccessKey\":\"S\"}", 0, "C", NULL},
		{"{\"Code\":\"Success\",\"AccessKeyId\":\"D\",\"SecretAccessKey\":\"S\",\"Token\":\"T\"}", 0, "D", "T"},
		{"{\"Version\":2,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}", -1, NULL, NULL},
		{"{\"Code\":\"Failed\",\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}", -1, NULL, NULL},
		{"{\"AccessKeyId\":\"A\"}", -1, NULL, NULL},
		{"{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Expiration\":\"soon\"}", -1, NULL, NULL},
		{"[1]", -1, NULL, NULL},
		{"not json", -1, NULL, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aws_creds *c = NULL;
		char err[AWS_CREDS_ERR_LEN] = "";
		int rc = aws_creds_from_json(cases[i].doc, strlen(cases[i].doc), &c, err, sizeof(err));
		assert_int_equal(rc, cases[i].rc);
		if (rc == 0) {
			assert_string_equal(c->access_key_id, cases[i].key);
			if (cases[i].token != NULL)
				assert_string_equal(c->session_token, cases[i].token);
			else
				assert_null(c->session_token);
		} else {
			assert_null(c);
			assert_true(err[0] != '\0');
			/* the reason never quotes the secret */
			assert_null(strstr(err, "\"S\""));
		}
		aws_creds_unref(c);
	}
}

static char tmpdir[] = "/tmp/test_aws_credentials.XXXXXX";

static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void clear_env(void)
{
	static const char *const vars[] = {
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS",
	};
	char path[256];

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	snprintf(path, sizeof(path), "%s/credentials", tmpdir);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	snprintf(path, sizeof(path), "%s/config", tmpdir);
	setenv("AWS_CONFIG_FILE", path, 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

static void test_profiles(void **state)
{
	struct aws_profiles ps;
	char err[AWS_CREDS_ERR_LEN];

	clear_env();
	write_file("credentials", "[default]\naws_access_key_id = AKIDCRED\n"
	                          "aws_secret_access_key = cred-secret\n"
	                          "# a comment\n[other]\naws_access_key_id = AKIDOTHER\n");
	write_file("config", "[default]\nregion = eu-west-1\naws_access_key_id = AKIDCONFIG\n"
	                     "[profile ci]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = default\n"
	                     "s3 =\n  max_concurrent_requests = 10\n"
	                     "[sso-session corp]\nsso_region = us-east-1\n");
	assert_int_equal(aws_profiles_load(&ps, err, sizeof(err)), 0);
	/* the credentials file wins over the config file */
	assert_string_equal(aws_profile_get(&ps, "default", "aws_access_key_id"), "AKIDCRED");
	assert_string_equal(aws_profile_get(&ps, "default", "region"), "eu-west-1");
	assert_string_equal(aws_profile_get(&ps, "ci", "role_arn"), "arn:aws:iam::1:role/r");
	assert_null(aws_profile_get(&ps, "ci", "aws_access_key_id"));
	assert_true(aws_profile_exists(&ps, "other"));
	/* [sso-session x] is not a profile */
	assert_false(aws_profile_exists(&ps, "sso-session corp"));
	assert_false(aws_profile_exists(&ps, "corp"));
	aws_profiles_free(&ps);

	write_file("config", "[profile broken\n");
	assert_int_equal(aws_profiles_load(&ps, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "config:1: syntax error"));
	aws_profiles_free(&ps);
	unlink(getenv("AWS_CONFIG_FILE"));
}

/* Session tokens are long: lines up to AWS_PROFILE_LINE_MAX, longer ones refused by line. */
static void test_profile_long_lines(void **state)
{
	size_t n = AWS_PROFILE_LINE_MAX + 64;
	char *text = malloc(n + 256), *token = malloc(n + 1), err[AWS_CREDS_ERR_LEN];
	struct aws_profiles ps;
	int len;

	clear_env();
	for (size_t i = 0; i < n; i++)
		token[i] = (char)('A' + i % 26);
	/* 250 characters then "=x": inih cut that line at 200 bytes and kept a piece */
	token[1200] = '\0';
	len = snprintf(text, n + 256, "[default]\naws_access_key_id = AKIDLONG\r\n"
	               "aws_session_token = %s\r\nnote = %.250s=x ; a comment\n", token, token);
	assert_true(len > 1200);
	write_file("credentials", text);
	assert_int_equal(aws_profiles_load(&ps, err, sizeof(err)), 0);
	assert_int_equal(strlen(aws_profile_get(&ps, "default", "aws_session_token")), 1200);
	assert_memory_equal(aws_profile_get(&ps, "default", "aws_session_token"), token, 1200);
	assert_int_equal(strlen(aws_profile_get(&ps, "default", "note")), 252);
	aws_profiles_free(&ps);

	/* exactly the limit passes; one byte more is refused, naming the line */
	token[1200] = 'x';
	token[AWS_PROFILE_LINE_MAX - 4] = '\0';
	snprintf(text, n + 256, "[default]\nk = %s\n", token);
	write_file("credentials", text);
	assert_int_equal(aws_profiles_load(&ps, err, sizeof(err)), 0);
	aws_profiles_free(&ps);
	token[AWS_PROFILE_LINE_MAX - 4] = 'x';
	token[AWS_PROFILE_LINE_MAX - 3] = '\0';
	snprintf(text, n + 256, "[default]\nk = %s\n", token);
	write_file("credentials", text);
	assert_int_equal(aws_profiles_load(&ps, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "credentials:2: line is too long (at most 16384 bytes)"));
	assert_null(strstr(err, "ABCDEFGHIJ")); /* never the line itself: it may be a secret */
	aws_profiles_free(&ps);
	unlink(getenv("AWS_SHARED_CREDENTIALS_FILE"));
	free(token);
	free(text);
}

/* A FIFO in a shared file's place is refused at once, not waited on. */
static void test_profile_fifo(void **state)
{
	struct aws_profiles ps;
	char err[AWS_CREDS_ERR_LEN];

	clear_env();
	unlink(getenv("AWS_SHARED_CREDENTIALS_FILE"));
	assert_int_equal(mkfifo(getenv("AWS_SHARED_CREDENTIALS_FILE"), 0600), 0);
	alarm(10); /* a blocking open would hang the test: fail it instead */
	assert_int_equal(aws_profiles_load(&ps, err, sizeof(err)), -1);
	alarm(0);
	assert_non_null(strstr(err, "it is a FIFO, not a regular file"));
	aws_profiles_free(&ps);
	unlink(getenv("AWS_SHARED_CREDENTIALS_FILE"));
}

static void test_chain(void **state)
{
	struct aws_credentials *p = NULL;
	char tried[AWS_CHAIN_TRIED_LEN];

	clear_env();
	unlink(getenv("AWS_SHARED_CREDENTIALS_FILE"));
	unlink(getenv("AWS_CONFIG_FILE"));
	assert_int_equal(aws_credential_chain_resolve("us-east-1", &p, tried, sizeof(tried)), -1);
	assert_null(p);
	assert_non_null(strstr(tried, "environment: AWS_ACCESS_KEY_ID is not set"));
	assert_non_null(strstr(tried, "; shared files: profile \"default\" not found"));
	assert_non_null(strstr(tried, "; web identity: AWS_WEB_IDENTITY_TOKEN_FILE is not set"));
	assert_non_null(strstr(tried, "; container: "));
	assert_non_null(strstr(tried, "; instance metadata: disabled by AWS_EC2_METADATA_DISABLED"));

	/* a profile named but missing is an error, and named */
	setenv("AWS_PROFILE", "nope", 1);
	assert_int_equal(aws_credential_chain_resolve("us-east-1", &p, tried, sizeof(tried)), -1);
	assert_non_null(strstr(tried, "profile \"nope\" not found"));
	unsetenv("AWS_PROFILE");

	/* shared files before web identity, environment before both */
	write_file("credentials", "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = s\n");
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent", 1);
	setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/r", 1);
	assert_int_equal(aws_credential_chain_resolve("us-east-1", &p, tried, sizeof(tried)), 0);
	assert_string_equal(aws_credentials_source(p), "profile \"default\" (static keys)");
	aws_credentials_unref(p);
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
	assert_int_equal(aws_credential_chain_resolve("us-east-1", &p, tried, sizeof(tried)), 0);
	assert_string_equal(aws_credentials_source(p), "environment");
	aws_credentials_unref(p);

	/* a container FULL_URI in clear to a foreign host is refused */
	clear_env();
	unlink(getenv("AWS_SHARED_CREDENTIALS_FILE"));
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://example.com/creds", 1);
	assert_int_equal(aws_credential_chain_resolve("us-east-1", &p, tried, sizeof(tried)), -1);
	assert_non_null(strstr(tried, "plain HTTP to \"example.com\" is refused"));
	clear_env();
}

static void test_shared_provider(void **state)
{
	struct aws_credentials *a = NULL, *b = NULL, *c = NULL;
	char tried[AWS_CHAIN_TRIED_LEN];

	clear_env();
	setenv("AWS_ACCESS_KEY_ID", "AKIDONE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
	assert_int_equal(aws_credentials_shared("us-east-1", &a, tried, sizeof(tried)), 0);
	assert_int_equal(aws_credentials_shared("us-east-1", &b, tried, sizeof(tried)), 0);
	assert_ptr_equal(a, b);
	aws_credentials_shared_release(a);
	aws_credentials_shared_release(b);
	/* all released: the next call resolves again */
	setenv("AWS_ACCESS_KEY_ID", "AKIDTWO", 1);
	assert_int_equal(aws_credentials_shared("us-east-1", &c, tried, sizeof(tried)), 0);
	char err[AWS_CREDS_ERR_LEN];
	struct aws_creds *k = aws_credentials_get(c, err, sizeof(err));
	assert_string_equal(k->access_key_id, "AKIDTWO");
	aws_creds_unref(k);
	aws_credentials_shared_release(c);
	clear_env();
}

static void test_clock_skew(void **state)
{
	char date[64];
	time_t ahead = time(NULL) + 1200;
	struct tm tm;

	assert_true(aws_clock_is_skew_code("RequestTimeTooSkewed"));
	assert_true(aws_clock_is_skew_code("SignatureDoesNotMatch"));
	assert_false(aws_clock_is_skew_code("AccessDenied"));
	assert_false(aws_clock_correct(NULL));
	assert_false(aws_clock_correct("not a date"));
	gmtime_r(&ahead, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	assert_true(aws_clock_correct(date));
	assert_true(llabs(aws_clock_offset() - 1200) <= 2);
	assert_true(llabs(aws_clock_now() - (long long)ahead) <= 2);
	/* the same skew again is no news: no second retry */
	assert_false(aws_clock_correct(date));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expired_one_refresher),
		cmocka_unit_test(test_due_but_valid_no_waiting),
		cmocka_unit_test(test_invalidate_once),
		cmocka_unit_test(test_refresh_fails),
		cmocka_unit_test(test_static_not_refreshed),
		cmocka_unit_test(test_refresh_window),
		cmocka_unit_test(test_iso8601),
		cmocka_unit_test(test_sts_xml),
		cmocka_unit_test(test_credential_json),
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_profile_long_lines),
		cmocka_unit_test(test_profile_fifo),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_shared_provider),
		cmocka_unit_test(test_clock_skew),
	};
	int rc;

	if (mkdtemp(tmpdir) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	clear_env();
	unlink(getenv("AWS_SHARED_CREDENTIALS_FILE"));
	unlink(getenv("AWS_CONFIG_FILE"));
	rmdir(tmpdir);
	return rc;
}
