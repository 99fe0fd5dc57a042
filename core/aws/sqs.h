/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/sqs.h: Amazon SQS over the JSON protocol (POST /, application/
 * x-amz-json-1.0, X-Amz-Target: AmazonSQS.<Action>).
 *
 * Every call takes a client made with aws_http_new(env, AWS_SERVICE_SQS)
 * and is therefore not thread-safe either.  Requests always go to the
 * client's endpoint with the queue URL in the body: the host of a queue URL
 * is never resolved (emulators return hosts that do not exist).
 *
 * Return convention: 0 when the request as a whole succeeded, -1 with res
 * filled otherwise.  Batch calls can succeed as a whole and still fail
 * some entries: check every per-entry result (docs/aws.md, "Batches").
 */
#ifndef OUTBOX_CORE_AWS_SQS_H
#define OUTBOX_CORE_AWS_SQS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "aws/error.h"
#include "aws/http.h"
#include "common/compiler.h"

#define SQS_MAX_BATCH_ENTRIES 10
#define SQS_MAX_MESSAGE_BYTES 1048576
#define SQS_MAX_BATCH_BYTES 1048576
#define SQS_MAX_ENTRY_ID_LEN 80
#define SQS_MAX_WAIT_SECONDS 20
#define SQS_MAX_VISIBILITY_TIMEOUT 43200

/*
 * Checks a message body before it is sent: 1 to SQS_MAX_MESSAGE_BYTES
 * bytes of valid UTF-8 whose characters are all in the ranges SQS accepts
 * (#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF).  Returns 0, or
 * -1 with res a permanent error (InvalidParameterValue for the size,
 * InvalidMessageContents with the byte offset otherwise).
 */
int sqs_validate_body(const char *body, size_t len, struct aws_result *res) OUTBOX_MUSTCHECK;

/* One message of a SendMessageBatch; all pointers borrowed. */
struct sqs_send_entry {
	const char *id;   /* [A-Za-z0-9_-]{1,80}, distinct within the batch */
	const char *body; /* need not be NUL-terminated */
	size_t body_len;
	const char *traceparent; /* NULL, or sent as the String message attribute "traceparent" */
};

/* One ChangeMessageVisibilityBatch / DeleteMessageBatch entry; borrowed. */
struct sqs_handle_entry {
	const char *id;                 /* as for sqs_send_entry */
	const char *receipt_handle;
	int visibility_timeout;         /* ChangeMessageVisibilityBatch only */
};

/* Outcome of one batch entry; fixed buffers, nothing to free. */
struct sqs_entry_result {
	bool ok;
	enum aws_error_class klass; /* AWS_ERR_NONE when ok */
	bool sender_fault;          /* SQS's SenderFault: the entry itself is bad */
	char message_id[AWS_RESULT_REQUEST_ID_LEN]; /* SendMessageBatch, when ok */
	char code[AWS_RESULT_CODE_LEN];
	char message[AWS_RESULT_MESSAGE_LEN];
};

/*
 * Sends up to SQS_MAX_BATCH_ENTRIES messages.  results[i] (caller's array
 * of n) describes entries[i].  Checked before sending, so nothing is sent
 * when they fail: n in 1..10, ids valid and distinct, and the total size
 * of the valid bodies at most SQS_MAX_BATCH_BYTES (BatchRequestTooLong;
 * the caller should split the batch).  A body that fails
 * sqs_validate_body() is not sent and only its entry fails, permanently.
 * MD5OfMessageBody is verified; a mismatch fails the entry transiently.
 * All pointers borrowed.
 */
int sqs_send_message_batch(struct aws_http *c, const char *queue_url,
                           const struct sqs_send_entry *entries, size_t n,
                           struct sqs_entry_result *results,
                           struct aws_result *res) OUTBOX_MUSTCHECK;

/* One request of sqs_send_message_batches(). */
struct sqs_send_batch {
	const struct sqs_send_entry *entries; /* borrowed; 1..SQS_MAX_BATCH_ENTRIES */
	size_t n;
	struct sqs_entry_result *results;     /* caller's array of n, filled */
	struct aws_result res;                /* out: the request as a whole */
	int rc;                               /* out: what sqs_send_message_batch() returns */
};

/*
 * Sends the n batches to queue_url concurrently (aws/http.h,
 * aws_http_perform_many()), in rounds of at most AWS_HTTP_MAX_TRANSFERS
 * requests; clients holds min(n, AWS_HTTP_MAX_TRANSFERS) distinct clients,
 * one per request of a round.  Each batch ends exactly as
 * sqs_send_message_batch() would have.  All borrowed.
 */
void sqs_send_message_batches(struct aws_http_multi *mh, struct aws_http *const *clients,
                              const char *queue_url, struct sqs_send_batch *b, size_t n);

