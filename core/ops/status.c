/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ops/status.c: see ops/status.h.
 *
 * Each count is one GROUP BY over an index, each age one min() over a
 * partial index, so the document costs the same few statements however
 * many destinations there are.  Finished jobs are counted from
 * jobs_succeeded_finished and jobs_dead_reason alone (whether dead_reason
 * is set tells the two apart); unfinished ones through jobs_unfinished_due
 * and their rows, since no index holds a job's status (V14: a claim is an
 * update in place).
 */
#include "ops/status.h"

#include <stdlib.h>
#include <string.h>

#include "aws/env.h"
#include "aws/http.h"
#include "aws/sqs.h"
#include "db/db.h"
#include "db/registry.h"
#include "maintenance/runs.h"
#include "ops/pause.h"

static const char *const job_states[] = {"PENDING", "CLAIMED", "SUCCEEDED", "DEAD"};
static const char *const event_states[] = {"NEW", "PUBLISHED", "DEAD"};
#define N_JOB_STATES 4
#define N_EVENT_STATES 3

static const char counts_sql[] =
	"SELECT 'jobs', destination, status, count(*) FROM outbox.jobs"
	" WHERE finished_at IS NULL GROUP BY 2, 3"
	" UNION ALL"
	" SELECT 'jobs', destination, 'SUCCEEDED', count(*) FROM outbox.jobs"
	"  WHERE finished_at IS NOT NULL AND dead_reason IS NULL GROUP BY 2"
	" UNION ALL"
	" SELECT 'jobs', destination, 'DEAD', count(*) FROM outbox.jobs"
	"  WHERE dead_reason IS NOT NULL GROUP BY 2"
	" UNION ALL"
	" SELECT 'outbox', destination, status, count(*) FROM outbox.outbox_events GROUP BY 2, 3";

static const char ages_sql[] =
	"SELECT 'oldest_new_age_seconds', destination,"
	"       round(extract(epoch FROM now() - min(CASE WHEN attempts = 0 THEN next_attempt_at"
	"                                                 ELSE created_at END))::numeric, 3)"
	"  FROM outbox.outbox_events WHERE status = 'NEW'"
	"   AND (attempts > 0 OR next_attempt_at <= now()) GROUP BY 2"
	" UNION ALL"
	" SELECT 'oldest_due_pending_age_seconds', destination,"
	"       round(extract(epoch FROM now() - min(least(greatest(created_at, run_at),"
	"                                                  next_attempt_at)))::numeric, 3)"
	"  FROM outbox.jobs WHERE finished_at IS NULL AND status = 'PENDING'"
	"   AND next_attempt_at <= now() GROUP BY 2";

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
	json_t *paused = ops_paused_destinations(conn, err, errlen), *name;
	size_t i;

	if (paused == NULL)
		return -1;
	json_array_foreach(paused, i, name)
		json_object_set_new(destination(dests, json_string_value(name)), "paused", json_true());
	json_decref(paused);
	return 0;
}

static const char *const depth_attrs[] = {
	"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
	"ApproximateNumberOfMessagesDelayed",
};

static json_int_t attr_int(const json_t *attrs, const char *name)
{
	const char *v = json_string_value(json_object_get(attrs, name));

	return v != NULL ? strtoll(v, NULL, 10) : 0;
}

/* One GetQueueAttributes: {"visible", "in_flight", "delayed"}, or null. */
static json_t *depth(struct aws_http *c, const char *dest, const char *what, const char *url,
                     json_t *errors)
{
	struct aws_result res;
	json_t *attrs = NULL, *out;

	if (sqs_get_queue_attributes(c, url, depth_attrs, 3, &attrs, &res) < 0) {
		json_array_append_new(errors, json_sprintf("could not read the depth of the %s of"
		                      " destination \"%s\": %s %s", what, dest, res.code, res.message));
		return json_null();
	}
	out = json_pack("{s:I, s:I, s:I}",
	                "visible", attr_int(attrs, "ApproximateNumberOfMessages"),
	                "in_flight", attr_int(attrs, "ApproximateNumberOfMessagesNotVisible"),
	                "delayed", attr_int(attrs, "ApproximateNumberOfMessagesDelayed"));
	json_decref(attrs);
	return out;
}

