/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/outboxd.c: the daemon (docs/outboxd.md, docs/configuration.md).
 *
 *   outboxd [-c FILE] [--role relay|consumer|all] [-t|--check-config]
 *           [--log-level LEVEL] [--log-format text|json] [-V|--version] [-h|--help]
 *
 * Startup validates relay.ini completely (every error reported, exit 78),
 * loads and starts the plugins of every destination (role consumer/all),
 * then runs the relay lanes and the consumer workers until SIGTERM or
 * SIGINT; SIGHUP reloads relay.ini (daemon/reload.c).  Shutdown is
 * graceful and bounded (daemon/shutdown.h): the consumer stops receiving
 * and finishes or releases its work, the relay finishes its current
 * batches, exit 0.
 * Signals are taken synchronously with sigwait() in the main thread, so no
 * work happens in a signal handler.
 */
#include <getopt.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include "aws/credential_chain.h"
#include "aws/env.h"
#include "aws/http.h"
#include "config/config.h"
#include "daemon/console.h"
#include "daemon/observe.h"
#include "daemon/plugins.h"
#include "daemon/reload.h"
#include "daemon/shutdown.h"
#include "db/db.h"
#include "db/migrate.h"
#include "db/registry.h"
#include "db/traffic.h"
#include "common/fault.h"
#include "common/log.h"
#include "consumer/consumer.h"
#include "maintenance/maintenance.h"
#include "schedule/scheduler.h"
#include "common/version.h"
#include "aws/sqs.h"

enum outboxd_exit {
	OUTBOXD_EXIT_OK = 0,
	OUTBOXD_EXIT_FAILURE = 1,
	OUTBOXD_EXIT_USAGE = 64,
	OUTBOXD_EXIT_CONFIG = 78,
};

enum role {
	ROLE_ALL = 0,
	ROLE_RELAY = 1,
	ROLE_CONSUMER = 2,
};

struct options {
	const char *config_path;
	enum role role;
	int check_config;
	bool log_level_set, log_format_set; /* the command line wins over [logging] */
};

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: outboxd [-c FILE] [--role relay|consumer|all] [-t|--check-config]\n"
	        "               [--log-level error|warning|info|debug] [--log-format text|json]\n"
	        "       outboxd -V|--version\n"
	        "       outboxd -h|--help\n"
	        "\n"
	        "  -c, --config FILE      the configuration file (default %s)\n"
	        "      --role ROLE        run the relay, the consumer, or both (all, the default)\n"
	        "  -t, --check-config     validate the file, load every plugin, name the AWS\n"
	        "                         credential source, and exit\n"
	        "      --log-level LEVEL  error, warning, info or debug; overrides [logging] level\n"
	        "      --log-format FMT   text or json; overrides [logging] format\n"
	        "  -V, --version          print the versions of outboxd and its libraries\n"
	        "  -h, --help             print this help\n",
	        SYSCONFDIR "/outboxd/relay.ini");
}

static int parse_role(const char *s, enum role *out)
{
	if (strcmp(s, "all") == 0)
		*out = ROLE_ALL;
	else if (strcmp(s, "relay") == 0)
		*out = ROLE_RELAY;
	else if (strcmp(s, "consumer") == 0)
		*out = ROLE_CONSUMER;
	else
		return -1;
	return 0;
}

static int parse_log_format(const char *s)
{
	enum log_format f;

	if (!log_parse_format(s, &f)) {
		fprintf(stderr, "outboxd: invalid log format \"%s\": expected text or json\n", s);
		return -1;
	}
	log_set_format(f);
	return 0;
}

static void print_version(void)
{
	outbox_print_version(stdout, "outboxd");
	printf("libmicrohttpd %s\n", MHD_get_version());
}

