/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/http.c: signed libcurl transport for SQS and S3 (see aws/http.h).
 */
#include "aws/http.h"
#include "aws/clock_skew.h"
#include "common/hexdigest.h"
#include "common/log.h"

#include <stdatomic.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define HDR_VALUE_LEN 160

struct aws_http {
	CURL *curl;
	bool s3;
	char *service;  /* "sqs" / "s3" */
	char *region;
	char *scheme;   /* "http" / "https" */
	char *host;     /* host[:port] exactly as sent in Host: */
	struct aws_credentials *creds; /* a reference to the shared provider */
	struct sigv4_key_cache signing_key; /* of the last request signed */
	long connect_timeout_ms;
	long timeout_ms;
	size_t max_response_bytes;
	bool connected_once; /* a later new connection is a reconnect */

	/* State of the transfer in progress; reused between requests. */
	char *body;
	size_t body_len;
	size_t body_cap;
	bool body_overflow;
	char request_id[AWS_RESULT_REQUEST_ID_LEN];
	char query_error[HDR_VALUE_LEN];
	char error_type[HDR_VALUE_LEN];
	char etag[AWS_HTTP_ETAG_LEN];
	char date[HDR_VALUE_LEN];
	char errbuf[CURL_ERROR_SIZE];

	/* What one signed attempt allocated, freed by attempt_end(). */
	struct {
		struct curl_slist *list;
		char *url;
		char *host;
		char *auth;
	} att;
};

/* Splits the endpoint into scheme and host[:port]; refuses a path, which
 * would silently change every signed request. */