/* "queue_depth" and "dlq_depth" of every configured destination; the
 * number of failures (each named in errors). */
static int queue_depths(const struct cfg *cfg, json_t *dests, json_t *errors)
{
	struct aws_env env = {0};
	struct aws_http *c = NULL;
	size_t before = json_array_size(errors);

	if (aws_env_load(&env, cfg->aws.region, cfg->aws.endpoint_url, cfg->s3.endpoint_url) < 0 ||
	    aws_http_new(&env, AWS_SERVICE_SQS, &c) < 0) {
		json_array_append_new(errors, json_string("could not set up the SQS client"));
		aws_env_free(&env);
		return 1;
	}
	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const struct cfg_destination *d = &cfg->destinations[i];
		json_t *o = json_object_get(dests, d->name);

		if (o == NULL)
			continue;
		json_object_set_new(o, "queue_depth", depth(c, d->name, "queue", d->queue_url, errors));
		json_object_set_new(o, "dlq_depth", d->dlq_url != NULL
		                    ? depth(c, d->name, "DLQ", d->dlq_url, errors) : json_null());
	}
	aws_http_free(c);
	aws_env_free(&env);
	return (int)(json_array_size(errors) - before);
}

/* Every outboxd process registers (db/registry.h) and refreshes its row
 * every DB_REGISTRY_BEAT_SECONDS, so two missed beats mean it is gone
 * without having deleted its row. */
static const char instances_sql[] =
	"SELECT instance_id, destinations::text,"
	"       to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
	"       round(extract(epoch FROM now() - heartbeat_at)::numeric, 1)::text,"
	"       heartbeat_at > now() - $1::integer * interval '1 second', role"
	"  FROM outbox.relay_instances ORDER BY started_at, instance_id";

/* {"instance_id", "role", "destinations", "started_at",
 * "heartbeat_age_seconds", "live"} per registered instance; NULL on
 * failure (errors has why). */
static json_t *load_instances(PGconn *conn, json_t *errors)
{
	char err[512], live_after[16];
	const char *params[1] = {live_after};
	json_t *list;
	PGresult *res;

	snprintf(live_after, sizeof(live_after), "%d", 2 * DB_REGISTRY_BEAT_SECONDS);
	res = db_query(conn, instances_sql, 1, params, err, sizeof(err));
	if (res == NULL) {
		json_array_append_new(errors, json_sprintf("could not read the instances: %s", err));
		return NULL;
	}
	list = json_array();
	for (int r = 0; r < PQntuples(res); r++) {
		json_t *dests = json_loads(PQgetvalue(res, r, 1), 0, NULL);

		json_array_append_new(list, json_pack("{s:s, s:s, s:o, s:s, s:f, s:b}",
			"instance_id", PQgetvalue(res, r, 0), "role", PQgetvalue(res, r, 5),
			"destinations", dests != NULL ? dests : json_array(),
			"started_at", PQgetvalue(res, r, 2),
			"heartbeat_age_seconds", strtod(PQgetvalue(res, r, 3), NULL),
			"live", strcmp(PQgetvalue(res, r, 4), "t") == 0));
	}
	PQclear(res);
	return list;
}

/* The database's part: counts, ages, paused, instances, maintenance runs.
 * Returns one of enum ops_status_rc, the reason appended to errors. */