/* Returns -1 to continue, or an exit code. */
static int parse_args(int argc, char **argv, struct options *opts)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"role", required_argument, NULL, 'r'},
		{"check-config", no_argument, NULL, 't'},
		{"log-level", required_argument, NULL, 'l'},
		{"log-format", required_argument, NULL, 'f'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	for (opt = getopt_long(argc, argv, "c:thV", longopts, NULL); opt != -1;
	     opt = getopt_long(argc, argv, "c:thV", longopts, NULL)) {
		switch (opt) {
		case 'c':
			opts->config_path = optarg;
			break;
		case 'r':
			if (parse_role(optarg, &opts->role) < 0) {
				fprintf(stderr, "outboxd: invalid role \"%s\": expected relay, consumer or all\n", optarg);
				return OUTBOXD_EXIT_USAGE;
			}
			break;
		case 't':
			opts->check_config = 1;
			break;
		case 'l':
			if (!log_parse_level(optarg, &log_max_level)) {
				fprintf(stderr, "outboxd: invalid log level \"%s\": expected error, warning,"
				        " info or debug\n", optarg);
				return OUTBOXD_EXIT_USAGE;
			}
			opts->log_level_set = true;
			break;
		case 'f':
			if (parse_log_format(optarg) < 0)
				return OUTBOXD_EXIT_USAGE;
			opts->log_format_set = true;
			break;
		case 'V':
			print_version();
			return OUTBOXD_EXIT_OK;
		case 'h':
			usage(stdout);
			return OUTBOXD_EXIT_OK;
		default:
			usage(stderr);
			return OUTBOXD_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "outboxd: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return OUTBOXD_EXIT_USAGE;
	}
	return -1;
}

static void report_config_errors(const char *path, const struct cfg_errors *errs)
{
	cfg_errors_print(errs, stderr);
	fprintf(stderr, "outboxd: configuration file \"%s\" test failed\n", path);
}

/* --check-config: the credentials a real start would sign with (their
 * source, never the keys). */
static int check_aws_credentials(const struct cfg *cfg)
{
	char msg[4096];

	if (aws_env_check_credentials(cfg->aws.region, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "outboxd: no AWS credentials found; tried %s\n", msg);
		return -1;
	}
	printf("AWS credentials: %s\n", msg);
	return 0;
}

/*
 * Loads the file; with --check-config also loads, checks and starts every
 * plugin once (a real start does that when it creates the instances it
 * keeps).  Prints every error.
 */
static int check_config(const struct options *opts, struct cfg **cfg)
{
	struct cfg_errors errs = {0};
	int rc = 0;

	if (!opts->check_config) {
		rc = cfg_load(opts->config_path, cfg, &errs);
	} else {
		/* One report: the plugins' option errors come with the core's. */
		rc = cfg_load_partial(opts->config_path, cfg, &errs);
		if (*cfg != NULL && daemon_plugins_check(*cfg, &errs) < 0)
			rc = -1;
	}
	if (rc < 0)
		report_config_errors(opts->config_path, &errs);
	cfg_errors_free(&errs);
	if (rc == 0 && opts->check_config)
		rc = check_aws_credentials(*cfg);
	return rc;
}

/* Every destination's units and the relay (daemon/units.h); a refused
 * plugin is a configuration error. */
static int start_units(const struct cfg *cfg, enum role role, const char *instance_id,
                       struct daemon_units **units)
{
	struct daemon_roles roles = {role != ROLE_RELAY, role != ROLE_CONSUMER};
	struct cfg_errors errs = {0};
	int rc = daemon_units_start(cfg, roles, instance_id, &errs, units);

	if (rc == DAEMON_PLUGINS_BAD_CONFIG)
		report_config_errors(cfg->file, &errs);
	cfg_errors_free(&errs);
	return rc == 0 ? OUTBOXD_EXIT_OK
	       : rc == DAEMON_PLUGINS_BAD_CONFIG ? OUTBOXD_EXIT_CONFIG : OUTBOXD_EXIT_FAILURE;
}

/*
 * A schema older than the binary fails later and confusingly (a missing
 * column in the middle of a claim), so it is refused at start: exit 78
 * naming the missing migrations.  A database that cannot be reached now is
 * left to the units, which keep retrying, as before.
 */
static int check_schema(const struct cfg *cfg)
{
	const char **plugins = calloc(cfg->n_destinations + 1, sizeof(*plugins));
	char err[2048];
	PGconn *conn;
	int rc = OUTBOXD_EXIT_OK;

	if (plugins == NULL) {
		log_error("out of memory");
		return OUTBOXD_EXIT_FAILURE;
	}
	conn = db_connect(cfg->database.conninfo, "outboxd", err, sizeof(err));
	if (conn == NULL) {
		log_warning("could not check the database schema: %s", err);
		goto out;
	}
	for (size_t i = 0; i < cfg->n_destinations; i++)
		plugins[i] = cfg->destinations[i].plugin;
	switch (migrate_check(conn, migrate_default_dir(), plugins, cfg->n_destinations, err,
	                      sizeof(err))) {
	case MIGRATE_OK:
		break;
	case MIGRATE_BEHIND:
		log_error("%s", err);
		rc = OUTBOXD_EXIT_CONFIG;
		break;
	default:
		log_warning("could not check the database schema: %s", err);
		break;
	}
	PQfinish(conn);
out:
	free(plugins);
	return rc;
}

static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	/* Threads started later inherit the mask, so only sigwait() sees them. */
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * A relay registers its process in outbox.relay_instances (as "all" when
 * the consumer runs beside it); a consumer-only process has no relay, so
 * the maintenance thread keeps its row, with the destinations of the
 * configuration in force (again after each reload).
 */
static void register_consumer(struct maintenance *maint, const struct daemon_units *units,
                              enum role role)
{
	const struct cfg *cfg = daemon_units_current(units);
	const char **names;

	if (role != ROLE_CONSUMER)
		return;
	names = calloc(cfg->n_destinations ? cfg->n_destinations : 1, sizeof(*names));
	for (size_t i = 0; names != NULL && i < cfg->n_destinations; i++)
		names[i] = cfg->destinations[i].name;
	if (names == NULL ||
	    maintenance_register(maint, DB_ROLE_CONSUMER, names, cfg->n_destinations) < 0)
		log_warning("out of memory: this instance is not registered in outbox.relay_instances");
	free(names);
}

/* Until SIGTERM or SIGINT; SIGHUP reloads the configuration file. */
static void wait_for_stop(const sigset_t *set, struct observe *obs, struct daemon_units *units,
                          struct maintenance *maint, enum role role, const char *path)
{
	for (;;) {
		int sig = observe_sigwait(obs, set);

		if (sig == SIGHUP) {
			(void)daemon_reload(units, path);
			register_consumer(maint, units, role);
			maintenance_reloaded(maint);
			continue;
		}
		if (consumer_exit_status() != 0)
			log_info("shutting down: too many hung handlers (exit status %d)",
			         consumer_exit_status());
		else
			log_info("received %s, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		return;
	}
}

/*
 * With OUTBOX_STATS_FILE set, the daemon writes a JSON object to that file
 * when it stops: {"aws_requests": N, "sqs": {...}, "db_round_trips": N,
 * "db_statements": N} (every SQS/S3 HTTP request it sent; SQS requests per
 * action, see sqs_request_counts(); its round trips to PostgreSQL and the
 * statements they carried, see db/traffic.h).
 * outbox-bench reads it; nothing else depends on it.
 */
static void write_stats(void)
{
	const char *path = getenv("OUTBOX_STATS_FILE");
	json_t *sqs;
	char *text;
	FILE *f;

	if (path == NULL || *path == '\0')
		return;
	f = fopen(path, "w");
	if (f == NULL) {
		log_warning("could not write the statistics file \"%s\"", path);
		return;
	}
	sqs = sqs_request_counts();
	text = sqs != NULL ? json_dumps(sqs, JSON_COMPACT) : NULL;
	fprintf(f, "{\"aws_requests\": %lu, \"sqs\": %s, \"db_round_trips\": %lu,"
	        " \"db_statements\": %lu}\n", aws_http_requests_made(), text != NULL ? text : "{}",
	        db_traffic_round_trips(), db_traffic_statements());
	free(text);
	json_decref(sqs);
	fclose(f);
}

static int run(const struct cfg *cfg, enum role role)
{
	struct daemon_units *units = NULL;
	struct maintenance *maint = NULL;
	struct scheduler *sched = NULL;
	struct observe *obs = NULL;
	struct aws_credentials *creds = NULL;
	struct console *console = NULL;
	char instance_id[300], host[256];
	sigset_t set;
	int rc = OUTBOXD_EXIT_FAILURE;

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	snprintf(instance_id, sizeof(instance_id), "%s:%ld", host, (long)getpid());
	block_signals(&set);
	/* Before any unit opens a connection: every session gets them. */
	db_set_session_timeouts(cfg->database.lock_timeout_seconds,
	                        cfg->database.statement_timeout_seconds,
	                        cfg->database.idle_in_transaction_timeout_seconds);
	rc = check_schema(cfg);
	if (rc != OUTBOXD_EXIT_OK)
		goto out;
	/* Both halves sign with the one provider: found before anything starts,
	 * a host without credentials exits 78, which systemd does not restart. */
	if (aws_env_take_credentials(cfg->aws.region, &creds) < 0) {
		rc = OUTBOXD_EXIT_CONFIG;
		goto out;
	}
	rc = OUTBOXD_EXIT_FAILURE;
	if (observe_start(cfg, role != ROLE_CONSUMER, role != ROLE_RELAY, &obs) < 0)
		goto out;
	/* After the metrics registry exists: the overview reads its gauges. */
	if (console_start(cfg, &console) < 0)
		goto out;
	rc = start_units(cfg, role, instance_id, &units);
	if (rc != OUTBOXD_EXIT_OK)
		goto out;
	/* Every role: the advisory locks pick one instance per task. */
	if (maintenance_start(cfg, instance_id, &maint) < 0)
		goto out;
	register_consumer(maint, units, role);
	/* Every role too, and one instance at a time (its own advisory lock). */
	if (scheduler_start(cfg, instance_id, &sched) < 0)
		goto out;
	log_info("outboxd started: role=%s destinations=%zu instance=%s",
	         role == ROLE_ALL ? "all" : role == ROLE_RELAY ? "relay" : "consumer",
	         cfg->n_destinations, instance_id);
	wait_for_stop(&set, obs, units, maint, role, cfg->file);
	(void)shutdown_watchdog_arm(cfg->consumer.shutdown_grace_seconds);
	rc = OUTBOXD_EXIT_OK;
	/* A consumer stopped the process because handlers hung: not a
	 * success, so that the service manager restarts it. */
	if (consumer_exit_status() != 0)
		rc = consumer_exit_status();
out:
	observe_stopping(obs);
	console_stop(console);
	scheduler_stop(sched);
	maintenance_stop(maint);
	daemon_units_stop(units);
	observe_stop(obs);
	aws_credentials_shared_release(creds);
	if (rc == OUTBOXD_EXIT_OK || rc == consumer_exit_status()) {
		write_stats();
		log_info("outboxd stopped");
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct options opts = {.config_path = SYSCONFDIR "/outboxd/relay.ini", .role = ROLE_ALL};
	struct cfg *cfg = NULL;
	int rc;

	log_set_ident("outboxd");
	log_set_format(LOG_FORMAT_TEXT); /* --log-format may change it */
	rc = parse_args(argc, argv, &opts);
	if (rc >= 0)
		return rc;
	fault_init();
	/* Process-wide library setup, while still single-threaded: the host
	 * initialises libcurl and OpenSSL, never a plugin. */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (check_config(&opts, &cfg) < 0) {
		rc = OUTBOXD_EXIT_CONFIG;
	} else if (opts.check_config) {
		printf("configuration file \"%s\" test is successful\n", opts.config_path);
		rc = OUTBOXD_EXIT_OK;
	} else {
		daemon_logging_pin(opts.log_level_set, opts.log_format_set);
		daemon_logging_apply(cfg);
		rc = run(cfg, opts.role);
	}
	cfg_free(cfg);
	curl_global_cleanup();
	return rc;
}
