/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_price_trigger.c: the price_trigger plugin against a mock host (a unit test: no services).
 *
 * Loads the built price_trigger.so from $OUTBOX_PLUGIN_DIR with dlopen and
 * drives init/execute/commit/destroy through a struct outbox_host whose
 * services are fakes: artifact_get serves canned artifacts (built with
 * core/price/artifact.c, so their SHA-256 is real), query answers canned rows
 * for the previous window and the trailing volumes, and tx_exec /
 * tx_enqueue record what commit() did.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <outbox/plugin.h>

#include "price/artifact.h"
#include "common/hexdigest.h"

#define WS "2026-11-27T14:35:00Z"
#define PREV_WS "2026-11-27T14:30:00Z"
#define MAX_ARTIFACTS 32

struct mock_artifact {
	char *key;
	char *body;
	int rc; /* 0: serve it; -1 transient; -2 missing */
};

struct mock {
	struct mock_artifact artifacts[MAX_ARTIFACTS];
	size_t n_artifacts;
	json_t *prev_rows;   /* answer to the price_windows query */
	json_t *volume_rows; /* answer to the evaluations query */
	int query_fails;
	char lookback_param[16];
	json_t *exec_calls;  /* [[param, ...], ...] */
	json_t *enqueues;    /* [{"type","destination","identity","payload"}, ...] */
	const char *opts[5][2];
	const char *symbol; /* of the job being run */
	const char *ws;
};

static struct mock m;
static const struct outbox_plugin *plugin;
static void *handle;

static void mock_log(struct outbox_ctx *ctx, enum outbox_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "plugin log %d: ", (int)level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static const char *mock_option(struct outbox_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < 5; i++)
		if (m.opts[i][0] != NULL && strcmp(m.opts[i][0], name) == 0)
			return m.opts[i][1];
	return NULL;
}

static long long mock_option_int(struct outbox_ctx *ctx, const char *name)
{
	const char *v = mock_option(ctx, name);
	return v != NULL ? strtoll(v, NULL, 10) : 0;
}

static double mock_option_double(struct outbox_ctx *ctx, const char *name)
{
	const char *v = mock_option(ctx, name);
	return v != NULL ? strtod(v, NULL) : 0;
}

static int mock_option_bool(struct outbox_ctx *ctx, const char *name)
{
	return 0;
}

static int64_t mock_now_ms(struct outbox_ctx *ctx)
{
	return 1796000000000LL;
}

static int mock_artifact_get(struct outbox_ctx *ctx, const char *key, char **data, size_t *len,
                             char *err, size_t errlen)
{
	for (size_t i = 0; i < m.n_artifacts; i++) {
		if (strcmp(m.artifacts[i].key, key) != 0)
			continue;
		if (m.artifacts[i].rc != 0) {
			snprintf(err, errlen, "%s", m.artifacts[i].rc == -1 ? "connection reset" : "NoSuchKey");
			return m.artifacts[i].rc;
		}
		*data = strdup(m.artifacts[i].body);
		*len = strlen(*data);
		return 0;
	}
	snprintf(err, errlen, "NoSuchKey");
	return -2;
}

static int mock_query(struct outbox_ctx *ctx, const char *sql, int nparams,
                      const char *const *params, json_t **rows, char *err, size_t errlen)
{
	if (m.query_fails) {
		snprintf(err, errlen, "server closed the connection unexpectedly");
		return -1;
	}
	if (strstr(sql, "outbox.price_windows") != NULL) {
		assert_int_equal(nparams, 2);
		assert_string_equal(params[0], m.symbol);
		assert_string_equal(params[1], m.ws);
		*rows = json_incref(m.prev_rows);
		return 0;
	}
	if (strstr(sql, "price_trigger.evaluations") != NULL) {
		assert_int_equal(nparams, 3);
		assert_string_equal(params[0], m.symbol);
		snprintf(m.lookback_param, sizeof(m.lookback_param), "%s", params[2]);
		/* LIMIT $3, as the SQL does. */
		*rows = json_array();
		for (size_t i = 0; i < json_array_size(m.volume_rows) &&
		                   i < strtoul(params[2], NULL, 10); i++)
			json_array_append(*rows, json_array_get(m.volume_rows, i));
		return 0;
	}
	fail_msg("unexpected query: %s", sql);
	return -1;
}

