/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ops/job_actions.h: what an operator does to one job (outboxctl cancel and
 * retry, the console's POST /jobs/JOB_ID/cancel and /retry).
 *
 * Each is one call of its SQL function (migrations/V9__jobs.sql:
 * outbox.cancel(), outbox.retry_now()), so an application calling SQL gets
 * the same rules; each is idempotent, and logs one line naming the job and
 * the actor when it changed something.
 */
#ifndef OUTBOX_CORE_OPS_JOB_ACTIONS_H
#define OUTBOX_CORE_OPS_JOB_ACTIONS_H

#include <stddef.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "common/compiler.h"
#include "ops/ops.h"

/* ops_cancel()'s wait_ms: wait for as long as the running attempt takes */
#define OPS_WAIT_FOREVER (-1L)

/*
 * Cancel job_id (borrowed): PENDING becomes DEAD 'CANCELLED' and its unsent
 * event is retired.  A job CLAIMED under a live lease is refused, unless
 * wait_ms is not 0: then the call polls until the running attempt ends
 * (at most wait_ms, or OPS_WAIT_FOREVER) and cancels the job if it ended
 * without success.  actor (borrowed) names who asked, for the log line and
 * the job's last_error ("outboxctl (user alice)", "console (token)").
 *
 * *out receives a new reference to {"job_id", "outcome", "status",
 * "dead_reason"}, outcome one of cancelled, already_cancelled, claimed,
 * finished, not_found, even when the call returns an error code (except
 * OPS_INVALID and OPS_DB, where *out is NULL).  Returns OPS_OK (cancelled
 * or already_cancelled), OPS_REFUSED (claimed, finished), OPS_NOT_FOUND,
 * OPS_INVALID or OPS_DB, with err set on any error.
 */
int ops_cancel(PGconn *conn, const char *job_id, long wait_ms, const char *actor,
               json_t **out, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Make job_id (borrowed), a PENDING job waiting for a retry's backoff or
 * for its run_at, due now, and its wake-up sent again.  *out receives a
 * new reference to {"job_id", "outcome", "status", "next_attempt_at"},
 * outcome one of due_now, already_due, claimed, finished, not_found.
 * Returns OPS_OK (due_now, already_due), OPS_REFUSED (claimed, finished),
 * OPS_NOT_FOUND, OPS_INVALID or OPS_DB, with err set on any error; actor
 * (borrowed) as for ops_cancel().
 */
int ops_retry_now(PGconn *conn, const char *job_id, const char *actor,
                  json_t **out, char *err, size_t errlen) OUTBOX_MUSTCHECK;

#endif
