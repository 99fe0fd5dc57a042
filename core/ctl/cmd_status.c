/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_status.c: outboxctl status [--json]
 *
 * Per destination (configured ones first, then any other found in the
 * database): job counts by state, outbox counts by state, the age of the
 * oldest NEW event and of the oldest due PENDING job (seconds since it had
 * to wait: since the row was created or, for a job scheduled with run_at,
 * since it became due (its run_at, or when outboxctl retry made it due); an
 * event held for such a job until then is not waiting; null when there is
 * none).  Every state appears, zero
 * included.  Then each queue's and DLQ's approximate depth (one
 * GetQueueAttributes each) and the registered instances.  A service that
 * is down costs only its part: the rest is printed, and every failure is
 * named in "errors" and on stderr; a database failure exits 69 (1 when
 * the database answered with an error, 78 when its schema lacks
 * migrations, naming them), a queue's only reports.  The JSON shape:
 * docs/outboxctl.md, "status" (keys are added, never renamed); "paused"
 * says whether outboxctl pause holds the destination.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/commands.h"
#include "db/db.h"
#include "db/migrate.h"
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

/* A group label centred in dashes over width columns, "---- jobs ----". */
static void print_group(const char *label, int width)
{
	int n = (int)strlen(label) + 2;
	int left = (width - n) / 2, right = width - n - left;

	for (int i = 0; i < left; i++)
		putchar('-');
	printf(" %s ", label);
	for (int i = 0; i < right; i++)
		putchar('-');
}

static void print_row(const char *name, const json_t *d)
{
	const json_t *jobs = json_object_get(d, "jobs"), *outbox = json_object_get(d, "outbox");

	printf("%-16s", name);
	for (int i = 0; i < N_JOB_STATES; i++)
		printf(" %11lld", (long long)json_integer_value(json_object_get(jobs, job_states[i])));
	printf("  ");
	for (int i = 0; i < N_EVENT_STATES; i++)
		printf(" %11lld", (long long)json_integer_value(json_object_get(outbox, event_states[i])));
	if (json_object_get(d, "oldest_new_age_seconds") != NULL) {
		printf("  ");
		print_age(json_object_get(d, "oldest_new_age_seconds"));
		print_age(json_object_get(d, "oldest_due_pending_age_seconds"));
	}
	if (json_is_true(json_object_get(d, "paused")))
		printf("  paused");
	putchar('\n');
}

/* The labels stand above the headers they group; the two DEAD columns
 * say whose they are, since a dead job and a dead event mean different
 * things (docs/outboxctl.md, "dead"). */
static void print_header(void)
{
	printf("%-16s ", "");
	print_group("jobs", 4 * 12 - 1);
	printf("   ");
	print_group("outbox events", 3 * 12 - 1);
	printf("   ");
	print_group("oldest, age", 2 * 13 - 1);
	printf("\n%-16s %11s %11s %11s %11s   %11s %11s %11s   %12s %12s\n", "destination",
	       "PENDING", "CLAIMED", "SUCCEEDED", "jobs DEAD", "NEW", "PUBLISHED", "events DEAD",
	       "NEW event", "due PENDING");
}

static long long count_of(const json_t *counts, const char *key)
{
	return (long long)json_integer_value(json_object_get(counts, key));
}

/* What one run did, in words: "rearmed 2 events in 1 destinations". */
static void print_run_counts(const char *task, const json_t *c)
{
	if (strcmp(task, "sweeper") == 0) {
		printf("rearmed %lld events in %lld destinations (horizon %llds)", count_of(c, "rearmed"), count_of(c, "destinations"),
		       count_of(c, "horizon_seconds"));
		return;
	}
	printf("deleted %lld succeeded jobs, %lld dead jobs, %lld events, %lld DLQ messages",
	       count_of(c, "succeeded_jobs"), count_of(c, "dead_jobs"), count_of(c, "events"),
	       count_of(c, "dlq_messages"));
}

