/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/delete_pool.h: the deletions of one destination's workers,
 * gathered into shared DeleteMessageBatch requests.
 *
 * A worker that sends its own batch's deletions at the batch's end pays a
 * request for every batch, and for every ten messages of it: at a few
 * hundred jobs per second per destination a batch holds five or six, so
 * deletions cost about a request per six jobs where ten would do.  A pool
 * takes the deletions of all of a destination's workers: the worker whose
 * deletion fills it to ten sends the ten at once, on its own SQS client;
 * a pool that does not fill is sent by the pools' thread when its oldest
 * deletion is DELETE_POOL_MAX_AGE_MS old, and whatever waits is sent when
 * the pools stop.  So while SQS answers, a deletion is sent at most that
 * long after its job's completion committed, which the visibility timeout
 * (seconds) dwarfs; while it does not, the thread's requests give up
 * after DELETE_POOL_SQS_TIMEOUT_MS (docs/consumer.md, "Threads").  The
 * consumer makes pools unless [consumer] linger_max_ms is 0 (no batching
 * across time at all).
 *
 * A deletion that is lost (the request failed, the process died before
 * the send) costs what it always did: the message comes back after its
 * visibility timeout, and rule 2 deletes it without running anything.
 */
#ifndef OUTBOX_CORE_CONSUMER_DELETE_POOL_H
#define OUTBOX_CORE_CONSUMER_DELETE_POOL_H

#include <stddef.h>

#include "aws/env.h"
#include "aws/http.h"
#include "common/compiler.h"
#include "config/config.h"

/* How long a deletion may wait for others: at a few hundred jobs per
 * second per destination, long enough that they fill a request of ten
 * (measured: 20 ms left 13 % of the requests part-full, 100 ms none). */
#define DELETE_POOL_MAX_AGE_MS 100
/* The deletions thread's request timeout (a third of it to connect). */
#define DELETE_POOL_SQS_TIMEOUT_MS 3000

struct delete_pools; /* one set per consumer: a pool per destination, one thread */
struct delete_pool;  /* one destination's */

/*
 * One pool per destination of cfg (all borrowed, and must outlive the
 * pools), sent after max_age_ms (> 0; DELETE_POOL_MAX_AGE_MS) by a thread
 * that makes its own SQS client from env.  Returns 0 and *out (free with
 * delete_pools_stop), or -1 (logged).
 */
int delete_pools_start(const struct cfg *cfg, const struct aws_env *env, int max_age_ms,
                       struct delete_pools **out) OUTBOX_MUSTCHECK;
/* Destination i's pool (borrowed from ps). */
struct delete_pool *delete_pools_of(struct delete_pools *ps, size_t i);
/*
 * Queues the deletion of receipt_handle (borrowed: copied).  When that
 * fills the pool, sends the ten on sqs (borrowed: the calling thread's own
 * client, not NULL) before returning.
 */
void delete_pool_add(struct delete_pool *p, struct aws_http *sqs, const char *receipt_handle);
/* Sends every deletion that waits, stops the thread, frees ps (NULL: nothing).
 * No delete_pool_add() may run or follow. */
void delete_pools_stop(struct delete_pools *ps);

/*
 * DeleteMessage (n == 1) or DeleteMessageBatch (2..10) of handles
 * (borrowed) from queue_url on sqs; failures logged with dest.  Returns
 * the requests sent (0 or 1).  Also the ports' unpooled send
 * (consumer/port.c).
 */
unsigned delete_send(struct aws_http *sqs, const char *queue_url, const char *dest,
                     const char *const *handles, size_t n);

#endif
