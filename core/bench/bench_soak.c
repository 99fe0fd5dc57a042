/*
 * bench/bench_soak.c: outbox-bench --soak N (docs/maintenance.md, "Soak").
 *
 * N jobs through the real outboxd with retention on, in ten equal tenths:
 * each tenth is enqueued by the producers at the offered rate (--rate)
 * while the daemon runs, and ends when none of the bench's jobs is PENDING
 * or CLAIMED.  A steady offered rate keeps the live rows (rate × retention)
 * steady, so that bytes per live row compare across tenths.  A probe thread
 * times the relay's claim statement (outbox_store_claim() in a transaction
 * that is rolled back) every 50 ms all along.  Reported: per tenth its
 * end-to-end rate and claim time (p50, p90); when the producers have
 * enqueued each tenth (the load still steady) the bytes and live rows of
 * every table and index of the outbox schema (soak_tenths); the two big tables' sizes after 10 %, 50 % and 100 %;
 * first and last tenth compared.  The queues
 * get a MessageRetentionPeriod of half the retention (at least 60 s) so
 * that the retention passes the configuration's horizon check honestly.
 */
#include "bench/bench.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aws/sqs.h"
#include "common/log.h"
#include "db/db.h"
#include "maintenance/runs.h"
#include "relay/outbox_store.h"

#define SOAK_TENTHS 10
#define SOAK_PROBE_MS 50
#define SOAK_MAX_PROBES 100000
#define SOAK_TENTH_TIMEOUT_S 1800

/* The worst horizon the probe saw in a tenth (probe_horizon()). */
struct soak_horizon {
	double snapshot_max_s;  /* the oldest snapshot another session held */
	char holder[160];       /* who held it: application_name: query */
	double relay_lag_max_s; /* the oldest NEW event's age */
};

struct soak_tenth {
	double seconds;
	double rate;
	double claim_p50_ms, claim_p90_ms;
	size_t probes;
	struct soak_horizon horizon;
	json_t *relations; /* owned: {NAME: {bytes, live_rows, bytes_per_live_row}} */
};

/* Bytes and rows of the two big tables at one point of the run. */
struct soak_size {
	long long jobs_table, jobs_indexes, events_table, events_indexes, dlq_total;
	long long jobs_rows, events_rows;
};

struct soak_probe {
	struct bench *b;
	PGconn *conn;          /* owned by the thread */
	pthread_t tid;
	atomic_bool stop;
	pthread_mutex_t mu;
	double *ms;            /* under mu; SOAK_MAX_PROBES, of the current tenth */
	size_t n;
	struct soak_horizon horizon; /* under mu, of the current tenth */
	int failures;          /* claim probes that failed */
	int horizon_failures;  /* horizon queries that failed */
	char last_err[512];    /* the last failure's message */
};

static int soak_queues(struct bench *b, int retention)
{
	char name[96], period[16];
	struct sqs_attribute attrs[] = {{"MessageRetentionPeriod", period}};

	snprintf(period, sizeof(period), "%d", retention);
	for (int k = 0; k < b->dests; k++) {
		struct aws_result res;
		char *url = NULL;

		snprintf(name, sizeof(name), "outbox-%.40s-soak", b->names[k]);
		for (char *p = name; *p != '\0'; p++)
			*p = *p == '_' ? '-' : *p;
		if (sqs_create_queue(b->sqs, name, attrs, 1, &url, &res) < 0) {
			log_error("could not create queue \"%s\": %s %s", name, res.code, res.message);
			return -1;
		}
		snprintf(b->queues[k], BENCH_PATH_MAX, "%s", url);
		free(url);
	}
	return 0;
}

/* Counts a failure in *count and keeps its message (the thread's own). */
static void probe_failed(struct soak_probe *p, int *count, const char *err)
{
	(*count)++;
	snprintf(p->last_err, sizeof(p->last_err), "%s", err);
}

