/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * faultbench/faultbench.c: outbox-faultbench (docs/reliability.md).
 *
 *   outbox-faultbench [-c FILE] --repetitions N [--publisher fake|sqs]
 *                     [--scenarios seed|all] [--pg-restart-command CMD] [--json]
 *                     [--log-level LEVEL]
 *
 * Runs each scenario N times against the database of FILE, every
 * repetition in a forked child that ends with _exit(137) at a named fault
 * point (core/common/fault.h), then counts losses and duplicates from the
 * database, the queue and the handler's own records.  With
 * --pg-restart-command, pg_crash (faultbench/pgcrash.c) also kills the
 * database itself, three times, under load.  Exit codes: 0 when
 * every scenario ran (the counters are the result, whatever they are), 64
 * usage, 78 configuration, 69 a service is unavailable, 1 other failure.
 */
#include "faultbench/faultbench.h"

#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/clock.h"
#include "consumer/consumer.h"
#include "db/db.h"
#include "common/fault.h"
#include "consumer/ledger.h"
#include "common/log.h"
#include "common/version.h"
#include "db/migrate.h"
#include "outbox/producer.h"
#include "aws/sqs.h"

enum fb_exit {
	FB_EXIT_OK = 0,
	FB_EXIT_FAILURE = 1,
	FB_EXIT_USAGE = 64,
	FB_EXIT_UNAVAILABLE = 69,
	FB_EXIT_CONFIG = 78,
};

struct fb_options {
	const char *config;
	int reps;
	const char *publisher;
	bool all;
	bool json;
	const char *pg_restart;
};

static const char effects_sql[] =
	"CREATE TABLE IF NOT EXISTS public.faultbench_effects ("
	" job_id text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())";

static void usage(FILE *out)
{
	fprintf(out, "usage: outbox-faultbench [-c FILE] --repetitions N [--publisher fake|sqs]\n"
	             "                         [--scenarios seed|all] [--pg-restart-command CMD]\n"
	             "                         [--json] [--log-level LEVEL]\n"
	             "       outbox-faultbench -V|--version\n"
	             "       outbox-faultbench -h|--help\n"
	             "\n"
	             "  -c, --config FILE           database and AWS settings (default %s)\n"
	             "  -n, --repetitions N         runs of each scenario\n"
	             "      --publisher fake|sqs    a deterministic fake (default) or the queue\n"
	             "      --scenarios seed|all    the four seed scenarios (default) or all\n"
	             "      --pg-restart-command CMD  how pg_crash restarts PostgreSQL\n"
	             "      --json                  print one JSON document\n"
	             "      --log-level LEVEL       error, warning (default), info or debug\n"
	             "  -V, --version               print the versions\n"
	             "  -h, --help                  print this help\n",
	        SYSCONFDIR "/outboxd/relay.ini");
}

/* 0 to run, 1 when --help or --version was printed, -1 on a usage error. */
static int parse_args(int argc, char **argv, struct fb_options *o)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"repetitions", required_argument, NULL, 'n'},
		{"publisher", required_argument, NULL, 'p'},
		{"scenarios", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"pg-restart-command", required_argument, NULL, 'r'},
		{"log-level", required_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int opt;

	while ((opt = getopt_long(argc, argv, "c:n:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			outbox_print_version(stdout, "outbox-faultbench");
			return 1;
		case 'c':
			o->config = optarg;
			break;
		case 'n':
			o->reps = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || o->reps < 1 || o->reps > 100000)
				return -1;
			break;
		case 'p':
			if (strcmp(optarg, "fake") != 0 && strcmp(optarg, "sqs") != 0)
				return -1;
			o->publisher = optarg;
			break;
		case 's':
			if (strcmp(optarg, "seed") != 0 && strcmp(optarg, "all") != 0)
				return -1;
			o->all = strcmp(optarg, "all") == 0;
			break;
		case 'j':
			o->json = true;
			break;
		case 'r':
			if (optarg[0] == '\0')
				return -1;
			o->pg_restart = optarg;
			break;
		case 'l':
			if (!log_parse_level(optarg, &log_max_level))
				return -1;
			break;
		default:
			return -1;
		}
	}
	return optind == argc && o->reps > 0 ? 0 : -1;
}

PGconn *fb_child_connect(const struct fb *fb)
{
	char err[512];
	PGconn *c = db_connect(fb->cfg->database.conninfo, "outbox-faultbench child", err,
	                       sizeof(err));

	if (c == NULL) {
		log_error("child could not connect to the database: %s", err);
		_exit(1);
	}
	return c;
}

