/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_retry.c: outboxctl retry JOB_ID... (docs/outboxctl.md).
 *
 * Each job on its own (ops_retry_now()): a PENDING job waiting out a
 * retry's backoff, or scheduled for later, becomes due now and its wake-up
 * is sent again.  A job already due is left alone (success); a CLAIMED,
 * SUCCEEDED or DEAD one is refused (exit 1; redrive sends a dead job
 * again).  Prints "JOB_ID due_now" (or "already_due"); --json
 * {"retried": [...], "failed": [...]}.
 */
#include "ctl/commands.h"
#include "ctl/job_text.h"
#include "ops/job_actions.h"

static int retry_one(PGconn *conn, const char *job_id, const char *actor, void *ctx,
                     json_t **out, char *err, size_t errlen)
{
	(void)ctx;
	return ops_retry_now(conn, job_id, actor, out, err, errlen);
}

int cmd_retry(struct ctl *ctl, int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-') {
		ctl_error("usage: retry JOB_ID...");
		return CTL_EXIT_USAGE;
	}
	return ctl_run_job_action(ctl, argv + 1, argc - 1, "retry", "retried", retry_one, NULL);
}