static void probe_once(struct soak_probe *p, int k)
{
	char err[512];
	struct outbox_claim c = {0};
	int64_t t0;
	double ms;

	if (db_exec(p->conn, "BEGIN", err, sizeof(err)) < 0) {
		probe_failed(p, &p->failures, err);
		return;
	}
	t0 = bench_now_us();
	if (outbox_store_claim(p->conn, p->b->names[k % p->b->dests], "outbox-bench-probe", 10, 30,
	                       &c, err, sizeof(err)) < 0)
		probe_failed(p, &p->failures, err);
	ms = (double)(bench_now_us() - t0) / 1000.0;
	outbox_store_claim_free(&c);
	if (db_exec(p->conn, "ROLLBACK", err, sizeof(err)) < 0)
		probe_failed(p, &p->failures, err);
	pthread_mutex_lock(&p->mu);
	if (p->n < SOAK_MAX_PROBES)
		p->ms[p->n++] = ms;
	pthread_mutex_unlock(&p->mu);
}

/*
 * What can make an index grow while its live rows do not: a snapshot held
 * long (no dead entry older than it can be removed, by VACUUM or by the
 * scans that mark entries dead) or a relay that fell behind (the NEW
 * events stay in outbox_events_new_due).  Both are sampled with the probes
 * and their worst per tenth reported, with who held the oldest snapshot.
 */
static const char horizon_sql[] =
	"SELECT coalesce(extract(epoch FROM now() - a.xact_start), 0)::float8,"
	"       coalesce(a.application_name || ': ' || left(a.query, 100), ''),"
	"       coalesce((SELECT extract(epoch FROM now() - min(e.created_at))"
	"                   FROM outbox.outbox_events e WHERE e.status = 'NEW'), 0)::float8"
	"  FROM (SELECT 1) one LEFT JOIN LATERAL ("
	"    SELECT xact_start, application_name, query FROM pg_catalog.pg_stat_activity"
	"     WHERE backend_xmin IS NOT NULL AND pid <> pg_catalog.pg_backend_pid()"
	"     ORDER BY xact_start LIMIT 1) a ON true";

static void probe_horizon(struct soak_probe *p)
{
	char err[512];
	PGresult *res = db_query(p->conn, horizon_sql, 0, NULL, err, sizeof(err));
	double age, lag;

	if (res == NULL) {
		probe_failed(p, &p->horizon_failures, err);
		return;
	}
	age = strtod(PQgetvalue(res, 0, 0), NULL);
	lag = strtod(PQgetvalue(res, 0, 2), NULL);
	pthread_mutex_lock(&p->mu);
	if (age > p->horizon.snapshot_max_s) {
		p->horizon.snapshot_max_s = age;
		snprintf(p->horizon.holder, sizeof(p->horizon.holder), "%s", PQgetvalue(res, 0, 1));
	}
	if (lag > p->horizon.relay_lag_max_s)
		p->horizon.relay_lag_max_s = lag;
	pthread_mutex_unlock(&p->mu);
	PQclear(res);
}

