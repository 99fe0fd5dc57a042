/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench_load.c: producers, waiting and the latency run of outbox-bench
 * (see bench.h).
 */
#include "bench/bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "db/db.h"
#include "common/log.h"
#include "outbox/producer.h"

int64_t bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t bench_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void bench_phase(const struct bench *b, const char *phase, char *out, size_t len)
{
	snprintf(out, len, "%s%s", b->variant != NULL ? b->variant->tag : "", phase);
}

/* One job in its own transaction; job_id (65 bytes) may be NULL. */
static int enqueue_one(struct bench *b, PGconn *conn, char (*names)[48], const char *phase,
                       int n, char *job_id)
{
	const char *dest = names[n % b->dests];
	json_t *identity = json_pack("{s:s, s:s, s:i}", "run", b->run, "phase", phase, "n", n);
	json_t *payload = json_pack("{s:i}", "n", n);
	struct outbox_enqueued e;
	char err[512] = "out of memory";
	int rc = -1;

	if (identity == NULL || payload == NULL || db_exec(conn, "BEGIN", err, sizeof(err)) < 0)
		goto out;
	if (outbox_enqueue_job((struct pg_conn *)conn, "bench", dest, identity, payload, &e, err,
	                       sizeof(err)) < 0 ||
	    db_exec(conn, "COMMIT", err, sizeof(err)) < 0)
		goto out;
	if (job_id != NULL)
		memcpy(job_id, e.job_id, sizeof(e.job_id));
	rc = 0;
out:
	if (rc < 0)
		log_error("could not enqueue a bench job: %s", err);
	json_decref(identity);
	json_decref(payload);
	return rc;
}

/*
 * Sleeps until job k of a run started at t0_us is due at rate jobs/s (one
 * schedule for the whole run, so a late job is followed by its successors
 * at once and the run catches up instead of drifting).  Returns the time
 * it woke (bench_now_us()).
 */
static int64_t pace(int64_t t0_us, int k, int rate)
{
	int64_t due = t0_us + (int64_t)k * 1000000 / rate, now = bench_now_us();

	if (due <= now)
		return now;
	struct timespec pause = {(time_t)((due - now) / 1000000), (long)((due - now) % 1000000) * 1000};

	nanosleep(&pause, NULL);
	return bench_now_us();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct producer {
	struct bench *b;
	const char *phase;
	char (*names)[48];
	int first, step, end;
	int n0;        /* the run's first n: the pacing's origin */
	int rate;      /* jobs/s of all producers together; 0: as fast as they can */
	int64_t t0_us; /* the run's start (bench_now_us()) */
	int rc;
	double *ms; /* owned: each transaction's time, in order */
	int done;
	/* Scheduler times of its backend and its thread over its jobs. */
	struct bench_sched backend0, backend1, client0, client1;
	pthread_t thread;
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	char err[512];
	PGconn *conn = db_connect(p->b->cfg->database.conninfo, "outbox-bench producer", err,
	                          sizeof(err));

	p->rc = -1;
	if (conn == NULL) {
		log_error("producer could not connect: %s", err);
		return NULL;
	}
	bench_sched_backend(PQbackendPID(conn), &p->backend0);
	bench_sched_thread(&p->client0);
	for (int n = p->first; n < p->end; n += p->step) {
		/* Job n's place in the schedule that every producer shares. */
		int64_t t0 = p->rate > 0 ? pace(p->t0_us, n - p->n0, p->rate) : bench_now_us();

		if (enqueue_one(p->b, conn, p->names, p->phase, n, NULL) < 0) {
			PQfinish(conn);
			return NULL;
		}
		p->ms[p->done++] = (double)(bench_now_us() - t0) / 1000.0;
	}
	bench_sched_backend(PQbackendPID(conn), &p->backend1);
	bench_sched_thread(&p->client1);
	PQfinish(conn);
	p->rc = 0;
	return NULL;
}

double bench_percentile(double *v, int n, int p)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(n - 1) * p / 100];
}

