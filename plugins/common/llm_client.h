/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * llm_client.h: a small OpenAI-compatible chat-completions client shared by
 * the news_llm and explanation plugins.
 *
 * It is compiled into each plugin's .so.  Its functions have hidden
 * visibility and the plugins are linked with an export list of
 * outbox_plugin_describe only, so nothing here leaves the plugin (R1, R18).
 *
 * One client per plugin instance, called from every worker thread at once
 * (the plugins set OUTBOX_PLUGIN_CONCURRENT): each call takes an easy
 * handle from the client's pool (making one when all are busy) and gives it
 * back, and the handles share one connection cache, TLS sessions and DNS
 * through a curl share object, so connections stay alive across calls.
 * llm_client_new() and llm_client_free() are not concurrent with calls.
 * The client never calls curl_global_init(): the host has.
 *
 * The API key is copied into the client, sent only as an "Authorization:
 * Bearer" header and never written to any message or log.
 */
#ifndef OUTBOX_PLUGINS_COMMON_LLM_CLIENT_H
#define OUTBOX_PLUGINS_COMMON_LLM_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <outbox/plugin.h>

#if defined(__GNUC__)
#define LLM_CLIENT_API __attribute__((visibility("hidden")))
#define LLM_CLIENT_MUSTCHECK __attribute__((warn_unused_result))
#else
#define LLM_CLIENT_API
#define LLM_CLIENT_MUSTCHECK
#endif

/* Largest response body accepted; a bigger one is a permanent failure. */
#define LLM_CLIENT_MAX_RESPONSE (1024 * 1024)

/* What a client is made from.  Every pointer is borrowed for the call. */
struct llm_client_config {
	const char *endpoint; /* API base URL, e.g. https://api.openai.com/v1 */
	const char *model;    /* sent as "model" */
	const char *api_key;  /* the secret itself (copied, never logged) */
	long timeout_ms;      /* whole-request timeout */
	long max_tokens;      /* sent as "max_tokens" */
};

struct llm_client;

/*
 * The "plugin.*" keys every LLM plugin accepts, for its option table:
 *   static const struct outbox_option opts[] = {LLM_CLIENT_OPTIONS, ..., {.name = NULL}};
 * llm_client_from_host() reads them.
 */
#define LLM_CLIENT_OPTIONS                                                          \
	{.name = "endpoint", .type = OUTBOX_OPT_URL,                                    \
	 .help = "base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1"}, \
	{.name = "model", .type = OUTBOX_OPT_STRING,                                    \
	 .help = "model name sent with each request"},                                  \
	{.name = "api_key_env", .type = OUTBOX_OPT_STRING,                              \
	 .default_value = "OPENAI_API_KEY", .flags = OUTBOX_OPT_SECRET_ENV,             \
	 .help = "environment variable holding the API key"},                           \
	{.name = "timeout_ms", .type = OUTBOX_OPT_INT, .default_value = "30000",        \
	 .min = 100, .max = 600000, .help = "whole-request timeout in milliseconds"},   \
	{.name = "max_tokens", .type = OUTBOX_OPT_INT, .default_value = "400",          \
	 .min = 16, .max = 8192, .help = "largest answer the model may produce"}

/* The model's answer to one chat request. */
struct llm_answer {
	json_t *object; /* new reference: choices[0].message.content parsed */
	char *model;    /* the "model" the server reported (else the configured
	                 * one); caller frees with llm_answer_clear() */
};

/*
 * Create a client.  Returns 0 and *out (caller frees with llm_client_free()),
 * or -1 with a reason in err (never containing the key).
 */
LLM_CLIENT_API int llm_client_new(const struct llm_client_config *cfg,
                                  struct llm_client **out,
                                  char *err, size_t errlen) LLM_CLIENT_MUSTCHECK;

/*
 * Create a client from an instance's LLM_CLIENT_OPTIONS (host and ctx
 * borrowed, as given to init()).  The key is read from the environment
 * variable plugin.api_key_env names; an unset or empty variable is refused
 * (the host checks this too, before init()).  Returns 0 and *out (caller
 * frees with llm_client_free()), or -1 with a reason in err.
 */
LLM_CLIENT_API int llm_client_from_host(const struct outbox_host *host,
                                        struct outbox_ctx *ctx,
                                        struct llm_client **out,
                                        char *err, size_t errlen) LLM_CLIENT_MUSTCHECK;

/* Frees the client and wipes its copy of the key.  NULL is a no-op. */
LLM_CLIENT_API void llm_client_free(struct llm_client *client);

/*
 * POST {endpoint}/chat/completions with a system and a user message
 * (both borrowed), temperature 0 and response_format json_object, and parse
 * choices[0].message.content as a JSON object.
 *
 * Returns OUTBOX_OK and fills *answer (caller clears with
 * llm_answer_clear()), or a verdict with a reason in msg:
 *   OUTBOX_RETRY  connection failure, timeout, HTTP 408, 429 or 5xx; with
 *                 a 429 or 503 that carries Retry-After, *retry_after_ms
 *                 (if not NULL) is its delay in ms, else 0
 *   OUTBOX_FAIL   any other HTTP status, a response over
 *                 LLM_CLIENT_MAX_RESPONSE, a body that is not a chat
 *                 completion, an answer cut at max_tokens, or content that
 *                 is not a JSON object
 * The plugins check the object's shape themselves.
 */
LLM_CLIENT_API enum outbox_verdict llm_client_chat(struct llm_client *client,
                                                   const char *system_prompt,
                                                   const char *user_prompt,
                                                   struct llm_answer *answer,
                                                   int64_t *retry_after_ms,
                                                   char *msg, size_t msglen);

/* Releases what an answer holds and zeroes it.  Safe on a zeroed answer. */
LLM_CLIENT_API void llm_answer_clear(struct llm_answer *answer);

/*
 * Helpers for checking an answer's shape.  Each returns 0, or -1 with a
 * reason naming the key in msg.
 */
/* A string member, non-empty, at most max_len bytes, without CR/LF if
 * single_line.  *out is borrowed from obj. */
LLM_CLIENT_API int llm_get_text(const json_t *obj, const char *key, size_t max_len,
                                int single_line, const char **out,
                                char *msg, size_t msglen) LLM_CLIENT_MUSTCHECK;
/* A number member (integer or real) within [min, max]. */
LLM_CLIENT_API int llm_get_number(const json_t *obj, const char *key, double min,
                                  double max, double *out,
                                  char *msg, size_t msglen) LLM_CLIENT_MUSTCHECK;

/*
 * 1 if text looks like an ISO 8601 timestamp PostgreSQL accepts as
 * timestamptz with an explicit zone: YYYY-MM-DDTHH:MM[:SS[.fff]](Z|+HH:MM|
 * -HH:MM), also with a space instead of the T; else 0.
 */
LLM_CLIENT_API int llm_is_timestamp(const char *text);

#endif
