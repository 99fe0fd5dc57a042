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

#include "ctl/commands.h"
#include "ctl/status.h"
#include "db/db.h"
#include "maintenance/runs.h"

static const char *const job_states[] = {"PENDING", "CLAIMED", "SUCCEEDED", "DEAD"};
static const char *const event_states[] = {"NEW", "PUBLISHED", "DEAD"};
#define N_JOB_STATES 4
#define N_EVENT_STATES 3

static const char counts_sql[] =
	"SELECT 'jobs', destination, status, count(*) FROM outbox.jobs GROUP BY 2, 3"
	" UNION ALL"
	" SELECT 'outbox', destination, status, count(*) FROM outbox.outbox_events GROUP BY 2, 3";

static const char ages_sql[] =
	"SELECT 'oldest_new_age_seconds', destination,"
	"       round(extract(epoch FROM now() - min(created_at))::numeric, 3)"
	"  FROM outbox.outbox_events WHERE status = 'NEW' GROUP BY 2"
	" UNION ALL"
	" SELECT 'oldest_due_pending_age_seconds', destination,"
	"       round(extract(epoch FROM now() - min(created_at))::numeric, 3)"
	"  FROM outbox.jobs WHERE status = 'PENDING' AND next_attempt_at <= now() GROUP BY 2";

static json_t *zero_counts(const char *const *states, int n)
{
	json_t *o = json_object();

	for (int i = 0; i < n; i++)
		json_object_set_new(o, states[i], json_integer(0));
	return o;
}

static json_t *new_destination(void)
{
	return json_pack("{s:o, s:o, s:n, s:n, s:b}",
	                 "jobs", zero_counts(job_states, N_JOB_STATES),
	                 "outbox", zero_counts(event_states, N_EVENT_STATES),
	                 "oldest_new_age_seconds", "oldest_due_pending_age_seconds",
	                 "paused", 0);
}

/* Borrowed reference to the destination's object, created on first use. */
static json_t *destination(json_t *dests, const char *name)
{
	json_t *d = json_object_get(dests, name);

	if (d == NULL) {
		d = new_destination();
		json_object_set_new(dests, name, d);
	}
	return d;
}

static void add_count(json_t *counts, const char *state, json_int_t n)
{
	json_t *v = json_object_get(counts, state);

	json_object_set_new(counts, state, json_integer((v ? json_integer_value(v) : 0) + n));
}

static int load_counts(PGconn *conn, json_t *dests, json_t *totals, char *err, size_t errlen)
{
	PGresult *res = db_query(conn, counts_sql, 0, NULL, err, errlen);

	if (res == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *kind = PQgetvalue(res, i, 0);
		json_int_t n = strtoll(PQgetvalue(res, i, 3), NULL, 10);
		json_t *d = destination(dests, PQgetvalue(res, i, 1));

		add_count(json_object_get(d, kind), PQgetvalue(res, i, 2), n);
		add_count(json_object_get(totals, kind), PQgetvalue(res, i, 2), n);
	}
	PQclear(res);
	return 0;
}

static int load_ages(PGconn *conn, json_t *dests, char *err, size_t errlen)
{
	PGresult *res = db_query(conn, ages_sql, 0, NULL, err, errlen);

	if (res == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++) {
		json_t *d = destination(dests, PQgetvalue(res, i, 1));

		json_object_set_new(d, PQgetvalue(res, i, 0), json_real(strtod(PQgetvalue(res, i, 2), NULL)));
	}
	PQclear(res);
	return 0;
}

/* outboxctl pause: "paused": true on each paused destination. */
static int load_paused(PGconn *conn, json_t *dests, char *err, size_t errlen)
{
	PGresult *res = db_query(conn, "SELECT destination FROM outbox.paused_destinations", 0,
	                         NULL, err, errlen);

	if (res == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++)
		json_object_set_new(destination(dests, PQgetvalue(res, i, 0)), "paused", json_true());
	PQclear(res);
	return 0;
}

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

/* load_database(): the counts could not be read / only some of the rest. */
#define STATUS_NO_COUNTS (-2)
#define STATUS_NO_INSTANCES (-1)

/* The database's part: counts, ages, instances.  Returns 0, or one of the
 * above with the reason appended to errors (and *unavailable when it was
 * the connection). */
