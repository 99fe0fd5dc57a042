/*
 * heartbeat.h: keeps the claims of running handlers alive.
 *
 * One thread per consumer, with its own database connection and SQS
 * client.  Each worker owns SQS_MAX_BATCH_ENTRIES slots, one per claim of
 * its receive batch (running, or waiting to run or to be completed).  While a handler runs, every
 * interval (a third of min(lease_seconds, visibility_timeout_seconds), at
 * least 0.5 s) the thread extends the job's lease (ledger_extend_lease, a
 * CAS binding the claim) and the message's visibility.  heartbeat_end()
 * waits for a beat in progress on that slot, so nothing touches the claim
 * once the worker starts its completion transaction.
 */
#ifndef OUTBOX_CORE_HEARTBEAT_H
#define OUTBOX_CORE_HEARTBEAT_H

#include <stddef.h>

#include "aws_env.h"
#include "config.h"
#include "ledger.h"
#include "log.h"

struct heartbeat;

enum heartbeat_outcome {
	HEARTBEAT_KEPT,     /* the claim was kept alive (as far as we know) */
	HEARTBEAT_LOST,     /* a lease extension matched no row: the claim is gone */
	HEARTBEAT_RELEASED, /* released by heartbeat_release_all() at shutdown */
};

/* cfg and env borrowed (env only during the call).  Returns 0 and *out
 * (free with heartbeat_free()), or -1 with the reason logged. */
int heartbeat_start(const struct cfg *cfg, const struct aws_env *env, size_t n_slots,
                    struct heartbeat **out) OUTBOX_MUSTCHECK;

/* Start beating for slot: claim copied; queue_url and receipt_handle
 * borrowed until heartbeat_end(). */
void heartbeat_begin(struct heartbeat *hb, size_t slot, const struct ledger_claim *claim,
                     const char *queue_url, const char *receipt_handle);

/* The outcome so far of slot, which keeps beating (a claim waiting in a
 * batch: do not run it unless HEARTBEAT_KEPT). */
enum heartbeat_outcome heartbeat_outcome(struct heartbeat *hb, size_t slot);

/* Stop beating for slot (waits for a beat in progress). */
enum heartbeat_outcome heartbeat_end(struct heartbeat *hb, size_t slot);

/*
 * Shutdown after the grace period: stop the thread, then give back every
 * claim still held (ledger_release: PENDING, due now) and make its message
 * visible again.  Returns how many claims were released.
 */
size_t heartbeat_release_all(struct heartbeat *hb);

/* Stops the thread (if running) and frees hb.  NULL is a no-op. */
void heartbeat_free(struct heartbeat *hb);

#endif
