/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/quarantine.h: poison jobs (docs/outboxd.md, "Quarantine").
 *
 * A claim counts the job's earlier handler runs that ended with their
 * process (ledger_claim: crash_count).  Once that reaches
 * [consumer] quarantine_after_crashes the job is not run again: it goes
 * DEAD 'CRASHED' (a CAS binding the claim) and its message is deleted;
 * outboxctl redrive brings it back deliberately.
 */
#ifndef OUTBOX_CORE_CONSUMER_QUARANTINE_H
#define OUTBOX_CORE_CONSUMER_QUARANTINE_H

#include <stdbool.h>

#include "aws/sqs.h"
#include "consumer/ledger.h"
#include "consumer/worker.h"

/* True when claim (borrowed) must not run: its crash count reached the
 * limit.  Below it, a job that crashed before is logged as such. */
bool consumer_quarantine_due(struct consumer_worker *w, const struct ledger_claim *claim);

/* DEAD 'CRASHED' for the claim w holds, m (borrowed) deleted; logged. */
void consumer_quarantine(struct consumer_worker *w, const struct sqs_message *m,
                         const struct ledger_claim *claim);

#endif