int fb_fork(struct fb *fb, fb_child_fn fn, struct fb_dest *d, size_t i, void *arg, pid_t *pid)
{
	fflush(NULL);
	*pid = fork();
	if (*pid < 0) {
		log_error("could not fork a repetition");
		return -1;
	}
	if (*pid == 0) {
		fn(fb, d, i, arg);
		log_error("repetition %zu of %s did not reach its fault point", i, d->name);
		_exit(1);
	}
	return 0;
}

void fb_wait(struct fb *fb, pid_t pid)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0)
		continue;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 137)
		fb->children_killed++;
	else
		fb->children_other++;
}

int fb_each(struct fb *fb, fb_child_fn fn, struct fb_dest *d, void *arg, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		pid_t pid;

		if (fb_fork(fb, fn, d, i, arg, &pid) < 0)
			return -1;
		fb_wait(fb, pid);
	}
	return 0;
}

int fb_enqueue(const struct fb *fb, PGconn *conn, const struct fb_dest *d, size_t i,
               bool commit, char *job_id)
{
	json_t *identity = json_pack("{s:s, s:s, s:I}", "run", fb->run, "dest", d->name,
	                             "n", (json_int_t)i);
	json_t *payload = json_pack("{s:I}", "n", (json_int_t)i);
	struct outbox_enqueued e;
	char err[512];
	int rc = -1;

	if (identity == NULL || payload == NULL || db_exec(conn, "BEGIN", err, sizeof(err)) < 0)
		goto out;
	if (outbox_enqueue_job((struct pg_conn *)conn, "faultbench", d->name, identity, payload,
	                       &e, err, sizeof(err)) < 0)
		goto out;
	FAULT_POINT("faultbench.producer.before_commit");
	if (commit && db_exec(conn, "COMMIT", err, sizeof(err)) < 0)
		goto out;
	if (job_id != NULL)
		snprintf(job_id, LEDGER_JOB_ID_LEN + 1, "%s", e.job_id);
	rc = 0;
out:
	if (rc < 0)
		log_error("could not enqueue a job: %s", err);
	json_decref(identity);
	json_decref(payload);
	return rc;
}

long fb_count(struct fb *fb, const struct fb_dest *d, const char *sql)
{
	const char *params[1] = {d->name};
	char err[512];
	PGresult *res = db_query(fb->conn, sql, 1, params, err, sizeof(err));
	long n = -1;

	if (res == NULL) {
		log_error("could not count: %s", err);
		return -1;
	}
	if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		n = strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return n;
}