static void *probe_main(void *arg)
{
	struct soak_probe *p = arg;

	for (int k = 0; !atomic_load(&p->stop); k++) {
		probe_once(p, k);
		if (k % 10 == 0)
			probe_horizon(p);
		usleep(SOAK_PROBE_MS * 1000);
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Takes the probes of the tenth that just ended and starts a new one. */
static void probe_take(struct soak_probe *p, struct soak_tenth *t)
{
	pthread_mutex_lock(&p->mu);
	qsort(p->ms, p->n, sizeof(*p->ms), cmp_double);
	t->probes = p->n;
	t->claim_p50_ms = p->n ? p->ms[p->n / 2] : 0;
	t->claim_p90_ms = p->n ? p->ms[p->n * 9 / 10] : 0;
	t->horizon = p->horizon;
	p->n = 0;
	p->horizon = (struct soak_horizon){0};
	pthread_mutex_unlock(&p->mu);
}

static long long value(PGresult *res, int col)
{
	return strtoll(PQgetvalue(res, 0, col), NULL, 10);
}

static int measure_size(struct bench *b, struct soak_size *s)
{
	char err[512];
	PGresult *res = db_query(b->conn,
		"SELECT pg_table_size('outbox.jobs'), pg_indexes_size('outbox.jobs'),"
		"       pg_table_size('outbox.outbox_events'), pg_indexes_size('outbox.outbox_events'),"
		"       pg_total_relation_size('outbox.dlq_messages'),"
		"       (SELECT count(*) FROM outbox.jobs), (SELECT count(*) FROM outbox.outbox_events)",
		0, NULL, err, sizeof(err));

	if (res == NULL) {
		log_error("could not read the table sizes: %s", err);
		return -1;
	}
	*s = (struct soak_size){value(res, 0), value(res, 1), value(res, 2), value(res, 3),
	                        value(res, 4), value(res, 5), value(res, 6)};
	PQclear(res);
	return 0;
}

/*
 * Every table and index of the outbox schema: its bytes (a table's include
 * its TOAST and maps, an index's are its own) and the live rows of its
 * table, counted exactly (query_to_xml runs one count(*) per table inside
 * this one statement).  An index's live rows are its table's, so that its
 * bytes per live row say what one more row of the table costs in it.
 */
static const char soak_relations_sql[] =
	"WITH rel AS ("
	"  SELECT c.relname::text AS name, c.relkind,"
	"         CASE WHEN c.relkind = 'i' THEN pg_catalog.pg_relation_size(c.oid)"
	"              ELSE pg_catalog.pg_table_size(c.oid) END AS bytes,"
	"         coalesce(t.relname, c.relname)::text AS tbl"
	"  FROM pg_catalog.pg_class c"
	"  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
	"  LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid"
	"  LEFT JOIN pg_catalog.pg_class t ON t.oid = i.indrelid"
	"  WHERE n.nspname = 'outbox' AND c.relkind IN ('r', 'i')),"
	" live AS ("
	"  SELECT name AS tbl, (pg_catalog.xpath('/row/n/text()', pg_catalog.query_to_xml("
	"           pg_catalog.format('SELECT count(*) AS n FROM outbox.%I', name),"
	"           false, true, '')))[1]::text::bigint AS n"
	"  FROM rel WHERE relkind = 'r')"
	" SELECT rel.name, rel.bytes, live.n FROM rel JOIN live USING (tbl)"
	" ORDER BY rel.relkind DESC, rel.tbl, rel.name";

static json_t *measure_relations(struct bench *b)
{
	char err[512];
	PGresult *res = db_query(b->conn, soak_relations_sql, 0, NULL, err, sizeof(err));
	json_t *o;

	if (res == NULL) {
		log_error("could not read the relation sizes: %s", err);
		return NULL;
	}
	o = json_object();
	for (int r = 0; o != NULL && r < PQntuples(res); r++) {
		long long bytes = strtoll(PQgetvalue(res, r, 1), NULL, 10);
		long long live = strtoll(PQgetvalue(res, r, 2), NULL, 10);

		json_object_set_new(o, PQgetvalue(res, r, 0),
		                    json_pack("{s:I, s:I, s:f}", "bytes", (json_int_t)bytes,
		                              "live_rows", (json_int_t)live, "bytes_per_live_row",
		                              live > 0 ? (double)bytes / (double)live : 0.0));
	}
	PQclear(res);
	return o;
}

static json_t *size_json(const struct soak_size *s)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	                 "jobs_table_bytes", (json_int_t)s->jobs_table,
	                 "jobs_indexes_bytes", (json_int_t)s->jobs_indexes,
	                 "events_table_bytes", (json_int_t)s->events_table,
	                 "events_indexes_bytes", (json_int_t)s->events_indexes,
	                 "dlq_total_bytes", (json_int_t)s->dlq_total,
	                 "total_bytes", (json_int_t)(s->jobs_table + s->jobs_indexes +
	                                             s->events_table + s->events_indexes +
	                                             s->dlq_total),
	                 "jobs_rows", (json_int_t)s->jobs_rows,
	                 "events_rows", (json_int_t)s->events_rows);
}

/* One tenth: enqueue it while the daemon runs, wait until it is done. */
static int run_tenth(struct bench *b, struct soak_probe *p, int n0, int count,
                     struct soak_tenth *t)
{
	char sql[2048];
	int64_t t0 = bench_now_us();

	bench_count_sql(b, b->names, "jobs", "'PENDING', 'CLAIMED'", sql, sizeof(sql));
	if (bench_enqueue_paced(b, "soak", b->names, n0, count, b->rate, NULL) < 0)
		return -1;
	/* Sized while the offered load still holds: once the producers
	 * pause, the pruner keeps deleting while the last jobs finish, and
	 * the live rows at that moment would depend on how long that took. */
	t->relations = measure_relations(b);
	if (t->relations == NULL || bench_wait_count(b, sql, 0, true, SOAK_TENTH_TIMEOUT_S) < 0)
		return -1;
	t->seconds = (double)(bench_now_us() - t0) / 1e6;
	t->rate = count / t->seconds;
	probe_take(p, t);
	return 0;
}

