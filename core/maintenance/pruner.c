/*
 * maintenance/pruner.c: the retention deletes (see pruner.h).
 */
#include "maintenance/pruner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "db/db.h"

#define AGO(n) "now() - make_interval(secs => $" #n "::float8)"

/*
 * Terminal jobs of status $1 finished before the cutoff ($2 seconds ago),
 * $3 at a time, with every event of theirs: the foreign key is checked at
 * the end of the statement, when both deletes are done.  SKIP LOCKED: a
 * row someone holds (a redrive) is left for the next run.  `which` is the
 * predicate of the class's index (V14: jobs_succeeded_finished,
 * jobs_dead_finished), which status alone would not let the planner use.
 */
#define JOBS_SQL(which)                                                                      \
	"WITH c AS (SELECT job_id FROM outbox.jobs"                                              \
	"            WHERE " which " AND status = $1 AND finished_at < " AGO(2)                 \
	"            ORDER BY finished_at LIMIT $3::integer FOR UPDATE SKIP LOCKED),"            \
	" e AS (DELETE FROM outbox.outbox_events e USING c WHERE e.job_id = c.job_id RETURNING 1)," \
	" d AS (DELETE FROM outbox.jobs j USING c WHERE j.job_id = c.job_id RETURNING 1)"      \
	" SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM e)"

#define SUCCEEDED_WHERE "finished_at IS NOT NULL AND dead_reason IS NULL"
#define DEAD_WHERE "dead_reason IS NOT NULL"

static const char succeeded_jobs_sql[] = JOBS_SQL(SUCCEEDED_WHERE);
static const char dead_jobs_sql[] = JOBS_SQL(DEAD_WHERE);

/*
 * Events of status $1 older than the cutoff by their own time column,
 * whose job no longer needs them: terminal, or redriven to a newer
 * generation.  An event of a job that is still running is never deleted:
 * the sweeper and the consumer re-arm it.
 */
#define EVENTS_WHERE(col)                                                          \
	" WHERE e.status = $1 AND e." col " < " AGO(2)                                  \
	"   AND (j.status IN ('SUCCEEDED', 'DEAD') OR j.redrive_generation > e.redrive_generation)"

static const char published_sql[] =
	"WITH c AS (SELECT e.event_id FROM outbox.outbox_events e"
	"             JOIN outbox.jobs j ON j.job_id = e.job_id" EVENTS_WHERE("published_at")
	"            ORDER BY e.published_at LIMIT $3::integer FOR UPDATE OF e SKIP LOCKED)"
	" DELETE FROM outbox.outbox_events e USING c WHERE e.event_id = c.event_id";

static const char dead_events_sql[] =
	"WITH c AS (SELECT e.event_id FROM outbox.outbox_events e"
	"             JOIN outbox.jobs j ON j.job_id = e.job_id" EVENTS_WHERE("created_at")
	"            ORDER BY e.created_at LIMIT $3::integer FOR UPDATE OF e SKIP LOCKED)"
	" DELETE FROM outbox.outbox_events e USING c WHERE e.event_id = c.event_id";

/* $1 is unused (every class takes the same three parameters). */
static const char dlq_sql[] =
	"WITH c AS (SELECT id FROM outbox.dlq_messages WHERE received_at < " AGO(2)
	"            AND $1::text IS NOT NULL ORDER BY received_at LIMIT $3::integer)"
	" DELETE FROM outbox.dlq_messages d USING c WHERE d.id = c.id";

/*
 * What a run would delete, each row counted once: $1..$4 the retentions
 * of SUCCEEDED jobs, DEAD jobs, events, DLQ evidence; NULL (off) makes
 * every comparison with it false.
 */
static const char dry_run_sql[] =
	"SELECT (SELECT count(*) FROM outbox.jobs"
	"         WHERE " SUCCEEDED_WHERE " AND finished_at < " AGO(1) "),"
	"       (SELECT count(*) FROM outbox.jobs"
	"         WHERE " DEAD_WHERE " AND finished_at < " AGO(2) "),"
	"       (SELECT count(*) FROM outbox.outbox_events e JOIN outbox.jobs j ON j.job_id = e.job_id"
	"         WHERE j.status = 'SUCCEEDED' AND j.finished_at < " AGO(1)
	"            OR j.status = 'DEAD' AND j.finished_at < " AGO(2)
	"            OR (e.status = 'PUBLISHED' AND e.published_at < " AGO(3)
	"                OR e.status = 'DEAD' AND e.created_at < " AGO(3) ")"
	"               AND (j.status IN ('SUCCEEDED', 'DEAD')"
	"                    OR j.redrive_generation > e.redrive_generation)),"
	"       (SELECT count(*) FROM outbox.dlq_messages WHERE received_at < " AGO(4) ")";

