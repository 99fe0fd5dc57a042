/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_llm_plugins.c: the news_llm and explanation plugins (built .so files
 * from OUTBOX_PLUGIN_DIR) driven through a mock host table, against the
 * deterministic LLM stand-in tests/harness/llm-stub.mjs started here.
 *
 * The mock host records log lines, queries and tx_exec calls.  With the
 * PostgreSQL test cluster (OUTBOX_TEST_PG_CONNINFO) one more test applies
 * the plugins' migrations and runs the plugins' SQL for real.  Without
 * node the whole program is skipped (77).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <libpq-fe.h>
#include <outbox/plugin.h>

#include "db/migrate.h"
#include "plugin/loader.h"
#include "testdb.h"

#define KEY_ENV "OUTBOX_LLM_TEST_KEY"
#define SECRET "sk-test-0123456789-do-not-log"
#define MAX_LOGS 64
#define MAX_PARAMS 16
#define JOB_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define JOB_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define JOB_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define JOB_E "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

/* One recorded statement (query or tx_exec). */
struct call {
	char *sql;
	char *params[MAX_PARAMS];
	int nparams;
};

/* What the mock host serves and what it saw. */
struct mock {
	const char *opt_names[8];
	const char *opt_values[8];
	size_t nopts;
	char *logs[MAX_LOGS];
	enum outbox_log_level levels[MAX_LOGS];
	size_t nlogs;
	int query_fails;      /* query() answers -1 */
	json_t *query_rows;   /* owned; what query() returns (a copy) */
	struct call queries[4];
	int nqueries;
	struct call execs[4];
	int nexecs;
	PGconn *pg;           /* borrowed; when set, query/tx_exec run for real */
};

static struct mock mock;
static char stub_url[128];
static pid_t stub_pid;
static int stub_stdin = -1;
static void *news_so;
static void *expl_so;
static const struct outbox_plugin *news;
static const struct outbox_plugin *explain;

/* ---- the mock host --------------------------------------------------- */

static void mock_log(struct outbox_ctx *ctx, enum outbox_log_level level, const char *fmt, ...)
{
	va_list ap;
	char *line = NULL;

	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	if (line != NULL && mock.nlogs < MAX_LOGS) {
		mock.levels[mock.nlogs] = level;
		mock.logs[mock.nlogs++] = line;
	}
	else
		free(line);
}

static const char *mock_option(struct outbox_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < mock.nopts; i++) {
		if (strcmp(mock.opt_names[i], name) == 0)
			return mock.opt_values[i];
	}
	return NULL;
}

static long long mock_option_int(struct outbox_ctx *ctx, const char *name)
{
	const char *v = mock_option(ctx, name);

	return v != NULL ? strtoll(v, NULL, 10) : 0;
}

static double mock_option_double(struct outbox_ctx *ctx, const char *name)
{
	return 0.0;
}

static int mock_option_bool(struct outbox_ctx *ctx, const char *name)
{
	return 0;
}

static int64_t mock_now_ms(struct outbox_ctx *ctx)
{
	return 1795790100000; /* 2026-11-27T14:35:00Z */
}

static int mock_artifact_get(struct outbox_ctx *ctx, const char *key, char **data,
                             size_t *len, char *err, size_t errlen)
{
	snprintf(err, errlen, "host service \"artifact_get\" is not available");
	return -1;
}

static void record(struct call *c, const char *sql, int nparams, const char *const *params)
{
	c->sql = strdup(sql);
	c->nparams = nparams;
	for (int i = 0; i < nparams && i < MAX_PARAMS; i++)
		c->params[i] = params[i] != NULL ? strdup(params[i]) : NULL;
}

/* Runs sql on mock.pg; rows (may be NULL) as the host would build them. */
static int pg_run(const char *sql, int nparams, const char *const *params, json_t **rows,
                  char *err, size_t errlen)
{
	PGresult *res = PQexecParams(mock.pg, sql, nparams, NULL, params, NULL, NULL, 0);
	int ok = PQresultStatus(res) == PGRES_TUPLES_OK || PQresultStatus(res) == PGRES_COMMAND_OK;

	if (!ok)
		snprintf(err, errlen, "%s", PQresultErrorMessage(res));
	if (ok && rows != NULL) {
		*rows = json_array();
		for (int r = 0; r < PQntuples(res); r++) {
			json_t *row = json_object();
			for (int f = 0; f < PQnfields(res); f++)
				json_object_set_new(row, PQfname(res, f),
				                    PQgetisnull(res, r, f) ? json_null()
				                                           : json_string(PQgetvalue(res, r, f)));
			json_array_append_new(*rows, row);
		}
	}
	PQclear(res);
	return ok ? 0 : -1;
}

static int mock_query(struct outbox_ctx *ctx, const char *sql, int nparams,
                      const char *const *params, json_t **rows, char *err, size_t errlen)
{
	if (mock.nqueries < 4)
		record(&mock.queries[mock.nqueries++], sql, nparams, params);
	if (mock.pg != NULL)
		return pg_run(sql, nparams, params, rows, err, errlen);
	if (mock.query_fails) {
		snprintf(err, errlen, "could not connect to the database");
		return -1;
	}
	*rows = mock.query_rows != NULL ? json_deep_copy(mock.query_rows) : json_array();
	return 0;
}

