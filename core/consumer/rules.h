/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/rules.h: the rules that decide a delivery the pipeline's claim
 * did not win (docs/consumer.md, "The rules"): one lookup of the job, the
 * choice of consumer_message_decide(), and what it says done (ignore,
 * terminal or obsolete delete, defer, leave).  A duplicate delivery costs
 * the claim statement and this lookup, nothing more.
 */
#ifndef OUTBOX_CORE_CONSUMER_RULES_H
#define OUTBOX_CORE_CONSUMER_RULES_H

#include <stdbool.h>

#include "aws/sqs.h"
#include "consumer/ledger.h"
#include "consumer/message.h"
#include "consumer/worker.h"

/*
 * Decides m (borrowed until the next flush of deletions), parsed as pm.
 * Returns true when the rules say the job may be claimed (rules 4 and 5:
 * a price job, or a job that became claimable since the claim statement):
 * *job is then the job as read, for the pipeline's claim.  Else the
 * delivery is decided (or left alone after a database error, logged).
 */
bool consumer_rules_apply(struct consumer_worker *w, const struct sqs_message *m,
                          const struct consumer_msg *pm, struct ledger_job *job);

/* A claim the rules allowed was lost to another delivery: the message
 * goes when the job ended meanwhile, else it is hidden for the lease the
 * winner holds. */
void consumer_rules_lost(struct consumer_worker *w, const struct sqs_message *m,
                         const char *job_id);

#endif
