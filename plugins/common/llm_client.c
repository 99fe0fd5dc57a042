/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * llm_client.c: OpenAI-compatible chat completions over libcurl (see
 * llm_client.h for the contract and the error classification).
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdint.h>
#include <strings.h>

#include <curl/curl.h>

#include "llm_client.h"

/* Idle easy handles kept for reuse; more concurrent calls make more. */
#define LLM_CLIENT_MAX_IDLE 64

/*
 * Every call takes an easy handle from the pool (or makes one) and gives it
 * back, so any number of worker threads call at once.  The handles share
 * one connection cache, the TLS sessions and the DNS cache through a curl
 * share object, so a call reuses whichever connection another call left
 * idle.
 */
struct llm_client {
	pthread_mutex_t pool_lock;  /* guards idle, n_idle */
	CURL *idle[LLM_CLIENT_MAX_IDLE]; /* owned */
	size_t n_idle;
	CURLSH *share;              /* owned; outlives every easy handle */
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST]; /* one per shared kind */
	bool locks_made;
	char *url;      /* owned: {endpoint}/chat/completions */
	char *model;    /* owned */
	char *auth;     /* owned: "Authorization: Bearer KEY", wiped on free */
	char *api_key;  /* owned: the key alone, to scrub server messages */
	long timeout_ms;
	long max_tokens;
};

/* A growing response body, capped at LLM_CLIENT_MAX_RESPONSE. */
struct body_buf {
	char *data; /* owned */
	size_t len;
	int too_big;
};

static void wipe_free(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

static char *join_url(const char *endpoint)
{
	size_t n = strlen(endpoint);
	char *url = NULL;

	while (n > 0 && endpoint[n - 1] == '/')
		n--;
	if (asprintf(&url, "%.*s/chat/completions", (int)n, endpoint) < 0)
		return NULL;
	return url;
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *arg)
{
	struct llm_client *c = arg;

	(void)h;
	(void)access;
	pthread_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *arg)
{
	struct llm_client *c = arg;

	(void)h;
	pthread_mutex_unlock(&c->share_locks[data]);
}

/* The share object of c's handles: connections, TLS sessions, DNS. */
static int make_share(struct llm_client *c)
{
	CURLSHcode rc = CURLSHE_OK;

	pthread_mutex_init(&c->pool_lock, NULL);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&c->share_locks[i], NULL);
	c->locks_made = true;
	c->share = curl_share_init();
	if (c->share == NULL)
		return -1;
	if (rc == CURLSHE_OK) rc = curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
	if (rc == CURLSHE_OK) rc = curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	if (rc == CURLSHE_OK) rc = curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
	if (rc == CURLSHE_OK) rc = curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	if (rc == CURLSHE_OK) rc = curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	if (rc == CURLSHE_OK) rc = curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	return rc == CURLSHE_OK ? 0 : -1;
}

/* An easy handle for one call: an idle one, else a new one (NULL: out of
 * memory).  Give it back with put_handle(). */
static CURL *take_handle(struct llm_client *c)
{
	CURL *h = NULL;

	pthread_mutex_lock(&c->pool_lock);
	if (c->n_idle > 0)
		h = c->idle[--c->n_idle];
	pthread_mutex_unlock(&c->pool_lock);
	return h != NULL ? h : curl_easy_init();
}

