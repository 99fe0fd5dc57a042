/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_config.c: relay.ini parsing (core/config/).
 *
 * Error cases are table-driven: tests/unit/config/NAME.ini must fail to load
 * with exactly the lines of NAME.expected, where the fixture directory is
 * cut from the front of each message so the expected files do not depend on
 * where the source tree lives (make distcheck builds elsewhere).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Not "config.h": with -I. that name finds autoconf's header first. */
#include "config/config.h"

#define FIXTURE_DIR OUTBOX_SRCDIR "/tests/unit/config/"
#define SAMPLE_PATH OUTBOX_BUILDDIR "/conf/relay.ini.sample"

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int c;

	if (!f)
		fail_msg("cannot open %s", path);
	mem = open_memstream(&buf, &len);
	assert_non_null(mem);
	while ((c = fgetc(f)) != EOF)
		fputc(c, mem);
	fclose(f);
	fclose(mem);
	return buf;
}

/* All messages, one per line, with the fixture directory cut off. */
static char *join_errors(const struct cfg_errors *errs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	assert_non_null(mem);
	for (size_t i = 0; i < errs->n; i++) {
		const char *m = errs->msgs[i];

		if (strncmp(m, FIXTURE_DIR, strlen(FIXTURE_DIR)) == 0)
			m += strlen(FIXTURE_DIR);
		fprintf(mem, "%s\n", m);
	}
	fclose(mem);
	return buf;
}

static char *fixture_path(const char *name, const char *ext)
{
	char *path = NULL;

	assert_true(asprintf(&path, "%s%s%s", FIXTURE_DIR, name, ext) > 0);
	return path;
}

static void test_error_fixture(void **state)
{
	const char *name = *state;
	char *ini = fixture_path(name, ".ini");
	char *expected_path = fixture_path(name, ".expected");
	char *expected = read_file(expected_path);
	struct cfg_errors errs = { 0 };
	struct cfg *cfg = NULL;
	char *got;

	assert_int_equal(cfg_load(ini, &cfg, &errs), -1);
	assert_null(cfg);
	got = join_errors(&errs);
	assert_string_equal(got, expected);
	assert_int_equal(errs.dropped, 0);
	free(got);
	free(expected);
	free(expected_path);
	free(ini);
	cfg_errors_free(&errs);
}

static struct cfg *load_ok(const char *path)
{
	struct cfg_errors errs = { 0 };
	struct cfg *cfg = NULL;
	int rc = cfg_load(path, &cfg, &errs);

	if (rc != 0) {
		cfg_errors_print(&errs, stderr);
		fail_msg("%s did not load", path);
	}
	assert_non_null(cfg);
	assert_int_equal(cfg_errors_count(&errs), 0);
	cfg_errors_free(&errs);
	return cfg;
}

static struct cfg *load_fixture_ok(const char *name)
{
	char *path = fixture_path(name, ".ini");
	struct cfg *cfg = load_ok(path);

	assert_string_equal(cfg->file, path);
	free(path);
	return cfg;
}

static void assert_option(const struct cfg_plugin_option *o, const char *key,
			  const char *value, int line)
{
	assert_string_equal(o->key, key);
	assert_string_equal(o->value, value);
	assert_int_equal(o->line, line);
}

static void assert_sample_destination(const struct cfg *cfg, const char *name,
				      const char *plugin)
{
	const struct cfg_destination *d = cfg_find_destination(cfg, name);
	char url[128];

	assert_non_null(d);
	assert_string_equal(d->plugin, plugin);
	snprintf(url, sizeof(url), "http://127.0.0.1:4566/000000000000/%s", name);
	assert_string_equal(d->queue_url, url);
	snprintf(url, sizeof(url), "http://127.0.0.1:4566/000000000000/%s-dlq", name);
	assert_string_equal(d->dlq_url, url);
	assert_int_equal(d->max_receive_count, 5);
	assert_true(d->line > 0 && d->plugin_line > d->line);
}

