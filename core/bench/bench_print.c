/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench_print.c: the figures of outbox-bench (see bench.h): one JSON
 * document, or text with one column, or two (baseline, current) when a
 * baseline ran.  JSON keeps the current figures at the top level, as
 * without a baseline, and the baseline's under "baseline".
 */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

/* Two decimals, or null when not measured. */
static json_t *num_or_null(bool have, double v)
{
	return have ? json_real((double)(long long)(v * 100) / 100) : json_null();
}

/* The database's work per job of a phase, keys PREFIX_...; null when not
 * measured. */
static void db_work_json(json_t *o, const char *prefix, const struct bench_db_work *w)
{
	char key[64];
	struct {
		const char *name;
		double v;
	} f[] = {
		{"wal_bytes_per_job", w->wal_bytes_per_job},
		{"row_versions_per_job", w->row_versions_per_job},
		{"jobs_hot_update_share", w->jobs_hot_share},
		{"events_hot_update_share", w->events_hot_share},
		{"statements_per_job", w->statements_per_job},
		{"round_trips_per_job", w->round_trips_per_job},
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		snprintf(key, sizeof(key), "%s_%s", prefix, f[i].name);
		json_object_set_new(o, key, num_or_null(w->have && f[i].v >= 0, f[i].v));
	}
}

/* Where the producers' transactions spent their time (struct
 * bench_producer_time), ms per job; null when not measured. */
static json_t *producer_time_json(bool have, const struct bench_producer_time *t)
{
	if (!have || !t->have)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}",
	                 "mean", num_or_null(true, t->mean_ms),
	                 "backend_cpu", num_or_null(true, t->backend_cpu_ms),
	                 "backend_run_queue", num_or_null(true, t->backend_run_queue_ms),
	                 "client_cpu", num_or_null(true, t->client_cpu_ms),
	                 "client_run_queue", num_or_null(true, t->client_run_queue_ms),
	                 "rest", num_or_null(true, t->mean_ms - t->backend_cpu_ms -
	                                               t->backend_run_queue_ms - t->client_cpu_ms -
	                                               t->client_run_queue_ms));
}

/* The figures of one run of the daemon phases. */
static json_t *run_json(const struct bench *b, const struct bench_run *r)
{
	const struct bench_drain *dr = &r->drain;
	bool e2e = r->have_e2e;
	json_t *o = json_object();

	json_object_set_new(o, "outboxd", json_string(r->variant != NULL ? r->variant->outboxd
	                                                                  : b->outboxd));
	json_object_set_new(o, "settings",
	                    r->variant != NULL && r->variant->settings != NULL
	                            ? json_string(b->baseline_settings)
	                            : json_null());
	json_object_set_new(o, "end_to_end_rate", num_or_null(e2e, r->e2e_rate));
	json_object_set_new(o, "sqs_requests_per_job", num_or_null(e2e, r->requests_per_job));
	json_object_set_new(o, "outboxd_cpu_ms_per_job",
	                    num_or_null(e2e && r->e2e_cpu_seconds >= 0,
	                                r->e2e_cpu_seconds * 1000.0 / b->jobs));
	json_object_set_new(o, "e2e_pipeline_postgres_cpu_ms_per_job",
	                    num_or_null(e2e && r->e2e_pipeline_postgres_cpu_ms_per_job >= 0,
	                                r->e2e_pipeline_postgres_cpu_ms_per_job));
	json_object_set_new(o, "e2e_pipeline_machine_cpu_ms_per_job",
	                    num_or_null(e2e && r->e2e_pipeline_machine_cpu_ms_per_job >= 0,
	                                r->e2e_pipeline_machine_cpu_ms_per_job));
	if (r->e2e_sqs != NULL)
		json_object_set(o, "sqs_requests_by_action", r->e2e_sqs);
	json_object_set_new(o, "achieved_offered_rate", num_or_null(e2e, r->lat.achieved_rate));
	json_object_set_new(o, "latency_jobs", json_integer(r->lat.jobs));
	json_object_set_new(o, "latency_p50_ms", num_or_null(e2e, r->lat.p50_ms));
	json_object_set_new(o, "latency_p99_ms", num_or_null(e2e, r->lat.p99_ms));
	json_object_set_new(o, "latency_max_ms", num_or_null(e2e, r->lat.max_ms));
	json_object_set_new(o, "outboxd_peak_rss_mib",
	                    num_or_null(e2e, (double)r->peak_rss_kib / 1024.0));
	json_object_set_new(o, "drain_rate", num_or_null(dr->have, dr->rate));
	json_object_set_new(o, "drain_outboxd_cpu_ms_per_job",
	                    num_or_null(dr->have && dr->outboxd_cpu_ms_per_job >= 0,
	                                dr->outboxd_cpu_ms_per_job));
	json_object_set_new(o, "drain_postgres_cpu_ms_per_job",
	                    num_or_null(dr->have && dr->postgres_cpu_ms_per_job >= 0,
	                                dr->postgres_cpu_ms_per_job));
	json_object_set_new(o, "drain_sqs_requests_per_job",
	                    num_or_null(dr->have, dr->sqs_requests_per_job));
	db_work_json(o, "drain", &dr->db);
	db_work_json(o, "e2e", &r->e2e_db);
	json_object_set_new(o, "producer_rate_solo", num_or_null(e2e, r->solo.rate));
	json_object_set_new(o, "producer_commit_p99_ms_solo", num_or_null(e2e, r->solo.p99_ms));
	json_object_set_new(o, "producer_rate_with_outboxd", num_or_null(e2e, r->with_outboxd.rate));
	json_object_set_new(o, "producer_commit_p99_ms_with_outboxd",
	                    num_or_null(e2e, r->with_outboxd.p99_ms));
	json_object_set_new(o, "producer_rate_ratio",
	                    num_or_null(e2e && r->solo.rate > 0, r->with_outboxd.rate / r->solo.rate));
	json_object_set_new(o, "producer_ms_per_job_solo", producer_time_json(e2e, &r->solo.time));
	json_object_set_new(o, "producer_ms_per_job_with_outboxd",
	                    producer_time_json(e2e, &r->with_outboxd.time));
	return o;
}

