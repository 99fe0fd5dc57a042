/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * request.c: one delivery, POST of the job as a Standard Webhooks message.
 *
 * Curl handles live in a pool per destination: a worker takes one for the
 * request and gives it back, so each handle (and the connection it keeps
 * alive) serves one worker at a time, and there are never more handles
 * than workers that ran at once.  A handle is set up once for the
 * destination; a request only sets its body, headers and sink.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webhook.h"

int wh_pool_init(struct wh_pool *pool)
{
	memset(pool, 0, sizeof(*pool));
	return pthread_mutex_init(&pool->lock, NULL) == 0 ? 0 : -1;
}

void wh_pool_destroy(struct wh_pool *pool)
{
	for (size_t i = 0; i < pool->n; i++)
		curl_easy_cleanup(pool->idle[i]);
	free(pool->idle);
	pthread_mutex_destroy(&pool->lock);
	memset(pool, 0, sizeof(*pool));
}

/* What a handle keeps for every request of its destination. */
static CURL *new_handle(const struct wh_config *cfg)
{
	CURL *h = curl_easy_init();
	CURLcode rc = CURLE_OK;
	long connect_ms = cfg->timeout_ms < 10000 ? cfg->timeout_ms : 10000;

	if (h == NULL)
		return NULL;
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_URL, cfg->url);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, cfg->timeout_ms);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	/* A redirect is the receiver's misconfiguration: report it, never follow. */
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_USERAGENT, cfg->user_agent);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	if (rc == CURLE_OK && cfg->ca_file != NULL)
		rc = curl_easy_setopt(h, CURLOPT_CAINFO, cfg->ca_file);
	if (rc != CURLE_OK) {
		curl_easy_cleanup(h);
		return NULL;
	}
	return h;
}

CURL *wh_pool_take(struct wh_pool *pool, const struct wh_config *cfg)
{
	CURL *h = NULL;

	pthread_mutex_lock(&pool->lock);
	if (pool->n > 0)
		h = pool->idle[--pool->n];
	pthread_mutex_unlock(&pool->lock);
	return h != NULL ? h : new_handle(cfg);
}

void wh_pool_give(struct wh_pool *pool, CURL *h)
{
	pthread_mutex_lock(&pool->lock);
	if (pool->n == pool->cap) {
		size_t cap = pool->cap == 0 ? 8 : pool->cap * 2;
		CURL **grown = realloc(pool->idle, cap * sizeof(*grown));
		if (grown == NULL) {
			pthread_mutex_unlock(&pool->lock);
			curl_easy_cleanup(h);
			return;
		}
		pool->idle = grown;
		pool->cap = cap;
	}
	pool->idle[pool->n++] = h;
	pthread_mutex_unlock(&pool->lock);
}

/* Keeps the first WH_EXCERPT_BYTES of the body; stops at max_response_bytes. */
struct sink {
	struct wh_response *resp;
	size_t cap;
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct sink *s = userdata;
	struct wh_response *r = s->resp;
	size_t n = size * nmemb;
	size_t take = n;

	if (r->excerpt_len < WH_EXCERPT_BYTES) {
		size_t room = WH_EXCERPT_BYTES - r->excerpt_len;
		size_t k = n < room ? n : room;
		memcpy(r->excerpt + r->excerpt_len, ptr, k);
		r->excerpt_len += k;
	}
	if (take > s->cap - r->received) {
		/* Read up to the cap, then judge by the status: curl stops here. */
		r->received = s->cap;
		r->over_cap = 1;
		return 0;
	}
	r->received += take;
	return n;
}

/* "2026-12-01T23:15:00.123Z" */
static void rfc3339(int64_t ms, char out[32])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03dZ", (int)(ms % 1000));
}

