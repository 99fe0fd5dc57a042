/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/http.h: the signed HTTP transport under the SQS and S3 clients.
 *
 * One client owns one reusable CURL easy handle, so connections and TLS
 * sessions are kept between requests.  A client is NOT thread-safe: use
 * one per thread.  The program calls curl_global_init(CURL_GLOBAL_DEFAULT)
 * once at startup, while still single-threaded, and curl_global_cleanup()
 * at exit; the client never does.
 *
 * Every request is signed with SigV4 (core/aws/sigv4.h) with one snapshot of
 * the process's credential provider (aws/credentials.h) and the corrected
 * clock (aws/clock_skew.h), and carries host, x-amz-date,
 * x-amz-content-sha256 (S3), X-Amz-Security-Token (when the snapshot has a
 * session token) and the caller's headers, all signed.  A request refused
 * because its keys were rotated away, or because of clock skew, is signed
 * again once (docs/aws.md, "Credentials" and "Clock skew").  TLS
 * verification is always on, "Expect: 100-continue" is never sent, and the
 * response body is bounded.  Neither the secret key nor the Authorization
 * header is ever logged.
 */
#ifndef OUTBOX_CORE_AWS_HTTP_H
#define OUTBOX_CORE_AWS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "aws/env.h"
#include "aws/error.h"
#include "common/compiler.h"
#include "aws/sigv4.h"

#define AWS_HTTP_DEFAULT_CONNECT_TIMEOUT_MS 5000L
/* Must exceed the 20 s maximum long-poll wait of ReceiveMessage. */
#define AWS_HTTP_DEFAULT_TIMEOUT_MS 30000L
/* Ten 1 MiB messages in one ReceiveMessage answer, JSON-escaped, fit. */
#define AWS_HTTP_DEFAULT_MAX_RESPONSE_BYTES ((size_t)32 * 1024 * 1024)
/* Headers a caller may add to one request. */
#define AWS_HTTP_MAX_EXTRA_HEADERS 8
#define AWS_HTTP_ETAG_LEN 96

struct aws_http;

struct aws_http_request {
	const char *method; /* "GET", "PUT", "POST", "HEAD", "DELETE"; borrowed */
	/* Already percent-encoded path starting with '/'; borrowed. */
	const char *path;
	/* Already encoded query without '?'; NULL or "" if none; borrowed. */
	const char *query;
	/* Virtual-hosted S3: the bucket to prefix the host with; NULL for
	 * path-style and for SQS.  Borrowed. */
	const char *vhost_bucket;
	/* At most AWS_HTTP_MAX_EXTRA_HEADERS extra headers (Content-Type,
	 * X-Amz-Target, If-None-Match...), sent and signed; borrowed. */
	const struct sigv4_header *headers;
	size_t n_headers;
	const void *body; /* borrowed; NULL when body_len is 0 */
	size_t body_len;
	long timeout_ms;  /* total time for this request; 0: the client default */
};

struct aws_http_response {
	long status; /* 0 when no response arrived */
	/*
	 * Borrowed from the client: NUL-terminated, valid until the next
	 * request on the same client or aws_http_free().
	 */
	const char *body;
	size_t body_len;
	char etag[AWS_HTTP_ETAG_LEN]; /* ETag header as sent (with quotes); "" if none */
	long long content_length; /* Content-Length; -1 if unknown */
};

/*
 * Creates a client for svc with env's region and endpoint (copied) and a
 * reference to env's credential provider (env may be freed afterwards).  The endpoint must be
 * scheme://host[:port] with no path.  Caller frees with aws_http_free().
 */
int aws_http_new(const struct aws_env *env, enum aws_service svc,
                 struct aws_http **out) OUTBOX_MUSTCHECK;
void aws_http_free(struct aws_http *c);

/* HTTP requests aws_http_perform() has sent, all clients of the process
 * together, since it started (thread-safe). */
unsigned long aws_http_requests_made(void);
/* New connections SQS clients of the process opened after their first
 * (process-wide; for the metrics). */
unsigned long aws_http_sqs_reconnects(void);

/* 0 for either value keeps the current one. */
void aws_http_set_timeouts(struct aws_http *c, long connect_timeout_ms, long timeout_ms);
void aws_http_set_max_response_bytes(struct aws_http *c, size_t max_bytes);

/* The region the client signs for; borrowed from the client. */
const char *aws_http_region(const struct aws_http *c);

/*
 * Sends req and waits for the answer.  Returns 0 on a 2xx answer.  On any
 * other outcome returns -1 with res filled (status, curl code, canonical
 * error code and message parsed from the JSON or XML error body, request
 * id, class).  resp is filled whenever an answer arrived, also on errors
 * (e.g. S3 412).  All pointers borrowed.
 */
int aws_http_perform(struct aws_http *c, const struct aws_http_request *req,
                     struct aws_http_response *resp, struct aws_result *res) OUTBOX_MUSTCHECK;

/*
 * Several requests at once, over libcurl's multi interface.  The multi
 * handle keeps up to max_connections idle connections between rounds, so
 * the requests of the next round reuse them.  NOT thread-safe: one thread
 * uses a multi handle (and the clients it drives) at a time.  Returns 0
 * and *out (free with aws_http_multi_free(); NULL is a no-op), or -1 when
 * out of memory.
 */
struct aws_http_multi;
int aws_http_multi_new(size_t max_connections, struct aws_http_multi **out) OUTBOX_MUSTCHECK;
void aws_http_multi_free(struct aws_http_multi *mh);

#define AWS_HTTP_MAX_TRANSFERS 64

/* One request of aws_http_perform_many(): a distinct client each. */
struct aws_http_transfer {
	struct aws_http *client;            /* borrowed; used by this transfer only */
	const struct aws_http_request *req; /* borrowed */
	struct aws_http_response resp;      /* out; body borrowed from client */
	struct aws_result res;              /* out */
	int rc;                             /* out: what aws_http_perform() returns */
};

/*
 * Performs the n requests concurrently and waits for all of them; each
 * ends as aws_http_perform() would (signed with its own credential
 * snapshot; a request refused for rotated keys or clock skew is signed
 * again once, alone).  No two transfers may share a client.
 */
void aws_http_perform_many(struct aws_http_multi *mh, struct aws_http_transfer *t, size_t n);

#endif