static int parse_endpoint(struct aws_http *c, const char *endpoint)
{
	CURLU *u = curl_url();
	char *host = NULL;
	char *port = NULL;
	char *path = NULL;
	int rc = -1;

	if (u == NULL || curl_url_set(u, CURLUPART_URL, endpoint, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &c->scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		log_error("invalid AWS endpoint URL \"%s\"", endpoint);
		goto out;
	}
	if (strcmp(c->scheme, "http") != 0 && strcmp(c->scheme, "https") != 0) {
		log_error("AWS endpoint URL \"%s\" must use http or https", endpoint);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK && strcmp(path, "/") != 0 &&
	    path[0] != '\0') {
		log_error("AWS endpoint URL \"%s\" must not have a path", endpoint);
		goto out;
	}
	/* Only an explicit port goes into Host:, exactly as curl would send it. */
	if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
		port = NULL;
	if (asprintf(&c->host, "%s%s%s", host, port != NULL ? ":" : "", port != NULL ? port : "") < 0) {
		c->host = NULL;
		goto out;
	}
	rc = 0;
out:
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_url_cleanup(u);
	return rc;
}

static char *dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

int aws_http_new(const struct aws_env *env, enum aws_service svc, struct aws_http **out)
{
	struct aws_http *c = calloc(1, sizeof(*c));
	const char *endpoint = svc == AWS_SERVICE_S3 ? env->s3_endpoint : env->sqs_endpoint;

	*out = NULL;
	if (c == NULL)
		return -1;
	c->s3 = svc == AWS_SERVICE_S3;
	c->service = strdup(c->s3 ? "s3" : "sqs");
	c->region = dup_or_null(env->region);
	c->creds = env->credentials != NULL ? aws_credentials_ref(env->credentials) : NULL;
	c->connect_timeout_ms = AWS_HTTP_DEFAULT_CONNECT_TIMEOUT_MS;
	c->timeout_ms = AWS_HTTP_DEFAULT_TIMEOUT_MS;
	c->max_response_bytes = AWS_HTTP_DEFAULT_MAX_RESPONSE_BYTES;
	c->curl = curl_easy_init();
	if (c->service == NULL || c->region == NULL || c->creds == NULL || c->curl == NULL ||
	    endpoint == NULL)
		goto fail;
	if (parse_endpoint(c, endpoint) < 0)
		goto fail;
	*out = c;
	return 0;
fail:
	aws_http_free(c);
	return -1;
}

void aws_http_free(struct aws_http *c)
{
	if (c == NULL)
		return;
	if (c->curl != NULL)
		curl_easy_cleanup(c->curl);
	free(c->service);
	free(c->region);
	curl_free(c->scheme);
	free(c->host);
	aws_credentials_unref(c->creds);
	sigv4_key_cache_clear(&c->signing_key);
	free(c->body);
	free(c);
}

void aws_http_set_timeouts(struct aws_http *c, long connect_timeout_ms, long timeout_ms)
{
	if (connect_timeout_ms > 0)
		c->connect_timeout_ms = connect_timeout_ms;
	if (timeout_ms > 0)
		c->timeout_ms = timeout_ms;
}

void aws_http_set_max_response_bytes(struct aws_http *c, size_t max_bytes)
{
	if (max_bytes > 0)
		c->max_response_bytes = max_bytes;
}

const char *aws_http_region(const struct aws_http *c)
{
	return c->region;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct aws_http *c = userdata;
	size_t n = size * nmemb;

	if (n > c->max_response_bytes - c->body_len) {
		c->body_overflow = true;
		return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
	}
	if (c->body_len + n + 1 > c->body_cap) {
		size_t cap = c->body_cap == 0 ? 4096 : c->body_cap;
		while (cap < c->body_len + n + 1)
			cap *= 2;
		char *p = realloc(c->body, cap);
		if (p == NULL)
			return 0;
		c->body = p;
		c->body_cap = cap;
	}
	memcpy(c->body + c->body_len, data, n);
	c->body_len += n;
	c->body[c->body_len] = '\0';
	return n;
}

/* Copies the value of header line "Name: value\r\n" into out when the name
 * is name (any case). */
static void capture_header(const char *line, size_t n, const char *name, char *out,
                           size_t out_size)
{
	size_t nl = strlen(name);

	if (n <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
		return;
	const char *v = line + nl + 1;
	size_t vl = n - nl - 1;
	while (vl > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		vl--;
	}
	while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
		vl--;
	snprintf(out, out_size, "%.*s", (int)vl, v);
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *userdata)
{
	struct aws_http *c = userdata;
	size_t n = size * nmemb;

	capture_header(line, n, "x-amzn-RequestId", c->request_id, sizeof(c->request_id));
	capture_header(line, n, "x-amz-request-id", c->request_id, sizeof(c->request_id));
	capture_header(line, n, "x-amzn-query-error", c->query_error, sizeof(c->query_error));
	capture_header(line, n, "X-Amzn-ErrorType", c->error_type, sizeof(c->error_type));
	capture_header(line, n, "ETag", c->etag, sizeof(c->etag));
	capture_header(line, n, "Date", c->date, sizeof(c->date));
	return n;
}

static int slist_add(struct curl_slist **list, const char *name, const char *value)
{
	char *line = NULL;
	struct curl_slist *l;

	if (asprintf(&line, "%s: %s", name, value) < 0)
		return -1;
	l = curl_slist_append(*list, line);
	free(line);
	if (l == NULL)
		return -1;
	*list = l;
	return 0;
}

/* Host, x-amz-date, payload hash, token and the caller's headers: the set
 * that is both signed and sent. */
static size_t build_signed_headers(const struct aws_http *c, const struct aws_http_request *req,
                                   const struct aws_creds *creds, const char *host,
                                   const char *date, const char *payload_hash,
                                   struct sigv4_header *h)
{
	size_t n = 0;

	h[n++] = (struct sigv4_header){"Host", host};
	h[n++] = (struct sigv4_header){"X-Amz-Date", date};
	if (c->s3)
		h[n++] = (struct sigv4_header){SIGV4_CONTENT_SHA256_HEADER, payload_hash};
	if (creds->session_token != NULL)
		h[n++] = (struct sigv4_header){SIGV4_SECURITY_TOKEN_HEADER, creds->session_token};
	for (size_t i = 0; i < req->n_headers; i++)
		h[n++] = req->headers[i];
	return n;
}

/* The header list curl sends: the signed headers, Authorization, and the
 * suppression of headers curl would add on its own. */
static int build_curl_headers(const struct sigv4_header *h, size_t n, const char *auth,
                              struct curl_slist **out)
{
	struct curl_slist *list = NULL;
	bool has_type = false;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcasecmp(h[i].name, "Content-Type") == 0)
			has_type = true;
		if (slist_add(&list, h[i].name, h[i].value) < 0)
			goto fail;
	}
	if (slist_add(&list, "Authorization", auth) < 0)
		goto fail;
	/* "Name:" with no value removes a header curl adds by itself. */
	if (curl_slist_append(list, "Expect:") == NULL)
		goto fail;
	if (!has_type && curl_slist_append(list, "Content-Type:") == NULL)
		goto fail;
	*out = list;
	return 0;
fail:
	curl_slist_free_all(list);
	return -1;
}

