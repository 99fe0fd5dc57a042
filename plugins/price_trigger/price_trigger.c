/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * price_trigger.c: the price-move trigger plugin (docs/price-path.md).
 *
 * One job per confirmed price window (generation).  execute() reads the
 * window's artifact from S3, checks its SHA-256, and evaluates three rules:
 *
 *   window_move      |last close - first open| / first open * 100
 *                    >= plugin.window_move_pct (default 2.0)
 *   prev_close_move  |last close - previous window's last close| / that * 100
 *                    >= plugin.prev_close_move_pct (default 3.0); the
 *                    previous window is the symbol's latest window_start
 *                    before this one in outbox.price_windows
 *   volume_spike     window volume / average volume of up to
 *                    plugin.volume_lookback (default 5) earlier evaluated
 *                    windows (price_trigger.evaluations) >= plugin.volume_ratio
 *                    (default 3.0)
 *
 * A rule without the data it needs (no previous window, its artifact gone,
 * no earlier evaluations) is recorded as not evaluated.  commit() stores one
 * row per rule in price_trigger.evaluations and, when any rule fired,
 * enqueues one "explanation" job to plugin.explanation_destination.
 *
 * Verdicts: artifact_get transient failure or a failed query -> RETRY;
 * missing artifact, checksum mismatch, malformed payload or artifact -> FAIL.
 *
 * The artifact parser is core/price/artifact.c, built into this plugin as one of
 * its sources (plugins never link libcore; the export list keeps it private).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <outbox/plugin.h>

#include "price/artifact.h"
#include "common/hexdigest.h"

#define N_RULES 3
#define ERRLEN 512

struct price_trigger {
	const struct outbox_host *host; /* borrowed, valid until destroy() */
	struct outbox_ctx *ctx;         /* borrowed, valid until destroy() */
	double window_move_pct;
	double prev_close_move_pct;
	double volume_ratio;
	long long volume_lookback;
	const char *explanation_destination; /* borrowed from the host */
};

/* The job's payload; strings borrowed from it. */
struct price_job {
	const char *symbol;
	const char *window_start;
	long long generation;
	const char *artifact_key;
	const char *artifact_sha256;
};

/* What execute() learns about the window. */
struct window_facts {
	double first_open;
	double close;
	long long volume;
	double move_pct; /* signed */
	json_t *prev;    /* new reference: {"window_start","close"} or null */
	json_t *trailing; /* new reference: {"windows","average_volume"} */
};

struct rule_eval {
	const char *rule;
	bool evaluated;
	double value;
	double threshold;
	bool fired;
	char note[160]; /* why it was not evaluated */
};

static const struct outbox_option price_trigger_options[] = {
	{.name = "window_move_pct", .type = OUTBOX_OPT_DOUBLE, .default_value = "2.0",
	 .min = 0, .max = 1000, .help = "fire when the window moves this many percent"},
	{.name = "prev_close_move_pct", .type = OUTBOX_OPT_DOUBLE, .default_value = "3.0",
	 .min = 0, .max = 1000, .help = "fire when the close moves this many percent from the previous window's close"},
	{.name = "volume_ratio", .type = OUTBOX_OPT_DOUBLE, .default_value = "3.0",
	 .min = 0, .max = 1000000, .help = "fire when the volume is this many times the trailing average"},
	{.name = "volume_lookback", .type = OUTBOX_OPT_INT, .default_value = "5",
	 .min = 1, .max = 1000, .help = "earlier windows in the trailing volume average"},
	{.name = "explanation_destination", .type = OUTBOX_OPT_STRING,
	 .default_value = "explanation", .help = "destination of the explanation jobs"},
	{.name = NULL},
};