/* The installed sample, as generated from conf/relay.ini.sample.in. */
static void test_sample(void **state)
{
	struct cfg *cfg = load_ok(SAMPLE_PATH);
	const struct cfg_destination *news;

	(void)state;
	assert_string_equal(cfg->database.conninfo, "postgresql://outbox@127.0.0.1:5432/outbox");
	assert_string_equal(cfg->aws.region, "ap-northeast-2");
	assert_string_equal(cfg->aws.endpoint_url, "http://127.0.0.1:4566");
	assert_string_equal(cfg->s3.bucket, "intraday-artifacts");
	assert_string_equal(cfg->s3.prefix, "prices/");
	assert_string_equal(cfg->s3.endpoint_url, "http://127.0.0.1:4566");
	assert_int_equal(cfg->relay.claim_lease_seconds, 30);
	assert_int_equal(cfg->consumer.shutdown_grace_seconds, 30);
	assert_int_equal(cfg->n_destinations, 3);
	assert_sample_destination(cfg, "news", "news_llm");
	assert_sample_destination(cfg, "price", "price_trigger");
	assert_sample_destination(cfg, "explanation", "explanation");
	news = cfg_find_destination(cfg, "news");
	assert_int_equal(news->n_plugin_options, 3);
	assert_string_equal(news->plugin_options[0].key, "endpoint");
	assert_string_equal(news->plugin_options[0].value, "https://api.openai.com/v1");
	assert_string_equal(news->plugin_options[1].key, "model");
	assert_string_equal(news->plugin_options[2].key, "api_key_env");
	assert_string_equal(news->plugin_options[2].value, "OPENAI_API_KEY");
	assert_int_equal(cfg_find_destination(cfg, "price")->n_plugin_options, 0);
	assert_null(cfg->outboxd.plugin_path); /* commented out: the packaged directory */
	cfg_free(cfg);
}

/* Without [aws] region the queues' region is used; an emulator's URL names none. */
static void test_region_from_queue(void **state)
{
	struct cfg *cfg = load_fixture_ok("region_from_queue");

	(void)state;
	assert_non_null(cfg->aws.region);
	assert_string_equal(cfg->aws.region, "eu-central-1");
	cfg_free(cfg);
	cfg = load_fixture_ok("region_none");
	assert_null(cfg->aws.region);
	cfg_free(cfg);
}

static void test_defaults(void **state)
{
	struct cfg *cfg = load_fixture_ok("defaults");
	const struct cfg_destination *d = &cfg->destinations[0];

	(void)state;
	assert_string_equal(cfg->database.conninfo, "host=127.0.0.1 dbname=outbox");
	assert_string_equal(cfg->aws.region, "ap-northeast-2"); /* the queue's */
	assert_null(cfg->aws.endpoint_url);
	assert_null(cfg->s3.bucket);
	assert_string_equal(cfg->s3.prefix, "prices/");
	assert_null(cfg->s3.endpoint_url);
	assert_string_equal(cfg->logging.level, "info");
	assert_string_equal(cfg->logging.format, "text");
	assert_int_equal(cfg->database.lock_timeout_seconds, 10);
	assert_int_equal(cfg->database.statement_timeout_seconds, 60);
	assert_int_equal(cfg->database.idle_in_transaction_timeout_seconds, 60);
	assert_int_equal(cfg->relay.batch_size, 10);
	assert_int_equal(cfg->relay.poll_interval_ms, 500);
	assert_int_equal(cfg->relay.retry_base_seconds, 2);
	assert_int_equal(cfg->relay.retry_max_seconds, 300);
	assert_int_equal(cfg->relay.claim_lease_seconds, 30);
	assert_int_equal(cfg->relay.claim_max, 500);
	assert_int_equal(cfg->relay.send_concurrency, 8);
	assert_int_equal(cfg->relay.linger_max_ms, 20);
	assert_int_equal(cfg->relay.synchronous_commit, 0);
	assert_int_equal(cfg->consumer.claim_max, 100);
	assert_int_equal(cfg->consumer.linger_max_ms, 20);
	assert_int_equal(cfg->consumer.workers, 4);
	assert_int_equal(cfg->consumer.wait_time_seconds, 20);
	assert_int_equal(cfg->consumer.visibility_timeout_seconds, 60);
	assert_int_equal(cfg->consumer.lease_seconds, 60);
	assert_int_equal(cfg->consumer.shutdown_grace_seconds, 30);
	assert_int_equal(cfg->n_destinations, 1);
	assert_string_equal(d->name, "news");
	assert_int_equal(d->line, 5);
	assert_null(d->dlq_url);
	assert_int_equal(d->max_receive_count, 5);
	assert_int_equal(d->message_retention_seconds, 345600);
	assert_int_equal(d->dlq_message_retention_seconds, 1209600);
	assert_int_equal(cfg->retention.succeeded_jobs_seconds, 2592000);
	assert_int_equal(cfg->retention.dead_jobs_seconds, 2592000);
	assert_int_equal(cfg->retention.events_seconds, 2592000);
	assert_int_equal(cfg->retention.dlq_messages_seconds, 2592000);
	assert_int_equal(cfg->retention.interval_seconds, 60);
	assert_int_equal(cfg->retention.batch_size, 1000);
	assert_int_equal(cfg->sweeper.horizon_seconds, 0);
	assert_int_equal(cfg->sweeper.interval_seconds, 30);
	assert_int_equal(cfg->sweeper.batch_size, 500);
	/* No dlq_url: the DLQ's retention does not count. */
	assert_int_equal(cfg_dedup_horizon_seconds(cfg), 345600);
	assert_int_equal(cfg_sweeper_horizon_seconds(cfg), 2 * 60 + 20 + 60);
	assert_int_equal(d->handler_timeout_seconds, 600);
	assert_int_equal(d->plugin_line, 7);
	assert_int_equal(d->n_plugin_options, 0);
	assert_null(d->plugin_options);
	cfg_free(cfg);
}

