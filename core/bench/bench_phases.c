/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench_phases.c: the phases of outbox-bench (bench/bench.c lists
 * them) and the setup before them: the configuration, the database, the
 * durability check, the migrations and the queues.
 */
#include "bench/bench.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "db/db.h"
#include "common/log.h"
#include "db/migrate.h"
#include "relay/relay.h"
#include "aws/sqs.h"

static int relay_phase(struct bench *b, double *rate)
{
	char ini[BENCH_PATH_MAX + 32], sql[2048];
	struct cfg_errors errs = {0};
	struct cfg *cfg = NULL;
	struct relay *relay = NULL;
	int64_t t0;
	int rc = -1;

	snprintf(ini, sizeof(ini), "%.400s/relay.ini", b->dir);
	b->variant = NULL; /* FILE's settings, as they are */
	if (bench_write_ini(b, ini, b->relay_names, b->relay_queues, "-", NULL, NULL) < 0 ||
	    cfg_load(ini, &cfg, &errs) < 0) {
		cfg_errors_print(&errs, stderr);
		goto out;
	}
	bench_count_sql(b, b->relay_names, "outbox_events", "'NEW'", sql, sizeof(sql));
	t0 = bench_now_us();
	if (relay_start_publisher(cfg, "outbox-bench", b->publisher, &relay) < 0 ||
	    bench_wait_count(b, sql, 0, true, 600) < 0)
		goto out;
	*rate = b->jobs * 1e6 / (double)(bench_now_us() - t0);
	rc = 0;
out:
	relay_stop(relay);
	cfg_free(cfg);
	cfg_errors_free(&errs);
	return rc;
}

/* The e2e phase's CPU per job, less the producers' own (struct
 * bench_run); < 0 where a part was not measured. */
static void pipeline_cpu(const struct bench *b, const struct bench_pg_cpu *pg0,
                         const struct bench_pg_cpu *pg1, double machine0, double machine1,
                         struct bench_run *r)
{
	const struct bench_producer_time *t = &r->with_outboxd.time;
	double producers = t->backend_cpu_ms + t->client_cpu_ms;

	r->e2e_pipeline_postgres_cpu_ms_per_job = -1;
	r->e2e_pipeline_machine_cpu_ms_per_job = -1;
	if (!t->have)
		return;
	if (pg0->postmaster != 0 && pg1->postmaster == pg0->postmaster)
		r->e2e_pipeline_postgres_cpu_ms_per_job =
		        (pg1->seconds - pg0->seconds) * 1000.0 / b->jobs - t->backend_cpu_ms;
	if (machine0 >= 0 && machine1 >= 0)
		r->e2e_pipeline_machine_cpu_ms_per_job =
		        (machine1 - machine0) * 1000.0 / b->jobs - producers;
}

/* Phase 3: the real daemon while the producers enqueue N more jobs. */
static int e2e_phase(struct bench *b, const char *ini, struct bench_run *r)
{
	char sql[2048], phase[32];
	struct bench_db_sample db0, db1;
	struct bench_pg_cpu pg0 = {0}, pg1 = {0};
	double machine0, machine1 = -1;
	struct daemon d;
	int64_t t0;
	int rc;

	bench_phase(b, "e2e", phase, sizeof(phase));
	if (bench_db_sample(b, &db0) < 0 || bench_daemon_start(b, ini, phase, &d) < 0)
		return -1;
	bench_count_sql(b, b->names, "jobs", "'PENDING', 'CLAIMED'", sql, sizeof(sql));
	/* From the moment its workers are connected: a start-up, the same for
	 * every N, would weigh more at a small N. */
	if (bench_pg_cpu_sample(b, &pg0) < 0) {
		(void)bench_daemon_stop(&d);
		json_decref(d.sqs);
		return -1;
	}
	machine0 = bench_machine_cpu_seconds();
	t0 = bench_now_us();
	rc = bench_enqueue(b, phase, b->names, 0, b->jobs, &r->with_outboxd);
	if (rc == 0)
		rc = bench_wait_count(b, sql, 0, true, 600);
	r->e2e_rate = b->jobs * 1e6 / (double)(bench_now_us() - t0);
	/* Sampled before the stop, as the drain's. */
	if (rc == 0) {
		machine1 = bench_machine_cpu_seconds();
		rc = bench_pg_cpu_sample(b, &pg1);
	}
	pipeline_cpu(b, &pg0, &pg1, machine0, machine1, r);
	if (bench_daemon_stop(&d) < 0)
		rc = -1;
	r->e2e_sqs = d.sqs;
	r->requests_per_job = (double)d.aws_requests / b->jobs;
	r->e2e_cpu_seconds = d.cpu_seconds;
	r->peak_rss_kib = d.peak_rss_kib;
	if (rc == 0 && (bench_db_sample(b, &db1) < 0 ||
	                bench_db_work(&db0, &db1, &d, b->jobs, &r->e2e_db) < 0))
		rc = -1;
	return rc;
}