int fb_wait_leases(struct fb *fb, const struct fb_dest *d)
{
	static const char sql[] =
		"SELECT (SELECT count(*) FROM outbox.jobs WHERE destination = $1"
		"          AND status = 'CLAIMED' AND lease_until >= now())"
		"     + (SELECT count(*) FROM outbox.outbox_events WHERE destination = $1"
		"          AND status = 'NEW' AND claim_until >= now())"
		"     + (SELECT count(*) FROM pg_stat_activity"
		"         WHERE application_name = 'outbox-faultbench child')";
	int64_t deadline = now_ms() + 30000;
	struct timespec pause = {0, 50 * 1000000L};

	for (;;) {
		long n = fb_count(fb, d, sql);

		if (n == 0)
			return 0;
		if (n < 0 || now_ms() > deadline) {
			log_error("leases of %s did not expire within 30 s", d->name);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
}

int fb_relay_drain(struct fb *fb, struct fb_dest *d, int batch_size, long *batches,
                   long *idle_claimed)
{
	struct relay_lane_settings s;
	struct relay_lane *lane = NULL;
	struct publisher *pub = NULL;
	struct relay_pass_stats st;
	int rc = -1;

	relay_lane_settings_from_cfg(&fb->run_cfg, &s);
	/* The seed's drain is defined in claims of batch_size (docs/reliability.md):
	 * the claim limit must not grow with the backlog here. */
	s.batch_size = batch_size;
	s.claim_max = batch_size;
	*batches = 0;
	if (fb_publisher(fb, d, &pub) < 0 ||
	    relay_lane_new(fb->cfg->database.conninfo, d->name, d->queue_url, fb->instance_id, &s,
	                   pub, &lane) < 0)
		goto out;
	for (int k = 0; k < 100000; k++) {
		if (relay_lane_pass(lane, &st) < 0)
			goto out;
		if (st.claimed == 0)
			break;
		(*batches)++;
	}
	*idle_claimed = (long)st.claimed;
	rc = 0;
out:
	relay_lane_free(lane);
	publisher_free(pub);
	return rc;
}

int fb_outcome(struct fb *fb, const struct fb_dest *d, json_t *obj)
{
	long jobs = fb_count(fb, d, "SELECT count(*) FROM outbox.jobs WHERE destination = $1");
	long lost = fb_count(fb, d, "SELECT count(*) FROM outbox.jobs WHERE destination = $1"
	                            " AND status NOT IN ('SUCCEEDED', 'DEAD')");
	long effects = fb_count(fb, d, "SELECT count(*) FROM public.faultbench_effects e"
	                               " JOIN outbox.jobs j USING (job_id) WHERE j.destination = $1");
	long dups = fb_count(fb, d, "SELECT coalesce(sum(c - 1), 0) FROM ("
	                            " SELECT count(*) c FROM public.faultbench_effects e"
	                            " JOIN outbox.jobs j USING (job_id) WHERE j.destination = $1"
	                            " GROUP BY e.job_id) x");

	if (jobs < 0 || lost < 0 || effects < 0 || dups < 0)
		return -1;
	json_object_set_new(obj, "jobs", json_integer(jobs));
	json_object_set_new(obj, "lost_jobs", json_integer(lost));
	json_object_set_new(obj, "business_effects", json_integer(effects));
	json_object_set_new(obj, "duplicate_business_effects", json_integer(dups));
	json_object_set_new(obj, "handler_runs", json_integer(fb_runs(d, -1)));
	return 0;
}

static int create_queue(struct fb *fb, struct fb_dest *d)
{
	char qname[128];
	char *url = NULL;
	struct aws_result res;

	snprintf(qname, sizeof(qname), "outbox-%.47s", d->name);
	for (char *p = qname; *p != '\0'; p++)
		*p = *p == '_' ? '-' : *p;
	if (sqs_create_queue(fb->sqs, qname, NULL, 0, &url, &res) < 0) {
		log_error("could not create queue \"%s\": %s %s", qname, res.code, res.message);
		return -1;
	}
	snprintf(d->queue_url, sizeof(d->queue_url), "%s", url);
	free(url);
	return 0;
}

int fb_dest_init(struct fb *fb, struct fb_dest *d, const char *name, int sleep_ms)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "fb_%.19s_%.20s", name, fb->run);
	snprintf(d->runs_log, sizeof(d->runs_log), "%.300s/%.40s.runs", fb->dir, name);
	snprintf(d->journal, sizeof(d->journal), "%.300s/%.40s.queue", fb->dir, name);
	snprintf(d->stats, sizeof(d->stats), "%.300s/%.40s.stats", fb->dir, name);
	snprintf(d->sleep_ms, sizeof(d->sleep_ms), "%d", sleep_ms);
	snprintf(d->queue_url, sizeof(d->queue_url), "fake://%s/%s", fb->run, d->name);
	if (strcmp(fb->publisher, "sqs") == 0 && create_queue(fb, d) < 0)
		return -1;
	d->opts[0] = (struct cfg_plugin_option){"runs_log", d->runs_log, 0};
	d->opts[1] = (struct cfg_plugin_option){"effects_table", "public.faultbench_effects", 0};
	d->opts[2] = (struct cfg_plugin_option){"sleep_ms", d->sleep_ms, 0};
	d->d.name = d->name;
	d->d.queue_url = d->queue_url;
	d->d.plugin = "bench_noop";
	d->d.plugin_options = d->opts;
	d->d.n_plugin_options = 3;
	const struct plugin_instance_spec spec = {d->name, "bench_noop", d->opts, 3,
	                                          consumer_services_table(fb->svc)};
	if (plugin_instance_create(fb->reg, &spec, NULL, &d->inst) < 0) {
		log_error("could not start the bench_noop plugin for %s", d->name);
		return -1;
	}
	return 0;
}

void fb_dest_free(struct fb_dest *d)
{
	plugin_instance_destroy(d->inst);
	d->inst = NULL;
	fb_deliveries_free(&d->last);
}

static int setup_db(struct fb *fb)
{
	struct migrate_report rep;
	char err[512];

	fb->conn = db_connect(fb->cfg->database.conninfo, "outbox-faultbench", err, sizeof(err));
	if (fb->conn == NULL) {
		log_error("could not connect to the database: %s", err);
		return FB_EXIT_UNAVAILABLE;
	}
	if (migrate_run(fb->conn, migrate_default_dir(), "core", &rep, err, sizeof(err)) !=
	        MIGRATE_OK ||
	    db_exec(fb->conn, effects_sql, err, sizeof(err)) < 0 ||
	    ledger_prepare(fb->conn, err, sizeof(err)) < 0) {
		log_error("could not prepare the database: %s", err);
		return FB_EXIT_FAILURE;
	}
	return FB_EXIT_OK;
}

