/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench.c: outbox-bench (docs/performance.md).
 *
 *   outbox-bench [-c FILE] [--jobs N] [--destinations D] [--workers W]
 *                [--producers P] [--publisher null|sqs] [--offered-rate R]
 *                [--outboxd PATH] [--json] [--drain] [--allow-non-durable]
 *                [--baseline-outboxd PATH] [--baseline-settings FILE]
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
 * With --drain, before 3: N jobs committed with nothing running, then the
 * daemon alone drains them (bench_drain.c).  The producers' rate and p99
 * commit time alone (the drain's commits, else phase 1's) and in phase 3
 * are the producer impact.  With --baseline-outboxd/--baseline-settings
 * the daemon phases run twice, baseline first.  A server whose commits do
 * not wait for the WAL flush is refused unless --allow-non-durable.
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
#include "common/version.h"
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

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: outbox-bench [-c FILE] [--jobs N] [--destinations D] [--workers W]\n"
	        "                    [--producers P] [--publisher null|sqs] [--offered-rate R]\n"
	        "                    [--outboxd PATH] [--json] [--log-level LEVEL] [--drain]\n"
	        "                    [--allow-non-durable] [--baseline-outboxd PATH]\n"
	        "                    [--baseline-settings FILE]\n"
	        "                    [--soak N [--soak-retention SECONDS]]\n"
	        "       outbox-bench -V|--version\n"
	        "       outbox-bench -h|--help\n"
	        "\n"
	        "  -c, --config FILE            database and AWS settings (default %s)\n"
	        "      --jobs N                 jobs per phase (default 20000)\n"
	        "      --destinations D         destinations, one queue each (default 3)\n"
	        "      --workers W              consumer workers (default: consumer.workers)\n"
	        "      --producers P            producer connections (default 2)\n"
	        "      --publisher null|sqs     null: enqueue and relay phases only (default sqs)\n"
	        "      --offered-rate R         jobs per second in the latency phase (default 500)\n"
	        "      --outboxd PATH           the daemon to run (default outboxd in PATH)\n"
	        "      --json                   print one JSON document\n"
	        "      --log-level LEVEL        error, warning (default), info or debug\n"
	        "      --drain                  commit N jobs first, then time the daemon alone\n"
	        "      --allow-non-durable      run on a server without fsync\n"
	        "      --baseline-outboxd PATH  run the daemon phases with this daemon first\n"
	        "      --baseline-settings FILE run them first with these [relay]/[consumer] keys\n"
	        "      --soak N                 the retention soak: N jobs in ten tenths\n"
	        "      --soak-retention SECONDS the soak's [retention] (default 180)\n"
	        "  -V, --version                print the versions\n"
	        "  -h, --help                   print this help\n",
	        SYSCONFDIR "/outboxd/relay.ini");
}

