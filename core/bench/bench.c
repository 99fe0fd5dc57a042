/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench.c: outbox-bench (docs/performance.md).
 *
 *   outbox-bench [-c FILE] [--jobs N] [--destinations D] [--workers W]
 *                [--producers P] [--publisher null|sqs] [--offered-rate R]
 *                [--outboxd PATH] [--json]
 *
 * Against the database and queue endpoint of FILE, with D destinations
 * handled by the bench_noop plugin:
 *   1. enqueue rate: N jobs by P producer connections, one transaction each;
 *   2. relay publish rate: the relay's lanes (the daemon's code, one thread
 *      per destination) publish those N events to the null publisher, or
 *      with --publisher sqs to queues of their own;
 *   3. end to end (sqs only): the real outboxd binary runs with a generated
 *      relay.ini (FILE's settings, D destinations x W workers) while N more
 *      jobs are enqueued; rate from the first enqueue to the last SUCCEEDED;
 *      SQS requests per job and peak RSS from that daemon;
 *   4. latency (sqs only): a fresh outboxd; jobs offered at R/s (5 s worth,
 *      at most N); commit -> handler start p50/p99.
 * With --soak N [--soak-retention S] it runs only the soak of bench_soak.c.
 * Exit codes: 0, 64 usage, 78 configuration, 69 service unavailable, 1.
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

enum bench_exit {
	BENCH_EXIT_OK = 0,
	BENCH_EXIT_FAILURE = 1,
	BENCH_EXIT_USAGE = 64,
	BENCH_EXIT_UNAVAILABLE = 69,
	BENCH_EXIT_CONFIG = 78,
};

static int int_arg(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end != '\0' || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct bench *b, const char **config, bool *json)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'}, {"jobs", required_argument, NULL, 'n'},
		{"destinations", required_argument, NULL, 'd'},
		{"workers", required_argument, NULL, 'w'},
		{"producers", required_argument, NULL, 'P'},
		{"publisher", required_argument, NULL, 'p'},
		{"offered-rate", required_argument, NULL, 'r'},
		{"outboxd", required_argument, NULL, 'o'}, {"json", no_argument, NULL, 'j'},
		{"log-level", required_argument, NULL, 'l'},
		{"soak", required_argument, NULL, 's'},
		{"soak-retention", required_argument, NULL, 'R'}, {NULL, 0, NULL, 0},
	};
	int opt, rc = 0;

	while (rc == 0 && (opt = getopt_long(argc, argv, "c:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': *config = optarg; break;
		case 'n': rc = int_arg(optarg, 1, 10000000, &b->jobs); break;
		case 'd': rc = int_arg(optarg, 1, BENCH_MAX_DESTS, &b->dests); break;
		case 'w': rc = int_arg(optarg, 1, 64, &b->workers); break;
		case 'P': rc = int_arg(optarg, 1, 16, &b->producers); break;
		case 'r': rc = int_arg(optarg, 1, 1000000, &b->rate); break;
		case 'o': b->outboxd = optarg; break;
		case 's': rc = int_arg(optarg, 10, 100000000, &b->soak); break;
		case 'R': rc = int_arg(optarg, 60, 86400, &b->soak_retention); break;
		case 'j': *json = true; break;
		case 'p':
			b->publisher = optarg;
			rc = strcmp(optarg, "null") == 0 || strcmp(optarg, "sqs") == 0 ? 0 : -1;
			break;
		case 'l': rc = log_parse_level(optarg, &log_max_level) ? 0 : -1; break;
		default: rc = -1; break;
		}
	}
	return rc == 0 && optind == argc ? 0 : -1;
}

static int make_queue(struct bench *b, const char *name, char *url_out)
{
	struct aws_result res;
	char qname[96];
	char *url = NULL;

	snprintf(qname, sizeof(qname), "%.60s", name);
	for (char *p = qname; *p != '\0'; p++)
		*p = *p == '_' ? '-' : *p;
	if (sqs_create_queue(b->sqs, qname, NULL, 0, &url, &res) < 0) {
		log_error("could not create queue \"%s\": %s %s", qname, res.code, res.message);
		return -1;
	}
	snprintf(url_out, BENCH_PATH_MAX, "%s", url);
	free(url);
	return 0;
}

