/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/sigv4.h: AWS Signature Version 4 for requests sent with libcurl.
 *
 * The signer is our own rather than CURLOPT_AWS_SIGV4 because libcurl 7.88
 * signs read-callback bodies as empty, signs query strings as written and
 * does not add x-amz-content-sha256 for S3 (see docs/aws-signing.md).  It is
 * checked byte for byte against AWS's test vectors (tests/unit/test_sigv4.c)
 * and against an independent implementation (tests/harness/sigv4-server.mjs).
 *
 * The signer never adds headers: the caller builds the full header list
 * (host, x-amz-date, x-amz-security-token when there is a session token,
 * x-amz-content-sha256 for S3), signs it, and sends exactly those headers
 * plus "Authorization: <sigv4_authorization()>".  Every header passed in is
 * signed.
 */
#ifndef OUTBOX_CORE_AWS_SIGV4_H
#define OUTBOX_CORE_AWS_SIGV4_H

#include <stdbool.h>
#include <stddef.h>

#include "common/compiler.h"

/* Header that carries credentials' session_token; it must be sent and signed. */
#define SIGV4_SECURITY_TOKEN_HEADER "X-Amz-Security-Token"
/* Header S3 requires on every request; its value ends the canonical request. */
#define SIGV4_CONTENT_SHA256_HEADER "X-Amz-Content-Sha256"
#define SIGV4_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"

struct sigv4_credentials {
	const char *access_key_id;     /* borrowed */
	const char *secret_access_key; /* borrowed; never logged */
	/*
	 * borrowed; NULL if none.  When set, the request's headers must contain
	 * SIGV4_SECURITY_TOKEN_HEADER with this value (sigv4_authorization()
	 * refuses to sign otherwise: AWS rejects such a request anyway, with a
	 * less helpful error).
	 */
	const char *session_token;
};

struct sigv4_header {
	const char *name;  /* any case; borrowed */
	const char *value; /* untrimmed; borrowed */
};

struct sigv4_request {
	const char *method; /* "GET", "POST", "PUT", "HEAD", "DELETE" */
	/*
	 * The path exactly as it will be sent (already percent-encoded where
	 * the caller chose to, e.g. with sigv4_uri_encode()), without the query
	 * string.  NULL or "" means "/".
	 */
	const char *path;
	/*
	 * The query string as it will be sent, without '?'; NULL or "" if none.
	 * It need not be sorted or encoded: each name and value is decoded and
	 * re-encoded for signing.  '+' is a literal plus, not a space.
	 */
	const char *query;
	const struct sigv4_header *headers; /* must include host and x-amz-date */
	size_t n_headers;
	const void *body;   /* may be NULL when body_len is 0 */
	size_t body_len;
	/*
	 * Precomputed lower-case hex SHA-256 of the body, or "UNSIGNED-PAYLOAD";
	 * NULL: the value of an x-amz-content-sha256 header if there is one,
	 * otherwise the signer hashes body.
	 */
	const char *payload_hash;
};

struct sigv4_scope {
	const char *region;   /* "us-east-1" */
	const char *service;  /* "sqs", "s3", ... */
	/*
	 * S3 rules: the path is used as sent (no normalisation of "." and "..",
	 * no second encoding; only bytes that cannot appear in a URI path are
	 * encoded).  Other services normalise the path and encode each segment
	 * again, as the AWS test suite expects.
	 */
	bool s3_path_rules;
};

/*
 * All return a newly allocated string the caller frees with free(), or NULL
 * when the request cannot be signed (no host or x-amz-date header, malformed
 * x-amz-date, missing session-token header; logged) or memory ran out.
 * The credential scope date is the date part of the x-amz-date header.
 */
char *sigv4_canonical_request(const struct sigv4_request *req,
                              const struct sigv4_scope *scope) OUTBOX_MUSTCHECK;
char *sigv4_string_to_sign(const struct sigv4_request *req,
                           const struct sigv4_scope *scope) OUTBOX_MUSTCHECK;
/* The value of the Authorization header. */
char *sigv4_authorization(const struct sigv4_request *req,
                          const struct sigv4_scope *scope,
                          const struct sigv4_credentials *creds) OUTBOX_MUSTCHECK;

/*
 * The signing key depends on the secret, the date, the region and the
 * service alone, so a client that signs many requests with the same ones
 * derives it once (four of a request's five HMACs; AWS's SDKs keep it the
 * same way).  A rotated secret is told by its SHA-256: the cache holds no
 * copy of the secret.  Zero-initialised is empty.  Owned by one signer at
 * a time (an aws_http client); sigv4_key_cache_clear() cleanses it and
 * leaves it empty.
 */
struct sigv4_key_cache {
	unsigned char secret_sha256[32]; /* of the secret key was derived from */
	char scope[80];                  /* "date8/region/service" of key; "" when empty */
	unsigned char key[32];
};

/* sigv4_authorization(), taking the signing key from cache when it was
 * derived from the same secret and scope, and keeping the new one there
 * otherwise.  cache may be NULL (nothing kept). */
char *sigv4_authorization_cached(const struct sigv4_request *req,
                                 const struct sigv4_scope *scope,
                                 const struct sigv4_credentials *creds,
                                 struct sigv4_key_cache *cache) OUTBOX_MUSTCHECK;
void sigv4_key_cache_clear(struct sigv4_key_cache *cache);

/*
 * Percent-encode s with RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~)
 * kept, upper-case hex, and '/' kept when keep_slash.  For an S3 object path
 * encode "/bucket/key" with keep_slash = true: every key segment is encoded
 * once.  Returns a string the caller frees with free(), NULL when out of
 * memory.
 */
char *sigv4_uri_encode(const char *s, bool keep_slash) OUTBOX_MUSTCHECK;

/* true when creds carry a session token, i.e. the caller must add
 * SIGV4_SECURITY_TOKEN_HEADER: creds->session_token before signing. */
bool sigv4_needs_security_token(const struct sigv4_credentials *creds);

/* Format t (seconds since the epoch, UTC) as x-amz-date: 20150830T123600Z. */
void sigv4_format_date(long long t, char out[17]);
/* HMAC-SHA256 of data with key into out; 0 ok, -1 on an OpenSSL failure. */
int sigv4_hmac_sha256(const void *key, size_t key_len, const void *data,
                      size_t data_len, unsigned char out[32]) OUTBOX_MUSTCHECK;
/*
 * The signing key HMAC(HMAC(HMAC(HMAC("AWS4" secret, date8), region),
 * service), "aws4_request"); date8 is "YYYYMMDD".  0 ok, -1 on failure.
 * All strings borrowed.
 */
int sigv4_signing_key(const char *secret, const char *date8,
                      const char *region, const char *service,
                      unsigned char out[32]) OUTBOX_MUSTCHECK;

#endif