/* 0 to run, 1 when --help or --version was printed, -1 on a usage error. */
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
		{"soak-retention", required_argument, NULL, 'R'},
		{"drain", no_argument, NULL, 'D'},
		{"allow-non-durable", no_argument, NULL, 'A'},
		{"baseline-outboxd", required_argument, NULL, 'B'},
		{"baseline-settings", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int opt, rc = 0;

	while (rc == 0 && (opt = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h': usage(stdout); return 1;
		case 'V': outbox_print_version(stdout, "outbox-bench"); return 1;
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
		case 'D': b->drain = true; break;
		case 'A': b->allow_non_durable = true; break;
		case 'B': b->baseline_outboxd = optarg; break;
		case 'S': b->baseline_settings = optarg; break;
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

/* Decimal text of v into one of the slots of buf. */
static const char *num(char (*buf)[16], int *used, int v)
{
	snprintf(buf[*used], sizeof(buf[0]), "%d", v);
	return buf[(*used)++];
}

/* The user's value, or NULL (left out) when it is the default: a daemon
 * older than the key (--baseline-outboxd) would reject it. */
static const char *num_unless(char (*buf)[16], int *used, int v, int dflt)
{
	return v == dflt ? NULL : num(buf, used, v);
}

/* [relay] and [consumer]: FILE's settings merged with the variant's. */
static void write_pipeline(const struct bench *b, FILE *f)
{
	const struct cfg *c = b->cfg;
	const struct bench_settings *over = b->variant != NULL ? b->variant->settings : NULL;
	char buf[16][16];
	int used = 0;
	static const char *const relay_keys[] = {
		"batch_size", "poll_interval_ms", "retry_base_seconds", "retry_max_seconds",
		"claim_lease_seconds", "claim_max", "send_concurrency", "linger_max_ms",
		"synchronous_commit"};
	const char *relay_values[] = {
		num(buf, &used, c->relay.batch_size), num(buf, &used, c->relay.poll_interval_ms),
		num(buf, &used, c->relay.retry_base_seconds),
		num(buf, &used, c->relay.retry_max_seconds),
		num(buf, &used, c->relay.claim_lease_seconds),
		num_unless(buf, &used, c->relay.claim_max, 500),
		num_unless(buf, &used, c->relay.send_concurrency, 8),
		num_unless(buf, &used, c->relay.linger_max_ms, 20),
		c->relay.synchronous_commit ? "on" : NULL};
	static const char *const consumer_keys[] = {
		"workers", "wait_time_seconds", "visibility_timeout_seconds", "lease_seconds",
		"shutdown_grace_seconds", "claim_max", "linger_max_ms"};
	const char *consumer_values[] = {
		num(buf, &used, b->workers), num(buf, &used, c->consumer.wait_time_seconds),
		num(buf, &used, c->consumer.visibility_timeout_seconds),
		num(buf, &used, c->consumer.lease_seconds),
		num(buf, &used, c->consumer.shutdown_grace_seconds),
		num_unless(buf, &used, c->consumer.claim_max, 100),
		num_unless(buf, &used, c->consumer.linger_max_ms, 20)};

	bench_settings_write(f, "relay", relay_keys, relay_values, 9, over);
	bench_settings_write(f, "consumer", consumer_keys, consumer_values, 7, over);
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
	write_pipeline(b, f);
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

int bench_daemon_start(struct bench *b, const char *ini, const char *tag, struct daemon *d)
{
	const char *outboxd = b->variant != NULL ? b->variant->outboxd : b->outboxd;
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
		execlp(outboxd, outboxd, "-c", ini, "--log-level", "warning", (char *)NULL);
		fprintf(stderr, "could not run \"%s\": %s\n", outboxd, strerror(errno));
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
	d->cpu_seconds = bench_proc_cpu_seconds(d->pid, false);
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

/* Phase 3: the real daemon while the producers enqueue N more jobs. */
static int e2e_phase(struct bench *b, const char *ini, struct bench_run *r)
{
	char sql[2048], phase[32];
	struct daemon d;
	int64_t t0;
	int rc;

	bench_phase(b, "e2e", phase, sizeof(phase));
	if (bench_daemon_start(b, ini, phase, &d) < 0)
		return -1;
	bench_count_sql(b, b->names, "jobs", "'PENDING', 'CLAIMED'", sql, sizeof(sql));
	t0 = bench_now_us();
	rc = bench_enqueue(b, phase, b->names, 0, b->jobs, &r->with_outboxd);
	if (rc == 0)
		rc = bench_wait_count(b, sql, 0, true, 600);
	r->e2e_rate = b->jobs * 1e6 / (double)(bench_now_us() - t0);
	if (bench_daemon_stop(&d) < 0)
		rc = -1;
	r->e2e_sqs = d.sqs;
	r->requests_per_job = (double)d.aws_requests / b->jobs;
	r->e2e_cpu_seconds = d.cpu_seconds;
	r->peak_rss_kib = d.peak_rss_kib;
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
	if (setup_queues(b) < 0)
		return BENCH_EXIT_UNAVAILABLE;
	return check_variant_ini(b);
}

static int run(struct bench *b, struct bench_figures *fg)
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

int main(int argc, char **argv)
{
	struct bench b = {.jobs = 20000, .dests = 3, .producers = 2, .rate = 500, .soak_retention = 180,
	                  .publisher = "sqs", .outboxd = "outboxd"};
	struct bench_figures fg = {0};
	const char *config = SYSCONFDIR "/outboxd/relay.ini";
	bool json = false;
	int rc;

	log_set_ident("outbox-bench");
	log_max_level = LOG_LEVEL_WARNING;
	rc = parse_args(argc, argv, &b, &config, &json);
	if (rc < 0) {
		usage(stderr);
		return BENCH_EXIT_USAGE;
	}
	if (rc > 0)
		return BENCH_EXIT_OK; /* --help or --version printed */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = setup(&b, config);
	if (rc == BENCH_EXIT_OK && b.soak > 0) {
		if (bench_soak_run(&b, json) < 0)
			rc = BENCH_EXIT_FAILURE;
	} else if (rc == BENCH_EXIT_OK && run(&b, &fg) < 0) {
		rc = BENCH_EXIT_FAILURE;
	}
	if (rc == BENCH_EXIT_OK && b.soak == 0)
		bench_print(&b, &fg, json);
	/* A refusal before any phase leaves nothing worth keeping. */
	if (rc != BENCH_EXIT_OK && b.dir[0] != '\0' && rmdir(b.dir) == 0)
		b.dir[0] = '\0';
	if (rc != BENCH_EXIT_OK)
		log_error("benchmark failed%s%s%s", b.dir[0] != '\0' ? "; files kept in \"" : "",
		          b.dir, b.dir[0] != '\0' ? "\"" : "");
	json_decref(fg.cur.e2e_sqs);
	json_decref(fg.base.e2e_sqs);
	PQfinish(b.conn);
	aws_http_free(b.sqs);
	aws_env_free(&b.env);
	cfg_free(b.cfg);
	curl_global_cleanup();
	return rc;
}
