/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * db/registry.h: outbox.relay_instances, which outboxd process runs what
 * (docs/schema.md).
 *
 * Every outboxd process keeps one row: its instance id ("host:pid"), its
 * role and the destinations it serves.  It refreshes the row every
 * DB_REGISTRY_BEAT_SECONDS and deletes it when it stops; a process that
 * died leaves a row that goes stale.  The relay's listener beats for a
 * process that runs the relay (role "relay", or "all" with the consumer
 * beside it), the maintenance thread for a consumer-only one: whichever
 * thread the process has anyway.  Only rows whose role includes relaying
 * keep events away from the unknown-destination sweep (relay/outbox_store.h):
 * a consumer cannot send them.  outboxctl status and the console list the
 * rows.
 */
#ifndef OUTBOX_CORE_DB_REGISTRY_H
#define OUTBOX_CORE_DB_REGISTRY_H

#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"

/* The values of outbox.relay_instances.role. */
#define DB_ROLE_RELAY "relay"
#define DB_ROLE_CONSUMER "consumer"
#define DB_ROLE_ALL "all"

/* How often a process refreshes its row. */
#define DB_REGISTRY_BEAT_SECONDS 30
/* A row younger than this still counts (three missed beats make it stale). */
#define DB_REGISTRY_FRESH_SECONDS 90

/*
 * Registers or refreshes instance_id's row with role (DB_ROLE_*) and the n
 * destinations in names (all borrowed), heartbeat_at = now().  Returns 0,
 * or -1 with err set (nothing logged).
 */
int db_registry_beat(PGconn *conn, const char *instance_id, const char *role,
                     const char *const *names, size_t n,
                     char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* Deletes instance_id's row (and its relay lanes' idle marks).  Returns 0,
 * or -1 with err set. */
int db_registry_leave(PGconn *conn, const char *instance_id,
                      char *err, size_t errlen) OUTBOX_MUSTCHECK;

#endif
