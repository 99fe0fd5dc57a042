/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/reload.h: SIGHUP (docs/outboxd.md, "Reloading").
 */
#ifndef OUTBOX_CORE_DAEMON_RELOAD_H
#define OUTBOX_CORE_DAEMON_RELOAD_H

#include <stdbool.h>

#include "config/config.h"
#include "daemon/units.h"

/*
 * Re-reads path (borrowed) and validates it as --check-config does (the
 * plugins of a consumer loaded, their options checked, init() and
 * destroy() run).  On any error every problem is logged (FILE:LINE: ...)
 * and du keeps running as it was; returns -1.  Otherwise added
 * destinations start, removed ones drain and their plugin is unloaded,
 * changed ones restart, unchanged ones keep running; a change to a section
 * that needs a restart ([outboxd], [database], [aws], [s3], [relay],
 * [consumer]) is logged and the running value stays.  Returns 0 (or the number of
 * destinations that failed to start, each logged).
 */
int daemon_reload(struct daemon_units *du, const char *path);

/*
 * [logging] level and format, applied at start and by every successful
 * reload, except what the command line set: --log-level and --log-format
 * win over the file for the life of the process.  Call
 * daemon_logging_pin() once, before the first daemon_logging_apply().
 */
void daemon_logging_pin(bool level, bool format);
void daemon_logging_apply(const struct cfg *cfg);

#endif