static void put_handle(struct llm_client *c, CURL *h)
{
	pthread_mutex_lock(&c->pool_lock);
	if (c->n_idle < LLM_CLIENT_MAX_IDLE) {
		c->idle[c->n_idle++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&c->pool_lock);
	if (h != NULL)
		curl_easy_cleanup(h);
}

int llm_client_new(const struct llm_client_config *cfg, struct llm_client **out,
                   char *err, size_t errlen)
{
	struct llm_client *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		goto oom;
	c->timeout_ms = cfg->timeout_ms;
	c->max_tokens = cfg->max_tokens;
	c->url = join_url(cfg->endpoint);
	c->model = strdup(cfg->model);
	c->api_key = strdup(cfg->api_key);
	if (c->url == NULL || c->model == NULL || c->api_key == NULL ||
	    asprintf(&c->auth, "Authorization: Bearer %s", cfg->api_key) < 0) {
		c->auth = NULL;
		goto oom;
	}
	if (make_share(c) < 0) {
		snprintf(err, errlen, "could not create a curl share handle");
		llm_client_free(c);
		return -1;
	}
	*out = c;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	llm_client_free(c);
	return -1;
}

/*
 * Whether the host of an http:// URL is loopback: "localhost" (or a name
 * under it), 127.0.0.0/8, or [::1].  Userinfo, port and path are skipped.
 */
static int is_loopback_host(const char *url)
{
	const char *h = url + strlen("http://");
	size_t end = strcspn(h, "/?#");
	const char *at = memchr(h, '@', end);
	char host[256];
	size_t n;

	if (at != NULL) {
		end -= (size_t)(at + 1 - h);
		h = at + 1;
	}
	if (*h == '[') {
		n = strcspn(h, "]");
		return n == 4 && strncmp(h, "[::1", 4) == 0;
	}
	n = strcspn(h, ":/?#");
	if (n == 0 || n >= sizeof(host) || n > end)
		return 0;
	for (size_t i = 0; i < n; i++)
		host[i] = (char)tolower((unsigned char)h[i]);
	host[n] = '\0';
	if (n > 0 && host[n - 1] == '.')
		host[--n] = '\0';
	if (strcmp(host, "localhost") == 0 ||
	    (n > 10 && strcmp(host + n - 10, ".localhost") == 0))
		return 1;
	/* 127.a.b.c with decimal parts only: "127.example.com" is not loopback. */
	if (strncmp(host, "127.", 4) != 0)
		return 0;
	int dots = 0;
	for (const char *p = host + 4; *p; p++) {
		if (*p == '.')
			dots++;
		else if (!isdigit((unsigned char)*p))
			return 0;
	}
	return dots == 2;
}

/*
 * The API key travels in the Authorization header: over plain http:// to
 * another machine anyone on the path can read it, and the answers can be
 * forged.  Allowed (local proxies and test stubs use it) but never silent.
 */
static void warn_if_plaintext(const struct outbox_host *host, struct outbox_ctx *ctx,
                              const char *endpoint, const char *shown)
{
	if (strncasecmp(endpoint, "http://", 7) != 0 || is_loopback_host(endpoint))
		return;
	host->log(ctx, OUTBOX_LOG_WARNING, "LLM endpoint \"%s\" is plaintext http:// to a host "
	          "that is not loopback: the API key and every prompt and answer cross the network "
	          "unencrypted (use https://)", shown);
}

/*
 * The endpoint as it may be logged (caller frees): without userinfo
 * ("user:password@") and with the query cut to "?..." -- some services take
 * a key there (?api-key=...).  NULL when out of memory.
 */
static char *loggable_endpoint(const char *endpoint)
{
	const char *sep = strstr(endpoint, "://");
	const char *h = sep != NULL ? sep + 3 : endpoint;
	size_t auth = strcspn(h, "/?#");
	const char *at = memchr(h, '@', auth);
	const char *rest = at != NULL ? at + 1 : h;
	size_t keep = strcspn(rest, "?#");
	char *out = NULL;

	if (asprintf(&out, "%.*s%.*s%s", (int)(h - endpoint), endpoint, (int)keep, rest,
	             rest[keep] != '\0' ? "?..." : "") < 0)
		return NULL;
	return out;
}

int llm_client_from_host(const struct outbox_host *host, struct outbox_ctx *ctx,
                         struct llm_client **out, char *err, size_t errlen)
{
	const char *key_env = host->option(ctx, "api_key_env");
	const char *key = key_env != NULL ? getenv(key_env) : NULL;
	struct llm_client_config cfg = {
		.endpoint = host->option(ctx, "endpoint"),
		.model = host->option(ctx, "model"),
		.api_key = key,
		.timeout_ms = (long)host->option_int(ctx, "timeout_ms"),
		.max_tokens = (long)host->option_int(ctx, "max_tokens"),
	};

	*out = NULL;
	if (key == NULL || key[0] == '\0') {
		snprintf(err, errlen, "environment variable \"%s\" named by plugin.api_key_env "
		         "is not set or empty", key_env != NULL ? key_env : "");
		return -1;
	}
	if (cfg.endpoint == NULL || cfg.model == NULL || cfg.timeout_ms <= 0 ||
	    cfg.max_tokens <= 0) {
		snprintf(err, errlen, "plugin.endpoint, plugin.model, plugin.timeout_ms and "
		         "plugin.max_tokens must be set");
		return -1;
	}
	if (llm_client_new(&cfg, out, err, errlen) < 0)
		return -1;
	char *shown = loggable_endpoint(cfg.endpoint);

	warn_if_plaintext(host, ctx, cfg.endpoint, shown != NULL ? shown : "(not shown)");
	host->log(ctx, OUTBOX_LOG_INFO, "LLM endpoint \"%s\", model \"%s\", timeout %ld ms",
	          shown != NULL ? shown : "(not shown)", cfg.model, cfg.timeout_ms);
	free(shown);
	return 0;
}

void llm_client_free(struct llm_client *client)
{
	if (client == NULL)
		return;
	for (size_t i = 0; i < client->n_idle; i++)
		curl_easy_cleanup(client->idle[i]);
	/* After every easy handle that used it. */
	if (client->share != NULL)
		curl_share_cleanup(client->share);
	if (client->locks_made) {
		pthread_mutex_destroy(&client->pool_lock);
		for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
			pthread_mutex_destroy(&client->share_locks[i]);
	}
	free(client->url);
	free(client->model);
	wipe_free(client->auth);
	wipe_free(client->api_key);
	free(client);
}

void llm_answer_clear(struct llm_answer *answer)
{
	json_decref(answer->object);
	free(answer->model);
	answer->object = NULL;
	answer->model = NULL;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct body_buf *b = userdata;
	size_t n = size * nmemb;

	if (n > LLM_CLIENT_MAX_RESPONSE - b->len) {
		b->too_big = 1;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	char *grown = realloc(b->data, b->len + n + 1);
	if (grown == NULL)
		return 0;
	b->data = grown;
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/* The request body; caller frees with free(). */
static char *request_body(const struct llm_client *c, const char *system_prompt,
                          const char *user_prompt)
{
	json_t *req = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:I, s:f, s:{s:s}}",
	                        "model", c->model,
	                        "messages", "role", "system", "content", system_prompt,
	                        "role", "user", "content", user_prompt,
	                        "max_tokens", (json_int_t)c->max_tokens,
	                        "temperature", 0.0,
	                        "response_format", "type", "json_object");
	char *text;

	if (req == NULL)
		return NULL;
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	return text;
}

/* Sets the per-request options; headers (borrowed) must outlive the call. */
static CURLcode setup_request(struct llm_client *c, CURL *h, const char *body,
                              struct curl_slist *headers, struct body_buf *buf)
{
	CURLcode rc = CURLE_OK;
	long connect_ms = c->timeout_ms < 10000 ? c->timeout_ms : 10000;

	curl_easy_reset(h);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_SHARE, c->share);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_URL, c->url);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_WRITEDATA, buf);
	if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_USERAGENT, "outboxd-llm/1");
	return rc;
}