/* Everything but the scenarios.  Returns an exit code. */
static int setup(struct fb *fb, const struct fb_options *o)
{
	struct cfg_errors errs = {0};
	char tmpl[] = "/tmp/outbox-faultbench.XXXXXX";
	int rc;

	if (cfg_load(o->config, &fb->cfg, &errs) < 0) {
		cfg_errors_print(&errs, stderr);
		cfg_errors_free(&errs);
		return FB_EXIT_CONFIG;
	}
	cfg_errors_free(&errs);
	fb->publisher = o->publisher;
	fb->pg_restart = o->pg_restart;
	fb->reps = o->reps;
	snprintf(fb->run, sizeof(fb->run), "%lx%x", (unsigned long)time(NULL) & 0xffffff,
	         (unsigned)getpid() & 0xffff);
	snprintf(fb->instance_id, sizeof(fb->instance_id), "faultbench:%ld", (long)getpid());
	fb->run_cfg = *fb->cfg;
	fb->run_cfg.consumer.lease_seconds = 1;
	fb->run_cfg.relay.claim_lease_seconds = 1;
	if (mkdtemp(tmpl) == NULL) {
		log_error("could not create a temporary directory");
		return FB_EXIT_FAILURE;
	}
	snprintf(fb->dir, sizeof(fb->dir), "%s", tmpl);
	rc = setup_db(fb);
	if (rc != FB_EXIT_OK)
		return rc;
	/* bench_noop is installed apart from the production plugins. */
	if (plugin_registry_create(plugin_search_path(BENCHPLUGINDIR), &fb->reg) < 0 ||
	    consumer_services_create(&fb->run_cfg, &fb->svc) < 0)
		return FB_EXIT_FAILURE;
	if (strcmp(fb->publisher, "sqs") == 0 &&
	    (aws_env_load(&fb->env, fb->cfg->aws.region, fb->cfg->aws.endpoint_url,
	                  fb->cfg->s3.endpoint_url) < 0 ||
	     aws_http_new(&fb->env, AWS_SERVICE_SQS, &fb->sqs) < 0))
		return FB_EXIT_CONFIG;
	return FB_EXIT_OK;
}

/* Removes dir and the files in it (only files: the directory is ours). */
static void remove_dir(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	char path[FB_PATH_MAX * 2];

	if (dh == NULL)
		return;
	for (e = readdir(dh); e != NULL; e = readdir(dh)) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(dh);
	rmdir(dir);
}

static void teardown(struct fb *fb)
{
	if (fb->dir[0] != '\0' && getenv("OUTBOX_FAULTBENCH_KEEP") == NULL)
		remove_dir(fb->dir);
	consumer_services_free(fb->svc);
	plugin_registry_free(fb->reg);
	aws_http_free(fb->sqs);
	aws_env_free(&fb->env);
	PQfinish(fb->conn);
	cfg_free(fb->cfg);
}

typedef int (*fb_scenario_fn)(struct fb *fb, json_t *out);

/* The pg_crash keys at the top level: null when the scenario was skipped
 * (its object says why), so the seed's text table stays as it is. */
static int summarize_pg_crash(json_t *doc, json_t *obj)
{
	static const char *const keys[][2] = {
		{"committed_jobs", "pg_crash_committed_jobs"},
		{"committed_not_succeeded", "pg_crash_lost_jobs"},
		{"duplicate_business_effects", "pg_crash_duplicate_business_effects"},
		{"restarts", "pg_crash_restarts"},
		{"resent_events", "pg_crash_resent_events"},
	};
	bool ran = obj != NULL && json_object_get(obj, "skipped") == NULL;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = ran ? json_object_get(obj, keys[i][0]) : json_null();
		if (v == NULL)
			return -1;
		json_object_set(doc, keys[i][1], v);
	}
	return 0;
}

/* The six keys of the seed scenarios (docs/reliability.md) and the relay's figures, from the seed
 * scenarios' objects; 0 or -1. */
