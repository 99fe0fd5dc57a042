/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * explanation.c: the "explanation" handler plugin.
 *
 * Its jobs are enqueued by price_trigger when a window's move fires a rule:
 *
 *   {"symbol": S, "window_start": ISO, "generation": G,
 *    "rules": [{"rule": NAME, "value": N, "threshold": N}, ...],
 *    "move_pct": N, "close": N}
 *
 * execute() reads the news extractions of S published from
 * plugin.news_lookback_minutes before window_start up to 5 minutes after
 * it (news_llm.extractions, through host->query), asks the LLM for
 *
 *   {"explanation": "...", "cited_job_ids": [ids of the extractions used]}
 *
 * and refuses an answer citing anything it was not given.  With no news it
 * still asks: the model is told to say that no recent news explains the
 * move and to cite nothing.  commit() stores the explanation in
 * explanation.explanations, once per job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <outbox/plugin.h>

#include "../common/llm_client.h"

#define EXPL_MAX_TEXT 2000 /* bytes of explanation accepted */

struct explanation {
	const struct outbox_host *host; /* borrowed, valid until destroy() */
	struct outbox_ctx *ctx;         /* borrowed, valid until destroy() */
	struct llm_client *client;      /* owned */
	long long lookback_minutes;
};

static const struct outbox_option expl_options[] = {
	LLM_CLIENT_OPTIONS,
	{.name = "news_lookback_minutes", .type = OUTBOX_OPT_INT, .default_value = "120",
	 .min = 1, .max = 10080, .help = "how far before the window news is considered"},
	{.name = NULL},
};

static const char expl_system_prompt[] =
	"You explain a sharp intraday price move of one stock. The user message is a "
	"JSON object: \"move\" describes the move (symbol, window_start, move_pct, close "
	"and the trigger rules that fired) and \"news\" lists recent news extractions for "
	"the symbol, each with a job_id. Use only those news items. Answer with exactly "
	"one JSON object and nothing else, with these keys: "
	"\"explanation\": one or two short sentences explaining the move, or saying that "
	"none of the given news explains it; "
	"\"cited_job_ids\": array of the job_id values of the news items your explanation "
	"relies on (empty if none; never an id that is not in the list).";

/* Recent extractions of a symbol, newest first, at most 10. */
static const char expl_news_sql[] =
	"SELECT job_id, title, summary, sentiment, published_at FROM news_llm.extractions "
	"WHERE $1 = ANY(symbols) AND published_at BETWEEN "
	"$2::timestamptz - make_interval(mins => $3) AND $2::timestamptz + interval '5 minutes' "
	"ORDER BY published_at DESC LIMIT 10";

static const char expl_insert_sql[] =
	"INSERT INTO explanation.explanations (job_id, symbol, window_start, generation, "
	"move_pct, rules, explanation, cited_job_ids, model) "
	"VALUES ($1, $2, $3::timestamptz, $4::integer, $5::double precision, $6::jsonb, $7, "
	"ARRAY(SELECT jsonb_array_elements_text($8::jsonb)), $9) ON CONFLICT (job_id) DO NOTHING";