/* Phase 4: a fresh daemon, jobs offered at the rate of --offered-rate. */
static int latency_phase(struct bench *b, const char *ini, const char *runs, struct bench_run *r)
{
	char tag[32];
	struct daemon d;
	int rc;

	bench_phase(b, "latency", tag, sizeof(tag));
	if (bench_daemon_start(b, ini, tag, &d) < 0)
		return -1;
	rc = bench_latency_run(b, b->jobs < b->rate * 5 ? b->jobs : b->rate * 5, runs, &r->lat);
	if (bench_daemon_stop(&d) < 0)
		rc = -1;
	json_decref(d.sqs);
	if (d.peak_rss_kib > r->peak_rss_kib)
		r->peak_rss_kib = d.peak_rss_kib;
	return rc;
}

/* The daemon phases (drain, producer impact, e2e, latency) of variant v. */
static int daemon_phases(struct bench *b, const struct bench_variant *v,
                         const struct bench_commits *phase1, struct bench_run *r)
{
	char ini[BENCH_PATH_MAX + 32], runs[BENCH_PATH_MAX + 32];

	b->variant = v;
	r->variant = v;
	snprintf(ini, sizeof(ini), "%.400s/%.20soutboxd.ini", b->dir, v->tag);
	snprintf(runs, sizeof(runs), "%.400s/%.20sruns.log", b->dir, v->tag);
	/* Producers alone: the drain's commits, else those of phase 1. */
	r->solo = *phase1;
	if (b->drain && bench_drain_run(b, &r->drain) < 0)
		return -1;
	if (b->drain)
		r->solo = r->drain.solo;
	if (bench_write_ini(b, ini, b->names, b->queues, runs, NULL, NULL) < 0 ||
	    e2e_phase(b, ini, r) < 0 || latency_phase(b, ini, runs, r) < 0)
		return -1;
	r->have_e2e = true;
	return 0;
}

/* The baseline's relay.ini, loaded once before any phase: a bad key in
 * --baseline-settings fails here, not after the first half of the run. */
static int check_variant_ini(struct bench *b)
{
	struct bench_variant v = {"baseline", b->outboxd, &b->baseline, "baseline-"};
	struct cfg_errors errs = {0};
	char ini[BENCH_PATH_MAX + 32];
	struct cfg *cfg = NULL;
	int rc = BENCH_EXIT_OK;

	if (b->baseline_settings == NULL)
		return BENCH_EXIT_OK;
	snprintf(ini, sizeof(ini), "%.400s/baseline-check.ini", b->dir);
	b->variant = &v;
	if (bench_write_ini(b, ini, b->names, b->queues, "-", NULL, NULL) < 0) {
		rc = BENCH_EXIT_FAILURE;
	} else if (cfg_load(ini, &cfg, &errs) < 0) {
		fprintf(stderr, "outbox-bench: \"%s\" merged into the generated relay.ini:\n",
		        b->baseline_settings);
		cfg_errors_print(&errs, stderr);
		rc = BENCH_EXIT_CONFIG;
	}
	b->variant = NULL;
	cfg_free(cfg);
	cfg_errors_free(&errs);
	return rc;
}

