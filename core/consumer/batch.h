/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/batch.h: the job pipeline (docs/consumer.md, "The pipeline").
 *
 * Every delivery goes through it, a joined receive or a single message (a
 * batch of one), in chunks of at most [consumer] claim_max:
 *
 *   claim     the claim (claim()): the messages one statement may take
 *             (parsed, not a price job, of this queue's destination, one
 *             per job) in one ledger_claim_batch; a price job with its
 *             window's staleness decided under the window row lock;
 *   rules     each message the claim did not take goes to the rules
 *             (consumer/rules.h): one lookup, then delete, defer, leave;
 *             those the rules let claim (price jobs, a row that was
 *             locked) are offered to the claim once more;
 *   run       the jobs won run one after the other, each kept alive by
 *             its own heartbeat slot from the claim to its completion;
 *   complete  the completions (consumer/complete.h): the success
 *             completion (consumer_complete_ok(): each job's commit()
 *             behind its own savepoint, in a transaction begun only when
 *             one writes, then ledger_succeed_batch; a batch with a price
 *             job locks its claims first) or the failure completion
 *             (consumer_complete_failed(): RETRY with the backoff or the
 *             plugin's retry_after_ms, FAIL).
 *
 * A duplicate delivery of a finished job costs two statements: the claim
 * and the rules' lookup.
 */
#ifndef OUTBOX_CORE_CONSUMER_BATCH_H
#define OUTBOX_CORE_CONSUMER_BATCH_H

#include <stddef.h>

#include "aws/sqs.h"
#include "consumer/worker.h"

/* Handles every message of msgs (borrowed until the caller's flush of
 * deletions); messages not handled because of a stop go back visible.
 * The worker's scratch arrays are made at its first call. */
void consumer_batch_process(struct consumer_worker *w, const struct sqs_messages *msgs);

/* The pipeline's arrays for batches of up to max messages; NULL when out
 * of memory.  Free with consumer_batch_scratch_free() (NULL: no-op). */
struct batch_scratch *consumer_batch_scratch_new(size_t max);
void consumer_batch_scratch_free(struct batch_scratch *s);

#endif