static void test_plugin_options(void **state)
{
	struct cfg *cfg = load_fixture_ok("plugin_options");
	const struct cfg_destination *news = cfg_find_destination(cfg, "news");
	const struct cfg_destination *price = cfg_find_destination(cfg, "price-2");

	(void)state;
	assert_int_equal(cfg->relay.retry_base_seconds, 300);
	assert_int_equal(cfg->relay.retry_max_seconds, 300);
	assert_non_null(news);
	assert_int_equal(news->plugin_line, 11);
	assert_int_equal(news->n_plugin_options, 3);
	/* " ;" starts a comment; ";" without a space before it does not. */
	assert_option(&news->plugin_options[0], "endpoint", "https://api.example.com/v1", 10);
	assert_option(&news->plugin_options[1], "model", "gpt-4o-mini;not-a-comment", 12);
	assert_option(&news->plugin_options[2], "api_key_env", "OPENAI_API_KEY", 13);
	assert_non_null(price);
	assert_int_equal(price->line, 15);
	assert_int_equal(price->max_receive_count, 1000);
	assert_null(cfg_find_destination(cfg, "price"));
	cfg_free(cfg);
}

static void test_secret_not_echoed(void **state)
{
	char *path = fixture_path("secret", ".ini");
	struct cfg_errors errs = { 0 };
	struct cfg *cfg = NULL;

	(void)state;
	assert_int_equal(cfg_load(path, &cfg, &errs), -1);
	assert_int_equal(errs.n, 2);
	for (size_t i = 0; i < errs.n; i++) {
		assert_null(strstr(errs.msgs[i], "hunter2"));
		assert_null(strstr(errs.msgs[i], "password"));
	}
	cfg_errors_free(&errs);
	free(path);
}

static void test_missing_file(void **state)
{
	struct cfg_errors errs = { 0 };
	struct cfg *cfg = NULL;

	(void)state;
	assert_int_equal(cfg_load(FIXTURE_DIR "no-such-file.ini", &cfg, &errs), -1);
	assert_null(cfg);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msgs[0], FIXTURE_DIR
			    "no-such-file.ini: could not open file: No such file or directory");
	cfg_errors_free(&errs);
	assert_int_equal(errs.n, 0);
	assert_null(errs.msgs);
}

/* Earlier errors in the list do not make a good file fail. */
static void test_errors_accumulate(void **state)
{
	struct cfg_errors errs = { 0 };
	struct cfg *cfg = NULL;
	char *path = fixture_path("defaults", ".ini");

	(void)state;
	cfg_errors_add(&errs, "earlier: %d", 1);
	assert_int_equal(cfg_load(path, &cfg, &errs), 0);
	assert_non_null(cfg);
	assert_int_equal(cfg_errors_count(&errs), 1);
	cfg_free(cfg);
	cfg_errors_free(&errs);
	free(path);
}

static void test_plugin_option_error(void **state)
{
	struct cfg *cfg = load_fixture_ok("plugin_options");
	const struct cfg_destination *news = cfg_find_destination(cfg, "news");
	struct cfg_errors errs = { 0 };
	char *got;

	(void)state;
	cfg_plugin_option_error(&errs, cfg, news, &news->plugin_options[1],
				"unknown model \"%s\"", news->plugin_options[1].value);
	cfg_plugin_option_error(&errs, cfg, news, NULL, "could not load \"%s\"", "x.so");
	struct cfg_plugin_option absent = {.key = "token_env", .value = NULL, .line = 0};
	cfg_plugin_option_error(&errs, cfg, news, &absent, "required key is missing");
	got = join_errors(&errs);
	assert_string_equal(got,
			    "plugin_options.ini:12: [destination:news] plugin.model: "
			    "unknown model \"gpt-4o-mini;not-a-comment\"\n"
			    "plugin_options.ini:11: [destination:news] plugin: could not load \"x.so\"\n"
			    "plugin_options.ini:8: [destination:news] plugin.token_env: "
			    "required key is missing\n");
	free(got);
	cfg_errors_free(&errs);
	cfg_free(cfg);
}

