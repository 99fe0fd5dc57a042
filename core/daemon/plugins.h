/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/plugins.h: checking every destination's plugin (--check-config,
 * reload); the running instances are in daemon/units.h.
 */
#ifndef OUTBOX_CORE_DAEMON_PLUGINS_H
#define OUTBOX_CORE_DAEMON_PLUGINS_H

#include "config/config.h"
#include "common/compiler.h"

/*
 * Load every destination's plugin, validate its plugin.* keys and run its
 * init() and destroy() once, without database services: what
 * --check-config and startup validation need.  Every problem is appended
 * to errs.  cfg may come from cfg_load_partial() with errors: destinations
 * without a plugin are skipped (their problem is already in errs).
 * Returns 0 or -1.
 */
int daemon_plugins_check(const struct cfg *cfg, struct cfg_errors *errs) OUTBOX_MUSTCHECK;

/* What daemon_units_start() returns when a plugin refused its configuration. */
#define DAEMON_PLUGINS_BAD_CONFIG (-2)

#endif
