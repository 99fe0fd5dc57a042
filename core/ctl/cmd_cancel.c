/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_cancel.c: outboxctl cancel [--wait] JOB_ID... (docs/outboxctl.md).
 *
 * Each job on its own (ops_cancel()): a PENDING job becomes DEAD
 * 'CANCELLED' and never runs.  A CLAIMED job is refused (exit 1) unless
 * --wait: then the command waits for the running attempt to end and
 * cancels the job if it did not succeed.  Cancelling a cancelled job
 * again succeeds and changes nothing.  Prints "JOB_ID cancelled" (or
 * "already_cancelled"); --json {"cancelled": [...], "failed": [...]}.
 */
#include <getopt.h>
#include <stdbool.h>

#include "ctl/commands.h"
#include "ctl/job_text.h"
#include "ops/job_actions.h"

static int cancel_one(PGconn *conn, const char *job_id, const char *actor, void *ctx,
                      json_t **out, char *err, size_t errlen)
{
	const bool *wait = ctx;

	return ops_cancel(conn, job_id, *wait ? OPS_WAIT_FOREVER : 0, actor, out, err, errlen);
}

int cmd_cancel(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"wait", no_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	bool wait = false;
	int opt;

	optind = 1;
	opt = getopt_long(argc, argv, "", longopts, NULL);
	while (opt != -1) {
		if (opt != 'w')
			return CTL_EXIT_USAGE;
		wait = true;
		opt = getopt_long(argc, argv, "", longopts, NULL);
	}
	if (optind >= argc) {
		ctl_error("usage: cancel [--wait] JOB_ID...");
		return CTL_EXIT_USAGE;
	}
	return ctl_run_job_action(ctl, argv + optind, argc - optind, "cancel", "cancelled",
	                          cancel_one, &wait);
}
