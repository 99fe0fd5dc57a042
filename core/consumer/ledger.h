/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/ledger.h: every state transition of a job (docs/schema.md), one function
 * per transition, each a compare-and-set.
 *
 * Every transition out of CLAIMED binds job_id, claimed_by, status =
 * 'CLAIMED', attempt_count and redrive_generation (price jobs: also the
 * window generation, through the window row).  The functions return 1 when
 * the row changed, 0 when the CAS matched nothing (the caller lost the
 * claim, or someone else decided first: apply nothing), -1 on a database
 * error with the server's message in err.  They neither begin nor commit:
 * a statement outside BEGIN autocommits.
 *
 * One rule of the sample market-data domain lives here, under names that
 * say "price" (docs/price-path.md): a job tied to a row of
 * outbox.price_windows (has_price_window) may complete only while the
 * window still has the job's generation; a corrected window makes it
 * STALE.  Every other job type is generic.
 *
 * The SQL lives in ledger.c only.  ledger_prepare() prepares every
 * statement on a connection: call it once per new connection, before any
 * other ledger_ function (they run the prepared statements).  A PGconn is
 * used by one thread at a time, as libpq requires.
 */
#ifndef OUTBOX_CORE_CONSUMER_LEDGER_H
#define OUTBOX_CORE_CONSUMER_LEDGER_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"

#define LEDGER_JOB_ID_LEN 64
#define LEDGER_NAME_MAX 128
#define LEDGER_CLAIMED_BY_MAX 256

enum ledger_status {
	LEDGER_PENDING = 0,
	LEDGER_CLAIMED,
	LEDGER_SUCCEEDED,
	LEDGER_DEAD,
};

/* What the consumer needs to know about a job before it may claim it. */
struct ledger_job {
	char job_id[LEDGER_JOB_ID_LEN + 1];
	char job_type[LEDGER_NAME_MAX];
	char destination[LEDGER_NAME_MAX];
	enum ledger_status status;
	int redrive_generation;
	int attempt_count;
	bool has_price_window;            /* a price job (docs/price-path.md) */
	char window_symbol[LEDGER_NAME_MAX];
	char window_start[64];            /* as PostgreSQL prints it (UTC) */
	int window_generation;
	double due_in_seconds;            /* next_attempt_at - now(); <= 0: due */
	bool lease_live;                  /* CLAIMED and lease_until > now() */
	double lease_remaining_seconds;   /* CLAIMED: lease_until - now(), >= 0; else 0 */
};

/*
 * What a message binds a job to, besides its id and generation: the
 * destination of the queue it was received from (not the one its body
 * names) and the body's job type and price window generation.  A CAS
 * taking a binding matches only a job with exactly these.  Strings
 * borrowed.
 */
struct ledger_binding {
	const char *destination;
	const char *job_type;
	bool has_price_window;
	int window_generation;
};

/* A claim as won by ledger_claim(): everything a later CAS binds. */
struct ledger_claim {
	char job_id[LEDGER_JOB_ID_LEN + 1];
	char claimed_by[LEDGER_CLAIMED_BY_MAX];
	int attempt_count;          /* after the increment: 1 on the first run */
	int redrive_generation;
	bool has_price_window;
	int window_generation;
	/* Handler runs of the job that ended with their process, this claim's
	 * finding included (docs/outboxd.md, "Quarantine"). */
	int crash_count;
	/* The run is recorded as started (outbox.jobs.started_by) by the
	 * claim, unless the job crashed a process before (crash_count > 0)
	 * or, for a batch claim, is not the one job it records: that one
	 * needs ledger_mark_started() right before it runs. */
	bool run_marked;
	double due_epoch;           /* next_attempt_at, seconds since the epoch:
	                               the producer's commit for a first attempt */
};