static int mock_tx_exec(struct outbox_tx *tx, const char *sql, int nparams,
                        const char *const *params, json_t **rows, char *err, size_t errlen)
{
	if (mock.nexecs < 4)
		record(&mock.execs[mock.nexecs++], sql, nparams, params);
	if (mock.pg != NULL)
		return pg_run(sql, nparams, params, rows, err, errlen);
	if (rows != NULL)
		*rows = json_array();
	return 0;
}

static int mock_tx_enqueue(struct outbox_tx *tx, const char *job_type, const char *destination,
                           const json_t *identity, const json_t *payload, char *job_id_out,
                           char *err, size_t errlen)
{
	fail_msg("the LLM plugins enqueue nothing");
	return -1;
}

static const struct outbox_host host = {
	.size = sizeof(struct outbox_host),
	.abi_minor = OUTBOX_PLUGIN_ABI_MINOR,
	.log = mock_log,
	.option = mock_option,
	.option_int = mock_option_int,
	.option_double = mock_option_double,
	.option_bool = mock_option_bool,
	.now_ms = mock_now_ms,
	.artifact_get = mock_artifact_get,
	.query = mock_query,
	.tx_exec = mock_tx_exec,
	.tx_enqueue = mock_tx_enqueue,
};

static void set_option(const char *name, const char *value)
{
	for (size_t i = 0; i < mock.nopts; i++) {
		if (strcmp(mock.opt_names[i], name) == 0) {
			mock.opt_values[i] = value;
			return;
		}
	}
	mock.opt_names[mock.nopts] = name;
	mock.opt_values[mock.nopts++] = value;
}

static void free_call(struct call *c)
{
	free(c->sql);
	for (int i = 0; i < c->nparams && i < MAX_PARAMS; i++)
		free(c->params[i]);
	memset(c, 0, sizeof(*c));
}

static void mock_reset(void)
{
	for (size_t i = 0; i < mock.nlogs; i++) {
		/* R15: whatever happened, the key never reaches a log line. */
		assert_null(strstr(mock.logs[i], SECRET));
		free(mock.logs[i]);
	}
	for (int i = 0; i < 4; i++) {
		free_call(&mock.queries[i]);
		free_call(&mock.execs[i]);
	}
	json_decref(mock.query_rows);
	memset(&mock, 0, sizeof(mock));
	set_option("endpoint", stub_url);
	set_option("model", "test-model");
	set_option("api_key_env", KEY_ENV);
	set_option("timeout_ms", "5000");
	set_option("max_tokens", "400");
	set_option("news_lookback_minutes", "120");
}

/* ---- the LLM stub ---------------------------------------------------- */

/* Reads "listening PORT" from fd within 10 s into port. */
static int read_port(int fd, char *port, size_t size)
{
	char line[64];
	size_t used = 0;
	time_t start = time(NULL);

	while (used + 1 < sizeof(line) && time(NULL) - start < 10) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 200) <= 0)
			continue;
		if (read(fd, line + used, 1) != 1)
			return -1;
		if (line[used] == '\n')
			break;
		used++;
	}
	line[used] = '\0';
	if (strncmp(line, "listening ", 10) != 0)
		return -1;
	snprintf(port, size, "%s", line + 10);
	return 0;
}