static int mock_tx_exec(struct outbox_tx *tx, const char *sql, int nparams,
                        const char *const *params, json_t **rows, char *err, size_t errlen)
{
	json_t *call = json_array();

	assert_ptr_equal(tx, (struct outbox_tx *)&m);
	assert_non_null(strstr(sql, "ON CONFLICT (job_id, rule) DO NOTHING"));
	for (int i = 0; i < nparams; i++)
		json_array_append_new(call, params[i] != NULL ? json_string(params[i]) : json_null());
	json_array_append_new(m.exec_calls, call);
	return 0;
}

static int mock_tx_enqueue(struct outbox_tx *tx, const char *job_type, const char *destination,
                           const json_t *identity, const json_t *payload, char *job_id_out,
                           char *err, size_t errlen)
{
	assert_ptr_equal(tx, (struct outbox_tx *)&m);
	json_array_append_new(m.enqueues, json_pack("{s:s, s:s, s:O, s:O}", "type", job_type,
	                                            "destination", destination,
	                                            "identity", identity, "payload", payload));
	return 0;
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

/* Five one-minute bars from open to close, volume spread evenly. */
static char *bars_text(const char *ws_hhmm, double open, double close, long long volume)
{
	json_t *bars = json_array();
	char *text;

	for (int i = 0; i < 5; i++) {
		double o = open + (close - open) * i / 5.0;
		double c = open + (close - open) * (i + 1) / 5.0;
		char t[32];
		snprintf(t, sizeof(t), "2026-11-27T%.4s%d:00Z", ws_hhmm, ws_hhmm[4] - '0' + i);
		json_array_append_new(bars, json_pack("{s:s, s:f, s:f, s:f, s:f, s:I}", "t", t,
		                      "o", o, "h", (o > c ? o : c) + 0.01, "l", (o < c ? o : c) - 0.01,
		                      "c", c, "v", (json_int_t)(volume / 5)));
	}
	text = json_dumps(bars, JSON_COMPACT);
	json_decref(bars);
	return text;
}

/* Builds the artifact of a window and serves it; returns its index. */
static size_t add_artifact(const char *ws, const char *hhmm, double open, double close,
                           long long volume, int rc)
{
	struct artifact a;
	char err[256] = "";
	char *text = bars_text(hhmm, open, close, volume);
	size_t i = m.n_artifacts++;

	assert_true(i < MAX_ARTIFACTS);
	assert_int_equal(artifact_build("NVDA", ws, 300, text, strlen(text), "prices/", &a, err,
	                                sizeof(err)), 0);
	m.artifacts[i].key = strdup(a.key);
	m.artifacts[i].body = strdup(a.body);
	m.artifacts[i].rc = rc;
	free(text);
	artifact_free(&a);
	return i;
}

static void set_previous(size_t artifact_index)
{
	char sha[ARTIFACT_SHA256_HEX_LEN + 1];
	const struct mock_artifact *a = &m.artifacts[artifact_index];

	(void)sha256_hex(a->body, strlen(a->body), sha);
	json_array_append_new(m.prev_rows, json_pack("{s:s, s:s, s:s}", "artifact_key", a->key,
	                                             "artifact_sha256", sha, "window_start", PREV_WS));
}

static void set_volumes(const char *const *volumes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_array_append_new(m.volume_rows, json_pack("{s:s}", "window_volume", volumes[i]));
}

static int setup(void **state)
{
	memset(&m, 0, sizeof(m));
	m.prev_rows = json_array();
	m.volume_rows = json_array();
	m.exec_calls = json_array();
	m.enqueues = json_array();
	const char *defaults[5][2] = {
		{"window_move_pct", "2.0"}, {"prev_close_move_pct", "3.0"}, {"volume_ratio", "3.0"},
		{"volume_lookback", "5"}, {"explanation_destination", "explanation"},
	};
	memcpy(m.opts, defaults, sizeof(defaults));
	m.symbol = "NVDA";
	m.ws = WS;
	return 0;
}

static int teardown(void **state)
{
	for (size_t i = 0; i < m.n_artifacts; i++) {
		free(m.artifacts[i].key);
		free(m.artifacts[i].body);
	}
	json_decref(m.prev_rows);
	json_decref(m.volume_rows);
	json_decref(m.exec_calls);
	json_decref(m.enqueues);
	return 0;
}

/* The price job of the current window (artifact 0). */
static json_t *job_payload(size_t artifact_index, const char *sha_override)
{
	char sha[ARTIFACT_SHA256_HEX_LEN + 1];
	const struct mock_artifact *a = &m.artifacts[artifact_index];

	(void)sha256_hex(a->body, strlen(a->body), sha);
	return json_pack("{s:s, s:s, s:i, s:s, s:s}", "symbol", m.symbol, "window_start", m.ws,
	                 "generation", 1, "artifact_key", a->key,
	                 "artifact_sha256", sha_override != NULL ? sha_override : sha);
}

struct run {
	enum outbox_verdict execute;
	enum outbox_verdict commit; /* only when execute said OK */
	char msg[512];
	json_t *output;
};

/* init, execute, (commit), destroy with the mock host. */
static void run_plugin(json_t *payload, struct run *r)
{
	void *instance = NULL;
	char err[512] = "";
	const struct outbox_job job = {
		.job_id = "1111111111111111111111111111111111111111111111111111111111111111",
		.job_type = "price", .destination = "price", .payload = payload,
		.attempt = 1, .redrive_generation = 0,
	};
	struct outbox_result result = {.msg = r->msg, .msg_size = sizeof(r->msg)};

	memset(r->msg, 0, sizeof(r->msg));
	assert_int_equal(plugin->init(&host, (struct outbox_ctx *)&m, &instance, err, sizeof(err)), 0);
	r->execute = plugin->execute(instance, &job, &result);
	r->output = result.output;
	r->commit = OUTBOX_FAIL;
	if (r->execute == OUTBOX_OK)
		r->commit = plugin->commit(instance, &job, r->output, (struct outbox_tx *)&m, err,
		                           sizeof(err));
	plugin->destroy(instance);
	json_decref(payload);
}

static const json_t *rule_out(const json_t *output, const char *name)
{
	size_t i;
	const json_t *r;

	json_array_foreach(json_object_get(output, "rules"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "rule")), name) == 0)
			return r;
	fail_msg("rule %s missing", name);
	return NULL;
}

