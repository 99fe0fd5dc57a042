/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/job_text.h: what the job commands (jobs, show, cancel, retry) share:
 * printing texts that may be hostile, the documents of core/ops/, who is
 * acting, and the exit code of an ops_result.
 */
#ifndef OUTBOX_CORE_CTL_JOB_TEXT_H
#define OUTBOX_CORE_CTL_JOB_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "ctl/ctl.h"

/*
 * s (borrowed) on out, at most max bytes of it, so that no byte can drive
 * the terminal: printable ASCII and valid UTF-8 letters as they are,
 * "\\" doubled, \n \r \t as such, every other byte (control characters,
 * C1 controls, bidirectional overrides, invalid UTF-8) as \xNN.  A longer
 * s ends in "... (N bytes)".
 */
void ctl_print_escaped(FILE *out, const char *s, size_t max);

/* v (borrowed) as compact JSON, escaped as above except that JSON's own
 * backslashes stay single (the text is JSON, and reads as such). */
void ctl_print_escaped_json(FILE *out, const json_t *v);

/* doc (borrowed) as one JSON document on stdout, indented, keys in order. */
void ctl_print_json(const json_t *doc);

/* "outboxctl (user NAME)": who runs this, for the log and last_error. */
void ctl_actor(char *buf, size_t len);

/* The exit code for an enum ops_result (conn borrowed, may be NULL). */
int ctl_ops_exit(int ops_rc, PGconn *conn);

/* One action of core/ops/ on one job: an enum ops_result, *out a new
 * reference (or NULL), err set on failure.  ctx is the command's. */
typedef int ctl_job_action_fn(PGconn *conn, const char *job_id, const char *actor,
                              void *ctx, json_t **out, char *err, size_t errlen);

/*
 * Runs action on each of job_ids[0..n) (borrowed), in order, each on its
 * own: text prints "JOB_ID OUTCOME" per job that succeeded and an error
 * per job that did not; --json prints {ok_key: [document...], "failed":
 * [document with "error"...]}.  Returns the exit code: 0 if every job
 * succeeded, else that of the last failure.
 */
int ctl_run_job_action(struct ctl *ctl, char **job_ids, int n, const char *verb,
                       const char *ok_key, ctl_job_action_fn *action, void *ctx);

#endif
