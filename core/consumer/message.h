/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/message.h: parsing a received message body and choosing what
 * the rules of docs/consumer.md say to do with it.  Pure functions, no
 * I/O: consumer/rules.c performs the action.
 */
#ifndef OUTBOX_CORE_CONSUMER_MESSAGE_H
#define OUTBOX_CORE_CONSUMER_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/ledger.h"
#include "common/compiler.h"
#include "config/config.h"

/* A parsed body, as ledger_message_body() (consumer/ledger.h) writes it. */
struct consumer_msg {
	char event_id[LEDGER_NAME_MAX * 2 + LEDGER_JOB_ID_LEN];
	char job_id[LEDGER_JOB_ID_LEN + 1];
	char job_type[LEDGER_NAME_MAX];
	char destination[LEDGER_NAME_MAX];
	int redrive_generation;
	bool has_price_window;
	int window_generation;
};

/*
 * Parse body (len bytes, borrowed).  Checks: a JSON object with string
 * event_id, job_id (64 lower-case hex), job_type, destination, a
 * non-negative integer redrive_generation, an optional positive integer
 * window_generation, and event_id == job_type:job_id:redrive_generation.
 * Returns 0, or -1 with the reason in why.
 */
int consumer_message_parse(const char *body, size_t len, struct consumer_msg *out,
                           char *why, size_t whylen) OUTBOX_MUSTCHECK;

enum consumer_action {
	CONSUMER_IGNORE,          /* rule 1: do not run, do not delete, change nothing */
	CONSUMER_DELETE_TERMINAL, /* rule 2: terminal job: delete, run nothing */
	CONSUMER_DELETE_OBSOLETE, /* rule 4: older redrive generation: delete, never claim */
	CONSUMER_DEFER,           /* rule 3: not due: move the visibility to the due time */
	CONSUMER_LEAVE,           /* live lease elsewhere: hide it for the rest of the lease */
	CONSUMER_CLAIM,           /* rules 4 (price window) and 5: try the claim */
};

/* "ignore", "terminal", ...; static storage. */
const char *consumer_action_name(enum consumer_action a);

/*
 * The rule for a parsed message m received on queue_destination's queue,
 * given the job as it is now (job NULL: no such job).  *defer_seconds is
 * set for CONSUMER_DEFER (the due time) and CONSUMER_LEAVE (the rest of
 * the lease), 1..43200, else 0; *why (static text) explains IGNORE
 * and LEAVE.  All pointers borrowed.
 */
enum consumer_action consumer_message_decide(const char *queue_destination,
                                             const struct consumer_msg *m,
                                             const struct ledger_job *job,
                                             int *defer_seconds, const char **why);

/* min(base * 2^(attempt - 1), max) for attempt >= 1, without overflow. */
int consumer_backoff_seconds(int base, int max, int attempt);

/* The delay of a RETRY of attempt attempt: retry_after_ms (the plugin's,
 * ABI 1.1) rounded up to seconds when positive, else the backoff of
 * [relay] retry_base_seconds; either capped at retry_max_seconds. */
int consumer_retry_delay_seconds(const struct cfg *cfg, int attempt, int64_t retry_after_ms);

/* seconds clamped to 0..43200, the SQS visibility range. */
int consumer_visibility_cap(double seconds);

#endif
