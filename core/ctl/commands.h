/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/commands.h: the outboxctl commands, one file each, that
 * outboxctl.c dispatches to.  Apart from ctl/ctl.h so that the helpers
 * every command calls (ctl.c) never name the commands: calls go one way.
 */
#ifndef OUTBOX_CORE_CTL_COMMANDS_H
#define OUTBOX_CORE_CTL_COMMANDS_H

#include "ctl/ctl.h"

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

#endif