static void test_errors_print(void **state)
{
	struct cfg_errors errs = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(mem);
	cfg_errors_add(&errs, "a.ini:%d: first", 1);
	cfg_errors_add(&errs, "a.ini:%d: second", 2);
	cfg_errors_print(&errs, mem);
	fclose(mem);
	assert_string_equal(buf, "a.ini:1: first\na.ini:2: second\n");
	assert_int_equal(cfg_errors_count(&errs), 2);
	free(buf);
	cfg_errors_free(&errs);
}

/* Loads path and expects exactly one message: FILE (as given) + suffix. */
static void expect_one_error(const char *path, const char *suffix)
{
	struct cfg_errors errs = { 0 };
	struct cfg *cfg = NULL;
	char *want = NULL;

	assert_int_equal(cfg_load(path, &cfg, &errs), -1);
	assert_null(cfg);
	assert_true(asprintf(&want, "%s%s", path, suffix) > 0);
	assert_int_equal(cfg_errors_count(&errs), 1);
	assert_string_equal(errs.msgs[0], want);
	free(want);
	cfg_errors_free(&errs);
}

/* "-c /dev/zero" used to grow memory without bound: refused before reading. */
static void test_not_a_regular_file(void **state)
{
	(void)state;
	expect_one_error("/dev/zero", ": could not read file: it is a character device, "
			 "not a regular file");
	expect_one_error(FIXTURE_DIR ".", ": could not read file: it is a directory, "
			 "not a regular file");
}