static double change_pct(double first, double last)
{
	return first > 0 ? (last - first) * 100.0 / first : 0;
}

static char *setting(struct bench *b, const char *name)
{
	char err[256], sql[128];
	PGresult *res;
	char *v;

	snprintf(sql, sizeof(sql), "SELECT current_setting('%s')", name);
	res = db_query(b->conn, sql, 0, NULL, err, sizeof(err));
	v = strdup(res != NULL ? PQgetvalue(res, 0, 0) : "?");
	PQclear(res);
	return v;
}

static json_t *tenths_json(const struct soak_tenth *t, int per)
{
	json_t *a = json_array();

	for (int i = 0; i < SOAK_TENTHS; i++)
		json_array_append_new(a, json_pack("{s:i, s:f, s:f, s:f, s:f, s:I}", "jobs", per,
		                      "seconds", t[i].seconds, "end_to_end_rate", t[i].rate,
		                      "claim_ms_p50", t[i].claim_p50_ms, "claim_ms_p90", t[i].claim_p90_ms,
		                      "claim_probes", (json_int_t)t[i].probes));
	return a;
}

/* The per-tenth objects of --json's soak_tenths; jobs_done counts from the start. */
static json_t *soak_tenths_json(const struct soak_tenth *t, int per)
{
	json_t *a = json_array();

	for (int i = 0; i < SOAK_TENTHS; i++)
		json_array_append_new(a, json_pack("{s:i, s:f, s:f, s:f, s:s, s:f, s:O}",
		                      "jobs_done", per * (i + 1), "rate", t[i].rate,
		                      "claim_p50_ms", t[i].claim_p50_ms,
		                      "oldest_snapshot_max_s", t[i].horizon.snapshot_max_s,
		                      "oldest_snapshot_holder", t[i].horizon.holder,
		                      "relay_lag_max_s", t[i].horizon.relay_lag_max_s,
		                      "relations", t[i].relations));
	return a;
}

static void print_soak(struct bench *b, const struct soak_tenth *t, const struct soak_size *sz,
                       int per, int queue_retention, double total_s, bool json)
{
	char *fsync = setting(b, "fsync"), *sync = setting(b, "synchronous_commit"), err[256];
	json_t *maint = maintenance_runs_load(b->conn, err, sizeof(err));
	const struct soak_tenth *first = &t[0], *last = &t[SOAK_TENTHS - 1];
	json_t *doc = json_pack(
		"{s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:b, s:f, s:f, s:o, s:{s:o, s:o, s:o},"
		" s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:o}",
		"soak_jobs", per * SOAK_TENTHS, "destinations", b->dests,
		"workers_per_destination", b->workers, "retention_seconds", b->soak_retention,
		"queue_retention_seconds", queue_retention, "fsync", fsync, "synchronous_commit", sync,
		"durable", strcmp(fsync, "on") == 0 && strcmp(sync, "off") != 0,
		"seconds", total_s, "end_to_end_rate", per * SOAK_TENTHS / total_s,
		"tenths", tenths_json(t, per),
		"sizes", "10%", size_json(&sz[0]), "50%", size_json(&sz[1]), "100%", size_json(&sz[2]),
		"soak_tenths", soak_tenths_json(t, per),
		"first_tenth_rate", first->rate, "last_tenth_rate", last->rate,
		"rate_change_pct", change_pct(first->rate, last->rate),
		"first_tenth_claim_ms_p50", first->claim_p50_ms,
		"last_tenth_claim_ms_p50", last->claim_p50_ms,
		"claim_change_pct", change_pct(first->claim_p50_ms, last->claim_p50_ms),
		"maintenance", maint != NULL ? maint : json_null());

	if (json) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	} else {
		char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
		printf("%s", text != NULL ? text : "");
		free(text);
	}
	printf("\n");
	json_decref(doc);
	free(fsync);
	free(sync);
}

/* The store prepares its statement on first use, which must not happen
 * inside the probe's transaction (a failed statement aborts it): a first
 * claim, outside any transaction, for a destination nobody uses. */
