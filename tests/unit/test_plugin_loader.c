/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_plugin_loader.c: the real loader against the ABI fixtures in
 * tests/plugins/ (built into the build's .libs), with mock host services
 * that count what the plugins do through them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/loader.h"

#define MAX_MSGS 32

/* What the sink and the mock services saw. */
struct probe {
	char *msgs[MAX_MSGS];
	size_t n;
	int inits;
	int destroys;
	int commits;
	struct outbox_tx *last_tx;
	const char *dest; /* for the sink's "[destination:NAME]" */
};

static struct probe probe;
static struct plugin_registry *reg;

/* Formats like cfg_plugin_option_error() so line context can be asserted. */
static void sink(void *arg, const struct cfg_plugin_option *opt, const char *msg)
{
	struct probe *p = arg;
	char line[1200];

	if (opt != NULL)
		snprintf(line, sizeof(line), "relay.ini:%d: [destination:%s] plugin.%s: %s",
		         opt->line > 0 ? opt->line : 7, p->dest, opt->key, msg);
	else
		snprintf(line, sizeof(line), "relay.ini:8: [destination:%s] plugin: %s", p->dest, msg);
	if (p->n < MAX_MSGS)
		p->msgs[p->n++] = strdup(line);
}

static const struct plugin_diag diag = {.report = sink, .arg = &probe};

static int mock_query(void *opaque, const struct outbox_ctx *ctx, const char *sql,
                      int nparams, const char *const *params, json_t **rows,
                      char *err, size_t errlen)
{
	struct probe *p = opaque;

	if (strcmp(sql, "fixture:init") == 0)
		p->inits++;
	else if (strcmp(sql, "fixture:destroy") == 0)
		p->destroys++;
	if (rows != NULL)
		*rows = json_array();
	return 0;
}

static int mock_tx_exec(void *opaque, const struct outbox_ctx *ctx, struct outbox_tx *tx,
                        const char *sql, int nparams, const char *const *params,
                        json_t **rows, char *err, size_t errlen)
{
	struct probe *p = opaque;

	p->commits++;
	p->last_tx = tx;
	return 0;
}

static const struct plugin_host_services services = {
	.opaque = &probe, .query = mock_query, .tx_exec = mock_tx_exec,
};

static const char *fixture_dir(void)
{
	const char *dir = getenv("OUTBOX_PLUGIN_DIR");

	return dir != NULL ? dir : OUTBOX_BUILDDIR "/.libs";
}

static int setup(void **state)
{
	memset(&probe, 0, sizeof(probe));
	probe.dest = "news";
	setenv("OUTBOX_FIXTURE_TOKEN", "not-a-real-token", 1);
	return plugin_registry_create(fixture_dir(), &reg);
}

static int teardown(void **state)
{
	for (size_t k = 0; k < probe.n; k++)
		free(probe.msgs[k]);
	plugin_registry_free(reg);
	reg = NULL;
	return 0;
}

/* Fails the test unless some reported message contains every part. */
static void assert_reported(const char *part1, const char *part2)
{
	for (size_t k = 0; k < probe.n; k++) {
		if (strstr(probe.msgs[k], part1) != NULL &&
		    (part2 == NULL || strstr(probe.msgs[k], part2) != NULL))
			return;
	}
	for (size_t k = 0; k < probe.n; k++)
		print_message("  reported: %s\n", probe.msgs[k]);
	fail_msg("no message contains \"%s\"%s%s", part1, part2 ? " and " : "", part2 ? part2 : "");
}

static int create(const char *plugin, const struct cfg_plugin_option *opts, size_t n,
                  struct plugin_instance **inst)
{
	struct plugin_instance_spec spec = {
		.destination = probe.dest, .plugin = plugin, .options = opts, .n_options = n,
		.services = &services,
	};
	return plugin_instance_create(reg, &spec, &diag, inst);
}

static struct cfg_plugin_option greeting = {.key = "greeting", .value = "hi", .line = 11};

static void test_good_lifecycle(void **state)
{
	struct plugin_instance *inst = NULL;
	char msg[256], err[256];
	struct outbox_result res = {.msg = msg, .msg_size = sizeof(msg)};
	json_t *payload = json_object();
	struct outbox_job job = {.job_id = "abc", .job_type = "news", .destination = "news",
	                         .payload = payload, .attempt = 1};
	static char tx_marker;
	struct outbox_tx *tx = (struct outbox_tx *)&tx_marker;

	assert_int_equal(create("good", &greeting, 1, &inst), 0);
	assert_int_equal(probe.n, 0);
	assert_int_equal(probe.inits, 1);
	assert_string_equal(plugin_instance_descriptor(inst)->name, "good");
	assert_int_equal(plugin_instance_execute(inst, &job, &res), OUTBOX_OK);
	assert_string_equal(msg, "ok");
	assert_non_null(res.output);
	assert_string_equal(json_string_value(json_object_get(res.output, "greeting")), "hi");
	/* The INT default "3" arrived typed through host->option_int. */
	assert_int_equal(json_integer_value(json_object_get(res.output, "count")), 3);
	assert_int_equal(plugin_instance_commit(inst, &job, res.output, tx, err, sizeof(err)),
	                 OUTBOX_OK);
	assert_int_equal(probe.commits, 1);
	assert_ptr_equal(probe.last_tx, tx);
	json_decref(res.output);
	json_decref(payload);
	plugin_instance_destroy(inst);
	assert_int_equal(probe.destroys, 1);
}

static void test_same_so_loaded_once(void **state)
{
	struct plugin_instance *a = NULL, *b = NULL;
	struct plugin_module *m1 = NULL, *m2 = NULL;

	assert_int_equal(create("good", &greeting, 1, &a), 0);
	probe.dest = "prices";
	assert_int_equal(create("good", &greeting, 1, &b), 0);
	assert_ptr_equal(plugin_instance_descriptor(a), plugin_instance_descriptor(b));
	assert_int_equal(plugin_registry_load(reg, "good", &diag, &m1), 0);
	assert_int_equal(plugin_registry_load(reg, "good", &diag, &m2), 0);
	assert_ptr_equal(m1, m2);
	assert_string_equal(plugin_instance_destination(b), "prices");
	assert_int_equal(probe.inits, 2);
	plugin_instance_destroy(a);
	plugin_instance_destroy(b);
	assert_int_equal(probe.destroys, 2);
}

static void expect_refused(const char *name, const char *part1, const char *part2)
{
	struct plugin_module *mod = NULL;

	assert_int_equal(plugin_registry_load(reg, name, &diag, &mod), -1);
	assert_null(mod);
	assert_reported(part1, part2);
}

static void test_refusals(void **state)
{
	char want[128];

	snprintf(want, sizeof(want), "ABI %d.0 required, host provides %d.%d",
	         OUTBOX_PLUGIN_ABI_MAJOR + 1, OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR);
	expect_refused("wrong_major", "plugin \"wrong_major.so\": ", want);
	snprintf(want, sizeof(want), "ABI %d.%d required, host provides %d.%d",
	         OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR + 1,
	         OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR);
	expect_refused("newer_minor", "plugin \"newer_minor.so\": ", want);
	snprintf(want, sizeof(want), "ABI %d.%d needs at least %zu",
	         OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR, sizeof(struct outbox_plugin));
	expect_refused("short_struct", "plugin \"short_struct.so\": descriptor is", want);
	expect_refused("bad_magic", "plugin \"bad_magic.so\" refused", "bad ABI magic 0xdeadbeef");
	expect_refused("missing_symbol", "plugin \"missing_symbol.so\" refused",
	               "does not export \"outbox_plugin_describe\"");
	expect_refused("no_such_plugin", "plugin \"no_such_plugin.so\" not found", "No such file");
	expect_refused("../good", "invalid plugin name \"../good\"", NULL);
	expect_refused("Good", "invalid plugin name \"Good\"", NULL);
	assert_int_equal(probe.n, 8);
}

static void test_not_a_regular_file(void **state)
{
	char dir[] = "/tmp/outbox-plugins-XXXXXX";
	char path[512], target[512];
	struct plugin_registry *tmp_reg = NULL;
	struct plugin_module *mod = NULL;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.so", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/good.so", dir);
	snprintf(target, sizeof(target), "%s/good.so", fixture_dir());
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(plugin_registry_create(dir, &tmp_reg), 0);
	assert_int_equal(plugin_registry_load(tmp_reg, "x", &diag, &mod), -1);
	assert_reported("plugin \"x.so\" refused", "is a directory, not a regular file");
	assert_int_equal(plugin_registry_load(tmp_reg, "good", &diag, &mod), -1);
	assert_reported("plugin \"good.so\" refused", "is a symbolic link");
	plugin_registry_free(tmp_reg);
	unlink(path);
	snprintf(path, sizeof(path), "%s/x.so", dir);
	rmdir(path);
	rmdir(dir);
}

