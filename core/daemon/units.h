/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/units.h: what outboxd runs, per destination, so that a reload
 * (daemon/reload.c) can start, stop or restart one destination and leave
 * the others untouched (docs/outboxd.md, "Reloading").
 *
 * A unit is one destination's consumer side: its own plugin registry and
 * instance and its own consumer (workers, DLQ reader, heartbeat), built
 * from a sub-configuration: the running [database], [aws], [s3], [relay]
 * and [consumer] sections plus that one destination.  The consumer
 * services lent to plugins are shared.  The relay runs every lane in one
 * relay (one listener connection, one registry row), rebuilt when a
 * reload changes which destinations exist or a queue URL.
 *
 * Not thread-safe: the main thread starts, reloads and stops.
 */
#ifndef OUTBOX_CORE_DAEMON_UNITS_H
#define OUTBOX_CORE_DAEMON_UNITS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/compiler.h"
#include "config/config.h"

struct daemon_units;
struct unit;

/* What to run: the consumer side (plugins), the relay, or both. */
struct daemon_roles {
	bool consumer;
	bool relay;
};

/*
 * Starts every destination of cfg (borrowed; it must outlive the result:
 * its sections stay the running ones until a restart).  instance_id is
 * copied.  Returns 0 and *out (stop with daemon_units_stop()); -2
 * (DAEMON_PLUGINS_BAD_CONFIG) when a plugin refused its configuration,
 * every problem appended to errs; or -1 (logged).
 */
int daemon_units_start(const struct cfg *cfg, struct daemon_roles roles, const char *instance_id,
                       struct cfg_errors *errs, struct daemon_units **out) OUTBOX_MUSTCHECK;

/* Stops everything at once (one grace period for every consumer) and
 * frees du, with the configurations reloads loaded.  NULL: a no-op. */
void daemon_units_stop(struct daemon_units *du);

/* For daemon/reload.c. */
const struct cfg *daemon_units_base(const struct daemon_units *du);
const struct cfg *daemon_units_current(const struct daemon_units *du);
bool daemon_units_runs_consumer(const struct daemon_units *du);

/*
 * Makes next (owned by du from now on, whatever happens) the running
 * destinations: those of current missing from next are drained and
 * removed, those in restart[] (names, borrowed) and the new ones are
 * (re)started, the rest keep running untouched; the relay is rebuilt when
 * rebuild_relay.  Each failure is logged and the reload goes on.  Returns
 * the number of failures.
 */
int daemon_units_apply(struct daemon_units *du, struct cfg *next, const char *const *restart,
                       size_t n_restart, bool rebuild_relay);

#endif
