/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/batch.h: a consumer worker's whole receive batch at once
 * (docs/consumer.md, "Batches").
 *
 * The messages a single claim statement may take (parsed, not a price
 * job, of this queue's destination, one per job) are claimed together
 * (ledger_claim_batch); the jobs won run one after the other, each kept
 * alive by its own heartbeat slot from the claim to its completion; the
 * OK verdicts complete in one transaction (ledger_lock_claims, each job's
 * commit() behind its own savepoint, ledger_succeed_batch).  Every other
 * message, and every message not won, then goes through
 * consumer_worker_process(), the per-message rules of docs/consumer.md.
 */
#ifndef OUTBOX_CORE_CONSUMER_BATCH_H
#define OUTBOX_CORE_CONSUMER_BATCH_H

#include "aws/sqs.h"

struct consumer_worker;

/* Handles every message of msgs (borrowed until the caller's flush of
 * deletions); messages not handled because of a stop go back visible. */
void consumer_batch_process(struct consumer_worker *w, const struct sqs_messages *msgs);

#endif
