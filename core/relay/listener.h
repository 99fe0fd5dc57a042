/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/listener.h: the relay's housekeeping thread.
 *
 * It holds one dedicated connection that LISTENs on 'outbox_new' (fed by
 * the trigger of migrations/V7__relay_idle_notify.sql, payload =
 * destination, sent only while a lane of it is idle)
 * and wakes the lane of that destination.  One listener for all lanes:
 * one extra connection per process instead of one per destination, and a
 * lane's own connection stays free for its statements.  The same thread
 * runs the unknown-destination sweep (docs/relay.md) at start and every
 * RELAY_SWEEP_INTERVAL_SECONDS.
 *
 * Nothing depends on it: lanes poll anyway.  When the connection drops it
 * logs once, reconnects with backoff, and on reconnect wakes every lane
 * (notifications sent meanwhile are lost).
 */
#ifndef OUTBOX_CORE_RELAY_LISTENER_H
#define OUTBOX_CORE_RELAY_LISTENER_H

#include <stddef.h>

#include "common/compiler.h"
#include "db/registry.h"

#define RELAY_NOTIFY_CHANNEL "outbox_new"
/* The sweep runs right after each registry beat. */
#define RELAY_SWEEP_INTERVAL_SECONDS DB_REGISTRY_BEAT_SECONDS

/* Wakes destination's lane, or every lane when destination is NULL.
 * Called from the listener thread; destination is borrowed for the call. */
typedef void (*relay_wake_fn)(void *arg, const char *destination);

struct relay_listener;

/*
 * Starts the thread.  conninfo, instance_id (the registry key) and the n
 * names in known (the configured destinations) are copied; wake and arg
 * are kept, and so is role (DB_ROLE_RELAY, or DB_ROLE_ALL when the
 * process runs the consumer too: a static string).  Before every sweep the
 * thread refreshes this process's row in outbox.relay_instances
 * (db/registry.h); relay_listener_stop() deletes it.  Returns 0 and *out
 * (stop and free with relay_listener_stop()), or -1 with the reason logged.
 */
int relay_listener_start(const char *conninfo, const char *instance_id, const char *role,
                         const char *const *known, size_t n,
                         relay_wake_fn wake, void *arg,
                         struct relay_listener **out) OUTBOX_MUSTCHECK;

/* Stops the thread promptly (even mid-backoff), joins it, frees l.
 * NULL is a no-op. */
void relay_listener_stop(struct relay_listener *l);

#endif
