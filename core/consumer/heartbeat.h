/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/heartbeat.h: keeps the claims of running handlers alive.
 *
 * One heartbeat per consumer, with two threads: the lease thread (its own
 * database connection) and the visibility thread (its own SQS client, with
 * short timeouts: HEARTBEAT_SQS_TIMEOUT_MS).  Each worker owns
 * [consumer] claim_max slots, one per claim of its batch (from the
 * claim to the start of its completion: running, or waiting to run or to
 * be completed).
 * While a handler runs, every interval (a third of min(lease_seconds,
 * visibility_timeout_seconds), at least 0.5 s):
 *
 *   the lease thread extends the lease of every due slot
 *   (ledger_extend_lease, a CAS binding the claim), one row after the
 *   other, and never waits for SQS;
 *
 *   the visibility thread sets the visibility of the slot's messages (the
 *   job's message and the messages of its receive batch that wait behind
 *   the handler) to visibility_timeout_seconds again.
 *
 * The first visibility beat is due one interval after the batch was
 * received: at once when the claim is won on a message that already
 * waited that long.  heartbeat_end() waits for a beat in progress on that
 * slot, so nothing touches the claim or the messages once the worker
 * starts its completion transaction.
 */
#ifndef OUTBOX_CORE_CONSUMER_HEARTBEAT_H
#define OUTBOX_CORE_CONSUMER_HEARTBEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aws/env.h"
#include "config/config.h"
#include "consumer/ledger.h"
#include "common/compiler.h"
#include "aws/sqs.h"

/* Total time of one heartbeat SQS call (connect: a third of it). */
#define HEARTBEAT_SQS_TIMEOUT_MS 3000

struct heartbeat;

enum heartbeat_outcome {
	HEARTBEAT_KEPT,     /* the claim was kept alive (as far as we know) */
	HEARTBEAT_LOST,     /* a lease extension matched no row: the claim is gone */
	HEARTBEAT_RELEASED, /* released at shutdown, or past its time limit */
};

/* What heartbeat_begin() needs about a running job. */
struct heartbeat_job {
	const struct ledger_claim *claim; /* borrowed during the call (copied) */
	const char *queue_url;            /* borrowed until heartbeat_end() */
	/* Borrowed until heartbeat_end() (the array is copied, the strings are
	 * not): [0] the job's message, then the messages of the same receive
	 * batch still waiting for this worker; 1..SQS_MAX_BATCH_ENTRIES. */
	const char *const *handles;
	size_t n_handles;
	int64_t received_ms;              /* CLOCK_MONOTONIC of the receive */
};

/* cfg and env borrowed (env only during the call).  Returns 0 and *out
 * (free with heartbeat_free()), or -1 with the reason logged. */
int heartbeat_start(const struct cfg *cfg, const struct aws_env *env, size_t n_slots,
                    struct heartbeat **out) OUTBOX_MUSTCHECK;

/* Start beating for slot (see struct heartbeat_job for ownership). */
void heartbeat_begin(struct heartbeat *hb, size_t slot, const struct heartbeat_job *job);

/*
 * The slot's handler starts now (execute()): from here on the lease thread
 * logs a warning once the handler has run half of time_limit_seconds (or
 * HEARTBEAT_LONG_RUN_SECONDS without a limit) and, once it has run
 * time_limit_seconds (0: no limit), gives up on it: the claim goes back to
 * PENDING with its backoff and its outbox event re-armed, as a RETRY
 * (ledger_retry), and the slot's outcome is HEARTBEAT_RELEASED, so the
 * handler's result is discarded whenever it returns.  destination is
 * borrowed until heartbeat_end().
 */
void heartbeat_running(struct heartbeat *hb, size_t slot, int time_limit_seconds,
                       const char *destination);

/* Without a time limit, a handler running this long is logged. */
#define HEARTBEAT_LONG_RUN_SECONDS 600

/* How long past its time limit a handler may still return before its
 * worker is abandoned: a tenth of the limit, at least this. */
#define HEARTBEAT_ABANDON_GRACE_MIN_SECONDS 10

/* The time limit plus the abandon grace, in ms (0: no limit, never). */
int64_t heartbeat_abandon_after_ms(int time_limit_seconds);

/*
 * Whether slot's handler (heartbeat_running) has run past
 * heartbeat_abandon_after_ms() of its limit and its claim is given up
 * already (the RETRY recorded, or the claim lost), so that abandoning its
 * worker loses nothing.  Then its job_id is copied to job_id (len bytes).
 */
bool heartbeat_overdue(struct heartbeat *hb, size_t slot, char *job_id, size_t len);

/*
 * The worker of slots [first, first + n) is abandoned: from now on nothing
 * beats for them, and the lease thread gives back (ledger_release:
 * PENDING, due now; the message reappears after its visibility timeout)
 * every claim of those slots still held, the jobs waiting behind the hung
 * handler in its batch.  Nobody calls heartbeat_end() for them again: they
 * stay taken, and a replacement uses slots of its own.
 */
void heartbeat_abandon(struct heartbeat *hb, size_t first, size_t n);

/* The outcome so far of slot, which keeps beating (a claim waiting in a
 * batch: do not run it unless HEARTBEAT_KEPT). */
enum heartbeat_outcome heartbeat_outcome(struct heartbeat *hb, size_t slot);

/* Adds handles (the array copied, the strings borrowed until
 * heartbeat_end()) to the messages the active slot keeps visible, up to
 * SQS_MAX_BATCH_ENTRIES in all: messages another slot carried until its
 * claim ended. */
void heartbeat_carry(struct heartbeat *hb, size_t slot, const char *const *handles, size_t n);

/* Stop beating for slot (waits for a beat in progress). */
enum heartbeat_outcome heartbeat_end(struct heartbeat *hb, size_t slot);

/*
 * Shutdown after the grace period: stop the threads, then give back every
 * claim still held (ledger_release: PENDING, due now) and make its message
 * visible again; when that fails, re-arm the job's outbox event
 * (ledger_rearm_event).  Returns how many claims were released.
 */
size_t heartbeat_release_all(struct heartbeat *hb);

/* Stops the threads (if running) and frees hb.  NULL is a no-op. */
void heartbeat_free(struct heartbeat *hb);

#endif
