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
 * This file holds the options and main(); the phases are bench_phases.c's.
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
	        "      --offered-rate R         jobs per second in the latency phase and the soak\n"
	        "                               (default 500)\n"
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
	rc = bench_setup(&b, config);
	if (rc == BENCH_EXIT_OK && b.soak > 0) {
		if (bench_soak_run(&b, json) < 0)
			rc = BENCH_EXIT_FAILURE;
	} else if (rc == BENCH_EXIT_OK && bench_run(&b, &fg) < 0) {
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