/* Copies src to dst with mode 0644. */
static void copy_file(const char *src, const char *dst)
{
	FILE *in = fopen(src, "rb");
	FILE *out = fopen(dst, "wb");
	char buf[8192];
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(chmod(dst, 0644), 0);
}

/* Loads "good" from dir with a fresh registry; returns the load's result. */
static int load_from(const char *dir)
{
	struct plugin_registry *tmp_reg = NULL;
	struct plugin_module *mod = NULL;
	int rc;

	assert_int_equal(plugin_registry_create(dir, &tmp_reg), 0);
	rc = plugin_registry_load(tmp_reg, "good", &diag, &mod);
	plugin_registry_free(tmp_reg);
	return rc;
}

/* Any directory above the plugin's own counts: a writable one lets its
 * writers swap the whole directory below it; a sticky one (such as /tmp)
 * does not, when what is below it is ours. */
static void test_writable_parent_refused(void **state)
{
	char outer[] = "/tmp/outbox-plugins-XXXXXX";
	char dir[256], mid[256], path[512], src[512];

	(void)state;
	assert_non_null(mkdtemp(outer));
	snprintf(mid, sizeof(mid), "%s/site", outer);
	snprintf(dir, sizeof(dir), "%s/site/plugins", outer);
	assert_int_equal(mkdir(mid, 0755), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/good.so", dir);
	snprintf(src, sizeof(src), "%s/good.so", fixture_dir());
	copy_file(src, path);
	assert_int_equal(chmod(outer, 0755), 0);
	assert_int_equal(load_from(dir), 0);
	assert_int_equal(chmod(outer, 0777), 0);
	assert_int_equal(load_from(dir), -1);
	assert_reported("plugin \"good.so\" refused", ", a parent of its directory, is writable "
	                "by others (mode 0777; run \"chmod go-w");
	assert_int_equal(chmod(outer, 0775), 0);
	assert_int_equal(load_from(dir), -1);
	assert_reported("plugin \"good.so\" refused", "is writable by its group (mode 0775");
	assert_int_equal(chmod(outer, 01777), 0);
	assert_int_equal(load_from(dir), 0);
	assert_int_equal(chmod(outer, 0755), 0);
	unlink(path);
	rmdir(dir);
	rmdir(mid);
	rmdir(outer);
}

/* As sshd with key files: a plugin others could replace is never loaded. */
static void test_writable_plugin_refused(void **state)
{
	char dir[] = "/tmp/outbox-plugins-XXXXXX";
	char path[512], src[512];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/good.so", dir);
	snprintf(src, sizeof(src), "%s/good.so", fixture_dir());
	copy_file(src, path);
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(load_from(dir), -1);
	assert_reported("plugin \"good.so\" refused", "is writable by others (mode 0666; "
	                "run \"chmod go-w");
	assert_int_equal(chmod(path, 0664), 0);
	assert_int_equal(load_from(dir), -1);
	assert_reported("plugin \"good.so\" refused", "is writable by its group (mode 0664");
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(load_from(dir), -1);
	assert_reported("plugin \"good.so\" refused: its directory", "is writable by others "
	                "(mode 1777");
	assert_int_equal(probe.n, 3);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(load_from(dir), 0);
	assert_int_equal(probe.n, 3);
	unlink(path);
	rmdir(dir);
}

/* A key pasted where its variable's name belongs is refused, never echoed. */
static void test_pasted_secret_env(void **state)
{
	static const char key[] = "sk-proj-4fGh7Jk2Lm9Np3Qr5St8Uv1Wx6Yz0AbCdEf";
	struct cfg_plugin_option opts[] = {
		{.key = "greeting", .value = "hi", .line = 11},
		{.key = "token_env", .value = (char *)key, .line = 12},
	};
	struct plugin_instance *inst = NULL;

	assert_int_equal(create("good", opts, 2, &inst), -1);
	assert_null(inst);
	assert_reported("relay.ini:12: [destination:news] plugin.token_env: value (not shown) "
	                "looks like a secret", NULL);
	assert_int_equal(probe.n, 1);
	assert_null(strstr(probe.msgs[0], "sk-"));
	assert_null(strstr(probe.msgs[0], "4fGh7"));
	/* An invalid name is not shown either: a pasted secret the heuristic
	 * misses (this Standard Webhooks secret has no digit) must not leak. */
	opts[1].value = "whsec_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIjKlMnOp==";
	assert_int_equal(create("good", opts, 2, &inst), -1);
	assert_reported("plugin.token_env: value (not shown) is not the name of an environment "
	                "variable", NULL);
	assert_null(strstr(probe.msgs[probe.n - 1], "AbCdEf"));
}

static void test_option_errors_all_reported(void **state)
{
	static struct cfg_plugin_option opts[] = {
		{.key = "colour", .value = "red", .line = 12},
		{.key = "count", .value = "abc", .line = 13},
		{.key = "ratio", .value = "1.5", .line = 14},
		{.key = "verbose", .value = "maybe", .line = 15},
		{.key = "endpoint", .value = "ftp://example.org", .line = 16},
		{.key = "token_env", .value = "OUTBOX_FIXTURE_UNSET", .line = 17},
	};
	struct plugin_instance *inst = NULL;

	unsetenv("OUTBOX_FIXTURE_UNSET");
	assert_int_equal(create("good", opts, sizeof(opts) / sizeof(opts[0]), &inst), -1);
	assert_null(inst);
	assert_int_equal(probe.inits, 0);
	assert_reported("relay.ini:12: [destination:news] plugin.colour: unknown key for plugin "
	                "\"good\"", "plugin.greeting");
	assert_reported("relay.ini:13: [destination:news] plugin.count: invalid integer \"abc\"",
	                NULL);
	assert_reported("relay.ini:14: [destination:news] plugin.ratio: value 1.5 is out of range",
	                NULL);
	assert_reported("relay.ini:15: [destination:news] plugin.verbose: invalid boolean", NULL);
	assert_reported("relay.ini:16: [destination:news] plugin.endpoint: invalid URL", NULL);
	assert_reported("relay.ini:17: [destination:news] plugin.token_env: environment variable "
	                "\"OUTBOX_FIXTURE_UNSET\" is not set", NULL);
	assert_reported("relay.ini:7: [destination:news] plugin.greeting: required key is missing",
	                NULL);
	assert_int_equal(probe.n, 7);
}

static void test_option_limits_and_secrets(void **state)
{
	static struct cfg_plugin_option opts[] = {
		{.key = "greeting", .value = "hi", .line = 11},
		{.key = "count", .value = "11", .line = 12},
		{.key = "count", .value = "2", .line = 13},
		{.key = "token_env", .value = "OUTBOX_FIXTURE_SECRET", .line = 14},
	};
	struct plugin_instance *inst = NULL;

	setenv("OUTBOX_FIXTURE_SECRET", "s3cr3t-value", 1);
	assert_int_equal(create("good", opts, sizeof(opts) / sizeof(opts[0]), &inst), -1);
	assert_reported("relay.ini:12: [destination:news] plugin.count: value 11 is out of range "
	                "(1 .. 10)", NULL);
	assert_reported("relay.ini:13: [destination:news] plugin.count: duplicate key", "line 12");
	assert_int_equal(probe.n, 2);
	for (size_t k = 0; k < probe.n; k++)
		assert_null(strstr(probe.msgs[k], "s3cr3t"));
	/* Without the bad lines the same secret is accepted. */
	assert_int_equal(create("good", (const struct cfg_plugin_option[]){opts[0], opts[3]}, 2,
	                        &inst), 0);
	plugin_instance_destroy(inst);
}

/* A required key that is present but invalid is one error, not two. */
static void test_invalid_required_key(void **state)
{
	static struct cfg_plugin_option empty = {.key = "greeting", .value = "", .line = 11};
	struct plugin_instance *inst = NULL;

	assert_int_equal(create("good", &empty, 1, &inst), -1);
	assert_reported("relay.ini:11: [destination:news] plugin.greeting: empty value", NULL);
	assert_int_equal(probe.n, 1);
}

static const char config_text[] =
	"[database]\n"                                                      /* 1 */
	"conninfo = postgresql://outbox@127.0.0.1:5432/outbox\n"            /* 2 */
	"\n"                                                                 /* 3 */
	"[destination:news]\n"                                              /* 4 */
	"queue_url = http://127.0.0.1:4566/000000000000/news\n"             /* 5 */
	"plugin = good\n"                                                   /* 6 */
	"plugin.greeting = hello\n"                                         /* 7 */
	"plugin.count = many\n"                                             /* 8 */
	"plugin.colour = red\n"                                             /* 9 */
	"\n"
	"[destination:price]\n"                                             /* 11 */
	"queue_url = http://127.0.0.1:4566/000000000000/price\n"
	"plugin = init_fails\n";                                            /* 13 */

/* The convenience path: parsed relay.ini in, "FILE:LINE: [section] key: problem" out. */
static void test_config_errors(void **state)
{
	char path[] = "/tmp/outbox-relay-XXXXXX";
	struct cfg_errors errs = {0};
	struct cfg *cfg = NULL;
	struct plugin_instance *inst = NULL;
	char want[600];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, config_text, sizeof(config_text) - 1),
	                 (ssize_t)(sizeof(config_text) - 1));
	close(fd);
	assert_int_equal(cfg_load(path, &cfg, &errs), 0);
	assert_int_equal(plugin_instance_create_from_config(reg, cfg, cfg_find_destination(cfg, "news"),
	                                                    &services, &errs, &inst), -1);
	assert_int_equal(plugin_instance_create_from_config(reg, cfg, cfg_find_destination(cfg, "price"),
	                                                    &services, &errs, &inst), -1);
	assert_null(inst);
	for (size_t k = 0; k < errs.n; k++)
		probe.msgs[probe.n++] = strdup(errs.msgs[k]);
	snprintf(want, sizeof(want), "%s:8: [destination:news] plugin.count: invalid integer \"many\"", path);
	assert_reported(want, NULL);
	snprintf(want, sizeof(want), "%s:9: [destination:news] plugin.colour: unknown key", path);
	assert_reported(want, NULL);
	snprintf(want, sizeof(want), "%s:13: [destination:price] plugin: ", path);
	assert_reported(want, "plugin \"init_fails\" failed to start");
	assert_int_equal(errs.n, 3);
	assert_int_equal(probe.destroys, 1);
	cfg_errors_free(&errs);
	cfg_free(cfg);
	unlink(path);
}

