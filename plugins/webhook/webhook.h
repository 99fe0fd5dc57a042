/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * webhook.h: the pieces of the "webhook" handler plugin (docs/webhook.md).
 *
 *   config.c   plugin.* options, the secret, the plaintext warning
 *   sign.c     Standard Webhooks secrets and signatures (OpenSSL)
 *   request.c  the request body and headers, the per-worker curl handles
 *   verdict.c  what a response or a transport error means for the job
 *   webhook.c  the descriptor, execute() and commit()
 */
#ifndef OUTBOX_PLUGINS_WEBHOOK_H
#define OUTBOX_PLUGINS_WEBHOOK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <outbox/plugin.h>

/* Bytes of a refusing receiver's body kept for the job's last_error. */
#define WH_EXCERPT_BYTES 512

/* One destination's validated settings; all strings owned. */
struct wh_config {
	char *url;
	char *shown_url;                   /* without userinfo and query, for logs */
	unsigned char *key;                /* the decoded secret; wiped on free */
	size_t key_len;
	long timeout_ms;
	char *ca_file;                     /* NULL: the system's trust store */
	size_t max_response_bytes;
	struct curl_slist *static_headers; /* Content-Type, Expect:, plugin.header.* */
	char *user_agent;
};

/*
 * Fills cfg from the instance's options; returns 0, or -1 with the reason
 * in err (cfg is then cleared).  Logs the plaintext warning and never the
 * secret.
 */
int wh_config_load(const struct outbox_host *host, struct outbox_ctx *ctx,
                   struct wh_config *cfg, char *err, size_t errlen);
void wh_config_clear(struct wh_config *cfg);

/* The option table of the descriptor. */
extern const struct outbox_option wh_options[];

/*
 * "whsec_<base64>" to the raw key (caller frees with wh_key_free()).
 * Returns 0, or -1 with a reason in err that never contains the secret.
 */
int wh_secret_decode(const char *secret, unsigned char **key, size_t *key_len,
                     char *err, size_t errlen);
void wh_key_free(unsigned char *key, size_t key_len);

/* Room for "v1," + base64 of a SHA-256 MAC + NUL. */
#define WH_SIGNATURE_LEN 64

/*
 * "v1,<base64 HMAC-SHA256(key, content)>" into out; content is
 * "{webhook-id}.{webhook-timestamp}.{body}".  Returns 0 or -1.
 */
int wh_sign(const unsigned char *key, size_t key_len, const char *content, size_t len,
            char out[WH_SIGNATURE_LEN]);

/* Idle curl handles, each keeping its connection alive; one per worker in use. */
struct wh_pool {
	pthread_mutex_t lock;
	CURL **idle; /* owned handles */
	size_t n;
	size_t cap;
};

int wh_pool_init(struct wh_pool *pool);
void wh_pool_destroy(struct wh_pool *pool);
/* A handle set up for cfg (reused or new), or NULL when out of memory. */
CURL *wh_pool_take(struct wh_pool *pool, const struct wh_config *cfg);
/* Back to the pool (closed instead when the pool cannot grow). */
void wh_pool_give(struct wh_pool *pool, CURL *h);

/* What came back, as verdict.c judges it. */
struct wh_response {
	CURLcode rc;
	long status;
	char excerpt[WH_EXCERPT_BYTES];
	size_t excerpt_len;
	size_t received;      /* body bytes read (at most max_response_bytes) */
	int over_cap;         /* the body went on past max_response_bytes */
	int64_t retry_after_s; /* Retry-After in seconds, -1 when absent */
	char location[256];   /* a redirect's target, cut short and escaped */
	int64_t duration_ms;
};

/*
 * POST the job to cfg->url on h; fills resp.  now_ms is the host's clock
 * (the webhook-timestamp and the body's "timestamp").  traceparent may be
 * NULL.  Returns 0, or -1 when the request could not be built (out of
 * memory; msg says so).
 */
int wh_deliver(const struct wh_config *cfg, CURL *h, const struct outbox_job *job,
               const char *traceparent, int64_t now_ms, struct wh_response *resp,
               char *msg, size_t msglen);

/* The job's verdict for resp; writes last_error text and retry_after_ms. */
enum outbox_verdict wh_verdict(const struct wh_config *cfg, const struct wh_response *resp,
                               struct outbox_result *result);

/* src[0..n) made safe for a log line or last_error: \xNN for what is not printable ASCII. */
void wh_escape(const char *src, size_t n, char *out, size_t outlen);

#endif