static int setup_queues(struct bench *b)
{
	char name[96];

	for (int k = 0; k < b->dests; k++) {
		snprintf(b->names[k], sizeof(b->names[k]), "bench_%.20s_%d", b->run, k);
		snprintf(b->relay_names[k], sizeof(b->relay_names[k]), "bench_%.20s_r%d", b->run, k);
		/* From a copy: source and destination are members of one struct (-Wrestrict). */
		snprintf(name, sizeof(name), "%s", b->names[k]);
		snprintf(b->queues[k], BENCH_PATH_MAX, "http://null.invalid/%s", name);
		snprintf(b->relay_queues[k], BENCH_PATH_MAX, "http://null.invalid/%s-relay", name);
		if (strcmp(b->publisher, "sqs") != 0)
			continue;
		snprintf(name, sizeof(name), "outbox-%s", b->names[k]);
		if (make_queue(b, name, b->queues[k]) < 0)
			return -1;
		snprintf(name, sizeof(name), "outbox-%s-relay", b->names[k]);
		if (make_queue(b, name, b->relay_queues[k]) < 0)
			return -1;
	}
	return 0;
}

int bench_write_ini(const struct bench *b, const char *path, char (*names)[48],
                    char (*queues)[BENCH_PATH_MAX], const char *runs_log,
                    const char *sections, const char *dest_lines)
{
	const struct cfg *c = b->cfg;
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	/* bench_noop is installed apart from the production plugins. */
	fprintf(f, "[outboxd]\nplugin_path = %s\n\n", BENCHPLUGINDIR);
	fprintf(f, "[database]\nconninfo = %s\n\n[aws]\nregion = %s\n", c->database.conninfo,
	        c->aws.region != NULL ? c->aws.region : "us-east-1");
	if (c->aws.endpoint_url != NULL)
		fprintf(f, "endpoint_url = %s\n", c->aws.endpoint_url);
	fprintf(f, "\n[relay]\nbatch_size = %d\npoll_interval_ms = %d\nretry_base_seconds = %d\n"
	           "retry_max_seconds = %d\nclaim_lease_seconds = %d\n",
	        c->relay.batch_size, c->relay.poll_interval_ms, c->relay.retry_base_seconds,
	        c->relay.retry_max_seconds, c->relay.claim_lease_seconds);
	fprintf(f, "\n[consumer]\nworkers = %d\nwait_time_seconds = %d\n"
	           "visibility_timeout_seconds = %d\nlease_seconds = %d\n"
	           "shutdown_grace_seconds = %d\n",
	        b->workers, c->consumer.wait_time_seconds, c->consumer.visibility_timeout_seconds,
	        c->consumer.lease_seconds, c->consumer.shutdown_grace_seconds);
	if (sections != NULL)
		fprintf(f, "\n%s", sections);
	for (int k = 0; k < b->dests; k++)
		fprintf(f, "\n[destination:%s]\nqueue_url = %s\nplugin = bench_noop\n"
		           "plugin.runs_log = %s\n%s", names[k], queues[k], runs_log,
		        dest_lines != NULL ? dest_lines : "");
	return fclose(f) == 0 ? 0 : -1;
}

static long read_hwm_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmHWM:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	}
	fclose(f);
	return kib;
}

/* utime + stime of a process, in seconds; -1 when unreadable. */
static double read_cpu_seconds(pid_t pid)
{
	char path[64], line[1024];
	unsigned long ut = 0, st = 0;
	const char *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	p = fgets(line, sizeof(line), f) != NULL ? strrchr(line, ')') : NULL;
	fclose(f);
	/* After "(comm)": state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime (fields 3..15 of proc(5)). */
	if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
	                        &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

int bench_daemon_start(struct bench *b, const char *ini, const char *tag, struct daemon *d)
{
	char log[BENCH_PATH_MAX + 32];

	memset(d, 0, sizeof(*d));
	snprintf(d->stats, sizeof(d->stats), "%.400s/%s.stats", b->dir, tag);
	snprintf(log, sizeof(log), "%.400s/%s.log", b->dir, tag);
	fflush(NULL);
	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid == 0) {
		if (freopen(log, "a", stdout) == NULL || freopen(log, "a", stderr) == NULL)
			_exit(127);
		setenv("OUTBOX_STATS_FILE", d->stats, 1);
		execlp(b->outboxd, b->outboxd, "-c", ini, "--log-level", "warning", (char *)NULL);
		fprintf(stderr, "could not run \"%s\": %s\n", b->outboxd, strerror(errno));
		_exit(127);
	}
	char sql[256];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_stat_activity"
	                           " WHERE application_name = 'outboxd consumer'"
	                           "   AND datname = current_database()");
	/* Ready when every worker holds its connection (made at its first receive). */
	return bench_wait_count(b, sql, (long)b->dests * b->workers, false, 30);
}