/* The tx_exec call that stored rule name; params as in store_rule(). */
static const json_t *stored_row(const char *name)
{
	size_t i;
	const json_t *call;

	json_array_foreach(m.exec_calls, i, call)
		if (strcmp(json_string_value(json_array_get(call, 4)), name) == 0)
			return call;
	fail_msg("no row stored for rule %s", name);
	return NULL;
}

static void test_sharp_move_fires_one_explanation(void **state)
{
	static const char *const vols[] = {"1000000", "1100000", "900000"};
	struct run r;

	add_artifact(WS, "14:35", 100.0, 104.2, 5000000, 0);
	set_previous(add_artifact(PREV_WS, "14:30", 99.9, 100.1, 1000000, 0));
	set_volumes(vols, 3);
	run_plugin(job_payload(0, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_OK);
	assert_int_equal(r.commit, OUTBOX_OK);
	assert_string_equal(m.lookback_param, "5");
	assert_true(json_is_true(json_object_get(rule_out(r.output, "window_move"), "fired")));
	assert_true(json_is_true(json_object_get(rule_out(r.output, "prev_close_move"), "fired")));
	assert_true(json_is_true(json_object_get(rule_out(r.output, "volume_spike"), "fired")));
	assert_float_equal(json_real_value(json_object_get(rule_out(r.output, "volume_spike"), "value")),
	                   5.0, 1e-9);
	assert_int_equal(json_array_size(m.exec_calls), 3);
	const json_t *row = stored_row("window_move");
	assert_string_equal(json_string_value(json_array_get(row, 0)), "1111111111111111111111111111111111111111111111111111111111111111");
	assert_string_equal(json_string_value(json_array_get(row, 5)), "true");
	assert_string_equal(json_string_value(json_array_get(row, 8)), "true");
	assert_string_equal(json_string_value(json_array_get(row, 9)), "5000000");
	assert_float_equal(strtod(json_string_value(json_array_get(row, 6)), NULL), 4.2, 1e-9);

	assert_int_equal(json_array_size(m.enqueues), 1);
	const json_t *e = json_array_get(m.enqueues, 0);
	assert_string_equal(json_string_value(json_object_get(e, "type")), "explanation");
	assert_string_equal(json_string_value(json_object_get(e, "destination")), "explanation");
	char *identity = json_dumps(json_object_get(e, "identity"), JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(identity, "{\"type\":\"explanation\",\"symbol\":\"NVDA\",\"window_start\":\""
	                    WS "\",\"generation\":1}");
	free(identity);
	const json_t *payload = json_object_get(e, "payload");
	const json_t *rules = json_object_get(payload, "rules");
	assert_int_equal(json_array_size(rules), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rules, 0), "rule")),
	                    "window_move");
	assert_float_equal(json_number_value(json_object_get(json_array_get(rules, 0), "threshold")),
	                   2.0, 1e-12);
	assert_float_equal(json_number_value(json_object_get(payload, "move_pct")), 4.2, 1e-9);
	assert_float_equal(json_number_value(json_object_get(payload, "close")), 104.2, 1e-9);
	assert_int_equal(json_integer_value(json_object_get(payload, "generation")), 1);
	json_decref(r.output);
}

