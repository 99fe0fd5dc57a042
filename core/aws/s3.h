/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/s3.h: the few Amazon S3 calls outboxd needs: create-only writes of
 * immutable artifacts, reads, listing, deletion (and bucket creation for
 * tests and emulators).
 *
 * Every call takes a client made with aws_http_new(env, AWS_SERVICE_S3);
 * the same threading rules apply.  Addressing is path-style
 * (endpoint/bucket/key) unless the s3_* call is given virtual_hosted =
 * true (bucket.endpoint/key).  Keys are encoded once per segment, '/'
 * kept.  Return convention as in sqs.h: 0 ok, -1 with res filled.
 */
#ifndef OUTBOX_CORE_AWS_S3_H
#define OUTBOX_CORE_AWS_S3_H

#include <stdbool.h>
#include <stddef.h>

#include "aws/error.h"
#include "aws/http.h"
#include "common/compiler.h"

/* Addressing of one bucket; all pointers borrowed. */
struct s3_bucket {
	struct aws_http *http;
	const char *name;
	bool virtual_hosted;
};

enum s3_put_outcome {
	S3_PUT_CREATED,         /* the object did not exist and was written */
	S3_PUT_ALREADY_PRESENT, /* it existed with exactly this content */
	S3_PUT_CONFLICT,        /* it existed with other content (an error) */
};

/*
 * PutObject with If-None-Match: * and Content-MD5.  On 412 the stored
 * object is read back and compared byte for byte: identical content (for
 * instance our own earlier attempt whose answer was lost) is
 * S3_PUT_ALREADY_PRESENT and returns 0; different content is
 * S3_PUT_CONFLICT and returns -1 with a permanent PreconditionFailed.
 * 409 ConditionalRequestConflict (a concurrent write) is transient.
 * content_type may be NULL (application/octet-stream).  Borrowed pointers.
 */
int s3_put_object_create_only(const struct s3_bucket *b, const char *key, const void *body,
                              size_t len, const char *content_type,
                              enum s3_put_outcome *outcome,
                              struct aws_result *res) OUTBOX_MUSTCHECK;

/* *body: NUL-terminated copy, caller frees with free(); *len excludes the
 * NUL.  A missing key is a permanent NoSuchKey. */
int s3_get_object(const struct s3_bucket *b, const char *key, char **body, size_t *len,
                  struct aws_result *res) OUTBOX_MUSTCHECK;

struct s3_object_info {
	long long size;  /* Content-Length; -1 if absent */
	char etag[AWS_HTTP_ETAG_LEN]; /* with its quotes, as sent */
};

/* A missing key is a permanent error with status 404 and code "NotFound". */
int s3_head_object(const struct s3_bucket *b, const char *key, struct s3_object_info *info,
                   struct aws_result *res) OUTBOX_MUSTCHECK;

int s3_delete_object(const struct s3_bucket *b, const char *key,
                     struct aws_result *res) OUTBOX_MUSTCHECK;

/* CreateBucket in the client's region; BucketAlreadyOwnedByYou is success. */
int s3_create_bucket(const struct s3_bucket *b, struct aws_result *res) OUTBOX_MUSTCHECK;

struct s3_list_entry {
	char *key;               /* decoded; owned by the page */
	long long size;
	char last_modified[32];  /* ISO 8601 as sent, e.g. 2026-01-02T03:04:05.000Z */
	char etag[AWS_HTTP_ETAG_LEN]; /* decoded, with its quotes */
};

struct s3_list_page {
	struct s3_list_entry *entries; /* owned; n entries */
	size_t n;
	bool is_truncated;
	char *next_token; /* owned; NULL unless is_truncated */
};

/* One ListObjectsV2 request; all strings borrowed, NULL when unused. */
struct s3_list_request {
	const char *prefix;
	const char *start_after;
	const char *continuation_token; /* next_token of the previous page */
	int max_keys;                   /* 1..1000; 0: the server default */
};

/*
 * One page of ListObjectsV2.  Keep calling with continuation_token =
 * page.next_token while page.is_truncated.  *page is overwritten: free
 * the previous page with s3_list_page_free() first (and after the last
 * page, also after errors).
 */
int s3_list_objects_v2(const struct s3_bucket *b, const struct s3_list_request *req,
                       struct s3_list_page *page, struct aws_result *res) OUTBOX_MUSTCHECK;
void s3_list_page_free(struct s3_list_page *page);

#endif
