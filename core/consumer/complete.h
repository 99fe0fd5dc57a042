/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/complete.h: the pipeline's completions (consumer/batch.c calls
 * them once a job's handler has returned; docs/consumer.md, "The
 * pipeline", step 6).  Every pointer is borrowed from the batch.
 */
#ifndef OUTBOX_CORE_CONSUMER_COMPLETE_H
#define OUTBOX_CORE_CONSUMER_COMPLETE_H

#include <stddef.h>

#include <outbox/plugin.h>

#include "consumer/bjob.h"

/*
 * The success completion of the n jobs of todo[] whose handlers returned
 * OK: each job's commit() and its success CAS commit together; a job whose
 * claim no longer holds is counted lost and its writes are discarded.
 */
void consumer_complete_ok(struct batch *b, struct bjob *const *todo, size_t n);

/* The failure completion of j (v is RETRY or FAIL; why goes to last_error). */
void consumer_complete_failed(struct batch *b, struct bjob *j, enum outbox_verdict v,
                              const char *why);

#endif