static int load_database(PGconn *conn, json_t *doc, json_t *errors, bool *unavailable)
{
	json_t *dests = json_object_get(doc, "destinations"), *totals = json_object_get(doc, "totals");
	json_t *instances, *runs;
	char err[1024];
	int rc = OPS_STATUS_OK;

	if (load_counts(conn, dests, totals, err, sizeof(err)) < 0 ||
	    load_ages(conn, dests, err, sizeof(err)) < 0 ||
	    load_paused(conn, dests, err, sizeof(err)) < 0) {
		json_array_append_new(errors, json_sprintf("could not read the status: %s", err));
		*unavailable = db_connection_lost(conn) != 0;
		return OPS_STATUS_NO_COUNTS;
	}
	instances = load_instances(conn, errors);
	if (instances == NULL)
		rc = OPS_STATUS_NO_INSTANCES;
	else
		json_object_set_new(doc, "instances", instances);
	runs = maintenance_runs_load(conn, err, sizeof(err));
	if (runs == NULL) {
		json_array_append_new(errors, json_sprintf("could not read the maintenance runs: %s",
		                                           err));
		rc = OPS_STATUS_NO_INSTANCES;
	} else {
		json_object_set_new(doc, "maintenance", runs);
	}
	return rc;
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

json_t *ops_status(const struct cfg *cfg, PGconn *conn, const char *unread_why, bool queues,
                   int *rc, bool *unavailable)
{
	json_t *dests = json_object(), *errors = json_array(), *doc;

	*unavailable = false;
	doc = json_pack("{s:o, s:{s:o, s:o}, s:n, s:n, s:o}", "destinations", dests,
	                "totals", "jobs", zero_counts(job_states, N_JOB_STATES),
	                "outbox", zero_counts(event_states, N_EVENT_STATES),
	                "maintenance", "instances", "errors", errors);
	if (doc == NULL)
		return NULL;
	for (size_t i = 0; i < cfg->n_destinations; i++)
		destination(dests, cfg->destinations[i].name);
	if (conn == NULL) {
		json_array_append_new(errors, json_string(unread_why != NULL ? unread_why : "?"));
		*unavailable = true;
		*rc = OPS_STATUS_NO_COUNTS;
	} else {
		*rc = load_database(conn, doc, errors, unavailable);
	}
	if (*rc == OPS_STATUS_NO_COUNTS)
		null_counts(dests, json_object_get(doc, "totals"));
	/* The database is what status is about: a queue whose depth could
	 * not be read (not created yet, no permission) is named, not fatal. */
	if (queues)
		(void)queue_depths(cfg, dests, errors);
	return doc;
}

/* One row per minute of the last hour, the current minute last; finished
 * jobs are found through jobs_succeeded_finished and jobs_dead_finished
 * (finished_at), one range of each. */
#define FINISHED_MINUTE                                                          \
	" 59 - (extract(epoch FROM date_trunc('minute', now())"                       \
	"               - date_trunc('minute', finished_at)) / 60)::integer"
#define LAST_HOUR " finished_at >= date_trunc('minute', now()) - interval '59 minutes'"
static const char per_minute_sql[] =
	"SELECT m.i, coalesce(s.n, 0), coalesce(d.n, 0)"
	"  FROM generate_series(0, 59) AS m(i)"
	"  LEFT JOIN (SELECT" FINISHED_MINUTE " AS i, count(*) AS n FROM outbox.jobs"
	"              WHERE finished_at IS NOT NULL AND dead_reason IS NULL AND" LAST_HOUR
	"              GROUP BY 1) AS s USING (i)"
	"  LEFT JOIN (SELECT" FINISHED_MINUTE " AS i, count(*) AS n FROM outbox.jobs"
	"              WHERE dead_reason IS NOT NULL AND" LAST_HOUR
	"              GROUP BY 1) AS d USING (i)"
	" ORDER BY m.i";

json_t *ops_jobs_per_minute(PGconn *conn, char *err, size_t errlen)
{
	PGresult *res = db_query(conn, per_minute_sql, 0, NULL, err, errlen);
	json_t *ok, *dead;

	if (res == NULL)
		return NULL;
	ok = json_array();
	dead = json_array();
	for (int r = 0; r < PQntuples(res); r++) {
		json_array_append_new(ok, json_integer(strtoll(PQgetvalue(res, r, 1), NULL, 10)));
		json_array_append_new(dead, json_integer(strtoll(PQgetvalue(res, r, 2), NULL, 10)));
	}
	PQclear(res);
	return json_pack("{s:i, s:o, s:o}", "minutes", 60, "succeeded", ok, "dead", dead);
}