static int stub_start(void)
{
	int out[2], in[2];
	char port[64];

	if (pipe(out) < 0 || pipe(in) < 0)
		return -1;
	stub_pid = fork();
	if (stub_pid < 0)
		return -1;
	if (stub_pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execlp("node", "node", OUTBOX_SRCDIR "/tests/harness/llm-stub.mjs", "--port", "0",
		       "--exit-on-stdin-eof", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	stub_stdin = in[1];
	int rc = read_port(out[0], port, sizeof(port));
	close(out[0]);
	if (rc == 0)
		snprintf(stub_url, sizeof(stub_url), "http://127.0.0.1:%s/v1", port);
	return rc;
}

static void stub_stop(void)
{
	if (stub_pid <= 0)
		return;
	close(stub_stdin);
	kill(stub_pid, SIGTERM);
	waitpid(stub_pid, NULL, 0);
	stub_pid = 0;
}

static size_t collect(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	char **buf = userdata;
	size_t old = *buf != NULL ? strlen(*buf) : 0;
	char *grown = realloc(*buf, old + size * nmemb + 1);

	if (grown == NULL)
		return 0;
	memcpy(grown + old, ptr, size * nmemb);
	grown[old + size * nmemb] = '\0';
	*buf = grown;
	return size * nmemb;
}

/* GET (body NULL) or POST a control path of the stub; returns the JSON answer. */
static json_t *stub_control(const char *path, const char *body)
{
	CURL *h = curl_easy_init();
	char url[256], *text = NULL;
	json_t *doc;

	assert_non_null(h);
	snprintf(url, sizeof(url), "%.*s%s", (int)(strlen(stub_url) - 3), stub_url, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &text);
	if (body != NULL)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	curl_easy_cleanup(h);
	doc = json_loads(text != NULL ? text : "", 0, NULL);
	free(text);
	assert_non_null(doc);
	return doc;
}

/* Replace the stub's fault script (lines consumed one per request). */
static void stub_script(const char *lines)
{
	json_decref(stub_control("/_stub/script", lines));
}

static long long stub_requests(void)
{
	json_t *stats = stub_control("/_stub/stats", NULL);
	long long n = json_integer_value(json_object_get(stats, "requests"));

	json_decref(stats);
	return n;
}

/* ---- driving a plugin ------------------------------------------------ */

static const struct outbox_plugin *load(const char *name, void **handle)
{
	const char *dir = getenv("OUTBOX_PLUGIN_DIR");
	char path[1024];
	const struct outbox_plugin *(*describe)(void);

	snprintf(path, sizeof(path), "%s/%s.so", dir != NULL ? dir : OUTBOX_BUILDDIR "/.libs", name);
	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (*handle == NULL) {
		fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
		return NULL;
	}
	*(void **)&describe = dlsym(*handle, "outbox_plugin_describe");
	return describe != NULL ? describe() : NULL;
}

static void *start(const struct outbox_plugin *p)
{
	void *inst = NULL;
	char err[256] = "";

	if (p->init(&host, (struct outbox_ctx *)&mock, &inst, err, sizeof(err)) != 0)
		fail_msg("init failed: %s", err);
	return inst;
}

/* Runs execute(); msg gets the reason, *output the new reference (or NULL). */
static enum outbox_verdict run(const struct outbox_plugin *p, void *inst, const char *job_id,
                               json_t *payload, char *msg, size_t msglen, json_t **output)
{
	struct outbox_job job = {.job_id = job_id, .job_type = "x", .destination = "x",
	                         .payload = payload, .attempt = 1};
	struct outbox_result res = {.msg = msg, .msg_size = msglen};
	enum outbox_verdict v;

	msg[0] = '\0';
	v = p->execute(inst, &job, &res);
	msg[msglen - 1] = '\0';
	if (v != OUTBOX_OK) {
		json_decref(res.output); /* as the host does */
		res.output = NULL;
	}
	*output = res.output;
	return v;
}

static enum outbox_verdict commit(const struct outbox_plugin *p, void *inst, const char *job_id,
                                  json_t *payload, const json_t *output)
{
	struct outbox_job job = {.job_id = job_id, .job_type = "x", .destination = "x",
	                         .payload = payload, .attempt = 1};
	char err[256] = "";
	enum outbox_verdict v = p->commit(inst, &job, output, (struct outbox_tx *)&mock, err,
	                                  sizeof(err));

	if (v != OUTBOX_OK)
		print_message("commit: %s\n", err);
	return v;
}

static json_t *news_item(const char *title, const char *published_at)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:[s]}", "source", "wire",
	                 "url", "https://news.example.com/nvda-export-license",
	                 "published_at", published_at, "title", title,
	                 "body", "Shares of $NVDA moved after the announcement; analysts expect "
	                 "shipments to resume next quarter.",
	                 "symbols", "NVDA");
}

static void contains(const char *haystack, const char *needle, int line)
{
	if (haystack == NULL || strstr(haystack, needle) == NULL)
		fail_msg("line %d: \"%s\" does not contain \"%s\"", line,
		         haystack != NULL ? haystack : "(null)", needle);
}
#define assert_contains(haystack, needle) contains((haystack), (needle), __LINE__)

static int setup(void **state)
{
	mock_reset();
	stub_script("");
	return 0;
}

static int teardown(void **state)
{
	mock_reset();
	return 0;
}

/* ---- news_llm ---------------------------------------------------------- */

static void test_news_options_table(void **state)
{
	const struct outbox_option *o = news->options;
	int seen = 0;

	for (; o->name != NULL; o++) {
		if (strcmp(o->name, "endpoint") == 0)
			seen |= (o->type == OUTBOX_OPT_URL && o->default_value == NULL) << 0;
		if (strcmp(o->name, "model") == 0)
			seen |= (o->type == OUTBOX_OPT_STRING && o->default_value == NULL) << 1;
		if (strcmp(o->name, "api_key_env") == 0)
			seen |= ((o->flags & OUTBOX_OPT_SECRET_ENV) &&
			         strcmp(o->default_value, "OPENAI_API_KEY") == 0) << 2;
		if (strcmp(o->name, "timeout_ms") == 0)
			seen |= (o->min == 100 && o->max == 600000 &&
			         strcmp(o->default_value, "30000") == 0) << 3;
		if (strcmp(o->name, "max_tokens") == 0)
			seen |= (o->min == 16 && o->max == 8192 && strcmp(o->default_value, "400") == 0) << 4;
	}
	assert_int_equal(seen, 0x1f);
	/* The LLM client serves every worker thread at once. */
	assert_int_equal(news->flags & OUTBOX_PLUGIN_CONCURRENT, OUTBOX_PLUGIN_CONCURRENT);
	assert_int_equal(explain->flags & OUTBOX_PLUGIN_CONCURRENT, OUTBOX_PLUGIN_CONCURRENT);
}