static struct curl_slist *make_headers(const struct llm_client *c)
{
	struct curl_slist *list = NULL;
	struct curl_slist *next;
	static const char *const fixed[] = {
		"Content-Type: application/json", "Accept: application/json", "Expect:",
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		next = curl_slist_append(list, fixed[i]);
		if (next == NULL)
			goto fail;
		list = next;
	}
	next = curl_slist_append(list, c->auth);
	if (next == NULL)
		goto fail;
	return next;
fail:
	curl_slist_free_all(list);
	return NULL;
}

/* Wipes curl's copy of the Authorization header before freeing the list. */
static void free_headers(struct curl_slist *list)
{
	for (struct curl_slist *p = list; p != NULL; p = p->next)
		explicit_bzero(p->data, strlen(p->data));
	curl_slist_free_all(list);
}

static enum outbox_verdict classify_curl(CURLcode rc, const struct body_buf *buf,
                                         long timeout_ms, char *msg, size_t msglen)
{
	if (buf->too_big) {
		snprintf(msg, msglen, "response is larger than %d bytes", LLM_CLIENT_MAX_RESPONSE);
		return OUTBOX_FAIL;
	}
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(msg, msglen, "LLM request timed out after %ld ms", timeout_ms);
		return OUTBOX_RETRY;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		snprintf(msg, msglen, "LLM request failed: %s", curl_easy_strerror(rc));
		return OUTBOX_FAIL;
	default:
		/* connection refused, DNS, reset, TLS handshake, out of memory... */
		snprintf(msg, msglen, "LLM request failed: %s", curl_easy_strerror(rc));
		return OUTBOX_RETRY;
	}
}

