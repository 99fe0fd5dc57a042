/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/plugins.h: the daemon's plugin instances and the consumer that
 * drives them, set up and torn down in the order the plugin ABI requires.
 */
#ifndef OUTBOX_CORE_DAEMON_PLUGINS_H
#define OUTBOX_CORE_DAEMON_PLUGINS_H

#include "config/config.h"
#include "common/compiler.h"

struct daemon_plugins;

/*
 * Load every destination's plugin, validate its plugin.* keys and run its
 * init() and destroy() once, without database services: what
 * --check-config and startup validation need.  Every problem is appended
 * to errs.  cfg may come from cfg_load_partial() with errors: destinations
 * without a plugin are skipped (their problem is already in errs).
 * Returns 0 or -1.
 */
int daemon_plugins_check(const struct cfg *cfg, struct cfg_errors *errs) OUTBOX_MUSTCHECK;

/*
 * Create the consumer's services, one plugin instance per destination, and
 * start the consumer.  cfg (borrowed) must outlive the result.  Returns 0
 * and *out (stop with daemon_plugins_stop()); DAEMON_PLUGINS_BAD_CONFIG
 * when a plugin refused its configuration (every problem appended to errs,
 * as --check-config reports them); or -1 on any other failure (logged).
 */
#define DAEMON_PLUGINS_BAD_CONFIG (-2)
int daemon_plugins_start(const struct cfg *cfg, const char *instance_id,
                         struct cfg_errors *errs, struct daemon_plugins **out) OUTBOX_MUSTCHECK;

/* Stop the consumer, destroy the instances, free everything.  NULL is a no-op. */
void daemon_plugins_stop(struct daemon_plugins *dp);

#endif