/* Writes n bytes of c (no newline at all) to a new temporary file. */
static char *write_temp(size_t n, char c, const char *head)
{
	char *path = strdup("/tmp/outbox-test-config-XXXXXX");
	int fd;
	FILE *f;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(head, f);
	for (size_t i = 0; i < n; i++)
		fputc(c, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void test_size_limits(void **state)
{
	char *big = write_temp(1024 * 1024 + 1, '\n', "");
	char *line = write_temp(1024 * 1024 - 20, 'x', "[database]\nk = ");
	struct cfg_errors errs = { 0 };
	struct cfg *cfg = NULL;

	(void)state;
	expect_one_error(big, ": file is too large (1048577 bytes, at most 1048576)");
	/* One line of almost 1 MiB: refused as too long, never held in memory. */
	assert_int_equal(cfg_load(line, &cfg, &errs), -1);
	assert_true(errs.n >= 1);
	assert_non_null(strstr(errs.msgs[0], ":2: line is too long (at most 198 bytes)"));
	cfg_errors_free(&errs);
	unlink(big);
	unlink(line);
	free(big);
	free(line);
}

/* [outboxd] plugin_path: kept as written; unset means the packaged directory. */
static void test_plugin_path(void **state)
{
	struct cfg *cfg = load_fixture_ok("plugin_path_ok");

	(void)state;
	assert_string_equal(cfg->outboxd.plugin_path,
			    "/usr/local/lib/outboxd/plugins:/usr/lib/outboxd/plugins");
	cfg_free(cfg);
	cfg = load_fixture_ok("defaults");
	assert_null(cfg->outboxd.plugin_path);
	cfg_free(cfg);
}

/*
 * [console]: off by default; a loopback listen needs no token; any listen
 * is accepted once the token's variable is set (console.ini and
 * console_no_token.ini are the refusals).
 */
static void test_console(void **state)
{
	struct cfg *cfg = load_fixture_ok("console_loopback");

	(void)state;
	assert_string_equal(cfg->console.listen, "127.0.0.1:9188");
	assert_null(cfg->console.token_env);
	cfg_free(cfg);
	cfg = load_fixture_ok("defaults");
	assert_null(cfg->console.listen);
	cfg_free(cfg);
	assert_int_equal(setenv("OUTBOX_TEST_CONSOLE_TOKEN_NEVER_SET", "t0ken", 1), 0);
	cfg = load_fixture_ok("console_unset_env");
	assert_string_equal(cfg->console.token_env, "OUTBOX_TEST_CONSOLE_TOKEN_NEVER_SET");
	cfg_free(cfg);
	assert_int_equal(unsetenv("OUTBOX_TEST_CONSOLE_TOKEN_NEVER_SET"), 0);
}

/*
 * cfg_load_partial (--check-config): the same errors as cfg_load, and the
 * file's destinations all the same, so their plugins can be checked in
 * the same pass; a refused key keeps its default.
 */
static void test_load_partial(void **state)
{
	char *path = fixture_path("plugin_path", ".ini");
	char *expected_path = fixture_path("plugin_path", ".expected");
	char *expected = read_file(expected_path);
	struct cfg_errors errs = { 0 };
	struct cfg *cfg = NULL;
	char *got;

	(void)state;
	assert_int_equal(cfg_load_partial(path, &cfg, &errs), -1);
	assert_non_null(cfg);
	got = join_errors(&errs);
	assert_string_equal(got, expected);
	assert_int_equal(cfg->n_destinations, 1);
	assert_string_equal(cfg->destinations[0].plugin, "news_llm");
	assert_null(cfg->destinations[0].queue_url);
	assert_null(cfg->outboxd.plugin_path);
	cfg_free(cfg);
	cfg_errors_free(&errs);
	cfg = (struct cfg *)1;
	assert_int_equal(cfg_load_partial(FIXTURE_DIR "no-such-file.ini", &cfg, &errs), -1);
	assert_null(cfg);
	assert_int_equal(cfg_errors_count(&errs), 1);
	cfg_errors_free(&errs);
	free(got);
	free(expected);
	free(expected_path);
	free(path);
}

/* Two schedules load with their values and defaults. */
static void test_schedules(void **state)
{
	struct cfg_errors errs = { 0 };
	struct cfg *cfg = NULL;
	const struct cfg_schedule *s;

	(void)state;
	if (cfg_load(FIXTURE_DIR "schedules.ini", &cfg, &errs) != 0) {
		cfg_errors_print(&errs, stderr);
		fail();
	}
	assert_int_equal(cfg->n_schedules, 2);
	s = cfg_find_schedule(cfg, "nightly");
	assert_non_null(s);
	assert_string_equal(s->cron, "0 3 * * *");
	assert_true(s->cron_expr.hours == 1u << 3 && s->cron_expr.minutes == 1);
	assert_string_equal(s->timezone, "Europe/Berlin");
	assert_string_equal(s->payload, "{\"report\": \"daily\"}");
	assert_int_equal(s->catch_up_mode, CFG_CATCH_UP_LAST);
	assert_int_equal(s->every_seconds, 0);
	s = cfg_find_schedule(cfg, "tick");
	assert_non_null(s);
	assert_null(s->cron);
	assert_null(s->timezone);
	assert_int_equal(s->every_seconds, 2);
	assert_string_equal(s->payload, "{}");
	assert_int_equal(s->catch_up_mode, CFG_CATCH_UP_ALL);
	assert_string_equal(s->destination, "mail");
	assert_null(cfg_find_schedule(cfg, "other"));
	cfg_free(cfg);
	cfg_errors_free(&errs);
}

#define ERROR_FIXTURE(name) { #name, test_error_fixture, NULL, NULL, (void *)#name }

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_plugin_options),
		cmocka_unit_test(test_secret_not_echoed),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_errors_accumulate),
		cmocka_unit_test(test_plugin_option_error),
		cmocka_unit_test(test_errors_print),
		cmocka_unit_test(test_plugin_path),
		cmocka_unit_test(test_load_partial),
		cmocka_unit_test(test_schedules),
		ERROR_FIXTURE(missing_queue_url),
		ERROR_FIXTURE(unknown_key),
		ERROR_FIXTURE(bad_number),
		ERROR_FIXTURE(bad_bool),
		ERROR_FIXTURE(bad_logging),
		ERROR_FIXTURE(out_of_range),
		ERROR_FIXTURE(timeouts_out_of_range),
		ERROR_FIXTURE(unknown_section),
		ERROR_FIXTURE(many_errors),
		ERROR_FIXTURE(duplicate_key),
		ERROR_FIXTURE(long_names),
		ERROR_FIXTURE(continuation),
		ERROR_FIXTURE(secret),
		ERROR_FIXTURE(missing_sections),
		ERROR_FIXTURE(syntax),
		ERROR_FIXTURE(queue_urls),
		ERROR_FIXTURE(dlq_shared),
		ERROR_FIXTURE(region_mismatch),
		ERROR_FIXTURE(region_mixed),
		cmocka_unit_test(test_region_from_queue),
		ERROR_FIXTURE(bad_bytes),
		ERROR_FIXTURE(nul_byte),
		ERROR_FIXTURE(pasted_secret),
		cmocka_unit_test(test_not_a_regular_file),
		cmocka_unit_test(test_size_limits),
		ERROR_FIXTURE(plugin_path),
		ERROR_FIXTURE(retention_horizon),
		cmocka_unit_test(test_console),
		ERROR_FIXTURE(console),
		ERROR_FIXTURE(console_no_token),
		ERROR_FIXTURE(console_unset_env),
		ERROR_FIXTURE(schedule_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