static int set_method(CURL *curl, const struct aws_http_request *req)
{
	CURLcode rc = CURLE_OK;

	if (strcmp(req->method, "HEAD") == 0)
		return curl_easy_setopt(curl, CURLOPT_NOBODY, 1L) == CURLE_OK ? 0 : -1;
	if (strcmp(req->method, "GET") == 0)
		return curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L) == CURLE_OK ? 0 : -1;
	if (strcmp(req->method, "POST") != 0)
		rc = curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req->method);
	if (rc == CURLE_OK && strcmp(req->method, "DELETE") != 0) {
		/* POSTFIELDS also for PUT: a read callback would need chunking or
		 * Expect handling, and the body is already in memory. */
		rc = curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		if (rc == CURLE_OK)
			rc = curl_easy_setopt(curl, CURLOPT_POSTFIELDS,
			                      req->body != NULL ? (const char *)req->body : "");
	}
	return rc == CURLE_OK ? 0 : -1;
}

static int set_options(struct aws_http *c, const struct aws_http_request *req, const char *url,
                       struct curl_slist *headers)
{
	CURL *h = c->curl;
	long timeout = req->timeout_ms > 0 ? req->timeout_ms : c->timeout_ms;
	CURLcode rc;

	/* Reset keeps the connection cache, so connections are still reused. */
	curl_easy_reset(h);
	rc = curl_easy_setopt(h, CURLOPT_URL, url);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
	if (rc != CURLE_OK)
		return -1;
	return set_method(h, req);
}

static void clear_transfer_state(struct aws_http *c)
{
	c->body_len = 0;
	if (c->body != NULL)
		c->body[0] = '\0';
	c->body_overflow = false;
	c->request_id[0] = '\0';
	c->query_error[0] = '\0';
	c->error_type[0] = '\0';
	c->etag[0] = '\0';
	c->date[0] = '\0';
	c->errbuf[0] = '\0';
}

/* Turns the finished transfer into res; returns 0 on a 2xx answer. */
static int finish(struct aws_http *c, const struct aws_http_request *req, CURLcode cc,
                  struct aws_http_response *resp, struct aws_result *res)
{
	long status = 0;