/* The p99 of every producer's transaction times into out. */
static int commit_p99(const struct producer *ps, int np, int count, struct bench_commits *out)
{
	double *all = calloc((size_t)count, sizeof(*all));
	int m = 0;

	if (all == NULL)
		return -1;
	for (int i = 0; i < np; i++) {
		memcpy(all + m, ps[i].ms, (size_t)ps[i].done * sizeof(*all));
		m += ps[i].done;
	}
	out->p99_ms = bench_percentile(all, m, 99);
	free(all);
	return 0;
}

/* The producers' time per job (struct bench_producer_time) into out. */
static void producer_time(const struct producer *ps, int np, int count,
                          struct bench_producer_time *out)
{
	double ms = 0, ns[4] = {0, 0, 0, 0};

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < np; i++) {
		const struct producer *p = &ps[i];

		if (!p->backend0.have || !p->backend1.have || !p->client0.have || !p->client1.have)
			return;
		for (int k = 0; k < p->done; k++)
			ms += p->ms[k];
		ns[0] += (double)(p->backend1.run_ns - p->backend0.run_ns);
		ns[1] += (double)(p->backend1.wait_ns - p->backend0.wait_ns);
		ns[2] += (double)(p->client1.run_ns - p->client0.run_ns);
		ns[3] += (double)(p->client1.wait_ns - p->client0.wait_ns);
	}
	out->mean_ms = ms / count;
	out->backend_cpu_ms = ns[0] / 1e6 / count;
	out->backend_run_queue_ms = ns[1] / 1e6 / count;
	out->client_cpu_ms = ns[2] / 1e6 / count;
	out->client_run_queue_ms = ns[3] / 1e6 / count;
	out->have = true;
}

int bench_enqueue(struct bench *b, const char *phase, char (*names)[48], int n0, int count,
                  struct bench_commits *out)
{
	return bench_enqueue_paced(b, phase, names, n0, count, 0, out);
}

