/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/ctl.h: what every outboxctl command shares.
 *
 * Exit codes (docs/outboxctl.md; sysexits.h values): 0 success, 64 usage
 * error, 78 configuration error, 69 a required service is unavailable,
 * 1 any other failure.
 */
#ifndef OUTBOX_CORE_CTL_CTL_H
#define OUTBOX_CORE_CTL_CTL_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "config/config.h"

enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_FAILURE = 1,
	CTL_EXIT_USAGE = 64,
	CTL_EXIT_UNAVAILABLE = 69,
	CTL_EXIT_CONFIG = 78,
};

struct ctl {
	const char *config_path; /* -c FILE; borrowed from argv or the default */
	bool json;               /* --json */
	struct cfg *cfg;         /* loaded on first ctl_config(); owned */
	PGconn *conn;            /* opened on first ctl_db(); owned */
};

/*
 * Load the configuration once.  On failure prints every error to stderr and
 * returns NULL; the command then exits CTL_EXIT_CONFIG.
 */
const struct cfg *ctl_config(struct ctl *ctl);

/*
 * Connect to the configured database once.  On failure prints why and
 * returns NULL; *exit_code is set to CTL_EXIT_CONFIG or CTL_EXIT_UNAVAILABLE.
 */
PGconn *ctl_db(struct ctl *ctl, int *exit_code);

/* Print "outboxctl: " + message + newline to stderr. */
void ctl_error(const char *fmt, ...) OUTBOX_PRINTF(1, 2);

#endif