/* The server's error message, if any, unless it might contain the key. */
static void error_detail(const struct llm_client *c, const char *body, long status,
                         char *out, size_t outlen)
{
	json_t *doc = json_loads(body != NULL ? body : "", 0, NULL);
	const char *text = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));

	out[0] = '\0';
	if (text != NULL && status != 401 && status != 403 && strstr(text, c->api_key) == NULL)
		snprintf(out, outlen, ": %.160s", text);
	json_decref(doc);
}

static enum outbox_verdict classify_status(const struct llm_client *c, long status,
                                           const char *body, char *msg, size_t msglen)
{
	char detail[200];

	error_detail(c, body, status, detail, sizeof(detail));
	if (status == 408 || status == 429 || (status >= 500 && status <= 599)) {
		snprintf(msg, msglen, "LLM endpoint answered HTTP %ld%s", status, detail);
		return OUTBOX_RETRY;
	}
	snprintf(msg, msglen, "LLM endpoint refused the request with HTTP %ld%s", status, detail);
	return OUTBOX_FAIL;
}

/* choices[0].message.content of a chat completion, parsed as an object. */
static enum outbox_verdict parse_completion(const struct llm_client *c, const char *body,
                                            struct llm_answer *answer,
                                            char *msg, size_t msglen)
{
	json_error_t jerr;
	json_t *doc = json_loads(body != NULL ? body : "", 0, &jerr);
	json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
	const char *finish = json_string_value(json_object_get(choice, "finish_reason"));
	const char *content = json_string_value(
		json_object_get(json_object_get(choice, "message"), "content"));
	const char *model = json_string_value(json_object_get(doc, "model"));
	enum outbox_verdict v = OUTBOX_FAIL;

	if (doc == NULL) {
		snprintf(msg, msglen, "LLM response is not JSON: %s", jerr.text);
		goto out;
	}
	if (content == NULL) {
		snprintf(msg, msglen, "LLM response has no choices[0].message.content");
		goto out;
	}
	if (finish != NULL && strcmp(finish, "length") == 0) {
		snprintf(msg, msglen, "LLM answer was cut off at max_tokens (%ld)", c->max_tokens);
		goto out;
	}
	answer->object = json_loads(content, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(answer->object)) {
		snprintf(msg, msglen, "LLM answer is not a JSON object: %s",
		         answer->object == NULL ? jerr.text : "another JSON type");
		goto out;
	}
	answer->model = strdup(model != NULL && model[0] != '\0' ? model : c->model);
	if (answer->model == NULL) {
		snprintf(msg, msglen, "out of memory");
		v = OUTBOX_RETRY;
		goto out;
	}
	v = OUTBOX_OK;
out:
	if (v != OUTBOX_OK)
		llm_answer_clear(answer);
	json_decref(doc);
	return v;
}

/* A 429 or 503's Retry-After (seconds or an HTTP date, as curl parses
 * it) in milliseconds from now; 0 when there is none. */
static int64_t retry_after_of(CURL *h, long status)
{
	curl_off_t secs = 0;

	if (status != 429 && status != 503)
		return 0;
	if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &secs) != CURLE_OK || secs <= 0)
		return 0;
	/* The host caps it at the destination's backoff maximum. */
	return secs > INT64_MAX / 1000 ? INT64_MAX : (int64_t)secs * 1000;
}

enum outbox_verdict llm_client_chat(struct llm_client *client, const char *system_prompt,
                                    const char *user_prompt, struct llm_answer *answer,
                                    int64_t *retry_after_ms, char *msg, size_t msglen)
{
	CURL *h = take_handle(client);
	struct body_buf buf = {0};
	struct curl_slist *headers = make_headers(client);
	char *body = request_body(client, system_prompt, user_prompt);
	enum outbox_verdict v = OUTBOX_RETRY;
	long status = 0;
	CURLcode rc;

	answer->object = NULL;
	answer->model = NULL;
	if (retry_after_ms != NULL)
		*retry_after_ms = 0;
	if (h == NULL || headers == NULL || body == NULL) {
		snprintf(msg, msglen, "out of memory");
		goto out;
	}
	rc = setup_request(client, h, body, headers, &buf);
	if (rc == CURLE_OK)
		rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		v = classify_curl(rc, &buf, client->timeout_ms, msg, msglen);
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299) {
		v = classify_status(client, status, buf.data, msg, msglen);
		if (v == OUTBOX_RETRY && retry_after_ms != NULL)
			*retry_after_ms = retry_after_of(h, status);
	} else
		v = parse_completion(client, buf.data, answer, msg, msglen);