static void test_init_failure(void **state)
{
	struct plugin_instance *inst = NULL;

	assert_int_equal(create("init_fails", NULL, 0, &inst), -1);
	assert_null(inst);
	assert_reported("plugin \"init_fails\" failed to start: upstream \"fixture\" refused the "
	                "handshake", NULL);
	assert_int_equal(probe.destroys, 1);
}

static void test_verdicts(void **state)
{
	struct plugin_instance *good = NULL, *retry = NULL;
	char msg[256];
	struct outbox_result res = {.msg = msg, .msg_size = sizeof(msg)};
	json_t *payload = json_pack("{s:i}", "verdict", 7);
	struct outbox_job job = {.job_id = "abc", .job_type = "news", .payload = payload};

	assert_int_equal(create("good", &greeting, 1, &good), 0);
	assert_int_equal(create("retry", NULL, 0, &retry), 0);
	assert_int_equal(plugin_instance_execute(retry, &job, &res), OUTBOX_RETRY);
	assert_string_equal(msg, "upstream answered 503");
	assert_int_equal(plugin_instance_execute(good, &job, &res), OUTBOX_FAIL);
	assert_non_null(strstr(msg, "invalid verdict 7"));
	json_object_set_new(payload, "verdict", json_integer(OUTBOX_RETRY));
	assert_int_equal(plugin_instance_execute(good, &job, &res), OUTBOX_RETRY);
	assert_null(res.output);
	json_decref(payload);
	plugin_instance_destroy(good);
	plugin_instance_destroy(retry);
}