struct sqs_receive_options {
	int max_messages;       /* 1..10 */
	int wait_time_seconds;  /* 0..20; the request timeout is set above it */
	int visibility_timeout; /* 0..43200; < 0: the queue's default */
	/* false (the zero value): every system and message attribute, as a
	 * DLQ reader records them.  true: only the message attribute
	 * "traceparent" and no system attribute (receive_count and
	 * sent_timestamp_ms stay 0): a main queue's consumer reads nothing
	 * else, and the smaller answer costs less to build and to parse. */
	bool trace_only;
};

/* One received message.  Every pointer is borrowed from the owning
 * struct sqs_messages and valid until sqs_messages_free(). */
struct sqs_message {
	const char *message_id;
	const char *receipt_handle;
	const char *body;   /* NUL-terminated */
	size_t body_len;
	int receive_count;  /* ApproximateReceiveCount; 0 if absent */
	long long sent_timestamp_ms; /* SentTimestamp; 0 if absent */
	const json_t *attributes;         /* borrowed reference: system attributes, or NULL */
	const json_t *message_attributes; /* borrowed reference: user attributes, or NULL */
};

struct sqs_messages {
	struct sqs_message *items; /* owned; n entries */
	size_t n;
	json_t *root;              /* owned reference: the answer the items point into */
};

/*
 * ReceiveMessage with the attributes opts asks for.  *out is
 * replaced (free the previous list first); zero messages is a success.
 * A message whose MD5OfBody does not match is dropped with a warning: it
 * becomes visible again and, if it stays broken, ends in the DLQ.  Free
 * with sqs_messages_free() in every case.
 */
int sqs_receive_message(struct aws_http *c, const char *queue_url,
                        const struct sqs_receive_options *opts, struct sqs_messages *out,
                        struct aws_result *res) OUTBOX_MUSTCHECK;
/*
 * Appends the messages of more to into (the items keep pointing into their
 * own answers, which into now owns) and frees more.  Returns 0, or -1 when
 * out of memory: then both are unchanged and still the caller's.
 */
int sqs_messages_join(struct sqs_messages *into, struct sqs_messages *more) OUTBOX_MUSTCHECK;
void sqs_messages_free(struct sqs_messages *m);

/* The String message attribute "traceparent" of m (borrowed), or NULL. */
const char *sqs_message_traceparent(const struct sqs_message *m);

int sqs_delete_message(struct aws_http *c, const char *queue_url, const char *receipt_handle,
                       struct aws_result *res) OUTBOX_MUSTCHECK;
int sqs_change_message_visibility(struct aws_http *c, const char *queue_url,
                                  const char *receipt_handle, int visibility_timeout,
                                  struct aws_result *res) OUTBOX_MUSTCHECK;
/* Batch forms: 1..10 entries, results[i] for entries[i] (as for send). */
int sqs_delete_message_batch(struct aws_http *c, const char *queue_url,
                             const struct sqs_handle_entry *entries, size_t n,
                             struct sqs_entry_result *results,
                             struct aws_result *res) OUTBOX_MUSTCHECK;
int sqs_change_message_visibility_batch(struct aws_http *c, const char *queue_url,
                                        const struct sqs_handle_entry *entries, size_t n,
                                        struct sqs_entry_result *results,
                                        struct aws_result *res) OUTBOX_MUSTCHECK;

/*
 * Requests this process sent, per SQS action ("other" for the rest), plus
 * "empty_receives" and "messages_received".  New reference (caller
 * json_decref()s it), or NULL when out of memory.
 */
json_t *sqs_request_counts(void) OUTBOX_MUSTCHECK;

/* A queue attribute for CreateQueue; borrowed. */
struct sqs_attribute {
	const char *name;  /* "VisibilityTimeout", "RedrivePolicy", ... */
	const char *value; /* always a string, e.g. RedrivePolicy's JSON text */
};

/* *queue_url: caller frees with free(). */
int sqs_create_queue(struct aws_http *c, const char *name, const struct sqs_attribute *attrs,
                     size_t n_attrs, char **queue_url, struct aws_result *res) OUTBOX_MUSTCHECK;
/* *queue_url: caller frees with free(). */
int sqs_get_queue_url(struct aws_http *c, const char *name, char **queue_url,
                      struct aws_result *res) OUTBOX_MUSTCHECK;
/*
 * names: n attribute names (borrowed), or NULL for "All".  *attrs: new
 * reference to an object of string values; caller json_decref()s it.
 */
int sqs_get_queue_attributes(struct aws_http *c, const char *queue_url,
                             const char *const *names, size_t n, json_t **attrs,
                             struct aws_result *res) OUTBOX_MUSTCHECK;

/* RedrivePolicy JSON text for dlq_arn; caller frees with free(); NULL when
 * out of memory. */
char *sqs_redrive_policy(const char *dlq_arn, int max_receive_count) OUTBOX_MUSTCHECK;

#endif
