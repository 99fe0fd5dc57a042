/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/relay.h: the only path from the outbox to SQS (docs/relay.md).
 *
 * One lane (thread, database connection, SQS client) per configured
 * destination: it claims due NEW events of that destination only, sends
 * them with SendMessageBatch and marks them PUBLISHED (or backs them off,
 * or marks them DEAD).  See docs/relay.md.
 *
 * The single pass (claim, send, mark) is in relay/lane.h, for programs
 * that drive it themselves (outbox-bench, outbox-faultbench).
 */
#ifndef OUTBOX_CORE_RELAY_RELAY_H
#define OUTBOX_CORE_RELAY_RELAY_H

#include "config/config.h"
#include "db/registry.h"
#include "common/compiler.h"
#include "relay/lane.h"

struct relay;

/*
 * Start every lane.  cfg (borrowed) must outlive the relay; instance_id
 * (copied) names this process in claims ("host:pid") and in the registry,
 * where it registers with role (DB_ROLE_RELAY, or DB_ROLE_ALL when the
 * process runs the consumer too; db/registry.h).  Returns 0 and *out
 * (stop and free with relay_stop()), or -1 with the reason logged.
 * Lanes survive the database or SQS going away: they log, back off and
 * reconnect.
 */
int relay_start(const struct cfg *cfg, const char *instance_id, const char *role,
                struct relay **out) OUTBOX_MUSTCHECK;

/*
 * relay_start() with another publisher for every lane: "sqs" (what
 * relay_start() uses), "null" or "fake" (core/relay/publisher.h), and the
 * role DB_ROLE_RELAY.  For the benchmarks; the daemon always publishes to
 * SQS.
 */
int relay_start_publisher(const struct cfg *cfg, const char *instance_id,
                          const char *publisher_kind, struct relay **out) OUTBOX_MUSTCHECK;

/* Ask every lane to stop after its current batch, join them, free r.
 * NULL is a no-op. */
void relay_stop(struct relay *r);

#endif