static void test_services_unavailable(void **state)
{
	struct plugin_instance *inst = NULL;
	struct plugin_instance_spec spec = {
		.destination = "news", .plugin = "good", .options = &greeting, .n_options = 1,
	};
	struct outbox_job job = {.job_id = "abc", .job_type = "news"};
	char err[256];
	static char tx_marker;
	struct outbox_tx *tx = (struct outbox_tx *)&tx_marker;
	const struct outbox_host *host = plugin_host_table();

	assert_int_equal(plugin_instance_create(reg, &spec, &diag, &inst), 0);
	assert_int_equal(plugin_instance_commit(inst, &job, NULL, tx, err, sizeof(err)),
	                 OUTBOX_RETRY);
	assert_string_equal(err, "host service \"tx_exec\" is not available");
	/* Outside commit() no transaction is accepted, whatever the pointer. */
	assert_int_equal(host->tx_exec(tx, "SELECT 1", 0, NULL, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "host service \"tx_exec\" is only available inside commit()");
	assert_int_equal(host->size, sizeof(struct outbox_host));
	assert_int_equal(host->abi_minor, OUTBOX_PLUGIN_ABI_MINOR);
	plugin_instance_destroy(inst);
}

#define OVERLAP_THREADS 4

struct overlap_arg {
	struct plugin_instance *inst;
	json_t *payload;
	int max_in_flight;
};

static void *overlap_worker(void *p)
{
	struct overlap_arg *arg = p;
	char msg[256];
	struct outbox_result res = {.msg = msg, .msg_size = sizeof(msg)};
	struct outbox_job job = {.job_id = "abc", .job_type = "news", .payload = arg->payload};

	if (plugin_instance_execute(arg->inst, &job, &res) == OUTBOX_OK)
		arg->max_in_flight = (int)json_integer_value(json_object_get(res.output, "max_in_flight"));
	json_decref(res.output);
	return NULL;
}

/* The good fixture is not CONCURRENT: no two execute() calls may overlap. */
static void test_calls_serialised(void **state)
{
	struct plugin_instance *inst = NULL;
	pthread_t threads[OVERLAP_THREADS];
	struct overlap_arg args[OVERLAP_THREADS];
	json_t *payload = json_pack("{s:b}", "overlap_probe", 1);

	assert_int_equal(create("good", &greeting, 1, &inst), 0);
	assert_int_equal(plugin_instance_descriptor(inst)->flags & OUTBOX_PLUGIN_CONCURRENT, 0);
	for (int k = 0; k < OVERLAP_THREADS; k++) {
		args[k] = (struct overlap_arg){.inst = inst, .payload = payload, .max_in_flight = -1};
		assert_int_equal(pthread_create(&threads[k], NULL, overlap_worker, &args[k]), 0);
	}
	for (int k = 0; k < OVERLAP_THREADS; k++) {
		assert_int_equal(pthread_join(threads[k], NULL), 0);
		assert_int_equal(args[k].max_in_flight, 1);
	}
	json_decref(payload);
	plugin_instance_destroy(inst);
}

/* OUTBOX_OPT_PREFIX: any number of "plugin.header.NAME" keys, joined in file order. */
static void test_prefix_options(void **state)
{
	static const struct outbox_option table[] = {
		{.name = "url", .type = OUTBOX_OPT_URL, .help = "where"},
		{.name = "header.", .type = OUTBOX_OPT_STRING, .flags = OUTBOX_OPT_PREFIX},
		{.name = NULL},
	};
	struct cfg_plugin_option opts[] = {
		{.key = "url", .value = "https://example.org/", .line = 10},
		{.key = "header.X-B", .value = "two words", .line = 11},
		{.key = "header.X-A", .value = "1", .line = 12},
	};
	struct plugin_options out = {0};

	assert_int_equal(plugin_options_validate("p", table, opts, 3, &diag, &out), 0);
	assert_string_equal(plugin_options_find(&out, "header.")->text, "X-B=two words\nX-A=1");
	plugin_options_free(&out);
	/* None configured: "" and never "required". */
	assert_int_equal(plugin_options_validate("p", table, opts, 1, &diag, &out), 0);
	assert_string_equal(plugin_options_find(&out, "header.")->text, "");
	plugin_options_free(&out);
	assert_int_equal(probe.n, 0);
	/* The same suffix twice, an empty value, and the bare prefix are each refused. */
	struct cfg_plugin_option bad[] = {
		opts[0], opts[1],
		{.key = "header.X-B", .value = "again", .line = 13},
		{.key = "header.X-C", .value = "", .line = 14},
		{.key = "header.", .value = "x", .line = 15},
	};
	assert_int_equal(plugin_options_validate("p", table, bad, 5, &diag, &out), -1);
	assert_reported("relay.ini:13: [destination:news] plugin.header.X-B: duplicate key", NULL);
	assert_reported("relay.ini:14: [destination:news] plugin.header.X-C: empty value", NULL);
	assert_reported("relay.ini:15: [destination:news] plugin.header.: unknown key for plugin "
	                "\"p\"", "plugin.header.NAME");
	assert_int_equal(probe.n, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_so_loaded_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_regular_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writable_plugin_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writable_parent_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pasted_secret_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_option_errors_all_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_option_limits_and_secrets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_required_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_init_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verdicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_services_unavailable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_calls_serialised, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prefix_options, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