	if (cc == CURLE_OK || cc == CURLE_WRITE_ERROR)
		(void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	resp->status = status;
	resp->body = c->body != NULL ? c->body : "";
	resp->body_len = c->body_len;
	snprintf(resp->etag, sizeof(resp->etag), "%s", c->etag);
	curl_off_t clen = -1;
	if (curl_easy_getinfo(c->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &clen) != CURLE_OK)
		clen = -1;
	resp->content_length = (long long)clen;
	if (c->body_overflow)
		return aws_result_fail(res, "ResponseTooLarge",
		                       "response body exceeds %zu bytes", c->max_response_bytes);
	res->status = status;
	res->curl_code = (int)cc;
	snprintf(res->request_id, sizeof(res->request_id), "%s", c->request_id);
	if (cc != CURLE_OK) {
		snprintf(res->message, sizeof(res->message), "could not reach \"%s\": %s", c->host,
		         c->errbuf[0] != '\0' ? c->errbuf : curl_easy_strerror(cc));
	} else if (status < 200 || status >= 300) {
		if (c->s3)
			aws_error_parse_xml(c->body, c->body_len, res);
		else
			aws_error_parse_json(c->body, c->body_len, c->error_type, c->query_error, res);
		if (res->message[0] == '\0')
			snprintf(res->message, sizeof(res->message), "HTTP status %ld", status);
	}
	res->klass = aws_error_classify(status, res->code, (int)cc);
	log_debug("aws %s %s %s: status %ld curl %d request_id=%s", c->service, req->method,
	          req->path, status, (int)cc, c->request_id);
	return res->klass == AWS_ERR_NONE ? 0 : -1;
}

static char *build_url(const struct aws_http *c, const struct aws_http_request *req,
                       char **host_out)
{
	char *url = NULL;
	bool has_query = req->query != NULL && req->query[0] != '\0';

	*host_out = NULL;
	if (req->vhost_bucket != NULL) {
		if (asprintf(host_out, "%s.%s", req->vhost_bucket, c->host) < 0) {
			*host_out = NULL;
			return NULL;
		}
	} else {
		*host_out = strdup(c->host);
		if (*host_out == NULL)
			return NULL;
	}
	if (asprintf(&url, "%s://%s%s%s%s", c->scheme, *host_out, req->path, has_query ? "?" : "",
	             has_query ? req->query : "") < 0)
		return NULL;
	return url;
}

/* Requests sent by every client of the process (outbox-bench reads it
 * through outboxd's OUTBOX_STATS_FILE). */
static atomic_ulong requests_made;
static atomic_ulong sqs_reconnects;

unsigned long aws_http_sqs_reconnects(void)
{
	return atomic_load_explicit(&sqs_reconnects, memory_order_relaxed);
}

/* libcurl keeps the connection alive; a transfer that had to open a new
 * one after the first is a reconnect (the server closed it, or it broke). */
static void count_connects(struct aws_http *c)
{
	long opened = 0;

	if (curl_easy_getinfo(c->curl, CURLINFO_NUM_CONNECTS, &opened) != CURLE_OK || opened <= 0)
		return;
	if (c->connected_once && !c->s3)
		atomic_fetch_add_explicit(&sqs_reconnects, (unsigned long)opened, memory_order_relaxed);
	c->connected_once = true;
}

unsigned long aws_http_requests_made(void)
{
	return atomic_load_explicit(&requests_made, memory_order_relaxed);
}

/* Frees what attempt_begin() allocated; the Authorization value must not
 * outlive the request (the slist holds its own copy). */
static void attempt_free(struct aws_http *c)
{
	if (c->att.auth != NULL)
		explicit_bzero(c->att.auth, strlen(c->att.auth));
	free(c->att.auth);
	curl_slist_free_all(c->att.list);
	free(c->att.url);
	free(c->att.host);
	memset(&c->att, 0, sizeof(c->att));
}

/*
 * Signs req with creds and sets it up on c's easy handle, ready for
 * curl_easy_perform() or a multi handle.  Returns 0, or -1 with res filled
 * (nothing to perform; attempt_free() still to be called).
 */
static int attempt_begin(struct aws_http *c, const struct aws_http_request *req,
                         const struct aws_creds *creds, struct aws_http_response *resp,
                         struct aws_result *res)
{
	struct sigv4_header hdrs[4 + AWS_HTTP_MAX_EXTRA_HEADERS];
	struct sigv4_credentials sc = {creds->access_key_id, creds->secret_access_key,
	                               creds->session_token};
	struct sigv4_scope scope = {c->region, c->service, c->s3};
	char date[17];
	char hash[65];

	aws_result_reset(res);
	memset(resp, 0, sizeof(*resp));
	resp->body = "";
	resp->content_length = -1;
	clear_transfer_state(c);
	c->att.url = build_url(c, req, &c->att.host);
	if (c->att.url == NULL)
		return aws_result_fail(res, "InternalError", "out of memory");
	sigv4_format_date(aws_clock_now(), date);
	if (c->s3)
		(void)sha256_hex(req->body, req->body_len, hash);
	struct sigv4_request sreq = {
		.method = req->method, .path = req->path, .query = req->query,
		.headers = hdrs,
		.n_headers = build_signed_headers(c, req, creds, c->att.host, date, hash, hdrs),
		.body = req->body, .body_len = req->body_len, .payload_hash = c->s3 ? hash : NULL,
	};
	c->att.auth = sigv4_authorization_cached(&sreq, &scope, &sc, &c->signing_key);
	if (c->att.auth == NULL) {
		/* Deterministic (a malformed header): retrying cannot help. */
		return aws_result_fail(res, "SigningFailed", "could not sign the request");
	}
	if (build_curl_headers(hdrs, sreq.n_headers, c->att.auth, &c->att.list) < 0 ||
	    set_options(c, req, c->att.url, c->att.list) < 0)
		return aws_result_fail(res, "InternalError", "could not set up the HTTP request");
	atomic_fetch_add_explicit(&requests_made, 1, memory_order_relaxed);
	return 0;
}

/* The transfer of attempt_begin() ended with cc: its answer into resp/res. */
static int attempt_end(struct aws_http *c, const struct aws_http_request *req, CURLcode cc,
                       struct aws_http_response *resp, struct aws_result *res)
{
	int rc = finish(c, req, cc, resp, res);

