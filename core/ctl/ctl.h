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

/* Commands: each returns an exit code.  argv[0] is the command name. */
int cmd_migrate(struct ctl *ctl, int argc, char **argv);
int cmd_enqueue_news(struct ctl *ctl, int argc, char **argv);
int cmd_enqueue(struct ctl *ctl, int argc, char **argv);         /* cmd_enqueue.c */
int cmd_status(struct ctl *ctl, int argc, char **argv);
int cmd_create_queues(struct ctl *ctl, int argc, char **argv);   /* cmd_create_queues.c */
int cmd_dead(struct ctl *ctl, int argc, char **argv);            /* cmd_dead.c */
int cmd_redrive(struct ctl *ctl, int argc, char **argv);         /* cmd_redrive.c */
int cmd_ingest_window(struct ctl *ctl, int argc, char **argv);   /* cmd_ingest_window.c */
int cmd_reconcile_artifacts(struct ctl *ctl, int argc, char **argv); /* cmd_reconcile.c */
int cmd_prune(struct ctl *ctl, int argc, char **argv);           /* cmd_prune.c */
int cmd_pause(struct ctl *ctl, int argc, char **argv);           /* cmd_pause.c */
int cmd_resume(struct ctl *ctl, int argc, char **argv);          /* cmd_pause.c */
int cmd_jobs(struct ctl *ctl, int argc, char **argv);            /* cmd_jobs.c */
int cmd_show(struct ctl *ctl, int argc, char **argv);            /* cmd_show.c */
int cmd_cancel(struct ctl *ctl, int argc, char **argv);          /* cmd_cancel.c */
int cmd_retry(struct ctl *ctl, int argc, char **argv);           /* cmd_retry.c */
int cmd_schedules(struct ctl *ctl, int argc, char **argv);       /* cmd_schedules.c */

#endif
