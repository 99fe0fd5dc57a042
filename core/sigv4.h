/*
 * sigv4.h: AWS Signature Version 4 for requests sent with libcurl.
 *
 * The signer is our own rather than CURLOPT_AWS_SIGV4 because libcurl 7.88
 * signs read-callback bodies as empty, signs query strings as written and
 * does not add x-amz-content-sha256 for S3 (see docs/aws.md).  It is checked
 * byte for byte against AWS's test vectors (tests/unit/test_sigv4.c).
 */
#ifndef OUTBOX_CORE_SIGV4_H
#define OUTBOX_CORE_SIGV4_H

#include <stdbool.h>
#include <stddef.h>

struct sigv4_credentials {
	const char *access_key_id;     /* borrowed */
	const char *secret_access_key; /* borrowed; never logged */
	const char *session_token;     /* borrowed; NULL if none */
};

struct sigv4_header {
	const char *name;  /* any case; borrowed */
	const char *value; /* untrimmed; borrowed */
};

struct sigv4_request {
	const char *method; /* "GET", "POST", "PUT", "HEAD", "DELETE" */
	/*
	 * The path exactly as it will be sent (already percent-encoded where
	 * the caller chose to), without the query string.
	 */
	const char *path;
	/* The query string as it will be sent, without '?'; NULL or "" if none. */
	const char *query;
	const struct sigv4_header *headers; /* must include host and x-amz-date */
	size_t n_headers;
	const void *body;   /* may be NULL when body_len is 0 */
	size_t body_len;
	/*
	 * Precomputed lower-case hex SHA-256 of the body, or "UNSIGNED-PAYLOAD";
	 * NULL: the signer hashes body.
	 */
	const char *payload_hash;
};

struct sigv4_scope {
	const char *region;   /* "us-east-1" */
	const char *service;  /* "sqs", "s3", ... */
	/*
	 * S3 rules: the path is used as sent (no normalisation of "." and "..",
	 * no second encoding).  Other services normalise the path and encode
	 * each segment again, as the AWS test suite expects.
	 */
	bool s3_path_rules;
};

/* All return a newly allocated string the caller frees with free(), or NULL
 * on allocation failure. */
char *sigv4_canonical_request(const struct sigv4_request *req,
                              const struct sigv4_scope *scope);
char *sigv4_string_to_sign(const struct sigv4_request *req,
                           const struct sigv4_scope *scope);
/* The value of the Authorization header. */
char *sigv4_authorization(const struct sigv4_request *req,
                          const struct sigv4_scope *scope,
                          const struct sigv4_credentials *creds);

/* Format t (seconds since the epoch, UTC) as x-amz-date: 20150830T123600Z. */
void sigv4_format_date(long long t, char out[17]);
/* Lower-case hex SHA-256 of data into out (65 bytes incl. NUL). */
void sigv4_sha256_hex(const void *data, size_t len, char out[65]);

#endif