	count_connects(c);
	attempt_free(c);
	return rc;
}

/* One signed attempt with creds. */
static int perform_once(struct aws_http *c, const struct aws_http_request *req,
                        const struct aws_creds *creds, struct aws_http_response *resp,
                        struct aws_result *res)
{
	if (attempt_begin(c, req, creds, resp, res) < 0) {
		attempt_free(c);
		return -1;
	}
	return attempt_end(c, req, curl_easy_perform(c->curl), resp, res);
}

/* Codes that mean "these keys are no longer (or not yet) valid": after a
 * rotation the request is signed again with fresh credentials. */
static bool is_rotation_code(const char *code)
{
	static const char *const codes[] = {
		"ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId", "InvalidAccessKeyId",
		"TokenRefreshRequired", "InvalidToken", NULL,
	};

	for (size_t i = 0; codes[i] != NULL; i++) {
		if (strcmp(code, codes[i]) == 0)
			return true;
	}
	return false;
}

/*
 * After a failed attempt signed with creds: true when signing it again can
 * help, at most once for each cause (so a real authorisation or clock
 * problem still fails fast, and is classified as usual).
 */
static bool resign_helps(struct aws_http *c, const struct aws_http_request *req,
                         const struct aws_creds *creds, const struct aws_result *res,
                         bool *refreshed, bool *reclocked)
{
	if (!*refreshed && is_rotation_code(res->code) &&
	    aws_credentials_invalidate(c->creds, creds)) {
		*refreshed = true;
		log_info("aws %s %s refused with %s, signing again with new credentials request_id=%s",
		         c->service, req->path, res->code, res->request_id);
		return true;
	}
	if (!*reclocked && aws_clock_is_skew_code(res->code) && aws_clock_correct(c->date)) {
		*reclocked = true;
		log_info("aws %s %s refused with %s, signing again with the corrected clock request_id=%s",
		         c->service, req->path, res->code, res->request_id);
		return true;
	}
	return false;
}

int aws_http_perform(struct aws_http *c, const struct aws_http_request *req,
                     struct aws_http_response *resp, struct aws_result *res)
{
	bool refreshed = false, reclocked = false;
	char err[AWS_CREDS_ERR_LEN];
	int rc;

	if (req->n_headers > AWS_HTTP_MAX_EXTRA_HEADERS) {
		memset(resp, 0, sizeof(*resp));
		resp->body = "";
		return aws_result_fail(res, "InvalidParameterValue", "too many request headers");
	}
	for (;;) {
		struct aws_creds *creds = aws_credentials_get(c->creds, err, sizeof(err));
		bool again;

		if (creds == NULL) {
			memset(resp, 0, sizeof(*resp));
			resp->body = "";
			return aws_result_fail(res, "CredentialsUnavailable", "%s", err);
		}
		rc = perform_once(c, req, creds, resp, res);
		again = rc < 0 && resign_helps(c, req, creds, res, &refreshed, &reclocked);
		aws_creds_unref(creds);
		if (!again)
			return rc;
	}
}

struct aws_http_multi {
	CURLM *m;
};

int aws_http_multi_new(size_t max_connections, struct aws_http_multi **out)
{
	struct aws_http_multi *mh = calloc(1, sizeof(*mh));

	*out = NULL;
	if (mh == NULL)
		return -1;
	mh->m = curl_multi_init();
	if (mh->m == NULL) {
		free(mh);
		return -1;
	}
	/* Keep one idle connection per concurrent transfer, so every
	 * request of the next round finds one open. */
	(void)curl_multi_setopt(mh->m, CURLMOPT_MAXCONNECTS, (long)max_connections);
	*out = mh;
	return 0;
}

void aws_http_multi_free(struct aws_http_multi *mh)
{
	if (mh == NULL)
		return;
	curl_multi_cleanup(mh->m);
	free(mh);
}

/* Signs and adds t to the multi handle; false (t->rc, t->res set) when it
 * cannot start.  *creds gets the snapshot it was signed with. */
static bool transfer_start(struct aws_http_multi *mh, struct aws_http_transfer *t,
                           struct aws_creds **creds)
{
	struct aws_http *c = t->client;
	char err[AWS_CREDS_ERR_LEN];