/* The body, in canonical key order (the receiver parses, never compares bytes). */
static char *request_body(const struct outbox_job *job, const char *traceparent, int64_t now_ms)
{
	char when[32];
	json_t *msg;
	char *text;

	rfc3339(now_ms, when);
	msg = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i, s:i, s:O, s:s?}}",
	                "type", job->job_type,
	                "timestamp", when,
	                "data",
	                "job_id", job->job_id,
	                "job_type", job->job_type,
	                "destination", job->destination,
	                "attempt", job->attempt,
	                "redrive_generation", job->redrive_generation,
	                "payload", job->payload != NULL ? (json_t *)job->payload : json_null(),
	                "traceparent", traceparent);
	if (msg == NULL)
		return NULL;
	text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(msg);
	return text;
}

/* The per-request headers, in front of the destination's static ones. */
struct dyn_headers {
	char id[96];
	char ts[48];
	char sig[32 + WH_SIGNATURE_LEN];
	char trace[96];
	struct curl_slist node[4];
};

static struct curl_slist *link_headers(struct dyn_headers *d, const struct wh_config *cfg,
                                       int with_trace)
{
	char *texts[4] = {d->id, d->ts, d->sig, d->trace};
	int n = with_trace ? 4 : 3;

	/* Nodes of our own linked to the shared list: nothing to allocate or copy. */
	for (int i = 0; i < n; i++) {
		d->node[i].data = texts[i];
		d->node[i].next = i + 1 < n ? &d->node[i + 1] : cfg->static_headers;
	}
	return &d->node[0];
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void read_response(CURL *h, struct wh_response *resp)
{
	curl_off_t after = -1;
	char *location = NULL;

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
	if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &after) == CURLE_OK && after > 0)
		resp->retry_after_s = (int64_t)after;
	/* Shown without its query: a token may travel there. */
	if (curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location != NULL)
		wh_escape(location, strcspn(location, "?#"), resp->location, sizeof(resp->location));
}

int wh_deliver(const struct wh_config *cfg, CURL *h, const struct outbox_job *job,
               const char *traceparent, int64_t now_ms, struct wh_response *resp,
               char *msg, size_t msglen)
{
	struct dyn_headers d;
	struct sink s = {.resp = resp, .cap = cfg->max_response_bytes};
	char *body = request_body(job, traceparent, now_ms);
	char *content = NULL;
	int pre;
	int rc = -1;

	memset(resp, 0, sizeof(*resp));
	resp->retry_after_s = -1;
	if (body == NULL)
		goto oom;
	/* id.timestamp.body is signed; the body is its tail. */
	pre = asprintf(&content, "%s:%d.%lld.%s", job->job_id, job->redrive_generation,
	               (long long)(now_ms / 1000), body);
	if (pre < 0) {
		content = NULL;
		goto oom;
	}
	size_t body_len = strlen(body);
	size_t head_len = (size_t)pre - body_len;
	snprintf(d.id, sizeof(d.id), "webhook-id: %s:%d", job->job_id, job->redrive_generation);
	snprintf(d.ts, sizeof(d.ts), "webhook-timestamp: %lld", (long long)(now_ms / 1000));
	memcpy(d.sig, "webhook-signature: ", 20);
	if (wh_sign(cfg->key, cfg->key_len, content, (size_t)pre, d.sig + 19) < 0) {
		snprintf(msg, msglen, "could not compute the HMAC-SHA256 signature");
		goto out;
	}
	if (traceparent != NULL)
		snprintf(d.trace, sizeof(d.trace), "traceparent: %s", traceparent);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, content + head_len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, link_headers(&d, cfg, traceparent != NULL));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	int64_t started = mono_ms();
	resp->rc = curl_easy_perform(h);
	resp->duration_ms = mono_ms() - started;
	if (resp->rc == CURLE_OK || (resp->rc == CURLE_WRITE_ERROR && resp->over_cap))
		read_response(h, resp);
	/* Neither the headers on this stack nor the body outlive the call. */
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
	rc = 0;
	goto out;
oom:
	snprintf(msg, msglen, "out of memory");
out:
	free(content);
	free(body);
	return rc;
}
