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
		{"baseline-settings", required_argument, NULL, 'S'}, {NULL, 0, NULL, 0},
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
	if (parse_args(argc, argv, &b, &config, &json) < 0) {
		fprintf(stderr, "usage: outbox-bench [-c FILE] [--jobs N] [--destinations D]"
		                " [--workers W] [--producers P]\n"
		                "                    [--publisher null|sqs] [--offered-rate R]"
		                " [--outboxd PATH] [--json]\n"
		                "                    [--drain] [--allow-non-durable]"
		                " [--baseline-outboxd PATH]\n"
		                "                    [--baseline-settings FILE]\n"
		                "                    [--soak N [--soak-retention SECONDS]]\n");
		return BENCH_EXIT_USAGE;
	}
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