/* Prepare every statement on conn.  Returns 0 or -1 with err. */
int ledger_prepare(PGconn *conn, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* "PENDING" ... "DEAD"; static storage. */
const char *ledger_status_name(enum ledger_status s);

/* Reads job_id.  Returns 1 and *out, 0 if there is no such job, -1. */
int ledger_job_lookup(PGconn *conn, const char *job_id, struct ledger_job *out,
                      char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Inside the caller's transaction: lock the price window row (FOR SHARE,
 * so a correction waits) and read its generation.  Returns 1 and
 * *generation, 0 if the window does not exist, -1.
 */
int ledger_price_window_lock(PGconn *conn, const char *symbol, const char *window_start,
                       int *generation, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * The claim (rule 5): PENDING and due, or CLAIMED with an expired lease,
 * of generation redrive_generation and with the binding (the queue's
 * destination, the message's job type and window generation) -> CLAIMED
 * by claimed_by (copied into out), attempt_count + 1, lease_until = now()
 * + lease_seconds, the run recorded as started by this process
 * (started_by) unless the job is a suspect (out->run_marked; a previous
 * run whose process is gone counted in crash_count, see
 * consumer/liveness.h).  On 1, *payload is the job's
 * payload as JSON text (caller frees with free()).
 */
int ledger_claim(PGconn *conn, const char *job_id, int redrive_generation,
                 const struct ledger_binding *binding, const char *claimed_by,
                 int lease_seconds, struct ledger_claim *out, char **payload,
                 char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* The most messages one batch statement takes: the bound of
 * [consumer] claim_max (several SQS receives joined). */
#define LEDGER_BATCH_MAX 1000

/* One message of a receive batch offered to ledger_claim_batch(). */
struct ledger_batch_req {
	const char *job_id;   /* borrowed */
	const char *job_type; /* borrowed */
	int redrive_generation;
};

/*
 * The pipeline's claim: ledger_claim() of n (1..LEDGER_BATCH_MAX)
 * messages of a destination, none of a price job, in one statement
 * (autocommit), each row with its own generation and job type; job ids
 * must be distinct.  Rows locked by
 * another transaction are skipped, not waited for.  A crashed last run
 * is counted as by ledger_claim(); the run is recorded as started only
 * for a job that never crashed a process and, when mark_only is not NULL,
 * only for the job of that id (claims[i].run_marked; the others need
 * ledger_mark_started() before they run).  For each request i
 * this worker won: won[i] = true, claims[i] (claimed_by copied) and
 * payloads[i] (JSON text; caller frees with free()).  For the others
 * won[i] = false and payloads[i] = NULL: the caller applies the
 * rules to them (consumer/rules.h).  Returns the number won, or -1 (on -1 the
 * caller frees the payloads set so far; claims taken but not returned
 * keep their leases until they expire).
 */
int ledger_claim_batch(PGconn *conn, const struct ledger_batch_req *reqs, size_t n,
                       const char *destination, const char *claimed_by, int lease_seconds,
                       const char *mark_only, struct ledger_claim *claims, char **payloads,
                       bool *won, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Inside the caller's transaction: lock (FOR UPDATE, job_id order) the
 * rows of n (1..LEDGER_BATCH_MAX) non-price claims, all by the same
 * claimed_by (claims borrowed), whose claim still holds (the CAS binding
 * of every transition out of CLAIMED); held[i] tells which.  Returns the
 * number held, or -1.
 */
int ledger_lock_claims(PGconn *conn, const struct ledger_claim *const *claims, size_t n,
                       bool *held, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* CLAIMED -> SUCCEEDED for n non-price claims (same claimed_by), each row
 * with its own CAS binding; succeeded[i] tells which changed.  In the
 * caller's transaction, or on its own (autocommit).  Returns the number of
 * rows changed, or -1. */
int ledger_succeed_batch(PGconn *conn, const struct ledger_claim *const *claims, size_t n,
                         bool *succeeded, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* A stale price job (not claimable: PENDING, or CLAIMED with an expired
 * lease, of this generation) -> DEAD, dead_reason 'STALE'. */
int ledger_mark_stale(PGconn *conn, const char *job_id, int redrive_generation,
                      char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* A batch claim's handler run starts: started_by = this process's
 * liveness key and lease_until = now() + lease_seconds, binding the claim.
 * The runs of the n_returned jobs in returned (borrowed), claimed by the
 * same claimed_by, returned before: their started_by is cleared, so a
 * crash now is not counted against them. */
int ledger_mark_started(PGconn *conn, const struct ledger_claim *claim, int lease_seconds,
                        const char *const *returned, size_t n_returned, char *err,
                        size_t errlen) OUTBOX_MUSTCHECK;

/* Heartbeat: lease_until = now() + lease_seconds, binding the claim. */
int ledger_extend_lease(PGconn *conn, const struct ledger_claim *claim, int lease_seconds,
                        char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* CLAIMED -> SUCCEEDED (price jobs: only while the window still has the
 * job's generation, checked under a share lock on the window row). */
int ledger_succeed(PGconn *conn, const struct ledger_claim *claim,
                   char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * A price job whose window was corrected while it ran (ledger_succeed()
 * matched nothing): CLAIMED -> DEAD 'STALE', binding the claim, only if
 * the window (share-locked) has another generation than the job's.  0: the
 * claim is gone or the window did not move.
 */
int ledger_mark_stale_claimed(PGconn *conn, const struct ledger_claim *claim,
                              char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * CLAIMED -> PENDING, next_attempt_at = now() + delay_seconds, last_error,
 * and in the same statement the job's wake-up: its outbox event of that
 * generation re-armed as ledger_rearm_event() does (*rearmed), unless a
 * relay is sending it right now.  With *rearmed the caller deletes the
 * current message: the retry then never counts as an SQS receive.
 */
int ledger_retry(PGconn *conn, const struct ledger_claim *claim, int delay_seconds,
                 const char *last_error, bool *rearmed, char *err,
                 size_t errlen) OUTBOX_MUSTCHECK;

/* CLAIMED -> DEAD with dead_reason (e.g. "PERMANENT") and last_error; a
 * price job whose window has another generation gets 'STALE' instead. */
int ledger_fail(PGconn *conn, const struct ledger_claim *claim, const char *dead_reason,
                const char *last_error, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* CLAIMED -> PENDING, next_attempt_at = now(): a claim given back at
 * shutdown.  attempt_count is kept. */
int ledger_release(PGconn *conn, const struct ledger_claim *claim,
                   char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * A wake-up for a PENDING job in PostgreSQL instead of in SQS: the job's
 * outbox event of redrive_generation (PUBLISHED, or NEW and not being sent
 * by a relay right now) becomes NEW, due at the job's next_attempt_at,
 * same event_id, with last_error = why; the relay publishes a fresh
 * message then.  Used for a delivery that came before the job is due and
 * for a released claim whose message could not be made visible.  Only
 * while the job is still PENDING in that generation.  Returns 1, 0
 * (nothing to re-arm), -1.
 */
int ledger_rearm_event(PGconn *conn, const char *job_id, int redrive_generation,
                       const char *why, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Rule 7, a DLQ arrival the database can still decide: a job of
 * generation redrive_generation and of the binding, non-terminal, without
 * a live lease, with an outbox event of that generation and fewer than
 * max_arrivals DLQ arrivals counts one more (outbox.jobs.dlq_arrivals)
 * and gets a fresh message (its event re-armed, due when the job is); its
 * status is not changed.  Returns 1, 0 (not such a job), -1.
 */
int ledger_rearm_dlq(PGconn *conn, const char *job_id, int redrive_generation,
                     const struct ledger_binding *binding, int max_arrivals,
                     char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Rule 7: a job named by a DLQ message -> DEAD 'DLQ', only if it is of
 * generation redrive_generation and of the binding (the DLQ's destination,
 * the message's job type and window generation), non-terminal and without
 * a live lease.
 */
int ledger_mark_dlq(PGconn *conn, const char *job_id, int redrive_generation,
                    const struct ledger_binding *binding, char *err,
                    size_t errlen) OUTBOX_MUSTCHECK;

/*
 * A statement that changes nothing and fails when this session could not
 * claim or re-arm (permission denied, read-only session, lock timeout):
 * the consumer's test before it receives again after a database error.
 * Returns 0 or -1 with err.
 */
int ledger_probe(PGconn *conn, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* Evidence of one DLQ message; job_id/event_id/attributes may be NULL. */
struct ledger_dlq_record {
	const char *destination;
	const char *sqs_message_id;
	const char *job_id;
	const char *event_id;
	const char *body;
	const char *attributes_json; /* JSON object text */
	int receive_count;           /* < 0: unknown */
	const char *outcome;
};

int ledger_record_dlq(PGconn *conn, const struct ledger_dlq_record *rec,
                      char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * outboxctl redrive, inside the caller's transaction: lock the job; refuse
 * it under a live lease; raise redrive_generation, reset it to PENDING
 * (attempt_count 0, crash_count 0, due now, no claim, no dead_reason) and insert the new
 * outbox event with the relay's body format and the traceparent of the
 * job's newest earlier event that has one.  Returns 1 with *new_generation
 * and event_id (event_id_len >= 128), 0 if the job does not exist, -2 if it
 * is under a live lease, -1 on a database error.
 */
int ledger_redrive(PGconn *conn, const char *job_id, int *new_generation,
                   char *event_id, size_t event_id_len,
                   char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * The SQS message body of a job's event: {"event_id","job_id","job_type",
 * "destination","redrive_generation"} plus "window_generation" when
 * has_price_window.  Returns a string the caller frees with free(), or NULL.
 */
char *ledger_message_body(const char *event_id, const char *job_id, const char *job_type,
                          const char *destination, int redrive_generation,
                          bool has_price_window, int window_generation) OUTBOX_MUSTCHECK;

#endif