int bench_setup(struct bench *b, const char *config)
{
	struct cfg_errors errs = {0};
	struct migrate_report rep;
	char tmpl[] = "/tmp/outbox-bench.XXXXXX", err[512];

	if (cfg_load(config, &b->cfg, &errs) < 0) {
		cfg_errors_print(&errs, stderr);
		cfg_errors_free(&errs);
		return BENCH_EXIT_CONFIG;
	}
	if (b->baseline_settings != NULL && bench_settings_load(b->baseline_settings, &b->baseline) < 0)
		return BENCH_EXIT_CONFIG;
	if (b->workers == 0)
		b->workers = b->cfg->consumer.workers;
	snprintf(b->run, sizeof(b->run), "%lx", (unsigned long)time(NULL) & 0xffffff);
	if (mkdtemp(tmpl) == NULL)
		return BENCH_EXIT_FAILURE;
	snprintf(b->dir, sizeof(b->dir), "%s", tmpl);
	b->conn = db_connect(b->cfg->database.conninfo, "outbox-bench", err, sizeof(err));
	if (b->conn == NULL) {
		log_error("could not connect to the database: %s", err);
		return BENCH_EXIT_UNAVAILABLE;
	}
	if (bench_check_durable(b) < 0)
		return BENCH_EXIT_UNAVAILABLE;
	if (!b->durable && !b->allow_non_durable) {
		log_error("the server is not durable (%s): commits do not wait for the WAL flush;"
		          " use a cluster with \"fsync\" and \"synchronous_commit\" on"
		          " (tests/harness/durable-pg.sh) or pass --allow-non-durable",
		          b->durability);
		return BENCH_EXIT_CONFIG;
	}
	if (migrate_run(b->conn, migrate_default_dir(), "core", &rep, err, sizeof(err)) != 0) {
		log_error("could not migrate the database: %s", err);
		return BENCH_EXIT_FAILURE;
	}
	if (strcmp(b->publisher, "sqs") == 0 &&
	    (aws_env_load(&b->env, b->cfg->aws.region, b->cfg->aws.endpoint_url, NULL) < 0 ||
	     aws_http_new(&b->env, AWS_SERVICE_SQS, &b->sqs) < 0))
		return BENCH_EXIT_CONFIG;
	if (bench_setup_queues(b) < 0)
		return BENCH_EXIT_UNAVAILABLE;
	return check_variant_ini(b);
}

int bench_run(struct bench *b, struct bench_figures *fg)
{
	static const struct bench_variant none = {"current", NULL, NULL, ""};
	struct bench_variant cur = none, base = {"baseline", NULL, NULL, "baseline-"};

	if (bench_enqueue(b, "enqueue", b->relay_names, 0, b->jobs, &fg->enqueue) < 0)
		return -1;
	fg->enqueue_rate = fg->enqueue.rate;
	if (relay_phase(b, &fg->relay_rate) < 0)
		return -1;
	if (strcmp(b->publisher, "sqs") != 0)
		return 0;
	cur.outboxd = b->outboxd;
	base.outboxd = b->baseline_outboxd != NULL ? b->baseline_outboxd : b->outboxd;
	base.settings = b->baseline_settings != NULL ? &b->baseline : NULL;
	/* Baseline first; both variants outlive the figures that name them. */
	if (b->baseline_outboxd != NULL || b->baseline_settings != NULL) {
		b->base_variant = base;
		if (daemon_phases(b, &b->base_variant, &fg->enqueue, &fg->base) < 0)
			return -1;
	}
	b->cur_variant = cur;
	return daemon_phases(b, &b->cur_variant, &fg->enqueue, &fg->cur);
}