static int pt_init(const struct outbox_host *host, struct outbox_ctx *ctx, void **instance,
                   char *err, size_t errlen)
{
	struct price_trigger *self = calloc(1, sizeof(*self));

	*instance = self;
	if (self == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	self->host = host;
	self->ctx = ctx;
	self->window_move_pct = host->option_double(ctx, "window_move_pct");
	self->prev_close_move_pct = host->option_double(ctx, "prev_close_move_pct");
	self->volume_ratio = host->option_double(ctx, "volume_ratio");
	self->volume_lookback = host->option_int(ctx, "volume_lookback");
	self->explanation_destination = host->option(ctx, "explanation_destination");
	if (self->explanation_destination == NULL || self->volume_lookback < 1) {
		snprintf(err, errlen, "options were not validated by the host");
		return -1;
	}
	return 0;
}

static void pt_destroy(void *instance)
{
	free(instance);
}

static int parse_payload(const json_t *payload, struct price_job *pj, char *msg, size_t len)
{
	const json_t *gen = json_object_get(payload, "generation");

	pj->symbol = json_string_value(json_object_get(payload, "symbol"));
	pj->window_start = json_string_value(json_object_get(payload, "window_start"));
	pj->artifact_key = json_string_value(json_object_get(payload, "artifact_key"));
	pj->artifact_sha256 = json_string_value(json_object_get(payload, "artifact_sha256"));
	pj->generation = json_integer_value(gen);
	if (pj->symbol == NULL || pj->window_start == NULL || pj->artifact_key == NULL ||
	    pj->artifact_sha256 == NULL || !json_is_integer(gen) || pj->generation < 1) {
		snprintf(msg, len, "price job payload needs symbol, window_start, generation, "
		         "artifact_key and artifact_sha256");
		return -1;
	}
	return 0;
}

/*
 * Reads and checks one artifact.  Returns 0, or -1 (transient: RETRY), -2
 * (missing), -3 (checksum mismatch or malformed) with a reason in msg.
 */
static int load_artifact(const struct price_trigger *self, const char *key, const char *sha256,
                         struct artifact *a, char *msg, size_t len)
{
	char *data = NULL;
	size_t n = 0;
	char err[ERRLEN] = "";
	int rc = self->host->artifact_get(self->ctx, key, &data, &n, err, sizeof(err));

	if (rc < 0) {
		snprintf(msg, len, "could not read artifact \"%s\": %s", key, err);
		free(data);
		return rc == -1 ? -1 : -2;
	}
	(void)sha256_hex(data, n, a->sha256);
	if (strcmp(a->sha256, sha256) != 0) {
		snprintf(msg, len, "artifact \"%s\" has SHA-256 %s, the window says %s", key,
		         a->sha256, sha256);
		free(data);
		return -3;
	}
	rc = artifact_parse(data, n, a, err, sizeof(err));
	free(data);
	if (rc < 0) {
		snprintf(msg, len, "artifact \"%s\" is malformed: %s", key, err);
		return -3;
	}
	return 0;
}

static void window_facts_of(const struct artifact *a, struct window_facts *f)
{
	f->first_open = a->bars.bars[0].o;
	f->close = a->bars.bars[a->bars.n - 1].c;
	f->volume = 0;
	for (size_t i = 0; i < a->bars.n; i++)
		f->volume += a->bars.bars[i].v;
	f->move_pct = (f->close - f->first_open) / f->first_open * 100.0;
}

static void rule_set(struct rule_eval *r, const char *rule, double threshold)
{
	memset(r, 0, sizeof(*r));
	r->rule = rule;
	r->threshold = threshold;
}

static void rule_value(struct rule_eval *r, double value)
{
	r->evaluated = true;
	r->value = value;
	r->fired = value >= r->threshold;
}

/* The previous window of the symbol: its row, or NULL rows when none. */
static int previous_window(const struct price_trigger *self, const struct price_job *pj,
                           json_t **rows, char *msg, size_t len)
{
	static const char sql[] =
		"SELECT artifact_key, artifact_sha256,"
		"       to_char(window_start AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		"         AS window_start"
		"  FROM outbox.price_windows"
		" WHERE symbol = $1 AND window_start < $2::timestamptz"
		" ORDER BY window_start DESC LIMIT 1";
	const char *params[2] = {pj->symbol, pj->window_start};
	char err[ERRLEN] = "";

	if (self->host->query(self->ctx, sql, 2, params, rows, err, sizeof(err)) < 0) {
		snprintf(msg, len, "could not find the previous window: %s", err);
		return -1;
	}
	return 0;
}

/* prev_close_move; returns -1 (RETRY) only for transient failures. */
static int rule_prev_close(const struct price_trigger *self, const struct price_job *pj,
                           struct window_facts *f, struct rule_eval *r, char *msg, size_t len)
{
	json_t *rows = NULL;
	struct artifact prev = {0};
	char why[ERRLEN];
	int rc;

	rule_set(r, "prev_close_move", self->prev_close_move_pct);
	f->prev = json_null();
	if (previous_window(self, pj, &rows, msg, len) < 0)
		return -1;
	const json_t *row = json_array_get(rows, 0);
	const char *key = json_string_value(json_object_get(row, "artifact_key"));
	const char *sha = json_string_value(json_object_get(row, "artifact_sha256"));
	if (key == NULL || sha == NULL) {
		snprintf(r->note, sizeof(r->note), "no previous window");
		json_decref(rows);
		return 0;
	}
	rc = load_artifact(self, key, sha, &prev, why, sizeof(why));
	if (rc == -1) {
		snprintf(msg, len, "previous window: %s", why);
	} else if (rc < 0) {
		snprintf(r->note, sizeof(r->note), "previous window %s: artifact %s",
		         json_string_value(json_object_get(row, "window_start")),
		         rc == -2 ? "is missing" : "does not match its checksum");
	} else {
		double pc = prev.bars.bars[prev.bars.n - 1].c;
		rule_value(r, fabs(f->close - pc) / pc * 100.0);
		json_decref(f->prev);
		f->prev = json_pack("{s:s, s:f}", "window_start", prev.window_start_text, "close", pc);
	}
	artifact_free(&prev);
	json_decref(rows);
	return rc == -1 ? -1 : 0;
}

/* volume_spike against the plugin's own earlier evaluations. */
static int rule_volume(const struct price_trigger *self, const struct price_job *pj,
                       struct window_facts *f, struct rule_eval *r, char *msg, size_t len)
{
	static const char sql[] =
		"SELECT window_volume FROM ("
		"  SELECT DISTINCT ON (window_start) window_start, window_volume"
		"    FROM price_trigger.evaluations"
		"   WHERE symbol = $1 AND window_start < $2::timestamptz"
		"   ORDER BY window_start DESC, generation DESC) AS w"
		" ORDER BY window_start DESC LIMIT $3::integer";
	char lookback[24], err[ERRLEN] = "";
	const char *params[3] = {pj->symbol, pj->window_start, lookback};
	json_t *rows = NULL, *row;
	double sum = 0;
	size_t i;

	rule_set(r, "volume_spike", self->volume_ratio);
	snprintf(lookback, sizeof(lookback), "%lld", self->volume_lookback);
	if (self->host->query(self->ctx, sql, 3, params, &rows, err, sizeof(err)) < 0) {
		snprintf(msg, len, "could not read the trailing volume: %s", err);
		return -1;
	}
	json_array_foreach(rows, i, row) {
		const char *v = json_string_value(json_object_get(row, "window_volume"));
		sum += v != NULL ? strtod(v, NULL) : 0;
	}
	size_t n = json_array_size(rows);
	json_decref(rows);
	double avg = n > 0 ? sum / (double)n : 0;
	f->trailing = json_pack("{s:i, s:f}", "windows", (int)n, "average_volume", avg);
	if (n == 0)
		snprintf(r->note, sizeof(r->note), "no earlier evaluated windows");
	else if (avg <= 0)
		snprintf(r->note, sizeof(r->note), "trailing average volume is zero");
	else
		rule_value(r, (double)f->volume / avg);
	return 0;
}

static json_t *rule_json(const struct rule_eval *r)
{
	json_t *o = json_pack("{s:s, s:b, s:o, s:f, s:b}", "rule", r->rule,
	                      "evaluated", r->evaluated,
	                      "value", r->evaluated ? json_real(r->value) : json_null(),
	                      "threshold", r->threshold, "fired", r->fired);

	if (o != NULL && !r->evaluated)
		json_object_set_new(o, "note", json_string(r->note));
	return o;
}

/* The output commit() stores; a new reference, NULL when out of memory. */
static json_t *build_output(const struct price_job *pj, const struct window_facts *f,
                            const struct rule_eval *rules)
{
	json_t *list = json_array(), *fired = json_array();

	for (int i = 0; i < N_RULES && list != NULL && fired != NULL; i++) {
		json_array_append_new(list, rule_json(&rules[i]));
		if (rules[i].fired)
			json_array_append_new(fired, json_string(rules[i].rule));
	}
	return json_pack("{s:s, s:s, s:I, s:s, s:f, s:f, s:I, s:f, s:O, s:O, s:o, s:o}",
	                 "symbol", pj->symbol, "window_start", pj->window_start,
	                 "generation", (json_int_t)pj->generation, "artifact_key", pj->artifact_key,
	                 "first_open", f->first_open, "close", f->close,
	                 "window_volume", (json_int_t)f->volume, "move_pct", f->move_pct,
	                 "previous", f->prev ? f->prev : json_null(),
	                 "trailing", f->trailing ? f->trailing : json_null(),
	                 "rules", list, "fired", fired);
}

/* Same window as the job says? */
static int check_identity(const struct price_job *pj, const struct artifact *a,
                          char *msg, size_t len)
{
	int64_t t;

	if (strcmp(a->symbol, pj->symbol) != 0 || artifact_parse_time(pj->window_start, &t) < 0 ||
	    t != a->window_start) {
		snprintf(msg, len, "artifact is for %s %s, the job for %s %s", a->symbol,
		         a->window_start_text, pj->symbol, pj->window_start);
		return -1;
	}
	return 0;
}

static enum outbox_verdict pt_execute(void *instance, const struct outbox_job *job,
                                      struct outbox_result *result)
{
	const struct price_trigger *self = instance;
	struct price_job pj;
	struct artifact a = {0};
	struct window_facts f = {0};
	struct rule_eval rules[N_RULES];
	enum outbox_verdict v = OUTBOX_FAIL;
	int rc;

	if (parse_payload(job->payload, &pj, result->msg, result->msg_size) < 0)
		return OUTBOX_FAIL;
	rc = load_artifact(self, pj.artifact_key, pj.artifact_sha256, &a, result->msg,
	                   result->msg_size);
	if (rc < 0)
		return rc == -1 ? OUTBOX_RETRY : OUTBOX_FAIL;
	if (check_identity(&pj, &a, result->msg, result->msg_size) < 0)
		goto out;
	window_facts_of(&a, &f);
	rule_set(&rules[0], "window_move", self->window_move_pct);
	rule_value(&rules[0], fabs(f.move_pct));
	v = OUTBOX_RETRY;
	if (rule_prev_close(self, &pj, &f, &rules[1], result->msg, result->msg_size) < 0 ||
	    rule_volume(self, &pj, &f, &rules[2], result->msg, result->msg_size) < 0)
		goto out;
	result->output = build_output(&pj, &f, rules);
	if (result->output == NULL) {
		snprintf(result->msg, result->msg_size, "out of memory");
		goto out;
	}
	snprintf(result->msg, result->msg_size, "%s %s: move %.2f%%, %zu rule(s) fired", pj.symbol,
	         pj.window_start, f.move_pct,
	         json_array_size(json_object_get(result->output, "fired")));
	v = OUTBOX_OK;
out:
	json_decref(f.prev);
	json_decref(f.trailing);
	artifact_free(&a);
	return v;
}

/* One row of price_trigger.evaluations. */
static int store_rule(const struct price_trigger *self, const struct outbox_job *job,
                      const json_t *output, const json_t *rule, struct outbox_tx *tx,
                      char *err, size_t errlen)
{
	static const char sql[] =
		"INSERT INTO price_trigger.evaluations"
		"  (job_id, symbol, window_start, generation, rule, evaluated, value, threshold,"
		"   fired, window_volume, close, note)"
		" VALUES ($1, $2, $3::timestamptz, $4::integer, $5, $6::boolean,"
		"         $7::double precision, $8::double precision, $9::boolean, $10::bigint,"
		"         $11::double precision, $12)"
		" ON CONFLICT (job_id, rule) DO NOTHING";
	char gen[24], value[32], threshold[32], volume[24], close[32];
	const json_t *val = json_object_get(rule, "value");

	snprintf(gen, sizeof(gen), "%lld", (long long)json_integer_value(json_object_get(output, "generation")));
	snprintf(value, sizeof(value), "%.17g", json_number_value(val));
	snprintf(threshold, sizeof(threshold), "%.17g",
	         json_number_value(json_object_get(rule, "threshold")));
	snprintf(volume, sizeof(volume), "%lld",
	         (long long)json_integer_value(json_object_get(output, "window_volume")));
	snprintf(close, sizeof(close), "%.17g", json_number_value(json_object_get(output, "close")));
	const char *params[12] = {
		job->job_id, json_string_value(json_object_get(output, "symbol")),
		json_string_value(json_object_get(output, "window_start")), gen,
		json_string_value(json_object_get(rule, "rule")),
		json_is_true(json_object_get(rule, "evaluated")) ? "true" : "false",
		json_is_number(val) ? value : NULL, threshold,
		json_is_true(json_object_get(rule, "fired")) ? "true" : "false", volume, close,
		json_string_value(json_object_get(rule, "note")),
	};
	return self->host->tx_exec(tx, sql, 12, params, NULL, err, errlen);
}

/* The explanation job of a window where rules fired. */
static int enqueue_explanation(const struct price_trigger *self, const json_t *output,
                               struct outbox_tx *tx, char *err, size_t errlen)
{
	json_t *fired = json_array();
	json_t *identity, *payload;
	const json_t *rule;
	size_t i;
	int rc = -1;

	json_array_foreach(json_object_get(output, "rules"), i, rule)
		if (json_is_true(json_object_get(rule, "fired")))
			json_array_append_new(fired, json_pack("{s:O, s:O, s:O}",
			                      "rule", json_object_get(rule, "rule"),
			                      "value", json_object_get(rule, "value"),
			                      "threshold", json_object_get(rule, "threshold")));
	identity = json_pack("{s:s, s:O, s:O, s:O}", "type", "explanation",
	                     "symbol", json_object_get(output, "symbol"),
	                     "window_start", json_object_get(output, "window_start"),
	                     "generation", json_object_get(output, "generation"));
	payload = json_pack("{s:O, s:O, s:O, s:o, s:O, s:O}",
	                    "symbol", json_object_get(output, "symbol"),
	                    "window_start", json_object_get(output, "window_start"),
	                    "generation", json_object_get(output, "generation"), "rules", fired,
	                    "move_pct", json_object_get(output, "move_pct"),
	                    "close", json_object_get(output, "close"));
	if (identity == NULL || payload == NULL)
		snprintf(err, errlen, "out of memory");
	else
		rc = self->host->tx_enqueue(tx, "explanation", self->explanation_destination,
		                            identity, payload, NULL, err, errlen);
	json_decref(identity);
	json_decref(payload);
	return rc;
}

static enum outbox_verdict pt_commit(void *instance, const struct outbox_job *job,
                                     const json_t *output, struct outbox_tx *tx,
                                     char *err, size_t errlen)
{
	const struct price_trigger *self = instance;
	const json_t *rules = json_object_get(output, "rules");
	const json_t *rule;
	size_t i;

	if (!json_is_array(rules) || json_array_size(rules) != N_RULES) {
		snprintf(err, errlen, "execute() left no rule evaluations to store");
		return OUTBOX_FAIL;
	}
	json_array_foreach(rules, i, rule)
		if (store_rule(self, job, output, rule, tx, err, errlen) < 0)
			return OUTBOX_RETRY;
	if (json_array_size(json_object_get(output, "fired")) > 0 &&
	    enqueue_explanation(self, output, tx, err, errlen) < 0)
		return OUTBOX_RETRY;
	return OUTBOX_OK;
}

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
	.name = "price_trigger",
	.version = "1.0.0",
	.description = "price-move triggers from window artifacts",
	/* execute() only reads the instance: it may run concurrently. */
	.flags = OUTBOX_PLUGIN_CONCURRENT,
	.options = price_trigger_options,
	.init = pt_init,
	.destroy = pt_destroy,
	.execute = pt_execute,
	.commit = pt_commit,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