/* What does not depend on the daemon: the run, the server, phases 1-2. */
static json_t *common_json(const struct bench *b, const struct bench_figures *fg)
{
	json_t *doc = json_object();

	json_object_set_new(doc, "durable", json_boolean(b->durable));
	json_object_set_new(doc, "durability", json_string(b->durability));
	json_object_set_new(doc, "jobs", json_integer(b->jobs));
	json_object_set_new(doc, "destinations", json_integer(b->dests));
	json_object_set_new(doc, "workers_per_destination", json_integer(b->workers));
	json_object_set_new(doc, "producers", json_integer(b->producers));
	json_object_set_new(doc, "publisher", json_string(b->publisher));
	json_object_set_new(doc, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_set_new(doc, "enqueue_rate", num_or_null(true, fg->enqueue_rate));
	json_object_set_new(doc, "relay_publish_rate", num_or_null(true, fg->relay_rate));
	json_object_set_new(doc, "offered_rate", json_integer(b->rate));
	return doc;
}

/* A value as compact text; "-" for none.  The caller frees the result. */
static char *text(const json_t *v)
{
	char *t = v != NULL ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10))
	                    : NULL;

	return t != NULL ? t : strdup("-");
}

static void print_text(const json_t *common, const json_t *cur, const json_t *base)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)common, key, v) {
		char *t = text(v);

		printf("%-36s %s\n", key, t);
		free(t);
	}
	if (base != NULL)
		printf("%-36s %-20s %s\n", "", "baseline", "current");
	json_object_foreach((json_t *)cur, key, v) {
		char *t = text(v);

		if (base != NULL) {
			char *bt = text(json_object_get(base, key));

			printf("%-36s %-20s %s\n", key, bt, t);
			free(bt);
		} else {
			printf("%-36s %s\n", key, t);
		}
		free(t);
	}
}

void bench_print(const struct bench *b, const struct bench_figures *fg, bool json)
{
	json_t *common = common_json(b, fg);
	json_t *cur = run_json(b, &fg->cur);
	json_t *base = fg->base.variant != NULL ? run_json(b, &fg->base) : NULL;

	if (json) {
		json_object_update(common, cur);
		if (base != NULL)
			json_object_set(common, "baseline", base);
		json_dumpf(common, stdout,
		           JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		printf("\n");
	} else {
		print_text(common, cur, base);
	}
	json_decref(common);
	json_decref(cur);
	json_decref(base);
}
