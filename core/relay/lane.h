/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/lane.h: one destination's relay pass, usable without threads.
 *
 * The daemon (relay.c) runs each lane in its own thread; outbox-bench and
 * outbox-faultbench drive relay_lane_pass() themselves, with any publisher
 * (core/relay/publisher.h: "sqs", "null" or the deterministic "fake"):
 *
 *   struct relay_lane_settings s;
 *   relay_lane_settings_from_cfg(cfg, &s);
 *   publisher_fake_new(&pub);
 *   relay_lane_new(conninfo, "news", queue_url, "bench:1", &s, pub, &lane);
 *   do relay_lane_pass(lane, &st); while (st.claimed > 0);
 *   relay_lane_free(lane); publisher_free(pub);
 *
 * A pass is: claim due NEW events of the destination in one statement
 * (committed: FAULT_POINT "relay.after_claim"), send them in as few
 * SendMessageBatch requests as the batch_size / 1 MiB limits allow, as
 * many at once as the publisher's concurrency does (FAULT_POINT
 * "relay.after_send" once every request returned), then apply every
 * result in one statement.  The claim's limit adapts to the backlog: it
 * starts at batch_size, doubles after a full claim up to claim_max and
 * halves back after one that was not.  docs/relay.md has the details.
 *
 * A lane is not thread-safe: one thread drives it at a time.
 */
#ifndef OUTBOX_CORE_RELAY_LANE_H
#define OUTBOX_CORE_RELAY_LANE_H

#include <stdbool.h>
#include <stddef.h>

#include "aws/error.h"
#include "config/config.h"
#include "common/compiler.h"
#include "relay/publisher.h"

struct relay_lane;

/* The [relay] settings a pass uses (see docs/configuration.md). */
struct relay_lane_settings {
	int batch_size;          /* events per SendMessageBatch; clamped to 1..10 */
	int claim_max;           /* most events per claim (>= batch_size) */
	bool synchronous_commit; /* false: the lane's statements skip the WAL flush wait */
	int retry_base_seconds;  /* transient failure: base * 2^attempts ... */
	int retry_max_seconds;   /* ... capped at this */
	int claim_lease_seconds; /* how long a claim keeps other relays away */
};

/* Copies cfg->relay (borrowed) into *s. */
void relay_lane_settings_from_cfg(const struct cfg *cfg, struct relay_lane_settings *s);

/* What one pass did. */
struct relay_pass_stats {
	size_t claimed;             /* events claimed */
	size_t published;           /* marked PUBLISHED */
	size_t retried;             /* backed off after a transient failure */
	size_t dead;                /* marked DEAD (oversize, invalid, rejected) */
	size_t lost;                /* results not applied: our lease had expired and
	                               another relay had claimed the event again */
	size_t jobs_dead;           /* PENDING jobs that went DEAD 'UNROUTABLE' */
	size_t requests;            /* SendMessageBatch requests made */
	size_t max_request_entries; /* entries in the largest request */
	size_t failed_requests;     /* requests that failed as a whole */
	size_t limit;               /* the claim's limit this pass */
	bool full;                  /* claimed == limit: more may be due now */
	/* The last whole-request failure (failed_requests > 0): its class and
	 * canonical code, e.g. AWS_ERR_PERMANENT "QueueDoesNotExist". */
	enum aws_error_class failure_class;
	char failure_code[AWS_RESULT_CODE_LEN];
};

/*
 * Creates a lane.  conninfo, destination, queue_url and instance_id are
 * copied; s is copied; pub is borrowed (it must outlive the lane and be
 * used by no other thread while a pass runs).  instance_id names the
 * process in claims ("host:pid").  No connection is made yet: the first
 * pass connects.  Returns 0 and *out (free with relay_lane_free()), or -1
 * when out of memory.
 */
int relay_lane_new(const char *conninfo, const char *destination, const char *queue_url,
                   const char *instance_id, const struct relay_lane_settings *s,
                   struct publisher *pub, struct relay_lane **out) OUTBOX_MUSTCHECK;

/*
 * Runs one pass; *stats is overwritten.  Returns 0 when the database part
 * worked, even if sends failed (see stats->failed_requests, retried,
 * dead).  Returns -1 when the database could not be reached or a statement
 * failed: the reason is logged (once per outage), the connection is
 * dropped if it is gone, and the next pass reconnects.  Claimed events
 * whose results could not be recorded stay NEW and are sent again once
 * their lease expires.
 */
int relay_lane_pass(struct relay_lane *lane, struct relay_pass_stats *stats) OUTBOX_MUSTCHECK;

/*
 * Whether the lane is pacing its claims (relay/relay.c lingers for a full
 * batch between passes): then every claim's limit is one batch
 * (batch_size), so the events that arrived beyond it wait for the next
 * pass instead of going out in a part-full request of their own.  false
 * (the default): the limit adapts to the backlog as described above.
 */
void relay_lane_set_paced(struct relay_lane *lane, bool paced);

/*
 * Whether the lane is asleep waiting for a notification (idle) or busy
 * polling on its own: an idle lane has a row in outbox.relay_idle, and
 * only then do producers' commits notify (migrations/V7).  Writes the row
 * or removes it when the state changes; a no-op otherwise.  Returns 1 when
 * the state changed, 0 when it did not, -1 when the statement failed
 * (logged; the lane then just polls, and the next call tries again).
 */
int relay_lane_set_idle(struct relay_lane *lane, bool idle);

/* Borrowed from the lane. */
const char *relay_lane_destination(const struct relay_lane *lane);

/* Removes the lane's outbox.relay_idle row (best effort) and closes the
 * connection; NULL is a no-op.  Does not free the publisher. */
void relay_lane_free(struct relay_lane *lane);

#endif
