/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * news_llm.c: the "news_llm" handler plugin.
 *
 * A news job's payload is one news item (source, url, published_at, title,
 * body, optional symbols).  execute() asks an OpenAI-compatible endpoint
 * for a strict JSON extraction
 *
 *   {"symbols": [...], "event_type": "...", "sentiment": -1..1,
 *    "summary": "one line", "confidence": 0..1}
 *
 * checks its shape and ranges, and hands it (plus the model name) to
 * commit(), which stores it in news_llm.extractions, once per job.
 *
 * docs/plugins.md describes options, tables and error classification.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <outbox/plugin.h>

#include "../common/llm_client.h"

#define NEWS_MAX_SYMBOLS 20
#define NEWS_MAX_SYMBOL_LEN 12
#define NEWS_MAX_BODY 8000 /* bytes of the body sent to the model */

struct news_llm {
	const struct outbox_host *host; /* borrowed, valid until destroy() */
	struct outbox_ctx *ctx;         /* borrowed, valid until destroy() */
	struct llm_client *client;      /* owned */
};

static const struct outbox_option news_options[] = {
	LLM_CLIENT_OPTIONS,
	{.name = NULL},
};

static const char news_system_prompt[] =
	"You extract trading-relevant facts from one financial news item. "
	"The user message is a JSON object; its \"item\" has source, url, published_at, "
	"title, body and candidate symbols. Answer with exactly one JSON object and "
	"nothing else, with these keys: "
	"\"symbols\": array of upper-case stock tickers the item is materially about "
	"(may be empty); "
	"\"event_type\": one of earnings, guidance, regulatory, product, legal, "
	"analyst, m_and_a, macro, management, other; "
	"\"sentiment\": number from -1 (very negative for the symbols) to 1 (very positive); "
	"\"summary\": one sentence on one line, at most 300 characters; "
	"\"confidence\": number from 0 to 1, how sure you are of the extraction.";

