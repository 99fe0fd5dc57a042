/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench_drain.c: --drain (see bench.h).  N jobs are committed first,
 * with nothing else running, by the producers of the enqueue phase to the
 * destinations the daemon consumes; then the real outboxd is started and
 * timed from its start to the last SUCCEEDED.  Its CPU and that of every
 * PostgreSQL process over that span are divided by N, and so are the WAL,
 * row versions and round trips of the daemon's whole run (bench_dbwork.c).
 */
#include "bench/bench.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "common/log.h"

int bench_drain_run(struct bench *b, struct bench_drain *out)
{
	char ini[BENCH_PATH_MAX + 32], phase[32], sql[2048];
	struct bench_pg_cpu pg0 = {0}, pg1 = {0};
	struct bench_db_sample db0, db1;
	struct daemon d;
	int64_t t0, t1;
	int rc;

	memset(out, 0, sizeof(*out));
	bench_phase(b, "drain", phase, sizeof(phase));
	snprintf(ini, sizeof(ini), "%.400s/%.20sdrain.ini", b->dir, b->variant->tag);
	if (bench_write_ini(b, ini, b->names, b->queues, "-", NULL, NULL) < 0 ||
	    bench_enqueue(b, phase, b->names, 0, b->jobs, &out->solo) < 0 ||
	    bench_db_sample(b, &db0) < 0 || bench_pg_cpu_sample(b, &pg0) < 0)
		return -1;
	bench_count_sql(b, b->names, "jobs", "'PENDING', 'CLAIMED'", sql, sizeof(sql));
	t0 = bench_now_us();
	if (bench_daemon_start(b, ini, phase, &d) < 0)
		return -1;
	rc = bench_wait_count(b, sql, 0, true, 600);
	t1 = bench_now_us();
	/* Sampled before the stop: its shutdown is not part of the drain. */
	if (rc == 0)
		rc = bench_pg_cpu_sample(b, &pg1);
	if (bench_daemon_stop(&d) < 0)
		rc = -1;
	json_decref(d.sqs);
	/* After the stop: its sessions report their counters as they end. */
	if (rc < 0 || bench_db_sample(b, &db1) < 0 ||
	    bench_db_work(&db0, &db1, &d, b->jobs, &out->db) < 0)
		return -1;
	out->rate = b->jobs * 1e6 / (double)(t1 - t0);
	out->outboxd_cpu_ms_per_job = d.cpu_seconds * 1000.0 / b->jobs;
	out->postgres_cpu_ms_per_job = pg0.postmaster != 0 && pg1.postmaster == pg0.postmaster
	                                       ? (pg1.seconds - pg0.seconds) * 1000.0 / b->jobs
	                                       : -1;
	out->sqs_requests_per_job = (double)d.aws_requests / b->jobs;
	out->have = true;
	return 0;
}