static void test_news_ok_and_commit(void **state)
{
	void *inst = start(news);
	json_t *item = news_item("Commerce Department approves NVDA export license", "2026-11-27T14:33:00Z");
	json_t *out = NULL;
	char msg[512];

	assert_int_equal(run(news, inst, JOB_A, item, msg, sizeof(msg), &out), OUTBOX_OK);
	assert_non_null(out);
	assert_string_equal(json_string_value(json_array_get(json_object_get(out, "symbols"), 0)), "NVDA");
	assert_int_equal(json_array_size(json_object_get(out, "symbols")), 1);
	assert_string_equal(json_string_value(json_object_get(out, "event_type")), "regulatory");
	assert_true(json_number_value(json_object_get(out, "sentiment")) > 0.5);
	assert_true(json_number_value(json_object_get(out, "confidence")) > 0.5);
	assert_string_equal(json_string_value(json_object_get(out, "summary")),
	                    "Commerce Department approves NVDA export license");
	assert_string_equal(json_string_value(json_object_get(out, "model")), "stub-llm");

	/* What went over the wire. */
	json_t *stats = stub_control("/_stub/stats", NULL);
	json_t *last = json_object_get(stats, "last");
	assert_true(json_is_true(json_object_get(last, "bearer")));
	assert_string_equal(json_string_value(json_object_get(last, "model")), "test-model");
	assert_true(json_number_value(json_object_get(last, "temperature")) == 0.0);
	assert_int_equal(json_integer_value(json_object_get(last, "max_tokens")), 400);
	assert_string_equal(json_string_value(json_object_get(json_object_get(last, "response_format"),
	                                                      "type")), "json_object");
	assert_int_equal(json_integer_value(json_object_get(last, "messages")), 2);
	json_decref(stats);

	assert_int_equal(commit(news, inst, JOB_A, item, out), OUTBOX_OK);
	assert_int_equal(mock.nexecs, 1);
	struct call *c = &mock.execs[0];
	assert_contains(c->sql, "INSERT INTO news_llm.extractions");
	assert_contains(c->sql, "ON CONFLICT (job_id) DO NOTHING");
	assert_int_equal(c->nparams, 11);
	assert_string_equal(c->params[0], JOB_A);
	assert_string_equal(c->params[1], "wire");
	assert_string_equal(c->params[2], "https://news.example.com/nvda-export-license");
	assert_string_equal(c->params[3], "Commerce Department approves NVDA export license");
	assert_string_equal(c->params[4], "2026-11-27T14:33:00Z");
	assert_string_equal(c->params[5], "[\"NVDA\"]");
	assert_string_equal(c->params[6], "regulatory");
	assert_true(strtod(c->params[7], NULL) > 0.5);
	assert_true(strtod(c->params[9], NULL) > 0.5);
	assert_string_equal(c->params[10], "stub-llm");
	json_decref(out);
	json_decref(item);
	news->destroy(inst);
}

static void test_news_500_then_ok(void **state)
{
	void *inst = start(news);
	json_t *item = news_item("Nvidia shares surge to a record", "2026-11-27T14:20:00Z");
	json_t *out = NULL;
	char msg[512];

	stub_script("500\n");
	assert_int_equal(run(news, inst, JOB_A, item, msg, sizeof(msg), &out), OUTBOX_RETRY);
	assert_null(out);
	assert_contains(msg, "HTTP 500");
	assert_int_equal(run(news, inst, JOB_A, item, msg, sizeof(msg), &out), OUTBOX_OK);
	assert_non_null(out);
	json_decref(out);
	json_decref(item);
	news->destroy(inst);
}

/* One scripted answer and the verdict and reason it must produce. */
struct fault_case {
	const char *script;
	enum outbox_verdict verdict;
	const char *reason;
};

static void run_faults(const struct fault_case *cases, size_t n)
{
	void *inst = start(news);
	json_t *item = news_item("Nvidia misses estimates", "2026-11-27T14:20:00+00:00");
	json_t *out = NULL;
	char msg[512];

	for (size_t i = 0; i < n; i++) {
		stub_script(cases[i].script);
		enum outbox_verdict v = run(news, inst, JOB_A, item, msg, sizeof(msg), &out);
		if (v != cases[i].verdict)
			fail_msg("script \"%s\": verdict %d, want %d (%s)", cases[i].script, v,
			         cases[i].verdict, msg);
		assert_null(out);
		assert_contains(msg, cases[i].reason);
	}
	json_decref(item);
	news->destroy(inst);
}