static int expl_init(const struct outbox_host *host, struct outbox_ctx *ctx,
                     void **instance, char *err, size_t errlen)
{
	struct explanation *self = calloc(1, sizeof(*self));

	/* Set first: destroy() gets it even when init() fails below. */
	*instance = self;
	if (self == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	self->host = host;
	self->ctx = ctx;
	self->lookback_minutes = host->option_int(ctx, "news_lookback_minutes");
	if (self->lookback_minutes <= 0)
		self->lookback_minutes = 120;
	return llm_client_from_host(host, ctx, &self->client, err, errlen);
}

static void expl_destroy(void *instance)
{
	struct explanation *self = instance;

	if (self == NULL)
		return;
	llm_client_free(self->client);
	free(self);
}

static int check_rules(const json_t *rules, char *msg, size_t msglen)
{
	const json_t *r;
	size_t i;

	if (!json_is_array(rules) || json_array_size(rules) == 0) {
		snprintf(msg, msglen, "explanation payload: \"rules\" must be a non-empty array");
		return -1;
	}
	json_array_foreach(rules, i, r) {
		const char *name = json_string_value(json_object_get(r, "rule"));
		if (name == NULL || name[0] == '\0' ||
		    !json_is_number(json_object_get(r, "value")) ||
		    !json_is_number(json_object_get(r, "threshold"))) {
			snprintf(msg, msglen, "explanation payload: \"rules\"[%zu] needs a \"rule\" "
			         "name and numeric \"value\" and \"threshold\"", i);
			return -1;
		}
	}
	return 0;
}

/* The payload must be a triggered move; msg says what is wrong. */
static int check_move(const json_t *p, char *msg, size_t msglen)
{
	const char *symbol = json_string_value(json_object_get(p, "symbol"));
	const json_t *gen = json_object_get(p, "generation");

	if (!json_is_object(p)) {
		snprintf(msg, msglen, "explanation payload is not a JSON object");
		return -1;
	}
	if (symbol == NULL || symbol[0] == '\0' || strlen(symbol) > 16) {
		snprintf(msg, msglen, "explanation payload: \"symbol\" must be a ticker string");
		return -1;
	}
	if (!llm_is_timestamp(json_string_value(json_object_get(p, "window_start")))) {
		snprintf(msg, msglen, "explanation payload: \"window_start\" is not an ISO 8601 "
		         "timestamp with a time zone");
		return -1;
	}
	if (!json_is_integer(gen) || json_integer_value(gen) < 1 ||
	    json_integer_value(gen) > 2147483647) {
		snprintf(msg, msglen, "explanation payload: \"generation\" must be a positive integer");
		return -1;
	}
	if (!json_is_number(json_object_get(p, "move_pct")) ||
	    !json_is_number(json_object_get(p, "close"))) {
		snprintf(msg, msglen, "explanation payload: \"move_pct\" and \"close\" must be numbers");
		return -1;
	}
	return check_rules(json_object_get(p, "rules"), msg, msglen);
}

/*
 * The recent extractions as the prompt's "news" array (new reference), or
 * NULL with the reason in msg.  Sentiment goes to the model as a number.
 */
static json_t *fetch_news(struct explanation *self, const json_t *p, char *msg, size_t msglen)
{
	char minutes[32];
	char err[256] = "";
	json_t *rows = NULL;
	json_t *news = NULL;
	const json_t *row;
	size_t i;

	snprintf(minutes, sizeof(minutes), "%lld", self->lookback_minutes);
	const char *params[3] = {
		json_string_value(json_object_get(p, "symbol")),
		json_string_value(json_object_get(p, "window_start")),
		minutes,
	};
	if (self->host->query(self->ctx, expl_news_sql, 3, params, &rows, err, sizeof(err)) < 0 ||
	    !json_is_array(rows)) {
		snprintf(msg, msglen, "could not read recent news for \"%s\": %s", params[0],
		         err[0] != '\0' ? err : "no rows returned");
		goto out;
	}
	news = json_array();
	json_array_foreach(rows, i, row) {
		const char *id = json_string_value(json_object_get(row, "job_id"));
		const char *sent = json_string_value(json_object_get(row, "sentiment"));
		if (id == NULL)
			continue;
		json_t *item = json_pack("{s:s, s:O, s:O, s:f, s:O}", "job_id", id,
		                         "title", json_object_get(row, "title"),
		                         "summary", json_object_get(row, "summary"),
		                         "sentiment", sent != NULL ? strtod(sent, NULL) : 0.0,
		                         "published_at", json_object_get(row, "published_at"));
		if (item == NULL || json_array_append_new(news, item) < 0) {
			snprintf(msg, msglen, "news row %zu of \"%s\" is incomplete", i, params[0]);
			json_decref(news);
			news = NULL;
			goto out;
		}
	}
out:
	json_decref(rows);
	return news;
}

/* The user message; caller frees.  news is borrowed. */
static char *user_prompt(const json_t *p, const json_t *news)
{
	json_t *msg = json_pack("{s:s, s:{s:O, s:O, s:O, s:O, s:O}, s:O}",
	                        "task", "move_explanation",
	                        "move",
	                        "symbol", json_object_get(p, "symbol"),
	                        "window_start", json_object_get(p, "window_start"),
	                        "move_pct", json_object_get(p, "move_pct"),
	                        "close", json_object_get(p, "close"),
	                        "rules", json_object_get(p, "rules"),
	                        "news", news);
	char *text;

	if (msg == NULL)
		return NULL;
	text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(msg);
	return text;
}

/* 1 if id is in list: an array of strings, or of objects with "job_id". */
static int has_id(const json_t *list, const char *id)
{
	const json_t *n;
	size_t i;

	json_array_foreach(list, i, n) {
		const char *s = json_is_object(n) ? json_string_value(json_object_get(n, "job_id"))
		                                  : json_string_value(n);
		if (s != NULL && strcmp(s, id) == 0)
			return 1;
	}
	return 0;
}

/* A new array of the cited ids, each one given, without duplicates. */
static json_t *check_citations(const json_t *answer, const json_t *news,
                               char *msg, size_t msglen)
{
	const json_t *list = json_object_get(answer, "cited_job_ids");
	json_t *out = json_array();
	const json_t *c;
	size_t i;

	if (!json_is_array(list)) {
		snprintf(msg, msglen, "\"cited_job_ids\" must be an array of job ids");
		goto fail;
	}
	json_array_foreach(list, i, c) {
		const char *id = json_string_value(c);
		if (id == NULL) {
			snprintf(msg, msglen, "\"cited_job_ids\"[%zu] is not a string", i);
			goto fail;
		}
		if (!has_id(news, id)) {
			snprintf(msg, msglen, "\"cited_job_ids\"[%zu] \"%.64s\" is not one of the %zu "
			         "news items given", i, id, json_array_size(news));
			goto fail;
		}
		if (!has_id(out, id) && json_array_append_new(out, json_string(id)) < 0) {
			snprintf(msg, msglen, "out of memory");
			goto fail;
		}
	}
	return out;
fail:
	json_decref(out);
	return NULL;
}

/* The validated answer plus model and news count as a new object, or NULL. */
static json_t *check_answer(const json_t *answer, const json_t *news, const char *model,
                            char *msg, size_t msglen)
{
	char why[200] = "";
	const char *text = NULL;
	json_t *cited = NULL;
	json_t *out;

	if (llm_get_text(answer, "explanation", EXPL_MAX_TEXT, 0, &text, why, sizeof(why)) == 0)
		cited = check_citations(answer, news, why, sizeof(why));
	if (cited == NULL) {
		snprintf(msg, msglen, "LLM answer has the wrong shape: %s", why);
		return NULL;
	}
	out = json_pack("{s:s, s:o, s:s, s:I}", "explanation", text, "cited_job_ids", cited,
	                "model", model, "news_considered", (json_int_t)json_array_size(news));
	if (out == NULL)
		snprintf(msg, msglen, "out of memory");
	return out;
}

static enum outbox_verdict expl_execute(void *instance, const struct outbox_job *job,
                                        struct outbox_result *result)
{
	struct explanation *self = instance;
	struct llm_answer answer = {0};
	json_t *news = NULL;
	char *prompt = NULL;
	enum outbox_verdict v = OUTBOX_FAIL;

	if (check_move(job->payload, result->msg, result->msg_size) < 0)
		goto out;
	v = OUTBOX_RETRY; /* reading the news or building the prompt can fail transiently */
	news = fetch_news(self, job->payload, result->msg, result->msg_size);
	if (news == NULL)
		goto out;
	prompt = user_prompt(job->payload, news);
	if (prompt == NULL) {
		snprintf(result->msg, result->msg_size, "out of memory");
		goto out;
	}
	v = llm_client_chat(self->client, expl_system_prompt, prompt, &answer,
	                    &result->retry_after_ms, result->msg, result->msg_size);
	if (v != OUTBOX_OK)
		goto out;
	result->output = check_answer(answer.object, news, answer.model,
	                              result->msg, result->msg_size);
	if (result->output == NULL) {
		v = OUTBOX_FAIL;
		goto out;
	}
	snprintf(result->msg, result->msg_size, "explained with %zu of %zu news items (%s)",
	         json_array_size(json_object_get(result->output, "cited_job_ids")),
	         json_array_size(news), answer.model);
out:
	if (v != OUTBOX_OK)
		self->host->log(self->ctx, v == OUTBOX_RETRY ? OUTBOX_LOG_WARNING : OUTBOX_LOG_ERROR,
		                "move explanation failed: %s", result->msg);
	llm_answer_clear(&answer);
	json_decref(news);
	free(prompt);
	return v;
}

static enum outbox_verdict expl_commit(void *instance, const struct outbox_job *job,
                                       const json_t *output, struct outbox_tx *tx,
                                       char *err, size_t errlen)
{
	struct explanation *self = instance;
	const json_t *p = job->payload;
	char *rules = json_dumps(json_object_get(p, "rules"), JSON_COMPACT | JSON_PRESERVE_ORDER);
	char *cited = json_dumps(json_object_get(output, "cited_job_ids"), JSON_COMPACT);
	char generation[32];
	char move_pct[32];
	enum outbox_verdict v = OUTBOX_RETRY;

	if (output == NULL) {
		snprintf(err, errlen, "no explanation to store");
		v = OUTBOX_FAIL;
		goto out;
	}
	if (rules == NULL || cited == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(generation, sizeof(generation), "%lld",
	         (long long)json_integer_value(json_object_get(p, "generation")));
	snprintf(move_pct, sizeof(move_pct), "%.17g",
	         json_number_value(json_object_get(p, "move_pct")));
	const char *params[9] = {
		job->job_id,
		json_string_value(json_object_get(p, "symbol")),
		json_string_value(json_object_get(p, "window_start")),
		generation, move_pct, rules,
		json_string_value(json_object_get(output, "explanation")),
		cited,
		json_string_value(json_object_get(output, "model")),
	};
	/* On failure the host rolls back; a failed statement is worth another try. */
	if (self->host->tx_exec(tx, expl_insert_sql, 9, params, NULL, err, errlen) == 0)
		v = OUTBOX_OK;
out:
	free(rules);
	free(cited);
	return v;
}

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
	.name = "explanation",
	.version = "1.0.0",
	.description = "LLM explanation of a triggered price move, grounded in recent news",
	.flags = OUTBOX_PLUGIN_CONCURRENT, /* the LLM client's pool serves every worker */
	.options = expl_options,
	.init = expl_init,
	.destroy = expl_destroy,
	.execute = expl_execute,
	.commit = expl_commit,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
