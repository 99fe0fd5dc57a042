/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/outbox_store.h: the relay's SQL on outbox.outbox_events (docs/relay.md).
 *
 * Every function is ONE statement run outside an explicit transaction, so
 * each is its own transaction: the claim is committed before anything is
 * sent, and the results of a whole pass are applied at once.
 *
 * Claims are leases: claimed_by is a token unique to one claim (see
 * relay/lane.c) and claim_until bounds how long it is honoured.  Marking
 * binds claimed_by, so a relay whose lease expired and whose events were
 * claimed again by someone else applies nothing.
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

/*
 * Claims up to limit due NEW events of destination whose claim (if any)
 * has expired, oldest due first, skipping rows another relay has locked,
 * and leases them to token for lease_seconds.  *out is filled (n may be
 * 0); free it with outbox_store_claim_free() in every case.  All strings
 * borrowed.  Returns 0 or -1 with err set.
 */
int outbox_store_claim(PGconn *conn, const char *destination, const char *token,
                       int limit, int lease_seconds, struct outbox_claim *out,
                       char *err, size_t errlen) OUTBOX_MUSTCHECK;
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
	size_t applied;   /* events still claimed by token, now updated */
	size_t jobs_dead; /* PENDING jobs that went DEAD with their event */
};

/*
 * Applies n results in one statement: PUBLISHED (sqs_message_id,
 * published_at), RETRY (attempts + 1, next_attempt_at = now() +
 * least(retry_base * 2^attempts, retry_max) seconds, last_error) or DEAD
 * (dead_reason, last_error; the event's job goes DEAD 'UNROUTABLE' too if
 * it is still PENDING at the same redrive generation).  Every claim is
 * cleared.  Only rows still NEW and claimed by token change; the others
 * were taken over after our lease expired.  Returns 0 or -1 with err set.
 */
int outbox_store_mark(PGconn *conn, const char *token, const struct outbox_mark *marks,
                      size_t n, int retry_base_seconds, int retry_max_seconds,
                      struct outbox_mark_stats *stats, char *err,
                      size_t errlen) OUTBOX_MUSTCHECK;

/* Called by outbox_store_sweep_unknown() for every event it killed;
 * strings borrowed for the call. */
typedef void (*outbox_swept_fn)(void *arg, const char *event_id, const char *destination);

/*
 * Marks DEAD 'UNKNOWN_DESTINATION' every NEW event whose destination is
 * not one of the n known names nor served by a relay with a fresh
 * registry row (role relay or all: a consumer's row does not count), that has been NEW for at least grace_seconds and that no
 * relay holds a live claim on; their PENDING
 * jobs go DEAD 'UNROUTABLE'.  on_dead (may be NULL) is called per event.
 * *count gets the number of events.  Returns 0 or -1 with err set.
 */
int outbox_store_sweep_unknown(PGconn *conn, const char *const *known, size_t n,
                               int grace_seconds, outbox_swept_fn on_dead, void *arg,
                               size_t *count, char *err, size_t errlen) OUTBOX_MUSTCHECK;

#endif