/* The sweeper's and the pruner's last runs (maintenance/runs.h). */
static void print_maintenance(const json_t *runs)
{
	static const char *const tasks[] = {"sweeper", "pruner"};

	putchar('\n');
	for (size_t i = 0; i < 2; i++) {
		const json_t *r = json_object_get(runs, tasks[i]);
		const json_t *error = json_object_get(r, "error");

		if (!json_is_object(r)) {
			printf("%-8s never ran\n", tasks[i]);
			continue;
		}
		printf("%-8s last run %.1fs ago on %s: %s, ", tasks[i],
		       json_number_value(json_object_get(r, "age_seconds")),
		       json_string_value(json_object_get(r, "instance_id")),
		       json_is_true(json_object_get(r, "ok")) ? "ok" : "failed");
		print_run_counts(tasks[i], json_object_get(r, "counts"));
		if (json_is_string(error))
			printf("; error: %s", json_string_value(error));
		putchar('\n');
	}
}

static void print_text(const json_t *doc)
{
	const json_t *dests = json_object_get(doc, "destinations");
	const char *name;
	json_t *d;

	print_header();
	json_object_foreach((json_t *)dests, name, d)
		print_row(name, d);
	print_row("(total)", json_object_get(doc, "totals"));
	print_maintenance(json_object_get(doc, "maintenance"));
}

static void print_depth(const json_t *v)
{
	if (json_is_object(v))
		printf(" %11lld %11lld %11lld", count_of(v, "visible"), count_of(v, "in_flight"),
		       count_of(v, "delayed"));
	else
		printf(" %11s %11s %11s", "-", "-", "-");
}

static void print_queues(const json_t *dests)
{
	const char *name;
	json_t *d;

	printf("\n%-16s ", "");
	print_group("queue", 3 * 12 - 1);
	printf("   ");
	print_group("DLQ", 3 * 12 - 1);
	printf("\n%-16s %11s %11s %11s   %11s %11s %11s\n", "destination", "visible", "in flight",
	       "delayed", "visible", "in flight", "delayed");
	json_object_foreach((json_t *)dests, name, d) {
		printf("%-16s", name);
		print_depth(json_object_get(d, "queue_depth"));
		printf("  ");
		print_depth(json_object_get(d, "dlq_depth"));
		putchar('\n');
	}
}

/* ["news","price"] as "news, price". */
static void print_names(const json_t *names)
{
	size_t i;
	json_t *n;

	json_array_foreach(names, i, n)
		printf("%s%s", i > 0 ? ", " : "", json_string_value(n));
}

static void print_instances(const json_t *instances)
{
	size_t i;
	json_t *in;

	if (!json_is_array(instances))
		return;
	printf("\n%-32s %-8s %-20s %10s %-5s %s\n", "instance", "role", "started", "heartbeat",
	       "live", "destinations");
	json_array_foreach(instances, i, in) {
		printf("%-32s %-8s %-20s %9.1fs %-5s ",
		       json_string_value(json_object_get(in, "instance_id")),
		       json_string_value(json_object_get(in, "role")),
		       json_string_value(json_object_get(in, "started_at")),
		       json_real_value(json_object_get(in, "heartbeat_age_seconds")),
		       json_is_true(json_object_get(in, "live")) ? "yes" : "no");
		print_names(json_object_get(in, "destinations"));
		putchar('\n');
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
	bool unavailable = false, schema_behind = false;
	char err[1024] = "", why[1200];
	int db_rc;
	PGconn *conn;

	if (argc != 1) {
		ctl_error("usage: status [--json]");
		return CTL_EXIT_USAGE;
	}
	if (ctl_config(ctl) == NULL)
		return CTL_EXIT_CONFIG;
	conn = connect_db(ctl, err, sizeof(err));
	if (conn == NULL) {
		snprintf(why, sizeof(why), "could not connect to the database: %s", err);
	} else {
		/* The counts of a half-migrated schema would mislead: say what is
		 * missing instead. */
		switch (ctl_schema_check(ctl, conn, err, sizeof(err))) {
		case MIGRATE_OK:
			break;
		case MIGRATE_BEHIND:
			snprintf(why, sizeof(why), "%s", err);
			schema_behind = true;
			conn = NULL;
			break;
		default:
			snprintf(why, sizeof(why), "could not check the schema: %s", err);
			conn = NULL;
			break;
		}
	}
	doc = ops_status(ctl->cfg, conn, why, true, &db_rc, &unavailable);
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
	if (schema_behind)
		return CTL_EXIT_CONFIG;
	if (db_rc < 0)
		return unavailable ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
	return CTL_EXIT_OK;
}