int bench_daemon_stop(struct daemon *d)
{
	int status = 0;
	FILE *f;

	d->peak_rss_kib = read_hwm_kib(d->pid);
	d->cpu_seconds = read_cpu_seconds(d->pid);
	kill(d->pid, SIGTERM);
	while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
		continue;
	f = fopen(d->stats, "r");
	if (f != NULL) {
		json_t *stats = json_loadf(f, 0, NULL);

		d->aws_requests = (unsigned long)json_integer_value(
			json_object_get(stats, "aws_requests"));
		d->sqs = json_incref(json_object_get(stats, "sqs"));
		json_decref(stats);
		fclose(f);
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Phase 2: the relay's lanes alone, in this process. */
static int relay_phase(struct bench *b, double *rate)
{
	char ini[BENCH_PATH_MAX + 32], sql[2048];
	struct cfg_errors errs = {0};
	struct cfg *cfg = NULL;
	struct relay *relay = NULL;
	int64_t t0;
	int rc = -1;

	snprintf(ini, sizeof(ini), "%.400s/relay.ini", b->dir);
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

struct figures {
	double enqueue_rate, relay_rate, e2e_rate, requests_per_job;
	long peak_rss_kib;
	struct bench_latency lat;
	bool have_e2e;
	json_t *e2e_sqs; /* owned reference: phase 3's requests per action */
	double e2e_cpu_seconds; /* outboxd's CPU in phase 3 */
};

/* Phases 3 and 4: the real daemon. */
static int daemon_phases(struct bench *b, struct figures *fg)
{
	char ini[BENCH_PATH_MAX + 32], runs[BENCH_PATH_MAX + 32], sql[2048];
	struct daemon d;
	int64_t t0;
	int rc;

	snprintf(ini, sizeof(ini), "%.400s/outboxd.ini", b->dir);
	snprintf(runs, sizeof(runs), "%.400s/runs.log", b->dir);
	if (bench_write_ini(b, ini, b->names, b->queues, runs, NULL, NULL) < 0 ||
	    bench_daemon_start(b, ini, "e2e", &d) < 0)
		return -1;
	bench_count_sql(b, b->names, "jobs", "'PENDING', 'CLAIMED'", sql, sizeof(sql));
	t0 = bench_now_us();
	rc = bench_enqueue(b, "e2e", b->names, 0, b->jobs);
	if (rc == 0)
		rc = bench_wait_count(b, sql, 0, true, 600);
	fg->e2e_rate = b->jobs * 1e6 / (double)(bench_now_us() - t0);
	if (bench_daemon_stop(&d) < 0)
		rc = -1;
	fg->e2e_sqs = d.sqs;
	if (rc < 0)
		return -1;
	fg->requests_per_job = (double)d.aws_requests / b->jobs;
	fg->e2e_cpu_seconds = d.cpu_seconds;
	fg->peak_rss_kib = d.peak_rss_kib;
	if (bench_daemon_start(b, ini, "latency", &d) < 0)
		return -1;
	rc = bench_latency_run(b, b->jobs < b->rate * 5 ? b->jobs : b->rate * 5, runs, &fg->lat);
	if (bench_daemon_stop(&d) < 0)
		rc = -1;
	json_decref(d.sqs);
	if (rc < 0)
		return -1;
	if (d.peak_rss_kib > fg->peak_rss_kib)
		fg->peak_rss_kib = d.peak_rss_kib;
	fg->have_e2e = true;
	return 0;
}

static json_t *num_or_null(bool have, double v)
{
	return have ? json_real((double)(long long)(v * 100) / 100) : json_null();
}

static void print(const struct bench *b, const struct figures *fg, bool json)
{
	json_t *doc = json_object();
	const char *key;
	json_t *v;

	json_object_set_new(doc, "jobs", json_integer(b->jobs));
	json_object_set_new(doc, "destinations", json_integer(b->dests));
	json_object_set_new(doc, "workers_per_destination", json_integer(b->workers));
	json_object_set_new(doc, "producers", json_integer(b->producers));
	json_object_set_new(doc, "publisher", json_string(b->publisher));
	json_object_set_new(doc, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_set_new(doc, "enqueue_rate", num_or_null(true, fg->enqueue_rate));
	json_object_set_new(doc, "relay_publish_rate", num_or_null(true, fg->relay_rate));
	json_object_set_new(doc, "end_to_end_rate", num_or_null(fg->have_e2e, fg->e2e_rate));
	json_object_set_new(doc, "sqs_requests_per_job",
	                    num_or_null(fg->have_e2e, fg->requests_per_job));
	json_object_set_new(doc, "outboxd_cpu_ms_per_job",
	                    num_or_null(fg->have_e2e && fg->e2e_cpu_seconds >= 0,
	                                fg->e2e_cpu_seconds * 1000.0 / b->jobs));
	if (fg->e2e_sqs != NULL)
		json_object_set(doc, "sqs_requests_by_action", fg->e2e_sqs);
	json_object_set_new(doc, "offered_rate", json_integer(b->rate));
	json_object_set_new(doc, "achieved_offered_rate",
	                    num_or_null(fg->have_e2e, fg->lat.achieved_rate));
	json_object_set_new(doc, "latency_jobs", json_integer(fg->lat.jobs));
	json_object_set_new(doc, "latency_p50_ms", num_or_null(fg->have_e2e, fg->lat.p50_ms));
	json_object_set_new(doc, "latency_p99_ms", num_or_null(fg->have_e2e, fg->lat.p99_ms));
	json_object_set_new(doc, "latency_max_ms", num_or_null(fg->have_e2e, fg->lat.max_ms));
	json_object_set_new(doc, "outboxd_peak_rss_mib",
	                    num_or_null(fg->have_e2e, (double)fg->peak_rss_kib / 1024.0));
	if (json) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		printf("\n");
	} else {
		json_object_foreach(doc, key, v) {
			char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
			printf("%-26s %s\n", key, text != NULL ? text : "?");
			free(text);
		}
	}
	json_decref(doc);
}

static int setup(struct bench *b, const char *config)
{
	struct cfg_errors errs = {0};
	struct migrate_report rep;
	char tmpl[] = "/tmp/outbox-bench.XXXXXX", err[512];

	if (cfg_load(config, &b->cfg, &errs) < 0) {
		cfg_errors_print(&errs, stderr);
		cfg_errors_free(&errs);
		return BENCH_EXIT_CONFIG;
	}
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
	if (migrate_run(b->conn, migrate_default_dir(), "core", &rep, err, sizeof(err)) != 0) {
		log_error("could not migrate the database: %s", err);
		return BENCH_EXIT_FAILURE;
	}
	if (strcmp(b->publisher, "sqs") == 0 &&
	    (aws_env_load(&b->env, b->cfg->aws.region, b->cfg->aws.endpoint_url, NULL) < 0 ||
	     aws_http_new(&b->env, AWS_SERVICE_SQS, &b->sqs) < 0))
		return BENCH_EXIT_CONFIG;
	return setup_queues(b) < 0 ? BENCH_EXIT_UNAVAILABLE : BENCH_EXIT_OK;
}

static int run(struct bench *b, struct figures *fg)
{
	int64_t t0 = bench_now_us();

	if (bench_enqueue(b, "enqueue", b->relay_names, 0, b->jobs) < 0)
		return -1;
	fg->enqueue_rate = b->jobs * 1e6 / (double)(bench_now_us() - t0);
	if (relay_phase(b, &fg->relay_rate) < 0)
		return -1;
	if (strcmp(b->publisher, "sqs") != 0)
		return 0;
	return daemon_phases(b, fg);
}

int main(int argc, char **argv)
{
	struct bench b = {.jobs = 20000, .dests = 3, .producers = 2, .rate = 500, .soak_retention = 180,
	                  .publisher = "sqs", .outboxd = "outboxd"};
	struct figures fg = {0};
	const char *config = SYSCONFDIR "/outboxd/relay.ini";
	bool json = false;
	int rc;

	log_set_ident("outbox-bench");
	log_max_level = LOG_LEVEL_WARNING;
	if (parse_args(argc, argv, &b, &config, &json) < 0) {
		fprintf(stderr, "usage: outbox-bench [-c FILE] [--jobs N] [--destinations D]"
		                " [--workers W] [--producers P]\n"
		                "                    [--publisher null|sqs] [--offered-rate R]"
		                " [--outboxd PATH] [--json]\n"
		                "                    [--soak N [--soak-retention SECONDS]]\n");
		return BENCH_EXIT_USAGE;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = setup(&b, config);
	if (rc == BENCH_EXIT_OK && b.soak > 0) {
		if (bench_soak_run(&b, json) < 0)
			rc = BENCH_EXIT_FAILURE;
	} else if (rc == BENCH_EXIT_OK && run(&b, &fg) < 0) {
		rc = BENCH_EXIT_FAILURE;
	}
	if (rc == BENCH_EXIT_OK && b.soak == 0)
		print(&b, &fg, json);
	else if (rc != BENCH_EXIT_OK)
		log_error("benchmark failed; files kept in \"%s\"", b.dir);
	json_decref(fg.e2e_sqs);
	PQfinish(b.conn);
	aws_http_free(b.sqs);
	aws_env_free(&b.env);
	cfg_free(b.cfg);
	curl_global_cleanup();
	return rc;
}