static void test_news_bad_answers_fail(void **state)
{
	static const struct fault_case cases[] = {
		{"malformed", OUTBOX_FAIL, "not a JSON object"},
		{"wrongshape", OUTBOX_FAIL, "wrong shape: \"symbols\""},
		{"truncated", OUTBOX_FAIL, "max_tokens"},
		{"400", OUTBOX_FAIL, "HTTP 400"},
		{"401", OUTBOX_FAIL, "HTTP 401"},
		{"404", OUTBOX_FAIL, "HTTP 404"},
	};
	run_faults(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_news_transient_retry(void **state)
{
	static const struct fault_case cases[] = {
		{"429", OUTBOX_RETRY, "HTTP 429"},
		{"503", OUTBOX_RETRY, "HTTP 503"},
		/* twice: curl re-sends once when a reused connection drops */
		{"close\nclose", OUTBOX_RETRY, "LLM request failed"},
	};
	run_faults(cases, sizeof(cases) / sizeof(cases[0]));
}

/* A 429 with Retry-After is a RETRY at that time; without one, the
 * destination's backoff decides (0). */
static void test_news_retry_after(void **state)
{
	void *inst = start(news);
	json_t *item = news_item("Nvidia shares surge", "2026-11-27T14:20:00Z");
	struct outbox_job job = {.job_id = JOB_A, .job_type = "news", .destination = "news",
	                         .payload = item, .attempt = 1};
	char msg[512];
	struct outbox_result res = {.msg = msg, .msg_size = sizeof(msg)};

	stub_script("429 after 7\n429\n");
	assert_int_equal(news->execute(inst, &job, &res), OUTBOX_RETRY);
	assert_contains(msg, "HTTP 429");
	assert_int_equal(res.retry_after_ms, 7000);
	res = (struct outbox_result){.msg = msg, .msg_size = sizeof(msg)};
	assert_int_equal(news->execute(inst, &job, &res), OUTBOX_RETRY);
	assert_int_equal(res.retry_after_ms, 0);
	json_decref(item);
	news->destroy(inst);
}

#define N_CALLERS 4

struct caller {
	void *inst;
	json_t *item;
	enum outbox_verdict v;
	char msg[512];
};

static void *call_news(void *arg)
{
	struct caller *c = arg;
	struct outbox_job job = {.job_id = JOB_A, .job_type = "news", .destination = "news",
	                         .payload = c->item, .attempt = 1};
	struct outbox_result res = {.msg = c->msg, .msg_size = sizeof(c->msg)};

	c->v = news->execute(c->inst, &job, &res);
	json_decref(res.output);
	return NULL;
}

/* One instance called from several threads at once: the calls overlap at
 * the stub (it counts the most in flight) and every one succeeds. */
static void test_news_concurrent_calls(void **state)
{
	void *inst = start(news);
	json_t *item = news_item("Nvidia shares surge", "2026-11-27T14:20:00Z");
	struct caller callers[N_CALLERS];
	pthread_t threads[N_CALLERS];

	stub_script("sleep 1500\nsleep 1500\nsleep 1500\nsleep 1500\n");
	for (int i = 0; i < N_CALLERS; i++) {
		callers[i] = (struct caller){.inst = inst, .item = item};
		assert_int_equal(pthread_create(&threads[i], NULL, call_news, &callers[i]), 0);
	}
	for (int i = 0; i < N_CALLERS; i++) {
		pthread_join(threads[i], NULL);
		if (callers[i].v != OUTBOX_OK)
			fail_msg("call %d: %s", i, callers[i].msg);
	}
	json_t *stats = stub_control("/_stub/stats", NULL);
	json_int_t most = json_integer_value(json_object_get(stats, "max_in_flight"));

	json_decref(stats);
	if (most < 2)
		fail_msg("the stub saw at most %lld call(s) at once: the calls were serialised",
		         (long long)most);
	json_decref(item);
	news->destroy(inst);
}

static void test_news_timeout_retry(void **state)
{
	set_option("timeout_ms", "300");
	void *inst = start(news);
	json_t *item = news_item("Nvidia shares surge", "2026-11-27T14:20:00Z");
	json_t *out = NULL;
	char msg[512];

	stub_script("sleep 3000\n");
	assert_int_equal(run(news, inst, JOB_A, item, msg, sizeof(msg), &out), OUTBOX_RETRY);
	assert_contains(msg, "timed out after 300 ms");
	/* The handle recovers: the next request succeeds. */
	assert_int_equal(run(news, inst, JOB_A, item, msg, sizeof(msg), &out), OUTBOX_OK);
	json_decref(out);
	json_decref(item);
	news->destroy(inst);
}

static void test_news_connection_refused_retry(void **state)
{
	set_option("endpoint", "http://127.0.0.1:1/v1");
	void *inst = start(news);
	json_t *item = news_item("Nvidia shares surge", "2026-11-27T14:20:00Z");
	json_t *out = NULL;
	char msg[512];

	assert_int_equal(run(news, inst, JOB_A, item, msg, sizeof(msg), &out), OUTBOX_RETRY);
	assert_contains(msg, "LLM request failed");
	json_decref(item);
	news->destroy(inst);
}

/* Warnings logged so far that contain part. */
static int warnings_with(const char *part)
{
	int n = 0;

	for (size_t i = 0; i < mock.nlogs; i++)
		n += mock.levels[i] == OUTBOX_LOG_WARNING && strstr(mock.logs[i], part) != NULL;
	return n;
}

/* A plaintext endpoint off this machine works but is never silent. */
static void test_plaintext_endpoint_warns(void **state)
{
	static const struct {
		const char *endpoint;
		int warns;
	} cases[] = {
		{"http://llm.example.com/v1", 1},
		{"HTTP://10.0.0.7:8080/v1", 1},
		{"http://user:hunter2@proxy.example.com:3128/v1?api-key=hunter2", 1},
		{"http://127.example.com/v1", 1},
		{"http://127.0.0.1:1/v1", 0},
		{"http://127.1.2.3/v1", 0},
		{"http://localhost:8000/v1", 0},
		{"http://LocalHost./v1", 0},
		{"http://[::1]:8000/v1", 0},
		{"https://llm.example.com/v1", 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mock_reset();
		set_option("endpoint", cases[i].endpoint);
		void *inst = start(news);
		if (warnings_with("is plaintext http:// to a host that is not loopback") != cases[i].warns)
			fail_msg("endpoint %s: expected %d warnings", cases[i].endpoint, cases[i].warns);
		for (size_t k = 0; k < mock.nlogs; k++)
			assert_null(strstr(mock.logs[k], "hunter2"));
		news->destroy(inst);
	}
	/* A proxy URL with userinfo: logged without it and without the query. */
	mock_reset();
	set_option("endpoint", "http://user:hunter2@proxy.example.com:3128/v1?api-key=hunter2");
	void *inst = start(news);
	assert_int_equal(warnings_with("LLM endpoint \"http://proxy.example.com:3128/v1?...\" is "
	                               "plaintext"), 1);
	news->destroy(inst);
}

static void test_news_missing_key_refused(void **state)
{
	void *inst = NULL;
	char err[256] = "";

	set_option("api_key_env", "OUTBOX_LLM_TEST_UNSET_KEY");
	unsetenv("OUTBOX_LLM_TEST_UNSET_KEY");
	assert_int_equal(news->init(&host, (struct outbox_ctx *)&mock, &inst, err, sizeof(err)), -1);
	assert_contains(err, "\"OUTBOX_LLM_TEST_UNSET_KEY\"");
	assert_contains(err, "not set");
	news->destroy(inst); /* exactly once, even after a failed init */

	setenv("OUTBOX_LLM_TEST_UNSET_KEY", "", 1);
	inst = NULL;
	assert_int_equal(news->init(&host, (struct outbox_ctx *)&mock, &inst, err, sizeof(err)), -1);
	news->destroy(inst);
	unsetenv("OUTBOX_LLM_TEST_UNSET_KEY");
}

static void diag_sink(void *arg, const struct cfg_plugin_option *opt, const char *msg)
{
	char *seen = arg;

	if (strstr(msg, "OUTBOX_LLM_TEST_UNSET_KEY") != NULL)
		*seen = 1;
}

/* The real loader refuses too, before init, from the option table's flag. */
static void test_news_missing_key_refused_by_host(void **state)
{
	struct plugin_registry *reg = NULL;
	struct plugin_instance *inst = NULL;
	char seen = 0;
	struct plugin_diag diag = {.report = diag_sink, .arg = &seen};
	struct cfg_plugin_option opts[] = {
		{.key = "endpoint", .value = stub_url, .line = 3},
		{.key = "model", .value = "test-model", .line = 4},
		{.key = "api_key_env", .value = "OUTBOX_LLM_TEST_UNSET_KEY", .line = 5},
	};
	struct plugin_instance_spec spec = {.destination = "news", .plugin = "news_llm",
	                                    .options = opts, .n_options = 3};
	const char *dir = getenv("OUTBOX_PLUGIN_DIR");

	unsetenv("OUTBOX_LLM_TEST_UNSET_KEY");
	assert_int_equal(plugin_registry_create(dir != NULL ? dir : OUTBOX_BUILDDIR "/.libs", &reg), 0);
	assert_int_equal(plugin_instance_create(reg, &spec, &diag, &inst), -1);
	assert_true(seen);
	plugin_registry_free(reg);
}

static void test_news_bad_payload_fails_without_request(void **state)
{
	void *inst = start(news);
	json_t *no_title = json_pack("{s:s, s:s, s:s, s:s}", "source", "wire", "url", "u",
	                             "published_at", "2026-11-27T14:20:00Z", "body", "b");
	json_t *bad_time = news_item("t", "27/11/2026 14:20");
	json_t *out = NULL;
	char msg[512];
	long long before = stub_requests();

	assert_int_equal(run(news, inst, JOB_A, no_title, msg, sizeof(msg), &out), OUTBOX_FAIL);
	assert_contains(msg, "\"title\"");
	assert_int_equal(run(news, inst, JOB_A, bad_time, msg, sizeof(msg), &out), OUTBOX_FAIL);
	assert_contains(msg, "\"published_at\"");
	json_object_set_new(bad_time, "published_at", json_string("2026-02-29T14:20:00Z"));
	assert_int_equal(run(news, inst, JOB_A, bad_time, msg, sizeof(msg), &out), OUTBOX_FAIL);
	json_object_set_new(bad_time, "published_at", json_string("2028-02-29 14:20:00.123+09:00"));
	assert_int_equal(run(news, inst, JOB_A, bad_time, msg, sizeof(msg), &out), OUTBOX_OK);
	json_decref(out);
	out = NULL;
	assert_int_equal(stub_requests(), before + 1); /* only the valid item reached the LLM */
	json_decref(no_title);
	json_decref(bad_time);
	news->destroy(inst);
}

/* ---- explanation ------------------------------------------------------- */

static json_t *move_payload(double move_pct)
{
	return json_pack("{s:s, s:s, s:i, s:[{s:s, s:f, s:f}], s:f, s:f}", "symbol", "NVDA",
	                 "window_start", "2026-11-27T14:35:00Z", "generation", 1,
	                 "rules", "rule", "move_pct_abs", "value", move_pct, "threshold", 3.0,
	                 "move_pct", move_pct, "close", 151.25);
}

static json_t *news_rows(void)
{
	return json_pack("[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s},"
	                 " {s:s, s:s, s:s, s:s, s:s}]",
	                 "job_id", JOB_A, "title", "Export license approved", "summary", "s",
	                 "sentiment", "0.9", "published_at", "2026-11-27 14:33:00+00",
	                 "job_id", JOB_B, "title", "Supplier probe widens", "summary", "s",
	                 "sentiment", "-0.4", "published_at", "2026-11-27 13:10:00+00",
	                 "job_id", JOB_C, "title", "Analyst raises target", "summary", "s",
	                 "sentiment", "0.3", "published_at", "2026-11-27 12:55:00+00");
}

static void test_expl_cites_only_given(void **state)
{
	void *inst = start(explain);
	json_t *move = move_payload(4.1);
	json_t *out = NULL;
	char msg[512];

	mock.query_rows = news_rows();
	assert_int_equal(run(explain, inst, JOB_E, move, msg, sizeof(msg), &out), OUTBOX_OK);
	assert_int_equal(mock.nqueries, 1);
	assert_contains(mock.queries[0].sql, "FROM news_llm.extractions");
	assert_int_equal(mock.queries[0].nparams, 3);
	assert_string_equal(mock.queries[0].params[0], "NVDA");
	assert_string_equal(mock.queries[0].params[1], "2026-11-27T14:35:00Z");
	assert_string_equal(mock.queries[0].params[2], "120");

	json_t *cited = json_object_get(out, "cited_job_ids");
	assert_int_equal(json_array_size(cited), 2); /* the two positive items */
	assert_string_equal(json_string_value(json_array_get(cited, 0)), JOB_A);
	assert_string_equal(json_string_value(json_array_get(cited, 1)), JOB_C);
	assert_contains(json_string_value(json_object_get(out, "explanation")), "NVDA rose 4.10%");
	assert_int_equal(json_integer_value(json_object_get(out, "news_considered")), 3);

	assert_int_equal(commit(explain, inst, JOB_E, move, out), OUTBOX_OK);
	assert_int_equal(mock.nexecs, 1);
	struct call *c = &mock.execs[0];
	assert_contains(c->sql, "INSERT INTO explanation.explanations");
	assert_contains(c->sql, "ON CONFLICT (job_id) DO NOTHING");
	assert_int_equal(c->nparams, 9);
	assert_string_equal(c->params[0], JOB_E);
	assert_string_equal(c->params[1], "NVDA");
	assert_string_equal(c->params[2], "2026-11-27T14:35:00Z");
	assert_string_equal(c->params[3], "1");
	assert_true(strtod(c->params[4], NULL) == 4.1);
	assert_contains(c->params[5], "\"rule\":\"move_pct_abs\"");
	assert_string_equal(c->params[7], "[\"" JOB_A "\",\"" JOB_C "\"]");
	assert_string_equal(c->params[8], "stub-llm");
	json_decref(out);
	json_decref(move);
	explain->destroy(inst);
}

static void test_expl_rejects_foreign_citation(void **state)
{
	void *inst = start(explain);
	json_t *move = move_payload(4.1);
	json_t *out = NULL;
	char msg[512];

	mock.query_rows = news_rows();
	stub_script("badcite\n");
	assert_int_equal(run(explain, inst, JOB_E, move, msg, sizeof(msg), &out), OUTBOX_FAIL);
	assert_null(out);
	assert_contains(msg, "is not one of the 3 news items given");
	json_decref(move);
	explain->destroy(inst);
}

static void test_expl_query_failure_retries(void **state)
{
	void *inst = start(explain);
	json_t *move = move_payload(-3.5);
	json_t *out = NULL;
	char msg[512];
	long long before = stub_requests();

	mock.query_fails = 1;
	assert_int_equal(run(explain, inst, JOB_E, move, msg, sizeof(msg), &out), OUTBOX_RETRY);
	assert_contains(msg, "could not read recent news for \"NVDA\"");
	assert_int_equal(stub_requests(), before); /* no LLM call without the news */
	json_decref(move);
	explain->destroy(inst);
}

static void test_expl_no_news(void **state)
{
	void *inst = start(explain);
	json_t *move = move_payload(-3.5);
	json_t *out = NULL;
	char msg[512];

	assert_int_equal(run(explain, inst, JOB_E, move, msg, sizeof(msg), &out), OUTBOX_OK);
	assert_int_equal(json_array_size(json_object_get(out, "cited_job_ids")), 0);
	assert_contains(json_string_value(json_object_get(out, "explanation")), "none of the recent news");
	json_decref(out);
	json_decref(move);
	explain->destroy(inst);
}

static void test_expl_bad_payload(void **state)
{
	void *inst = start(explain);
	json_t *move = move_payload(4.1);
	json_t *out = NULL;
	char msg[512];

	json_object_set_new(move, "generation", json_integer(0));
	assert_int_equal(run(explain, inst, JOB_E, move, msg, sizeof(msg), &out), OUTBOX_FAIL);
	assert_contains(msg, "\"generation\"");
	json_object_set_new(move, "generation", json_integer(2));
	json_object_set_new(move, "rules", json_array());
	assert_int_equal(run(explain, inst, JOB_E, move, msg, sizeof(msg), &out), OUTBOX_FAIL);
	assert_contains(msg, "\"rules\"");
	assert_int_equal(mock.nqueries, 0);
	json_decref(move);
	explain->destroy(inst);
}

/* ---- against PostgreSQL ---------------------------------------------- */

static void apply_plugin_migrations(PGconn *conn, const char *plugin)
{
	char dir[1024], err[1024] = "";
	struct migrate_report report;

	snprintf(dir, sizeof(dir), "%s/migrations/plugins/%s", OUTBOX_SRCDIR, plugin);
	if (migrate_run(conn, dir, plugin, &report, err, sizeof(err)) != MIGRATE_OK)
		fail_msg("migrate %s: %s", plugin, err);
	assert_int_equal(report.applied, 1);
}

/* Extract and store two items, then explain a move from what was stored. */
static void test_sql_against_postgres(void **state)
{
	char *conninfo;
	PGconn *conn;
	json_t *good, *bad, *move, *out = NULL;
	char msg[512];

	if (getenv("OUTBOX_TEST_PG_CONNINFO") == NULL)
		skip();
	good = news_item("Commerce Department approves NVDA export license", "2026-11-27T14:33:00Z");
	bad = news_item("Nvidia supplier probe widens", "2026-11-27T13:10:00Z");
	move = move_payload(4.1);
	conninfo = testdb_create("test_llm_plugins");
	conn = testdb_connect(conninfo);
	apply_plugin_migrations(conn, "news_llm");
	apply_plugin_migrations(conn, "explanation");
	mock.pg = conn;

	void *n = start(news);
	assert_int_equal(run(news, n, JOB_A, good, msg, sizeof(msg), &out), OUTBOX_OK);
	assert_int_equal(commit(news, n, JOB_A, good, out), OUTBOX_OK);
	assert_int_equal(commit(news, n, JOB_A, good, out), OUTBOX_OK); /* no duplicate */
	json_decref(out);
	assert_int_equal(run(news, n, JOB_B, bad, msg, sizeof(msg), &out), OUTBOX_OK);
	assert_int_equal(commit(news, n, JOB_B, bad, out), OUTBOX_OK);
	json_decref(out);
	news->destroy(n);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM news_llm.extractions"), 2);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM news_llm.extractions "
	                               "WHERE symbols = '{NVDA}' AND sentiment > 0"), 1);

	void *e = start(explain);
	assert_int_equal(run(explain, e, JOB_E, move, msg, sizeof(msg), &out), OUTBOX_OK);
	assert_int_equal(commit(explain, e, JOB_E, move, out), OUTBOX_OK);
	assert_int_equal(commit(explain, e, JOB_E, move, out), OUTBOX_OK);
	json_decref(out);
	explain->destroy(e);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM explanation.explanations "
	                               "WHERE cited_job_ids = ARRAY['" JOB_A "'] AND generation = 1 "
	                               "AND rules->0->>'rule' = 'move_pct_abs'"), 1);
	PQfinish(conn);
	free(conninfo);
	json_decref(good);
	json_decref(bad);
	json_decref(move);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_news_options_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_ok_and_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_500_then_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_bad_answers_fail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_transient_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_retry_after, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_concurrent_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_timeout_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_connection_refused_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_missing_key_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plaintext_endpoint_warns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_missing_key_refused_by_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_news_bad_payload_fails_without_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expl_cites_only_given, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expl_rejects_foreign_citation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expl_query_failure_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expl_no_news, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expl_bad_payload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sql_against_postgres, setup, teardown),
	};
	int rc;

	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return 99;
	setenv(KEY_ENV, SECRET, 1);
	news = load("news_llm", &news_so);
	explain = load("explanation", &expl_so);
	if (news == NULL || explain == NULL)
		return 99;
	if (stub_start() < 0) {
		fprintf(stderr, "SKIP: could not start tests/harness/llm-stub.mjs (is node installed?)\n");
		stub_stop();
		return 77;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	stub_stop();
	/* No dlclose: leak reports keep the plugins' symbols. */
	curl_global_cleanup();
	return rc;
}
