/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/error.h: the outcome of every SQS and S3 call, error parsing, and the
 * one place that decides whether an AWS failure is worth retrying.
 *
 * Every sqs_* and s3_* call fills a struct aws_result.  Callers branch on
 * result.klass only; code, message and request_id are for logs and for the
 * few codes a caller handles specially (e.g. S3 412 PreconditionFailed).
 *
 * Classification follows docs/aws.md ("Error classification"): the error
 * code wins over the HTTP status, because SQS sends throttling as 403, the
 * same status as a real authorisation failure.
 *
 * XML error bodies (S3, the query protocol) are read with libxml2
 * (aws/xml.h).
 */
#ifndef OUTBOX_CORE_AWS_ERROR_H
#define OUTBOX_CORE_AWS_ERROR_H

#include <stdbool.h>
#include <stddef.h>

#include "common/compiler.h"

enum aws_error_class {
	AWS_ERR_NONE = 0,  /* success */
	AWS_ERR_TRANSIENT, /* retry the same request later, with backoff */
	AWS_ERR_PERMANENT, /* the same request will fail again: do not retry */
};

#define AWS_RESULT_CODE_LEN 96
#define AWS_RESULT_MESSAGE_LEN 512
#define AWS_RESULT_REQUEST_ID_LEN 96

/*
 * Fixed-size buffers on purpose: results live on the caller's stack in hot
 * loops, need no free, and are safe to copy.  Long values are truncated.
 */
struct aws_result {
	long status;      /* HTTP status; 0 when no response arrived */
	int curl_code;    /* CURLcode of the transfer; 0 when it completed */
	enum aws_error_class klass;
	/* Canonical error code (legacy query codes mapped to the JSON name,
	 * e.g. "QueueDoesNotExist"); "" when none. */
	char code[AWS_RESULT_CODE_LEN];
	char message[AWS_RESULT_MESSAGE_LEN]; /* "" when none; never a secret */
	char request_id[AWS_RESULT_REQUEST_ID_LEN]; /* "" when none */
};

/* Sets *r to success (all zero / empty). */
void aws_result_reset(struct aws_result *r);

/*
 * Records an error detected without (or before) a request, e.g. a batch
 * that is too large: status 0, the given code (canonicalised) and message,
 * and the class aws_error_classify() gives that code.  Returns -1 so callers
 * can write "return aws_result_fail(...)".
 */
int aws_result_fail(struct aws_result *r, const char *code, const char *fmt, ...)
	OUTBOX_PRINTF(3, 4);

/*
 * Retry or not, for everyone.  http_status 0 means no response; code is
 * the error code (any spelling, NULL or "" if none); curl_code is the
 * CURLcode (0 when the transfer completed).  A known code decides first,
 * then a transport failure, then the status (5xx, 408 and 429 transient,
 * other 3xx/4xx permanent, 2xx success).  Clock-skew codes are transient.
 */
enum aws_error_class aws_error_classify(long http_status, const char *code,
                                        int curl_code);

/* Codes that clear only with time (OverLimit, PurgeQueueInProgress,
 * QueueDeletedRecently): retry, but only after a long delay. */
bool aws_error_is_slow_clearing(const char *code);
/* Clock-skew codes (RequestExpired, RequestTimeTooSkewed,
 * RequestInTheFuture): the transport corrects its clock from the answer's
 * Date and signs again once (aws/clock_skew.h); repeated failures need an
 * operator. */
bool aws_error_is_clock_skew(const char *code);

/* "transient", "permanent" or "none"; static storage. */
const char *aws_error_class_name(enum aws_error_class klass);

/*
 * Maps a legacy query-protocol code to its JSON-protocol name
 * ("AWS.SimpleQueueService.NonExistentQueue" -> "QueueDoesNotExist");
 * returns code itself (borrowed) when it has no other spelling.
 */
const char *aws_error_canonical_code(const char *code);

/*
 * Normalises an error-type value: the part after the last '#', cut at the
 * first ':' (JSON __type and X-Amzn-ErrorType) or ';' (x-amzn-query-error),
 * canonicalised.  Writes "" when in is NULL or empty.
 */
void aws_error_normalize_code(const char *in, char *out, size_t out_size);

/*
 * Fills r->code and r->message from an SQS JSON-protocol error answer.
 * body may be anything (it is not NUL-terminated); a body that is not an
 * error object leaves the fields as they were.  The code comes from
 * __type, else error_type_header (X-Amzn-ErrorType), else query_error_header
 * (x-amzn-query-error); headers may be NULL.  All pointers borrowed.
 */
void aws_error_parse_json(const char *body, size_t len, const char *error_type_header,
                          const char *query_error_header, struct aws_result *r);

/* Fills r->code, r->message and (if still empty) r->request_id from an S3
 * or query-protocol XML <Error> document; a body that is not well-formed
 * XML, or has no <Error>, leaves them as they were.  All pointers borrowed. */
void aws_error_parse_xml(const char *body, size_t len, struct aws_result *r);

#endif