static int load_database(struct ctl *ctl, json_t *dests, json_t *totals, json_t **instances,
                         json_t *errors, bool *unavailable)
{
	char err[1024];
	PGconn *conn = ctl->conn;
	const struct cfg *cfg = ctl->cfg;

	if (conn == NULL) {
		conn = db_connect(cfg->database.conninfo, "outboxctl", err, sizeof(err));
		if (conn == NULL) {
			json_array_append_new(errors, json_sprintf("could not connect to the database: %s",
			                                           err));
			*unavailable = true;
			return STATUS_NO_COUNTS;
		}
		ctl->conn = conn;
	}
	if (load_counts(conn, dests, totals, err, sizeof(err)) < 0 ||
	    load_ages(conn, dests, err, sizeof(err)) < 0 ||
	    load_paused(conn, dests, err, sizeof(err)) < 0) {
		json_array_append_new(errors, json_sprintf("could not read the status: %s", err));
		*unavailable = db_connection_lost(conn) != 0;
		return STATUS_NO_COUNTS;
	}
	*instances = status_instances(conn, errors);
	return *instances != NULL ? 0 : STATUS_NO_INSTANCES;
}

/* Counts that could not be read are null, not zero. */
static void null_counts(json_t *dests, json_t *totals)
{
	const char *name;
	json_t *d;

	json_object_foreach(dests, name, d) {
		json_object_set_new(d, "jobs", json_null());
		json_object_set_new(d, "outbox", json_null());
		json_object_set_new(d, "paused", json_null());
	}
	json_object_set_new(totals, "jobs", json_null());
	json_object_set_new(totals, "outbox", json_null());
}

/* The sweeper's and pruner's last runs; NULL (named in errors, *rc set)
 * when they could not be read. */
static json_t *load_maintenance(PGconn *conn, json_t *errors, int *rc)
{
	char err[1024];
	json_t *runs = maintenance_runs_load(conn, err, sizeof(err));

	if (runs == NULL) {
		json_array_append_new(errors, json_sprintf("could not read the maintenance runs: %s",
		                                           err));
		*rc = STATUS_NO_INSTANCES;
	}
	return runs;
}

static void print_errors(const json_t *errors)
{
	size_t i;
	json_t *e;

	json_array_foreach(errors, i, e)
		ctl_error("%s", json_string_value(e));
}

int cmd_status(struct ctl *ctl, int argc, char **argv)
{
	json_t *instances = NULL, *maint = NULL, *errors, *dests, *totals, *doc;
	bool unavailable = false;
	int db_rc, sqs_failures;

	if (argc != 1) {
		ctl_error("usage: status [--json]");
		return CTL_EXIT_USAGE;
	}
	if (ctl_config(ctl) == NULL)
		return CTL_EXIT_CONFIG;
	errors = json_array();
	dests = json_object();
	totals = json_pack("{s:o, s:o}", "jobs", zero_counts(job_states, N_JOB_STATES),
	                   "outbox", zero_counts(event_states, N_EVENT_STATES));
	for (size_t i = 0; i < ctl->cfg->n_destinations; i++)
		destination(dests, ctl->cfg->destinations[i].name);
	db_rc = load_database(ctl, dests, totals, &instances, errors, &unavailable);
	if (db_rc == STATUS_NO_COUNTS)
		null_counts(dests, totals);
	else
		maint = load_maintenance(ctl->conn, errors, &db_rc);
	sqs_failures = status_queue_depths(ctl->cfg, dests, errors);
	doc = json_pack("{s:o, s:o, s:o, s:o, s:O}", "destinations", dests, "totals", totals,
	                "maintenance", maint != NULL ? maint : json_null(),
	                "instances", instances != NULL ? instances : json_null(), "errors", errors);
	if (ctl->json) {
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
		putchar('\n');
	} else if (json_is_null(json_object_get(totals, "jobs"))) {
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
	json_decref(errors);
	/* The database is what status is about: a queue whose depth could not
	 * be read (not created yet, no permission) is named, not fatal. */
	(void)sqs_failures;
	if (db_rc < 0)
		return unavailable ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
	return CTL_EXIT_OK;
}