static int probe_prepare(struct soak_probe *p)
{
	struct outbox_claim c = {0};
	char err[512];
	int rc = outbox_store_claim(p->conn, "outbox-bench-probe-none", "outbox-bench-probe", 10, 30,
	                            &c, err, sizeof(err));

	outbox_store_claim_free(&c);
	if (rc < 0)
		log_error("could not prepare the claim probe: %s", err);
	return rc;
}

static int probe_start(struct bench *b, struct soak_probe *p)
{
	char err[512];

	p->b = b;
	atomic_init(&p->stop, false);
	pthread_mutex_init(&p->mu, NULL);
	p->ms = calloc(SOAK_MAX_PROBES, sizeof(*p->ms));
	p->conn = db_connect(b->cfg->database.conninfo, "outbox-bench probe", err, sizeof(err));
	if (p->ms == NULL || p->conn == NULL) {
		log_error("could not start the claim probe: %s", p->conn == NULL ? err : "out of memory");
		return -1;
	}
	if (probe_prepare(p) < 0)
		return -1;
	return pthread_create(&p->tid, NULL, probe_main, p) == 0 ? 0 : -1;
}

/* Joins the thread (when started) and frees what probe_start() made. */
static void probe_stop(struct soak_probe *p, bool started)
{
	atomic_store(&p->stop, true);
	if (started)
		pthread_join(p->tid, NULL);
	PQfinish(p->conn);
	free(p->ms);
	pthread_mutex_destroy(&p->mu);
}

int bench_soak_run(struct bench *b, bool json)
{
	char ini[BENCH_PATH_MAX + 32], sections[512], dest_lines[64];
	int queue_retention = b->soak_retention / 2 < 60 ? 60 : b->soak_retention / 2;
	int per = b->soak / SOAK_TENTHS;
	struct soak_tenth t[SOAK_TENTHS] = {{0}};
	struct soak_size sz[3];
	struct soak_probe p = {0};
	struct daemon d;
	bool started;
	int64_t t0;
	int rc = -1;

	snprintf(ini, sizeof(ini), "%.400s/soak.ini", b->dir);
	snprintf(sections, sizeof(sections),
	         "[retention]\nsucceeded_jobs_seconds = %d\ndead_jobs_seconds = %d\n"
	         "events_seconds = %d\ndlq_messages_seconds = %d\ninterval_seconds = 5\n",
	         b->soak_retention, b->soak_retention, b->soak_retention, b->soak_retention);
	snprintf(dest_lines, sizeof(dest_lines), "message_retention_seconds = %d\n", queue_retention);
	if (per < 1 || soak_queues(b, queue_retention) < 0 ||
	    bench_write_ini(b, ini, b->names, b->queues, "-", sections, dest_lines) < 0 ||
	    bench_daemon_start(b, ini, "soak", &d) < 0)
		return -1;
	started = probe_start(b, &p) == 0;
	t0 = bench_now_us();
	int done = 0;
	for (; started && done < SOAK_TENTHS; done++) {
		int i = done;

		if (run_tenth(b, &p, i * per, per, &t[i]) < 0)
			break;
		fprintf(stderr, "outbox-bench: soak tenth %d: %.0f jobs/s, claim p50 %.2f ms\n", i + 1,
		        t[i].rate, t[i].claim_p50_ms);
		if ((i == 0 || i == 4 || i == 9) && measure_size(b, &sz[i == 0 ? 0 : i == 4 ? 1 : 2]) < 0)
			break;
	}
	double total_s = (double)(bench_now_us() - t0) / 1e6;
	/* The probe thread is joined before its failure count is read. */
	probe_stop(&p, started);
	if (done == SOAK_TENTHS && p.failures + p.horizon_failures > 0) {
		/* A failed probe times an error, not the claim, or misses the
		 * worst horizon: no figures. */
		log_error("%d claim probes and %d horizon queries failed, the last with: %s",
		          p.failures, p.horizon_failures, p.last_err);
	} else if (done == SOAK_TENTHS) {
		print_soak(b, t, sz, per, queue_retention, total_s, json);
		rc = 0;
	}
	if (bench_daemon_stop(&d) < 0)
		rc = -1;
	json_decref(d.sqs);
	for (int i = 0; i < SOAK_TENTHS; i++)
		json_decref(t[i].relations);
	return rc;
}
