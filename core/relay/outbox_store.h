/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/outbox_store.h: the relay's SQL on outbox.outbox_events (docs/relay.md).
 *
 * A relay pass is one transaction on the lane's connection:
 * outbox_store_claim() begins it and locks the claimed rows (FOR UPDATE
 * SKIP LOCKED), the events are sent, outbox_store_mark() records their
 * outcomes and commits.  Nothing is written before the mark, so an event
 * goes from NEW to its outcome in one row version; another relay skips the
 * locked rows; a relay that dies or hangs releases them with its session
 * (the lane sets idle_in_transaction_session_timeout to
 * [relay] claim_lease_seconds), and they are sent again, which the
 * consumer absorbs.  The two statements run prepared:
 * outbox_store_prepare() once per connection, before its first claim.
 *
 * Errors come back in err (the server's message); nothing is logged here.
 */
#ifndef OUTBOX_CORE_RELAY_OUTBOX_STORE_H
#define OUTBOX_CORE_RELAY_OUTBOX_STORE_H

#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"
#include "db/registry.h"

/* Dead reasons the relay writes to outbox_events.dead_reason. */
#define OUTBOX_DEAD_OVERSIZE "OVERSIZE"
#define OUTBOX_DEAD_INVALID_BODY "INVALID_BODY"
#define OUTBOX_DEAD_REJECTED "REJECTED"
#define OUTBOX_DEAD_UNKNOWN_DESTINATION "UNKNOWN_DESTINATION"
/* ... and the one it writes to the job of a dead event. */
#define OUTBOX_JOB_DEAD_UNROUTABLE "UNROUTABLE"

/* How long an event of an unconfigured destination stays NEW before the
 * sweep marks it DEAD: another outboxd may be configured for it. */
#define OUTBOX_UNKNOWN_DESTINATION_GRACE_SECONDS 60
/* A relay whose registry heartbeat (db/registry.h) is younger than this
 * still serves the destinations it registered. */
#define OUTBOX_RELAY_HEARTBEAT_FRESH_SECONDS DB_REGISTRY_FRESH_SECONDS

/* One claimed event.  Pointers borrowed from the owning outbox_claim. */
struct outbox_claimed_event {
	const char *event_id;
	const char *job_id;
	const char *body;  /* NUL-terminated; body_len bytes */
	size_t body_len;
	int attempts;      /* failed attempts so far */
	const char *traceparent; /* the producer's W3C trace context, or NULL */
};

struct outbox_claim {
	PGresult *res;                       /* owned */
	struct outbox_claimed_event *events; /* owned; n entries */
	size_t n;
};

/* Prepares the claim and the mark on a new connection (they run inside a
 * transaction, where a failed EXECUTE could not be retried after a
 * PREPARE).  Returns 0 or -1 with err set. */
int outbox_store_prepare(PGconn *conn, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Begins the pass's transaction and claims up to limit due NEW events of
 * destination, oldest due first, skipping rows another relay has locked
 * (or, from an earlier version, leased) and destinations that are paused.
 * The rows stay locked until outbox_store_mark() or
 * outbox_store_release(); with no event found the transaction has already
 * ended.  *out is filled (n may be 0); free it with
 * outbox_store_claim_free() in every case.  Returns 0 or -1 with err set
 * and no transaction left open.
 */
int outbox_store_claim(PGconn *conn, const char *destination, int limit,
                       struct outbox_claim *out, char *err, size_t errlen) OUTBOX_MUSTCHECK;
void outbox_store_claim_free(struct outbox_claim *c);

enum outbox_outcome {
	OUTBOX_OUTCOME_PUBLISHED, /* sent: message_id set */
	OUTBOX_OUTCOME_RETRY,     /* transient failure: error set */
	OUTBOX_OUTCOME_DEAD,      /* unpublishable: dead_reason and error set */
};

/* The result of one claimed event; strings borrowed. */
struct outbox_mark {
	const char *event_id;
	enum outbox_outcome outcome;
	const char *message_id; /* PUBLISHED */
	const char *error;      /* RETRY and DEAD: for last_error */
	const char *dead_reason;/* DEAD: one of OUTBOX_DEAD_* */
};

struct outbox_mark_stats {
	size_t applied;   /* events updated (all of them, unless one was no longer NEW) */
	size_t jobs_dead; /* PENDING jobs that went DEAD with their event */
};

/*
 * Applies n results of the open pass in one statement and commits:
 * PUBLISHED (sqs_message_id, published_at), RETRY (attempts + 1,
 * next_attempt_at = now() + least(retry_base * 2^attempts, retry_max)
 * seconds, last_error) or DEAD (dead_reason, last_error; the event's job
 * goes DEAD 'UNROUTABLE' too if it is still PENDING at the same redrive
 * generation).  Only rows still NEW change.  Returns 0, or -1 with err set
 * and the transaction rolled back (the events are claimable again).
 */
int outbox_store_mark(PGconn *conn, const struct outbox_mark *marks, size_t n,
                      int retry_base_seconds, int retry_max_seconds,
                      struct outbox_mark_stats *stats, char *err,
                      size_t errlen) OUTBOX_MUSTCHECK;

/* Ends the open pass, if any, without recording anything: its events are
 * claimable again at once.  A broken connection needs nothing. */
void outbox_store_release(PGconn *conn);

/* Called by outbox_store_sweep_unknown() for every event it killed;
 * strings borrowed for the call. */
typedef void (*outbox_swept_fn)(void *arg, const char *event_id, const char *destination);

/*
 * Marks DEAD 'UNKNOWN_DESTINATION' every NEW event whose destination is
 * not one of the n known names nor served by a relay with a fresh
 * registry row (role relay or all: a consumer's row does not count), that
 * has been NEW for at least grace_seconds and that no relay holds (a lease
 * of an earlier release; a pass's lock makes the sweep wait for the pass,
 * whose mark leaves the event no longer NEW); their PENDING jobs go DEAD
 * 'UNROUTABLE'.  on_dead (may be NULL) is called per event.
 * *count gets the number of events.  Returns 0 or -1 with err set.
 */
int outbox_store_sweep_unknown(PGconn *conn, const char *const *known, size_t n,
                               int grace_seconds, outbox_swept_fn on_dead, void *arg,
                               size_t *count, char *err, size_t errlen) OUTBOX_MUSTCHECK;

#endif
