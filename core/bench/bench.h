/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench.h: what the parts of outbox-bench share (docs/performance.md,
 * docs/performance.md).
 *
 * bench.c       options, the generated relay.ini, the queues, running the
 *               real outboxd binary, output
 * bench_load.c  producers (liboutbox, one transaction per job), waiting
 *               for a state, the paced latency run and its percentiles
 * bench_soak.c  --soak N: N jobs through the daemon with retention on,
 *               table sizes, claim time and rate over the run
 */
#ifndef OUTBOX_CORE_BENCH_BENCH_H
#define OUTBOX_CORE_BENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include <sys/types.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "aws/env.h"
#include "aws/http.h"
#include "config/config.h"
#include "common/compiler.h"

#define BENCH_MAX_DESTS 16
#define BENCH_PATH_MAX 512

struct bench {
	struct cfg *cfg;           /* owned: the user's relay.ini */
	int jobs;
	int dests;
	int workers;
	int producers;
	int rate;                  /* offered jobs/s of the latency run */
	int soak;                  /* --soak N: jobs of the soak run; 0: no soak */
	int soak_retention;        /* --soak-retention S: [retention] of the soak */
	const char *publisher;     /* "null" or "sqs" */
	const char *outboxd;       /* the daemon binary */
	char run[32];              /* tag in destination names and identities */
	char dir[BENCH_PATH_MAX];  /* temporary files */
	char names[BENCH_MAX_DESTS][48];       /* consumed by outboxd */
	char relay_names[BENCH_MAX_DESTS][48]; /* the relay phase's */
	char queues[BENCH_MAX_DESTS][BENCH_PATH_MAX];       /* consumed by outboxd */
	char relay_queues[BENCH_MAX_DESTS][BENCH_PATH_MAX]; /* relay phase (sqs) */
	PGconn *conn;
	struct aws_env env;
	struct aws_http *sqs;
};

/* A running outboxd. */
struct daemon {
	pid_t pid;
	char stats[BENCH_PATH_MAX];
	long peak_rss_kib;
	unsigned long aws_requests;
	json_t *sqs; /* owned reference: SQS requests per action, or NULL */
	double cpu_seconds; /* user + system CPU, read just before the stop */
};

/*
 * Writes a relay.ini at path: the user's settings, the destinations names
 * on queues (bench_noop plugin logging to runs_log), plus sections (text
 * placed before the destinations) and dest_lines (appended to each
 * destination); both may be NULL.  Returns 0 or -1.
 */
int bench_write_ini(const struct bench *b, const char *path, char (*names)[48],
                    char (*queues)[BENCH_PATH_MAX], const char *runs_log,
                    const char *sections, const char *dest_lines) OUTBOX_MUSTCHECK;

/* Runs the outboxd binary on ini (logs in b->dir/TAG.log) and waits until
 * every consumer worker is connected.  Returns 0 or -1. */
int bench_daemon_start(struct bench *b, const char *ini, const char *tag, struct daemon *d)
	OUTBOX_MUSTCHECK;
/* SIGTERM, wait, read its statistics.  0 when it exited 0. */
int bench_daemon_stop(struct daemon *d);

/* The soak (bench_soak.c): prints its figures; returns 0 or -1. */
int bench_soak_run(struct bench *b, bool json) OUTBOX_MUSTCHECK;

/* Microseconds of CLOCK_MONOTONIC / CLOCK_REALTIME. */
int64_t bench_now_us(void);
int64_t bench_wall_us(void);

/*
 * Enqueues jobs n0..n0+count-1 (phase tag in the identity), round-robin
 * over the destinations, with b->producers threads, one transaction per
 * job.  Returns 0 or -1.
 */
int bench_enqueue(struct bench *b, const char *phase, char (*names)[48], int n0, int count)
	OUTBOX_MUSTCHECK;

/* Waits until sql (no parameters) returns at least want (at_most: at most
 * want), polling every 10 ms, for at most timeout_s.  Returns 0, or -1 on
 * timeout or error. */
int bench_wait_count(struct bench *b, const char *sql, long want, bool at_most, int timeout_s)
	OUTBOX_MUSTCHECK;

/* "SELECT count(*) FROM outbox.TABLE WHERE destination IN (names) AND
 * status IN (statuses)" into sql; statuses like "'NEW'". */
void bench_count_sql(const struct bench *b, char (*names)[48], const char *table,
                     const char *statuses, char *sql, size_t len);

/* Latency figures of a paced run. */
struct bench_latency {
	int jobs;
	double achieved_rate;
	double p50_ms;
	double p99_ms;
	double max_ms;
};

/*
 * Enqueues count jobs at rate jobs/s from one connection, recording each
 * job's commit time, waits until the running daemon has succeeded them
 * all, then matches the handler start times in runs_log.  Returns 0 or -1.
 */
int bench_latency_run(struct bench *b, int count, const char *runs_log,
                      struct bench_latency *out) OUTBOX_MUSTCHECK;

#endif