out:
	if (h != NULL) {
		/* Forget the header list curl still points at before it is freed. */
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
		put_handle(client, h);
	}
	free_headers(headers);
	free(body);
	free(buf.data);
	return v;
}

int llm_get_text(const json_t *obj, const char *key, size_t max_len, int single_line,
                 const char **out, char *msg, size_t msglen)
{
	const json_t *v = json_object_get(obj, key);
	const char *s = json_string_value(v);

	*out = NULL;
	if (v == NULL) {
		snprintf(msg, msglen, "\"%s\" is missing", key);
		return -1;
	}
	if (s == NULL) {
		snprintf(msg, msglen, "\"%s\" is not a string", key);
		return -1;
	}
	if (s[0] == '\0' || json_string_length(v) > max_len) {
		snprintf(msg, msglen, "\"%s\" must have 1 to %zu bytes, not %zu", key, max_len,
		         json_string_length(v));
		return -1;
	}
	if (strlen(s) != json_string_length(v) || (single_line && strpbrk(s, "\r\n") != NULL)) {
		snprintf(msg, msglen, "\"%s\" must be a single line of text", key);
		return -1;
	}
	*out = s;
	return 0;
}

int llm_get_number(const json_t *obj, const char *key, double min, double max,
                   double *out, char *msg, size_t msglen)
{
	const json_t *v = json_object_get(obj, key);
	double d;

	*out = 0.0;
	if (v == NULL) {
		snprintf(msg, msglen, "\"%s\" is missing", key);
		return -1;
	}
	if (!json_is_number(v)) {
		snprintf(msg, msglen, "\"%s\" is not a number", key);
		return -1;
	}
	d = json_number_value(v);
	if (!isfinite(d) || d < min || d > max) {
		snprintf(msg, msglen, "\"%s\" is %g, outside [%g, %g]", key, d, min, max);
		return -1;
	}
	*out = d;
	return 0;
}

/* n digits at *p as a number within [lo, hi] (else -1); advances p. */
static int field(const char **p, int n, int lo, int hi)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return v >= lo && v <= hi ? v : -1;
}

static int days_in_month(int year, int month)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

static int expect_char(const char **p, const char *set)
{
	if (**p == '\0' || strchr(set, **p) == NULL)
		return 0;
	(*p)++;
	return 1;
}

/* "YYYY-MM-DD" at *p, a real calendar date; advances p. */
static int date_part(const char **p)
{
	int year = field(p, 4, 1, 9999);
	int month;
	int day;

	if (year < 0 || !expect_char(p, "-"))
		return 0;
	month = field(p, 2, 1, 12);
	if (month < 0 || !expect_char(p, "-"))
		return 0;
	day = field(p, 2, 1, 31);
	return day > 0 && day <= days_in_month(year, month);
}

int llm_is_timestamp(const char *text)
{
	const char *p = text;

	if (p == NULL || !date_part(&p) || !expect_char(&p, "T ") || field(&p, 2, 0, 23) < 0 ||
	    !expect_char(&p, ":") || field(&p, 2, 0, 59) < 0)
		return 0;
	if (*p == ':') {
		p++;
		if (field(&p, 2, 0, 60) < 0)
			return 0;
		if (*p == '.') {
			p++;
			if (!isdigit((unsigned char)*p))
				return 0;
			while (isdigit((unsigned char)*p))
				p++;
		}
	}
	if (strcmp(p, "Z") == 0)
		return 1;
	if (!expect_char(&p, "+-") || field(&p, 2, 0, 15) < 0)
		return 0;
	if (*p == ':')
		p++;
	return *p == '\0' || (field(&p, 2, 0, 59) >= 0 && *p == '\0');
}