enum prune_class { PRUNE_SUCCEEDED, PRUNE_DEAD, PRUNE_PUBLISHED, PRUNE_DEAD_EVENTS, PRUNE_DLQ };

struct prune_step {
	enum prune_class klass;
	const char *status;     /* $1 */
	const char *sql;
};

/* Jobs first: their events go with them, so the event steps find less. */
static const struct prune_step steps[] = {
	{PRUNE_SUCCEEDED, "SUCCEEDED", succeeded_jobs_sql},
	{PRUNE_DEAD, "DEAD", dead_jobs_sql},
	{PRUNE_PUBLISHED, "PUBLISHED", published_sql},
	{PRUNE_DEAD_EVENTS, "DEAD", dead_events_sql},
	{PRUNE_DLQ, "-", dlq_sql},
};

static int retention_of(const struct cfg *cfg, enum prune_class k)
{
	switch (k) {
	case PRUNE_SUCCEEDED: return cfg->retention.succeeded_jobs_seconds;
	case PRUNE_DEAD: return cfg->retention.dead_jobs_seconds;
	case PRUNE_PUBLISHED:
	case PRUNE_DEAD_EVENTS: return cfg->retention.events_seconds;
	case PRUNE_DLQ: return cfg->retention.dlq_messages_seconds;
	}
	return 0;
}

static void add(struct prune_counts *c, enum prune_class k, long rows, long events)
{
	switch (k) {
	case PRUNE_SUCCEEDED: c->succeeded_jobs += rows; break;
	case PRUNE_DEAD: c->dead_jobs += rows; break;
	case PRUNE_PUBLISHED:
	case PRUNE_DEAD_EVENTS: c->events += rows; break;
	case PRUNE_DLQ: c->dlq_messages += rows; break;
	}
	c->events += events;
}

/* Rows one delete removed: the jobs statement returns a row of two
 * counts (jobs, their events); the others only a command tag. */
static void read_counts(PGresult *res, long *rows, long *events)
{
	*events = 0;
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
		*rows = strtol(PQgetvalue(res, 0, 0), NULL, 10);
		*events = strtol(PQgetvalue(res, 0, 1), NULL, 10);
	} else {
		*rows = strtol(PQcmdTuples(res), NULL, 10);
	}
}

static long column(PGresult *res, int col)
{
	return strtol(PQgetvalue(res, 0, col), NULL, 10);
}

static int count_only(PGconn *conn, const struct cfg *cfg, struct prune_counts *out,
                      char *err, size_t errlen)
{
	const int r[4] = {cfg->retention.succeeded_jobs_seconds, cfg->retention.dead_jobs_seconds,
	                  cfg->retention.events_seconds, cfg->retention.dlq_messages_seconds};
	char text[4][16];
	const char *params[4];
	PGresult *res;

	for (int i = 0; i < 4; i++) {
		snprintf(text[i], sizeof(text[i]), "%d", r[i]);
		params[i] = r[i] > 0 ? text[i] : NULL;
	}
	res = db_query(conn, dry_run_sql, 4, params, err, errlen);
	if (res == NULL)
		return -1;
	out->succeeded_jobs = column(res, 0);
	out->dead_jobs = column(res, 1);
	out->events = column(res, 2);
	out->dlq_messages = column(res, 3);
	PQclear(res);
	return 0;
}

static int run_step(PGconn *conn, const struct prune_step *s, int retention, int batch,
                    long max_batches, struct prune_counts *out, char *err, size_t errlen)
{
	char r[16], b[16];
	const char *params[3] = {s->status, r, b};

	snprintf(r, sizeof(r), "%d", retention);
	snprintf(b, sizeof(b), "%d", batch);
	for (long i = 0; max_batches < 0 || i < max_batches; i++) {
		PGresult *res = db_query(conn, s->sql, 3, params, err, errlen);
		long rows, events;

		if (res == NULL)
			return -1;
		read_counts(res, &rows, &events);
		PQclear(res);
		add(out, s->klass, rows, events);
		if (rows < batch)
			break;
	}
	return 0;
}

int pruner_run(PGconn *conn, const struct cfg *cfg, bool dry_run, long max_batches,
               struct prune_counts *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (dry_run)
		return count_only(conn, cfg, out, err, errlen);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int retention = retention_of(cfg, steps[i].klass);

		if (retention == 0)
			continue;
		if (run_step(conn, &steps[i], retention, cfg->retention.batch_size, max_batches, out,
		             err, errlen) < 0)
			return -1;
	}
	return 0;
}

char *prune_counts_json(const struct prune_counts *c)
{
	json_t *o = json_pack("{s:I, s:I, s:I, s:I}", "succeeded_jobs", (json_int_t)c->succeeded_jobs,
	                      "dead_jobs", (json_int_t)c->dead_jobs, "events", (json_int_t)c->events,
	                      "dlq_messages", (json_int_t)c->dlq_messages);
	char *text = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(o);
	return text;
}