static int news_init(const struct outbox_host *host, struct outbox_ctx *ctx,
                     void **instance, char *err, size_t errlen)
{
	struct news_llm *self = calloc(1, sizeof(*self));

	/* Set first: destroy() gets it even when init() fails below. */
	*instance = self;
	if (self == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	self->host = host;
	self->ctx = ctx;
	return llm_client_from_host(host, ctx, &self->client, err, errlen);
}

static void news_destroy(void *instance)
{
	struct news_llm *self = instance;

	if (self == NULL)
		return;
	llm_client_free(self->client);
	free(self);
}

/* The payload must be a news item; msg says what is wrong. */
static int check_item(const json_t *item, char *msg, size_t msglen)
{
	static const char *const keys[] = {"source", "url", "published_at", "title", "body"};
	const json_t *symbols = json_object_get(item, "symbols");
	const char *text;
	size_t i;
	const json_t *s;

	if (!json_is_object(item)) {
		snprintf(msg, msglen, "news payload is not a JSON object");
		return -1;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		text = json_string_value(json_object_get(item, keys[i]));
		if (text == NULL || text[0] == '\0') {
			snprintf(msg, msglen, "news payload: \"%s\" must be a non-empty string", keys[i]);
			return -1;
		}
	}
	if (!llm_is_timestamp(json_string_value(json_object_get(item, "published_at")))) {
		snprintf(msg, msglen, "news payload: \"published_at\" is not an ISO 8601 timestamp "
		         "with a time zone");
		return -1;
	}
	if (symbols != NULL && !json_is_array(symbols)) {
		snprintf(msg, msglen, "news payload: \"symbols\" must be an array of strings");
		return -1;
	}
	json_array_foreach(symbols, i, s) {
		if (!json_is_string(s)) {
			snprintf(msg, msglen, "news payload: \"symbols\" must be an array of strings");
			return -1;
		}
	}
	return 0;
}

/* The user message: {"task":"news_extraction","item":{...}}; caller frees. */
static char *user_prompt(const json_t *item)
{
	const char *body = json_string_value(json_object_get(item, "body"));
	size_t n = strlen(body);
	json_t *symbols = json_object_get(item, "symbols");
	json_t *msg;
	char *text;

	/* "o" steals: a new reference either way. */
	symbols = symbols != NULL ? json_incref(symbols) : json_array();
	if (n > NEWS_MAX_BODY) {
		n = NEWS_MAX_BODY;
		while (n > 0 && ((unsigned char)body[n] & 0xC0) == 0x80)
			n--; /* never cut a UTF-8 sequence */
	}
	msg = json_pack("{s:s, s:{s:O, s:O, s:O, s:O, s:s%, s:o}}",
	                "task", "news_extraction",
	                "item",
	                "source", json_object_get(item, "source"),
	                "url", json_object_get(item, "url"),
	                "published_at", json_object_get(item, "published_at"),
	                "title", json_object_get(item, "title"),
	                "body", body, n,
	                "symbols", symbols);
	if (msg == NULL)
		return NULL;
	text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(msg);
	return text;
}

/* A new array of the answer's tickers: upper-cased, de-duplicated. */
static json_t *check_symbols(const json_t *answer, char *msg, size_t msglen)
{
	const json_t *list = json_object_get(answer, "symbols");
	json_t *out = json_array();
	const json_t *s;
	size_t i;
	char sym[NEWS_MAX_SYMBOL_LEN + 1];

	if (!json_is_array(list) || json_array_size(list) > NEWS_MAX_SYMBOLS) {
		snprintf(msg, msglen, "\"symbols\" must be an array of at most %d tickers",
		         NEWS_MAX_SYMBOLS);
		goto fail;
	}
	json_array_foreach(list, i, s) {
		const char *t = json_string_value(s);
		size_t n = t != NULL ? strlen(t) : 0;
		if (n == 0 || n > NEWS_MAX_SYMBOL_LEN || strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789.-") != n) {
			snprintf(msg, msglen, "\"symbols\"[%zu] is not a ticker (1 to %d letters, "
			         "digits, '.' or '-')", i, NEWS_MAX_SYMBOL_LEN);
			goto fail;
		}
		for (size_t k = 0; k <= n; k++)
			sym[k] = (char)toupper((unsigned char)t[k]);
		int seen = 0;
		for (size_t k = 0; k < json_array_size(out); k++)
			seen |= strcmp(json_string_value(json_array_get(out, k)), sym) == 0;
		if (!seen && json_array_append_new(out, json_string(sym)) < 0)
			goto oom;
	}
	return out;
oom:
	snprintf(msg, msglen, "out of memory");
fail:
	json_decref(out);
	return NULL;
}

/*
 * The validated extraction plus "model" as a new object, or NULL with the
 * reason in msg (prefixed so the job's last_error says whose fault it is).
 */
static json_t *check_extraction(const json_t *answer, const char *model,
                                char *msg, size_t msglen)
{
	char why[200] = "";
	const char *event_type = NULL;
	const char *summary = NULL;
	double sentiment = 0.0;
	double confidence = 0.0;
	json_t *symbols = check_symbols(answer, why, sizeof(why));
	json_t *out = NULL;

	if (symbols == NULL ||
	    llm_get_text(answer, "event_type", 64, 1, &event_type, why, sizeof(why)) < 0 ||
	    llm_get_number(answer, "sentiment", -1.0, 1.0, &sentiment, why, sizeof(why)) < 0 ||
	    llm_get_text(answer, "summary", 1000, 1, &summary, why, sizeof(why)) < 0 ||
	    llm_get_number(answer, "confidence", 0.0, 1.0, &confidence, why, sizeof(why)) < 0) {
		snprintf(msg, msglen, "LLM answer has the wrong shape: %s", why);
		json_decref(symbols);
		return NULL;
	}
	out = json_pack("{s:o, s:s, s:f, s:s, s:f, s:s}", "symbols", symbols,
	                "event_type", event_type, "sentiment", sentiment, "summary", summary,
	                "confidence", confidence, "model", model);
	if (out == NULL)
		snprintf(msg, msglen, "out of memory");
	return out;
}

static enum outbox_verdict news_execute(void *instance, const struct outbox_job *job,
                                        struct outbox_result *result)
{
	struct news_llm *self = instance;
	struct llm_answer answer = {0};
	char *prompt = NULL;
	enum outbox_verdict v = OUTBOX_FAIL;

	if (check_item(job->payload, result->msg, result->msg_size) < 0)
		goto out;
	prompt = user_prompt(job->payload);
	if (prompt == NULL) {
		snprintf(result->msg, result->msg_size, "out of memory");
		v = OUTBOX_RETRY;
		goto out;
	}
	v = llm_client_chat(self->client, news_system_prompt, prompt, &answer,
	                    &result->retry_after_ms, result->msg, result->msg_size);
	if (v != OUTBOX_OK)
		goto out;
	result->output = check_extraction(answer.object, answer.model,
	                                  result->msg, result->msg_size);
	if (result->output == NULL) {
		v = OUTBOX_FAIL;
		goto out;
	}
	snprintf(result->msg, result->msg_size, "extracted %zu symbols with %s",
	         json_array_size(json_object_get(result->output, "symbols")), answer.model);
out:
	if (v != OUTBOX_OK)
		self->host->log(self->ctx, v == OUTBOX_RETRY ? OUTBOX_LOG_WARNING : OUTBOX_LOG_ERROR,
		                "news extraction failed: %s", result->msg);
	llm_answer_clear(&answer);
	free(prompt);
	return v;
}

static const char news_insert_sql[] =
	"INSERT INTO news_llm.extractions (job_id, source, url, title, published_at, symbols, "
	"event_type, sentiment, summary, confidence, model) "
	"VALUES ($1, $2, $3, $4, $5::timestamptz, "
	"ARRAY(SELECT jsonb_array_elements_text($6::jsonb)), $7, $8::double precision, $9, "
	"$10::double precision, $11) ON CONFLICT (job_id) DO NOTHING";

static enum outbox_verdict news_commit(void *instance, const struct outbox_job *job,
                                       const json_t *output, struct outbox_tx *tx,
                                       char *err, size_t errlen)
{
	struct news_llm *self = instance;
	const json_t *item = job->payload;
	char *symbols = json_dumps(json_object_get(output, "symbols"), JSON_COMPACT);
	char sentiment[32];
	char confidence[32];
	int rc;

	if (output == NULL || symbols == NULL) {
		snprintf(err, errlen, "%s", output == NULL ? "no extraction to store" : "out of memory");
		free(symbols);
		return output == NULL ? OUTBOX_FAIL : OUTBOX_RETRY;
	}
	snprintf(sentiment, sizeof(sentiment), "%.17g",
	         json_number_value(json_object_get(output, "sentiment")));
	snprintf(confidence, sizeof(confidence), "%.17g",
	         json_number_value(json_object_get(output, "confidence")));
	const char *params[11] = {
		job->job_id,
		json_string_value(json_object_get(item, "source")),
		json_string_value(json_object_get(item, "url")),
		json_string_value(json_object_get(item, "title")),
		json_string_value(json_object_get(item, "published_at")),
		symbols,
		json_string_value(json_object_get(output, "event_type")),
		sentiment,
		json_string_value(json_object_get(output, "summary")),
		confidence,
		json_string_value(json_object_get(output, "model")),
	};
	rc = self->host->tx_exec(tx, news_insert_sql, 11, params, NULL, err, errlen);
	free(symbols);
	/* The host rolls back; a failed statement is worth another try. */
	return rc < 0 ? OUTBOX_RETRY : OUTBOX_OK;
}

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
	.name = "news_llm",
	.version = "1.0.0",
	.description = "LLM extraction of symbols, event type and sentiment from news items",
	.flags = OUTBOX_PLUGIN_CONCURRENT, /* the LLM client's pool serves every worker */
	.options = news_options,
	.init = news_init,
	.destroy = news_destroy,
	.execute = news_execute,
	.commit = news_commit,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