static void test_flat_window_fires_nothing(void **state)
{
	static const char *const vols[] = {"1000000", "1200000"};
	struct run r;

	add_artifact(WS, "14:35", 100.0, 100.2, 1300000, 0);
	set_previous(add_artifact(PREV_WS, "14:30", 99.9, 100.05, 1000000, 0));
	set_volumes(vols, 2);
	run_plugin(job_payload(0, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_OK);
	assert_int_equal(r.commit, OUTBOX_OK);
	assert_int_equal(json_array_size(json_object_get(r.output, "fired")), 0);
	for (const char *const *n = (const char *const[]){"window_move", "prev_close_move",
	                                                  "volume_spike", NULL}; *n; n++) {
		assert_true(json_is_true(json_object_get(rule_out(r.output, *n), "evaluated")));
		assert_true(json_is_false(json_object_get(rule_out(r.output, *n), "fired")));
		assert_string_equal(json_string_value(json_array_get(stored_row(*n), 8)), "false");
	}
	assert_float_equal(json_real_value(json_object_get(rule_out(r.output, "window_move"), "value")),
	                   0.2, 1e-9);
	assert_int_equal(json_array_size(m.exec_calls), 3);
	assert_int_equal(json_array_size(m.enqueues), 0);
	json_decref(r.output);
}

static void test_sha256_mismatch_fails(void **state)
{
	struct run r;

	add_artifact(WS, "14:35", 100.0, 104.2, 5000000, 0);
	run_plugin(job_payload(0, "0000000000000000000000000000000000000000000000000000000000000000"), &r);
	assert_int_equal(r.execute, OUTBOX_FAIL);
	assert_non_null(strstr(r.msg, "SHA-256"));
	assert_null(r.output);
	assert_int_equal(json_array_size(m.exec_calls), 0);
}

static void test_transient_artifact_error_retries(void **state)
{
	struct run r;

	add_artifact(WS, "14:35", 100.0, 104.2, 5000000, -1);
	run_plugin(job_payload(0, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_RETRY);
	assert_non_null(strstr(r.msg, "connection reset"));
	assert_null(r.output);
}

static void test_missing_artifact_fails(void **state)
{
	struct run r;

	add_artifact(WS, "14:35", 100.0, 104.2, 5000000, -2);
	run_plugin(job_payload(0, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_FAIL);
	assert_non_null(strstr(r.msg, "NoSuchKey"));
}

static void test_no_previous_window_not_evaluated(void **state)
{
	struct run r;

	/* No previous window and no earlier evaluations: only window_move runs. */
	add_artifact(WS, "14:35", 100.0, 104.2, 5000000, 0);
	run_plugin(job_payload(0, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_OK);
	assert_int_equal(r.commit, OUTBOX_OK);
	const json_t *prev = rule_out(r.output, "prev_close_move");
	assert_true(json_is_false(json_object_get(prev, "evaluated")));
	assert_true(json_is_null(json_object_get(prev, "value")));
	assert_string_equal(json_string_value(json_object_get(prev, "note")), "no previous window");
	assert_true(json_is_false(json_object_get(rule_out(r.output, "volume_spike"), "evaluated")));
	const json_t *row = stored_row("prev_close_move");
	assert_string_equal(json_string_value(json_array_get(row, 5)), "false");
	assert_true(json_is_null(json_array_get(row, 6)));
	assert_string_equal(json_string_value(json_array_get(row, 11)), "no previous window");
	/* window_move still fired on its own: one explanation naming only it. */
	assert_int_equal(json_array_size(m.enqueues), 1);
	const json_t *rules = json_object_get(json_object_get(json_array_get(m.enqueues, 0), "payload"),
	                                      "rules");
	assert_int_equal(json_array_size(rules), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rules, 0), "rule")),
	                    "window_move");
	json_decref(r.output);
}

static void test_previous_artifact_missing_not_evaluated(void **state)
{
	struct run r;

	add_artifact(WS, "14:35", 100.0, 100.1, 5000000, 0);
	set_previous(add_artifact(PREV_WS, "14:30", 99.9, 100.0, 1000000, -2));
	run_plugin(job_payload(0, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_OK);
	const json_t *prev = rule_out(r.output, "prev_close_move");
	assert_true(json_is_false(json_object_get(prev, "evaluated")));
	assert_non_null(strstr(json_string_value(json_object_get(prev, "note")), "is missing"));
	assert_int_equal(json_array_size(m.enqueues), 0);
	json_decref(r.output);
}

static void test_previous_artifact_transient_retries(void **state)
{
	struct run r;

	add_artifact(WS, "14:35", 100.0, 100.1, 5000000, 0);
	set_previous(add_artifact(PREV_WS, "14:30", 99.9, 100.0, 1000000, -1));
	run_plugin(job_payload(0, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_RETRY);
	assert_non_null(strstr(r.msg, "previous window"));
}

static void test_query_failure_retries(void **state)
{
	struct run r;

	add_artifact(WS, "14:35", 100.0, 100.1, 5000000, 0);
	m.query_fails = 1;
	run_plugin(job_payload(0, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_RETRY);
	assert_non_null(strstr(r.msg, "server closed the connection"));
}

static void test_bad_payload_fails(void **state)
{
	struct run r;

	run_plugin(json_pack("{s:s}", "symbol", "NVDA"), &r);
	assert_int_equal(r.execute, OUTBOX_FAIL);
	assert_non_null(strstr(r.msg, "artifact_key"));
}

static void test_options_change_thresholds(void **state)
{
	static const char *const vols[] = {"1000000"};
	struct run r;

	m.opts[0][1] = "5.0";   /* window_move_pct */
	m.opts[1][1] = "10";    /* prev_close_move_pct */
	m.opts[2][1] = "4.5";   /* volume_ratio */
	m.opts[3][1] = "2";     /* volume_lookback */
	m.opts[4][1] = "explain-fast";
	add_artifact(WS, "14:35", 100.0, 104.2, 5000000, 0);
	set_previous(add_artifact(PREV_WS, "14:30", 99.9, 100.1, 1000000, 0));
	set_volumes(vols, 1);
	run_plugin(job_payload(0, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_OK);
	assert_string_equal(m.lookback_param, "2");
	assert_true(json_is_false(json_object_get(rule_out(r.output, "window_move"), "fired")));
	assert_true(json_is_false(json_object_get(rule_out(r.output, "prev_close_move"), "fired")));
	assert_true(json_is_true(json_object_get(rule_out(r.output, "volume_spike"), "fired")));
	assert_int_equal(json_array_size(m.enqueues), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(m.enqueues, 0),
	                                                      "destination")), "explain-fast");
	json_decref(r.output);
}

/* Reads a whole file into a new string (caller frees). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;

	if (f == NULL)
		fail_msg("cannot open %s", path);
	assert_true(getdelim(&text, &cap, '\0', f) > 0);
	fclose(f);
	return text;
}

/* Serves one sample window's artifact; returns its index. */
static size_t add_sample_artifact(const char *srcdir, const char *symbol, const char *ws,
                                  const char *file)
{
	char path[4096], err[256] = "";
	struct artifact a;
	size_t i = m.n_artifacts++;

	assert_true(i < MAX_ARTIFACTS);
	snprintf(path, sizeof(path), "%s/conf/sample/bars/%s", srcdir, file);
	char *text = slurp(path);
	assert_int_equal(artifact_build(symbol, ws, 300, text, strlen(text), "prices/", &a,
	                                err, sizeof(err)), 0);
	free(text);
	m.artifacts[i] = (struct mock_artifact){strdup(a.key), strdup(a.body), 0};
	artifact_free(&a);
	return i;
}

/*
 * Runs one sample window with the mock standing in for price_windows (the
 * symbol's previous artifact, from last) and price_trigger.evaluations
 * (the volumes committed so far, from history); appends "SYMBOL WS
 * N_FIRED;" to fired when it enqueued an explanation.
 */
static void replay_window(const char *srcdir, const char *symbol, const char *ws,
                          const char *file, json_t *history, json_t *last,
                          char *fired, size_t fired_size)
{
	size_t i = add_sample_artifact(srcdir, symbol, ws, file);
	size_t before = json_array_size(m.enqueues);
	struct run r;

	json_array_clear(m.prev_rows);
	if (json_object_get(last, symbol) != NULL)
		set_previous((size_t)json_integer_value(json_object_get(last, symbol)));
	json_object_set_new(last, symbol, json_integer((json_int_t)i));
	if (json_object_get(history, symbol) == NULL)
		json_object_set_new(history, symbol, json_array());
	json_decref(m.volume_rows);
	m.volume_rows = json_incref(json_object_get(history, symbol));
	m.symbol = symbol;
	m.ws = ws;
	run_plugin(job_payload(i, NULL), &r);
	assert_int_equal(r.execute, OUTBOX_OK);
	assert_int_equal(r.commit, OUTBOX_OK);
	if (json_array_size(m.enqueues) > before)
		snprintf(fired + strlen(fired), fired_size - strlen(fired), "%s %s %zu;", symbol, ws,
		         json_array_size(json_object_get(r.output, "fired")));
	json_array_insert_new(json_object_get(history, symbol), 0,
	                      json_pack("{s:o}", "window_volume", json_sprintf("%lld",
	                                (long long)json_integer_value(
	                                    json_object_get(r.output, "window_volume")))));
	json_decref(r.output);
}

/*
 * The sample session (conf/sample/bars), replayed in manifest order: only
 * NVDA 14:35 may fire, and it fires every rule.
 */
static void test_sample_session_fires_only_nvda_1435(void **state)
{
	const char *srcdir = getenv("OUTBOX_SRCDIR") ? getenv("OUTBOX_SRCDIR") : OUTBOX_SRCDIR;
	char path[4096], symbol[16], ws[32], file[64], fired[256] = "";
	json_t *history = json_object(); /* symbol -> [{"window_volume"}...], newest first */
	json_t *last = json_object();    /* symbol -> index of its previous artifact */
	int windows = 0;

	snprintf(path, sizeof(path), "%s/conf/sample/bars/manifest.tsv", srcdir);
	char *manifest = slurp(path);
	for (char *line = manifest; line != NULL && *line != '\0'; line = strchr(line, '\n')) {
		line += *line == '\n';
		if (*line != '#' && sscanf(line, "%15s %31s %63s", symbol, ws, file) == 3) {
			replay_window(srcdir, symbol, ws, file, history, last, fired, sizeof(fired));
			windows++;
		}
	}
	assert_int_equal(windows, 24);
	assert_string_equal(fired, "NVDA 2026-11-27T14:35:00Z 3;");
	assert_int_equal(json_array_size(m.enqueues), 1);
	free(manifest);
	json_decref(history);
	json_decref(last);
}

static void test_descriptor(void **state)
{
	const struct outbox_option *o;
	int n = 0;

	assert_string_equal(plugin->name, "price_trigger");
	assert_int_equal(plugin->abi_major, OUTBOX_PLUGIN_ABI_MAJOR);
	for (o = plugin->options; o->name != NULL; o++)
		n++;
	assert_int_equal(n, 5);
	assert_non_null(plugin->commit);
	/* Only the entry point is exported. */
	assert_null(dlsym(handle, "artifact_parse"));
	assert_null(dlsym(handle, "pt_execute"));
}

static int load_plugin(void **state)
{
	const char *dir = getenv("OUTBOX_PLUGIN_DIR");
	char path[4096];

	if (dir == NULL) {
		fprintf(stderr, "SKIP: OUTBOX_PLUGIN_DIR is not set\n");
		exit(77);
	}
	snprintf(path, sizeof(path), "%s/price_trigger.so", dir);
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	const struct outbox_plugin *(*describe)(void) =
		(const struct outbox_plugin *(*)(void))dlsym(handle, "outbox_plugin_describe");
	if (describe == NULL)
		return -1;
	plugin = describe();
	return 0;
}

static int unload_plugin(void **state)
{
	/* Keep it loaded under valgrind so leak reports show plugin symbols. */
	if (getenv("OUTBOX_VALGRIND") == NULL && handle != NULL)
		dlclose(handle);
	return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_descriptor),
		T(test_sharp_move_fires_one_explanation),
		T(test_flat_window_fires_nothing),
		T(test_sha256_mismatch_fails),
		T(test_transient_artifact_error_retries),
		T(test_missing_artifact_fails),
		T(test_no_previous_window_not_evaluated),
		T(test_previous_artifact_missing_not_evaluated),
		T(test_previous_artifact_transient_retries),
		T(test_query_failure_retries),
		T(test_bad_payload_fails),
		T(test_options_change_thresholds),
		T(test_sample_session_fires_only_nvda_1435),
	};

	return cmocka_run_group_tests(tests, load_plugin, unload_plugin);
}
