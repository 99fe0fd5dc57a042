/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/port.h: what the consumer's pipeline needs from the queue a
 * message came from, and nothing else.
 *
 * The pipeline and its rules (docs/consumer.md, consumer/batch.h) act on
 * a delivery in exactly three ways: delete it (possibly batched, so a
 * flush ends a receive batch), move its visibility, or leave it.  A port implements
 * those for one queue:
 *
 *   the SQS port (consumer_sqs_port_init): DeleteMessageBatch (one
 *   DeleteMessage for a single entry) and ChangeMessageVisibility against
 *   the real queue; the daemon's workers and DLQ readers use it;
 *
 *   any other implementation, e.g. outbox-faultbench's in-process port,
 *   which records the calls instead of sending them (core/faultbench/).
 *
 * A port is used by one thread at a time.  The message itself is a
 * struct sqs_message (core/aws/sqs.h) whatever the port: a fake port fills
 * message_id, receipt_handle, body and body_len and leaves the rest 0.
 */
#ifndef OUTBOX_CORE_CONSUMER_PORT_H
#define OUTBOX_CORE_CONSUMER_PORT_H

#include <stddef.h>

#include "aws/error.h"
#include "aws/http.h"
#include "common/compiler.h"
#include "aws/sqs.h"

struct consumer_port_ops {
	/* Queue the deletion of m (borrowed; its receipt handle must stay valid
	 * until the next flush).  The port may send it at once or batch it. */
	void (*delete_message)(void *ctx, const struct sqs_message *m);
	/* Send every queued deletion. */
	void (*flush)(void *ctx);
	/* Move m's visibility to seconds (0..43200) from now.  Returns 0, or -1
	 * with res filled. */
	int (*change_visibility)(void *ctx, const struct sqs_message *m, int seconds,
	                         struct aws_result *res);
};

struct consumer_port {
	const struct consumer_port_ops *ops; /* borrowed, static */
	void *ctx;                           /* borrowed; passed to every op */
};

struct delete_pool;

/* The SQS port of one queue: deletions wait for one DeleteMessageBatch,
 * the port's own (sent at each flush) or, when pool is set, the one its
 * destination's workers share (consumer/delete_pool.h; flush then sends
 * nothing: the pool does). */
struct consumer_sqs_port {
	struct aws_http *sqs;  /* borrowed; may change between batches (reconnect) */
	const char *queue_url; /* borrowed */
	const char *dest;      /* borrowed; for log lines */
	struct delete_pool *pool; /* borrowed; NULL: the port's own batch */
	const char *del[SQS_MAX_BATCH_ENTRIES]; /* receipt handles, borrowed */
	size_t n_del;
	unsigned long deletes;       /* messages whose deletion was requested */
	unsigned long requests;      /* the port's own Delete* and ChangeMessageVisibility
	                              * calls (not those of a pool) */
};

/* Sets up p (all pointers borrowed; pool may be NULL) and *port to use it. */
void consumer_sqs_port_init(struct consumer_sqs_port *p, struct aws_http *sqs,
                            const char *queue_url, const char *dest, struct delete_pool *pool,
                            struct consumer_port *port);

#endif
