/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_status.c: outboxctl status [--json]
 *
 * Per destination (configured ones first, then any other found in the
 * database): job counts by state, outbox counts by state, the age of the
 * oldest NEW event and of the oldest due PENDING job (seconds since the row
 * was created; null when there is none).  Every state appears, zero
 * included; "paused" says whether outboxctl pause holds the destination.
 * The JSON shape is fixed: docs/outboxctl.md, "status".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/ctl.h"
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

int cmd_status(struct ctl *ctl, int argc, char **argv)
{
	int exit_code = CTL_EXIT_OK;
	char err[1024];

	if (argc != 1) {
		ctl_error("usage: status [--json]");
		return CTL_EXIT_USAGE;
	}
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	json_t *dests = json_object();
	json_t *totals = json_pack("{s:o, s:o}", "jobs", zero_counts(job_states, N_JOB_STATES),
	                           "outbox", zero_counts(event_states, N_EVENT_STATES));
	for (size_t i = 0; i < ctl->cfg->n_destinations; i++)
		destination(dests, ctl->cfg->destinations[i].name);
	if (load_counts(conn, dests, totals, err, sizeof(err)) < 0 ||
	    load_ages(conn, dests, err, sizeof(err)) < 0 ||
	    load_paused(conn, dests, err, sizeof(err)) < 0) {
		ctl_error("could not read the status: %s", err);
		exit_code = db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
		json_decref(dests);
		json_decref(totals);
		return exit_code;
	}
	json_t *doc = json_pack("{s:o, s:o}", "destinations", dests, "totals", totals);
	json_t *maint = maintenance_runs_load(conn, err, sizeof(err));
	if (maint == NULL) {
		ctl_error("could not read the maintenance runs: %s", err);
		json_decref(doc);
		return db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
	}
	json_object_set_new(doc, "maintenance", maint);
	if (ctl->json) {
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
		putchar('\n');
	} else {
		print_text(doc);
	}
	json_decref(doc);
	return CTL_EXIT_OK;
}
