/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/publisher.h: where the relay sends a batch of outbox events.
 *
 * The relay only ever calls publisher_send_batch(), so the same relay code
 * runs against any of three implementations:
 *
 *   "sqs"   the real client (SendMessageBatch, core/aws/sqs.h);
 *   "null"  accepts every entry at once and keeps nothing (outbox-bench
 *           measures the database side of the relay with it);
 *   "fake"  deterministic: accepts every entry, gives it the message id
 *           "fake-<n>" (n counts from 1 per publisher) and records what it
 *           was asked to send, so outbox-faultbench can count losses and
 *           duplicates without a network.
 *
 * A publisher is NOT thread-safe (the SQS client underneath is not): the
 * relay makes one per lane.  The fake's recording is protected by a mutex
 * so a test may read it while a lane thread sends.
 */
#ifndef OUTBOX_CORE_RELAY_PUBLISHER_H
#define OUTBOX_CORE_RELAY_PUBLISHER_H

#include <stddef.h>

#include "aws/env.h"
#include "aws/error.h"
#include "common/compiler.h"
#include "aws/sqs.h"

struct publisher;

/*
 * The SQS publisher: a client for env's endpoint and credentials (copied;
 * env may be freed afterwards).  Returns 0 and *out (free with
 * publisher_free()), or -1 with the reason logged.
 */
int publisher_sqs_new(const struct aws_env *env, struct publisher **out) OUTBOX_MUSTCHECK;

/*
 * An SQS publisher that keeps up to concurrency requests in flight at once
 * in publisher_send_batches() (at most AWS_HTTP_MAX_TRANSFERS): one client
 * and connection each, driven by one libcurl multi handle.
 * publisher_sqs_new() is this with 1.
 */
int publisher_sqs_new_concurrent(const struct aws_env *env, size_t concurrency,
                                 struct publisher **out) OUTBOX_MUSTCHECK;

/* The null and fake publishers; -1 only when out of memory. */
int publisher_null_new(struct publisher **out) OUTBOX_MUSTCHECK;
int publisher_fake_new(struct publisher **out) OUTBOX_MUSTCHECK;

/*
 * Creates a publisher by name ("sqs", "null" or "fake"); env (borrowed) is
 * only used by "sqs" and may be NULL for the others.  Returns -1 with the
 * reason logged for an unknown name.
 */
int publisher_new(const char *kind, const struct aws_env *env,
                  struct publisher **out) OUTBOX_MUSTCHECK;
/* publisher_new() with the concurrency of publisher_sqs_new_concurrent()
 * (ignored by "null" and "fake"). */
int publisher_new_concurrent(const char *kind, const struct aws_env *env, size_t concurrency,
                             struct publisher **out) OUTBOX_MUSTCHECK;

/* "sqs", "null" or "fake"; static storage. */
const char *publisher_kind(const struct publisher *p);

/*
 * Sends n (1..SQS_MAX_BATCH_ENTRIES) entries to queue_url with the
 * contract of sqs_send_message_batch(): 0 when the request as a whole
 * succeeded (then check every results[i]), -1 with res filled when it
 * failed as a whole.  All pointers borrowed.
 */
int publisher_send_batch(struct publisher *p, const char *queue_url,
                         const struct sqs_send_entry *entries, size_t n,
                         struct sqs_entry_result *results,
                         struct aws_result *res) OUTBOX_MUSTCHECK;

/*
 * Sends n batches (each 1..SQS_MAX_BATCH_ENTRIES entries), as many at once
 * as the concurrency allows; the null and fake publishers send them one
 * after the other.  Every b[i] ends as publisher_send_batch() would have
 * (b[i].rc, b[i].res, b[i].results).  All borrowed.
 */
void publisher_send_batches(struct publisher *p, const char *queue_url,
                            struct sqs_send_batch *b, size_t n);

/* NULL is a no-op. */
void publisher_free(struct publisher *p);

/*
 * Called by the fake publisher for every entry it accepts, under its lock,
 * before publisher_send_batch() returns: outbox-faultbench appends the
 * message to a file, a "queue" that survives the sending process being
 * killed.  All pointers borrowed for the call; body is body_len bytes.
 * Returning -1 fails the rest of the request as a whole (nothing sent).
 */
typedef int (*publisher_fake_hook)(void *arg, const char *queue_url, const char *body,
                                   size_t body_len);

/* Sets (fn NULL: clears) the fake's hook; arg borrowed.  No-op for other kinds. */
void publisher_fake_set_hook(struct publisher *p, publisher_fake_hook fn, void *arg);

/* One message the fake publisher accepted; strings owned by the publisher. */
struct publisher_fake_message {
	char *queue_url;
	char *body;
	size_t body_len;
	char message_id[32];
};

/* Messages the fake accepted so far (0 for other kinds). */
size_t publisher_fake_count(struct publisher *p);
/* SendMessageBatch requests the fake answered so far (0 for other kinds). */
size_t publisher_fake_requests(struct publisher *p);
/*
 * Copies message i (0-based, in the order sent) into *out; the strings
 * stay owned by the publisher and valid until publisher_free().  Returns
 * 0, or -1 when i is out of range or p is not a fake.
 */
int publisher_fake_message(struct publisher *p, size_t i,
                           struct publisher_fake_message *out) OUTBOX_MUSTCHECK;

#endif
