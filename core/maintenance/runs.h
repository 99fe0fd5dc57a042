/*
 * maintenance/runs.h: outbox.maintenance_runs, the last run of each task
 * (V5), written after every run and read by outboxctl status.
 */
#ifndef OUTBOX_MAINTENANCE_RUNS_H
#define OUTBOX_MAINTENANCE_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "common/compiler.h"

/* What one run of a task did; strings borrowed. */
struct maintenance_run {
	const char *task;         /* "sweeper" or "pruner" */
	const char *instance_id;  /* who ran it */
	double started_at;        /* Unix time, seconds */
	bool ok;
	const char *counts_json;  /* a JSON object */
	const char *error;        /* NULL when ok */
};

/* Upserts the task's row (runs + 1).  Returns 0 or -1 with err set. */
int maintenance_record_run(PGconn *conn, const struct maintenance_run *run,
                           char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * {"sweeper": RUN|null, "pruner": RUN|null}, RUN = {"instance_id",
 * "started_at", "finished_at" (ISO 8601), "age_seconds" (since it
 * finished), "ok", "counts", "error", "runs"}.  New reference; NULL with
 * err set on failure.
 */
json_t *maintenance_runs_load(PGconn *conn, char *err, size_t errlen);

#endif