	*creds = NULL;
	t->rc = -1;
	memset(&t->resp, 0, sizeof(t->resp));
	t->resp.body = "";
	if (t->req->n_headers > AWS_HTTP_MAX_EXTRA_HEADERS) {
		(void)aws_result_fail(&t->res, "InvalidParameterValue", "too many request headers");
		return false;
	}
	*creds = aws_credentials_get(c->creds, err, sizeof(err));
	if (*creds == NULL) {
		(void)aws_result_fail(&t->res, "CredentialsUnavailable", "%s", err);
		return false;
	}
	if (attempt_begin(c, t->req, *creds, &t->resp, &t->res) < 0 ||
	    curl_multi_add_handle(mh->m, c->curl) != CURLM_OK) {
		if (t->res.code[0] == '\0')
			(void)aws_result_fail(&t->res, "InternalError", "could not start the transfer");
		attempt_free(c);
		return false;
	}
	return true;
}

/* Drives the multi handle until every transfer ended; done[i] gets the
 * result of the transfer whose easy handle is t[i]'s. */
static void run_transfers(struct aws_http_multi *mh, struct aws_http_transfer *t, size_t n,
                          const bool *started, CURLcode *done)
{
	int running = 1;
	CURLMsg *msg;
	int left;

	for (size_t i = 0; i < n; i++)
		done[i] = CURLE_RECV_ERROR; /* "no answer" unless curl reports one */
	while (running > 0) {
		if (curl_multi_perform(mh->m, &running) != CURLM_OK)
			break;
		/* Each easy handle has its own timeout, so this loop ends. */
		if (running > 0 && curl_multi_poll(mh->m, NULL, 0, 1000, NULL) != CURLM_OK)
			break;
	}
	while ((msg = curl_multi_info_read(mh->m, &left)) != NULL) {
		for (size_t i = 0; msg->msg == CURLMSG_DONE && i < n; i++) {
			if (started[i] && t[i].client->curl == msg->easy_handle)
				done[i] = msg->data.result;
		}
	}
}

void aws_http_perform_many(struct aws_http_multi *mh, struct aws_http_transfer *t, size_t n)
{
	struct aws_creds *creds[AWS_HTTP_MAX_TRANSFERS];
	bool started[AWS_HTTP_MAX_TRANSFERS];
	CURLcode done[AWS_HTTP_MAX_TRANSFERS];

	if (n > AWS_HTTP_MAX_TRANSFERS) {
		aws_http_perform_many(mh, t + AWS_HTTP_MAX_TRANSFERS, n - AWS_HTTP_MAX_TRANSFERS);
		n = AWS_HTTP_MAX_TRANSFERS;
	}
	for (size_t i = 0; i < n; i++)
		started[i] = transfer_start(mh, &t[i], &creds[i]);
	run_transfers(mh, t, n, started, done);
	for (size_t i = 0; i < n; i++) {
		struct aws_http *c = t[i].client;
		bool refreshed = false, reclocked = false;

		if (started[i]) {
			(void)curl_multi_remove_handle(mh->m, c->curl);
			t[i].rc = attempt_end(c, t[i].req, done[i], &t[i].resp, &t[i].res);
			/* The rare request to sign again goes alone, the usual way. */
			if (t[i].rc < 0 &&
			    resign_helps(c, t[i].req, creds[i], &t[i].res, &refreshed, &reclocked))
				t[i].rc = aws_http_perform(c, t[i].req, &t[i].resp, &t[i].res);
		}
		aws_creds_unref(creds[i]);
	}
}