static int summarize(json_t *doc, json_t *scen)
{
	static const char *const keys[][3] = {
		{"direct_publish", "missing_publish_intents", "missing_publish_intents"},
		{"in_transaction", "partial_commits", "partial_commits"},
		{"after_commit", "missing_messages", "missing_messages"},
		{"after_commit", "relay_batches", "relay_batches"},
		{"after_commit", "idle_pass_claimed", "relay_idle_pass_claimed"},
		{"delivered_twice", "duplicate_business_effects", "duplicate_business_effects"},
		{"delivered_twice", "duplicate_terminal_skips", "duplicate_terminal_skips"},
		{"delivered_twice", "message_deletes", "message_deletes"},
	};
	json_int_t lost = 0, dups = 0;
	const char *name;
	json_t *obj;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(json_object_get(scen, keys[i][0]), keys[i][1]);
		if (v == NULL)
			return -1;
		json_object_set(doc, keys[i][2], v);
	}
	json_object_foreach(scen, name, obj) {
		if (json_object_get(obj, "extra") != json_true())
			continue;
		lost += json_integer_value(json_object_get(obj, "lost_jobs"));
		dups += json_integer_value(json_object_get(obj, "duplicate_business_effects"));
	}
	json_object_set_new(doc, "extra_lost_jobs", json_integer(lost));
	json_object_set_new(doc, "extra_duplicate_business_effects", json_integer(dups));
	return summarize_pg_crash(doc, json_object_get(scen, "pg_crash"));
}

static int run_all(struct fb *fb, bool all, json_t *scen)
{
	static const struct {
		const char *name;
		fb_scenario_fn fn;
		bool extra; /* run with --scenarios all only */
		bool own;   /* neither seed nor added: decides itself (pg_crash) */
	} list[] = {
		{"direct_publish", fb_scenario_direct_publish, false, false},
		{"in_transaction", fb_scenario_in_transaction, false, false},
		{"after_commit", fb_scenario_after_commit, false, false},
		{"delivered_twice", fb_scenario_delivered_twice, false, false},
		{"relay_after_send", fb_scenario_relay_after_send, true, false},
		{"consumer_in_execute", fb_scenario_consumer_in_execute, true, false},
		{"consumer_in_commit", fb_scenario_consumer_in_commit, true, false},
		{"redrive_race", fb_scenario_redrive_race, true, false},
		{"correction_race", fb_scenario_correction_race, true, false},
		{"pg_crash", fb_scenario_pg_crash, false, true},
	};

	for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
		json_t *obj;

		if (list[i].extra && !all)
			continue;
		obj = json_object();
		log_info("scenario %s: %d repetition(s)", list[i].name, fb->reps);
		if (obj == NULL || list[i].fn(fb, obj) < 0) {
			log_error("scenario %s failed", list[i].name);
			json_decref(obj);
			return -1;
		}
		if (!list[i].own)
			json_object_set_new(obj, "extra", json_boolean(list[i].extra));
		json_object_set_new(scen, list[i].name, obj);
	}
	return 0;
}

static void print_text(json_t *doc)
{
	const char *key;
	json_t *v;

	json_object_foreach(doc, key, v) {
		if (json_is_integer(v))
			printf("%-34s %lld\n", key, (long long)json_integer_value(v));
		else if (json_is_string(v))
			printf("%-34s %s\n", key, json_string_value(v));
	}
}

int main(int argc, char **argv)
{
	struct fb_options o = {SYSCONFDIR "/outboxd/relay.ini", 0, "fake", false, false, NULL};
	struct fb fb;
	json_t *doc = NULL, *scen = NULL;
	int rc;

	memset(&fb, 0, sizeof(fb));
	log_set_ident("outbox-faultbench");
	log_max_level = LOG_LEVEL_WARNING;
	rc = parse_args(argc, argv, &o);
	if (rc < 0) {
		usage(stderr);
		return FB_EXIT_USAGE;
	}
	if (rc > 0)
		return FB_EXIT_OK; /* --help or --version printed */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = setup(&fb, &o);
	doc = json_object();
	scen = json_object();
	if (rc == FB_EXIT_OK && (doc == NULL || scen == NULL || run_all(&fb, o.all, scen) < 0 ||
	                         summarize(doc, scen) < 0))
		rc = FB_EXIT_FAILURE;
	if (rc == FB_EXIT_OK) {
		json_object_set_new(doc, "repetitions", json_integer(fb.reps));
		json_object_set_new(doc, "publisher", json_string(fb.publisher));
		json_object_set_new(doc, "children_killed_at_fault_point",
		                    json_integer(fb.children_killed));
		json_object_set_new(doc, "children_ended_otherwise", json_integer(fb.children_other));
		json_object_set(doc, "scenarios", scen);
		if (o.json)
			json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		else
			print_text(doc);
		printf("\n");
	}
	json_decref(scen);
	json_decref(doc);
	teardown(&fb);
	curl_global_cleanup();
	return rc;
}
