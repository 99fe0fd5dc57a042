/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_status.c: outboxctl status [--json]
 *
 * Per destination (configured ones first, then any other found in the
 * database): job counts by state, outbox counts by state, the age of the
 * oldest NEW event and of the oldest due PENDING job (seconds since the row
 * was created; null when there is none).  Every state appears, zero
 * included.  Then each queue's and DLQ's approximate depth (one
 * GetQueueAttributes each) and the registered instances.  A service that
 * is down costs only its part: the rest is printed, and every failure is
 * named in "errors" and on stderr; a database failure exits 69 (1 when
 * the database answered with an error), a queue's only reports.  The JSON shape:
 * docs/outboxctl.md, "status" (keys are added, never renamed); "paused"
 * says whether outboxctl pause holds the destination.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/ctl.h"
#include "db/db.h"
#include "maintenance/runs.h"
#include "ops/status.h"

static const char *const job_states[] = {"PENDING", "CLAIMED", "SUCCEEDED", "DEAD"};
static const char *const event_states[] = {"NEW", "PUBLISHED", "DEAD"};
#define N_JOB_STATES 4
#define N_EVENT_STATES 3

static void print_age(const json_t *v)
{
	if (json_is_number(v))
		printf(" %11.1fs", json_number_value(v));
	else
		printf(" %12s", "-");
}

static void print_row(const char *name, const json_t *d)
{
	const json_t *jobs = json_object_get(d, "jobs"), *outbox = json_object_get(d, "outbox");

	printf("%-16s", name);
	for (int i = 0; i < N_JOB_STATES; i++)
		printf(" %9lld", (long long)json_integer_value(json_object_get(jobs, job_states[i])));
	printf("  ");
	for (int i = 0; i < N_EVENT_STATES; i++)
		printf(" %9lld", (long long)json_integer_value(json_object_get(outbox, event_states[i])));
	if (json_object_get(d, "oldest_new_age_seconds") != NULL) {
		print_age(json_object_get(d, "oldest_new_age_seconds"));
		print_age(json_object_get(d, "oldest_due_pending_age_seconds"));
	}
	if (json_is_true(json_object_get(d, "paused")))
		printf("  paused");
	putchar('\n');
}

static void print_text(const json_t *doc)
{
	const json_t *dests = json_object_get(doc, "destinations");
	const char *name;
	json_t *d;

	printf("%-16s %9s %9s %9s %9s   %9s %9s %9s %12s %12s\n", "destination", "PENDING", "CLAIMED",
	       "SUCCEEDED", "DEAD", "NEW", "PUBLISHED", "DEAD", "oldest NEW", "oldest due");
	printf("%-16s %39s   %29s\n", "", "------------------ jobs -----------------",
	       "----------- outbox ----------");
	json_object_foreach((json_t *)dests, name, d)
		print_row(name, d);
	print_row("(total)", json_object_get(doc, "totals"));
	maintenance_runs_print(json_object_get(doc, "maintenance"), stdout);
}

static void print_depth(const json_t *v)
{
	if (json_is_object(v))
		printf(" %9lld %9lld %9lld",
		       (long long)json_integer_value(json_object_get(v, "visible")),
		       (long long)json_integer_value(json_object_get(v, "in_flight")),
		       (long long)json_integer_value(json_object_get(v, "delayed")));
	else
		printf(" %9s %9s %9s", "-", "-", "-");
}

static void print_queues(const json_t *dests)
{
	const char *name;
	json_t *d;

	printf("\n%-16s %9s %9s %9s   %9s %9s %9s\n", "destination", "visible", "in flight",
	       "delayed", "visible", "in flight", "delayed");
	printf("%-16s %29s   %29s\n", "", "----------- queue -----------",
	       "------------ DLQ ------------");
	json_object_foreach((json_t *)dests, name, d) {
		printf("%-16s", name);
		print_depth(json_object_get(d, "queue_depth"));
		printf("  ");
		print_depth(json_object_get(d, "dlq_depth"));
		putchar('\n');
	}
}

static void print_instances(const json_t *instances)
{
	size_t i;
	json_t *in;

	if (!json_is_array(instances))
		return;
	printf("\n%-32s %-6s %-20s %10s %-5s %s\n", "instance", "role", "started", "heartbeat",
	       "live", "destinations");
	json_array_foreach(instances, i, in) {
		char *dests = json_dumps(json_object_get(in, "destinations"), JSON_COMPACT);

		printf("%-32s %-6s %-20s %9.1fs %-5s %s\n",
		       json_string_value(json_object_get(in, "instance_id")),
		       json_string_value(json_object_get(in, "role")),
		       json_string_value(json_object_get(in, "started_at")),
		       json_real_value(json_object_get(in, "heartbeat_age_seconds")),
		       json_is_true(json_object_get(in, "live")) ? "yes" : "no", dests ? dests : "");
		free(dests);
	}
}

static void print_errors(const json_t *errors)
{
	size_t i;
	json_t *e;

	json_array_foreach(errors, i, e)
		ctl_error("%s", json_string_value(e));
}

/* The connection, or NULL with why in err. */
static PGconn *connect_db(struct ctl *ctl, char *err, size_t errlen)
{
	if (ctl->conn == NULL)
		ctl->conn = db_connect(ctl->cfg->database.conninfo, "outboxctl", err, errlen);
	return ctl->conn;
}

int cmd_status(struct ctl *ctl, int argc, char **argv)
{
	json_t *errors, *doc;
	bool unavailable = false;
	char err[1024] = "";
	int db_rc;
	PGconn *conn;

	if (argc != 1) {
		ctl_error("usage: status [--json]");
		return CTL_EXIT_USAGE;
	}
	if (ctl_config(ctl) == NULL)
		return CTL_EXIT_CONFIG;
	conn = connect_db(ctl, err, sizeof(err));
	doc = ops_status(ctl->cfg, conn, err, true, &db_rc, &unavailable);
	if (doc == NULL) {
		ctl_error("out of memory");
		return CTL_EXIT_FAILURE;
	}
	errors = json_object_get(doc, "errors");
	if (ctl->json) {
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
		putchar('\n');
	} else if (json_is_null(json_object_get(json_object_get(doc, "totals"), "jobs"))) {
		printf("(job and outbox counts unavailable: see the errors below)\n");
		print_queues(json_object_get(doc, "destinations"));
	} else {
		print_text(doc);
		print_queues(json_object_get(doc, "destinations"));
		print_instances(json_object_get(doc, "instances"));
	}
	/* Said on stderr too: a script reading only stdout's table still
	 * learns that part of it is missing. */
	print_errors(errors);
	json_decref(doc);
	if (db_rc < 0)
		return unavailable ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
	return CTL_EXIT_OK;
}