int bench_enqueue_paced(struct bench *b, const char *phase, char (*names)[48], int n0, int count,
                        int rate, struct bench_commits *out)
{
	struct producer ps[16];
	int np = b->producers < 1 ? 1 : b->producers > 16 ? 16 : b->producers;
	int rc = 0, started = 0;
	int64_t t0 = bench_now_us();

	for (int i = 0; i < np; i++) {
		ps[i] = (struct producer){.b = b, .phase = phase, .names = names, .first = n0 + i,
		                          .step = np, .end = n0 + count, .n0 = n0, .rate = rate,
		                          .t0_us = t0, .rc = -1};
		ps[i].ms = calloc((size_t)(count / np + 1), sizeof(double));
		if (ps[i].ms == NULL ||
		    pthread_create(&ps[i].thread, NULL, producer_main, &ps[i]) != 0) {
			free(ps[i].ms);
			rc = -1;
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(ps[i].thread, NULL);
		if (ps[i].rc < 0)
			rc = -1;
	}
	if (rc == 0 && out != NULL) {
		out->rate = count * 1e6 / (double)(bench_now_us() - t0);
		producer_time(ps, np, count, &out->time);
		rc = commit_p99(ps, np, count, out);
	}
	for (int i = 0; i < started; i++)
		free(ps[i].ms);
	return rc;
}

void bench_count_sql(const struct bench *b, char (*names)[48], const char *table,
                     const char *statuses, char *sql, size_t len)
{
	size_t n = (size_t)snprintf(sql, len, "SELECT count(*) FROM outbox.%s WHERE status IN (%s)"
	                                      " AND destination IN (", table, statuses);

	for (int k = 0; k < b->dests && n < len; k++)
		n += (size_t)snprintf(sql + n, len - n, "%s'%s'", k ? ", " : "", names[k]);
	if (n < len)
		snprintf(sql + n, len - n, ")");
}

int bench_wait_count(struct bench *b, const char *sql, long want, bool at_most, int timeout_s)
{
	int64_t deadline = bench_now_us() + (int64_t)timeout_s * 1000000;
	struct timespec pause = {0, 10 * 1000000L};
	char err[512];

	for (;;) {
		PGresult *res = db_query(b->conn, sql, 0, NULL, err, sizeof(err));
		long n;

		if (res == NULL) {
			log_error("could not poll: %s", err);
			return -1;
		}
		n = strtol(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
		if (at_most ? n <= want : n >= want)
			return 0;
		if (bench_now_us() > deadline) {
			log_error("timed out after %d s: %ld of %ld", timeout_s, n, want);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
}

/* A job's commit time, or handler start time. */
struct stamp {
	char job_id[65];
	int64_t us;
};

static int cmp_stamp(const void *a, const void *b)
{
	return strcmp(((const struct stamp *)a)->job_id, ((const struct stamp *)b)->job_id);
}

/* Handler start times of runs_log (first run of each job). */
static struct stamp *read_starts(const char *runs_log, size_t *n)
{
	FILE *f = fopen(runs_log, "r");
	struct stamp *v = NULL, s;
	size_t cap = 0;
	int attempt, gen;
	long long us;

	*n = 0;
	if (f == NULL)
		return NULL;
	while (fscanf(f, "%64s %d %d %lld\n", s.job_id, &attempt, &gen, &us) == 4) {
		if (*n == cap) {
			struct stamp *g = realloc(v, (cap = cap ? cap * 2 : 1024) * sizeof(*v));
			if (g == NULL)
				break;
			v = g;
		}
		s.us = us;
		v[(*n)++] = s;
	}
	fclose(f);
	qsort(v, *n, sizeof(*v), cmp_stamp);
	return v;
}

/* Latencies of commits matched against starts; percentiles into out. */
static int percentiles(struct stamp *commits, int count, const char *runs_log,
                       struct bench_latency *out)
{
	size_t ns = 0, k = 0;
	struct stamp *starts = read_starts(runs_log, &ns);
	double *lat = calloc((size_t)count, sizeof(*lat));
	int m = 0;

	if (starts == NULL || lat == NULL) {
		free(starts);
		free(lat);
		return -1;
	}
	qsort(commits, (size_t)count, sizeof(*commits), cmp_stamp);
	for (int i = 0; i < count; i++) {
		while (k < ns && strcmp(starts[k].job_id, commits[i].job_id) < 0)
			k++;
		if (k < ns && strcmp(starts[k].job_id, commits[i].job_id) == 0)
			lat[m++] = (double)(starts[k].us - commits[i].us) / 1000.0;
	}
	out->jobs = m;
	if (m > 0) {
		out->p50_ms = bench_percentile(lat, m, 50);
		out->p99_ms = lat[(m - 1) * 99 / 100];
		out->max_ms = lat[m - 1];
	}
	free(starts);
	free(lat);
	return m == count ? 0 : -1;
}

int bench_latency_run(struct bench *b, int count, const char *runs_log,
                      struct bench_latency *out)
{
	struct stamp *commits = calloc((size_t)count, sizeof(*commits));
	char err[512], sql[2048];
	PGconn *conn = db_connect(b->cfg->database.conninfo, "outbox-bench producer", err,
	                          sizeof(err));
	int64_t t0 = bench_now_us();
	char phase[32];
	int rc = -1;

	bench_phase(b, "latency", phase, sizeof(phase));
	memset(out, 0, sizeof(*out));
	if (commits == NULL || conn == NULL)
		goto out;
	for (int n = 0; n < count; n++) {
		pace(t0, n, b->rate);
		if (enqueue_one(b, conn, b->names, phase, n, commits[n].job_id) < 0)
			goto out;
		commits[n].us = bench_wall_us();
	}
	out->achieved_rate = count * 1e6 / (double)(bench_now_us() - t0);
	bench_count_sql(b, b->names, "jobs", "'PENDING', 'CLAIMED'", sql, sizeof(sql));
	if (bench_wait_count(b, sql, 0, true, 120) < 0)
		goto out;
	rc = percentiles(commits, count, runs_log, out);
out:
	PQfinish(conn);
	free(commits);
	return rc;
}
