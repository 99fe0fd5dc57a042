/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ops/jobs.h: jobs one by one (outboxctl jobs, outboxctl show, the
 * console's /jobs and /jobs/JOB_ID; docs/outboxctl.md).
 *
 * Times in the documents are ISO 8601 UTC with milliseconds
 * ("2026-12-01T23:05:00.123Z"), absent values JSON null.
 */
#ifndef OUTBOX_CORE_OPS_JOBS_H
#define OUTBOX_CORE_OPS_JOBS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "common/compiler.h"
#include "ops/ops.h"

#define OPS_JOBS_LIMIT_DEFAULT 50
#define OPS_JOBS_LIMIT_MAX 1000
/* show cuts a payload (and a dead-letter body) longer than this, unless full */
#define OPS_SHOW_CUT_BYTES 4096

/* Which jobs to list; every pointer is borrowed, NULL means "any". */
struct ops_jobs_filter {
	const char *destination;
	const char *status;      /* PENDING, CLAIMED, SUCCEEDED or DEAD */
	const char *job_type;
	double since_seconds;    /* > 0: created in the last since_seconds; 0: any time */
	int limit;               /* 1..OPS_JOBS_LIMIT_MAX; 0: OPS_JOBS_LIMIT_DEFAULT */
	const char *before;      /* a row's "cursor": the rows after it; NULL: the first page */
};

/*
 * Jobs matching f, newest first (created_at, then job_id), at most
 * f->limit.  *out receives a new reference to a JSON array of objects with
 * job_id, job_type, destination, status, attempt_count, redrive_generation,
 * dead_reason, created_at, updated_at, run_at, next_attempt_at, and
 * "cursor": pass the last row's as f->before for the next page.  The cost
 * of a page does not grow with the table (an index scan on jobs_created).
 * Returns OPS_OK, or OPS_INVALID / OPS_DB with err set (*out NULL).
 */
int ops_jobs_list(PGconn *conn, const struct ops_jobs_filter *f, json_t **out,
                  char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * One job (job_id borrowed): *out receives a new reference to an object
 * with the job's columns (identity and payload as JSON), "events" (its
 * outbox events with their SQS message ids, oldest first) and
 * "dlq_evidence" (what the DLQ reader recorded for it, oldest first).  A
 * payload longer than OPS_SHOW_CUT_BYTES is, unless full, the first bytes
 * of its text as a JSON string (cut on a UTF-8 boundary) with
 * "payload_truncated": true; "payload_bytes" is always its full length.
 * Dead-letter bodies are cut the same way ("body_truncated").
 * Returns OPS_OK, or OPS_INVALID (not a job id), OPS_NOT_FOUND, OPS_DB with
 * err set (*out NULL).
 */
int ops_job_show(PGconn *conn, const char *job_id, bool full, json_t **out,
                 char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* True if s is a job id: 64 lower-case hex digits. */
bool ops_is_job_id(const char *s);

#endif
