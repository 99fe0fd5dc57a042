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
 * bench_drain.c --drain: N jobs committed first, then the daemon alone
 * bench_server.c the PostgreSQL server: durable or not, its CPU
 * bench_dbwork.c what the database did per job: WAL, row versions, HOT
 *               updates, outboxd's round trips and statements
 * bench_schedstat.c a task's time on a CPU and waiting for one, the
 *               machine's busy time (Linux)
 * bench_settings.c --baseline-settings: the [relay]/[consumer] fragment
 *               and its merge into the generated relay.ini
 * bench_print.c the figures, one column or baseline and current
 */
#ifndef OUTBOX_CORE_BENCH_BENCH_H
#define OUTBOX_CORE_BENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#include <sys/types.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "aws/env.h"
#include "aws/http.h"
#include "config/config.h"
#include "common/compiler.h"

#define BENCH_MAX_DESTS 16
#define BENCH_PATH_MAX 512
#define BENCH_SETTINGS_MAX 64

/* One key of a --baseline-settings fragment. */
struct bench_setting {
	char section[16]; /* "relay" or "consumer" */
	char key[64];
	char value[256];
};

/* A parsed --baseline-settings fragment (bench_settings.c). */
struct bench_settings {
	int n;
	struct bench_setting kv[BENCH_SETTINGS_MAX];
};

/*
 * What differs between the baseline and the current run of the daemon
 * phases.  Every pointer is borrowed (argv or struct bench) and outlives
 * the run.
 */
struct bench_variant {
	const char *name;                     /* "baseline" or "current" */
	const char *outboxd;                  /* the daemon binary */
	const struct bench_settings *settings; /* merged into relay.ini, or NULL */
	const char *tag;                      /* "" or "baseline-": phase tags, files */
};

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
	bool drain;                /* --drain */
	bool allow_non_durable;    /* --allow-non-durable */
	bool durable;              /* the server waits for the WAL flush */
	char durability[96];       /* "fsync=on synchronous_commit=on" */
	const char *baseline_outboxd;  /* --baseline-outboxd, or NULL */
	const char *baseline_settings; /* --baseline-settings FILE, or NULL */
	struct bench_settings baseline; /* parsed from baseline_settings */
	const struct bench_variant *variant; /* the daemon phases' run, or NULL */
	struct bench_variant base_variant, cur_variant; /* what variant points to */
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
	long long db_round_trips; /* to PostgreSQL (its statistics file); -1: unknown */
	long long db_statements;  /* the statements they carried; -1: unknown */
};

/*
 * Writes a relay.ini at path: the user's settings (merged with those of
 * b->variant, when it has any), the destinations names
 * on queues (bench_noop plugin logging to runs_log), plus sections (text
 * placed before the destinations) and dest_lines (appended to each
 * destination); both may be NULL.  Returns 0 or -1.
 */
int bench_write_ini(const struct bench *b, const char *path, char (*names)[48],
                    char (*queues)[BENCH_PATH_MAX], const char *runs_log,
                    const char *sections, const char *dest_lines) OUTBOX_MUSTCHECK;

/* Runs the outboxd binary (b->variant's, else b->outboxd) on ini (logs in
 * b->dir/TAG.log) and waits until every consumer worker is connected.
 * Returns 0 or -1. */
int bench_daemon_start(struct bench *b, const char *ini, const char *tag, struct daemon *d)
	OUTBOX_MUSTCHECK;
/* SIGTERM, wait, read its statistics.  0 when it exited 0. */
int bench_daemon_stop(struct daemon *d);

/* bench_daemon.c: the destinations' names and, with the sqs publisher, their
 * queues (created at b->sqs).  Returns 0 or -1 (logged). */
int bench_setup_queues(struct bench *b) OUTBOX_MUSTCHECK;

/* Exit codes of outbox-bench. */
enum bench_exit {
	BENCH_EXIT_OK = 0,
	BENCH_EXIT_FAILURE = 1,
	BENCH_EXIT_USAGE = 64,
	BENCH_EXIT_UNAVAILABLE = 69,
	BENCH_EXIT_CONFIG = 78,
};

struct bench_figures;

/* bench_phases.c: loads config into b (config borrowed), connects, checks
 * durability, migrates, makes the queues.  Returns an enum bench_exit. */
int bench_setup(struct bench *b, const char *config) OUTBOX_MUSTCHECK;
/* bench_phases.c: phases 1-4 (bench.c lists them) into fg; 0 or -1. */
int bench_run(struct bench *b, struct bench_figures *fg) OUTBOX_MUSTCHECK;

/* The soak (bench_soak.c): prints its figures; returns 0 or -1. */
int bench_soak_run(struct bench *b, bool json) OUTBOX_MUSTCHECK;

/* Microseconds of CLOCK_MONOTONIC / CLOCK_REALTIME. */
int64_t bench_now_us(void);
int64_t bench_wall_us(void);

/* A task's scheduler times (bench_schedstat.c); have is false where
 * Linux's schedstat could not be read. */
struct bench_sched {
	bool have;
	long long run_ns;  /* on a CPU */
	long long wait_ns; /* runnable, waiting in a run queue */
};

/* The scheduler times of backend pid when it is a PostgreSQL backend on
 * this machine, and of the calling thread. */
void bench_sched_backend(int pid, struct bench_sched *out);
void bench_sched_thread(struct bench_sched *out);
/* Every CPU's user + nice + system + irq + softirq time so far, in
 * seconds (/proc/stat); -1 when unreadable. */
double bench_machine_cpu_seconds(void);

/*
 * Where the producers' transactions spent their time, in ms per job: the
 * mean transaction, of it their backends on a CPU and waiting for one,
 * the producer threads on a CPU and waiting for one; what is left is time
 * both sides slept (the WAL flush, locks, the loopback), slightly
 * negative when the parts overlap.  have is false when a schedstat could
 * not be read (a server elsewhere).
 */
struct bench_producer_time {
	bool have;
	double mean_ms;
	double backend_cpu_ms;
	double backend_run_queue_ms;
	double client_cpu_ms;
	double client_run_queue_ms;
};

/* The producers' figures of one bench_enqueue(). */
struct bench_commits {
	double rate;   /* jobs/s from the first BEGIN to the last COMMIT */
	double p99_ms; /* of each job's transaction: BEGIN, enqueue, COMMIT */
	struct bench_producer_time time;
};

/*
 * Enqueues jobs n0..n0+count-1 (phase tag in the identity), round-robin
 * over the destinations, with b->producers threads, one transaction per
 * job; the figures into out unless it is NULL.  Returns 0 or -1.
 */
int bench_enqueue(struct bench *b, const char *phase, char (*names)[48], int n0, int count,
                  struct bench_commits *out) OUTBOX_MUSTCHECK;

/* bench_enqueue() at an offered rate of rate jobs/s over all producers
 * (0: as fast as they can). */
int bench_enqueue_paced(struct bench *b, const char *phase, char (*names)[48], int n0,
                        int count, int rate, struct bench_commits *out) OUTBOX_MUSTCHECK;

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

/* The phase tag of b->variant into out: "baseline-e2e" or "e2e". */
void bench_phase(const struct bench *b, const char *phase, char *out, size_t len);

/* The drain figures (bench_drain.c); have false when not run. */
/* The database's counters at one point (bench_dbwork.c). */
struct bench_db_sample {
	bool have;
	long long wal_bytes;    /* pg_current_wal_lsn() as a byte position */
	long long row_versions; /* n_tup_ins + n_tup_upd of the outbox schema's tables */
	long long jobs_upd, jobs_hot, events_upd, events_hot;
};

/* What the database did per job over a phase. */
struct bench_db_work {
	bool have;
	double wal_bytes_per_job;
	double row_versions_per_job;
	double jobs_hot_share, events_hot_share; /* HOT / all updates; < 0: none */
	double statements_per_job, round_trips_per_job; /* outboxd's; < 0: unknown */
};

/* Waits until no other session of outbox-bench or outboxd is connected
 * (their counters are reported), then samples.  Returns 0 or -1 (logged). */
int bench_db_sample(struct bench *b, struct bench_db_sample *s) OUTBOX_MUSTCHECK;

/* From s0 to s1 and the stopped daemon d's statistics, per job; 0 or -1. */
int bench_db_work(const struct bench_db_sample *s0,
                  const struct bench_db_sample *s1, const struct daemon *d, int jobs,
                  struct bench_db_work *out) OUTBOX_MUSTCHECK;

struct bench_drain {
	bool have;
	double rate;
	double outboxd_cpu_ms_per_job;
	double postgres_cpu_ms_per_job; /* < 0: the server is not on this machine */
	double sqs_requests_per_job;
	struct bench_commits solo;      /* the producers of the drain's commits */
	struct bench_db_work db;        /* the daemon's alone (the jobs were committed before) */
};

/* The figures of the daemon phases, once per variant. */
struct bench_run {
	const struct bench_variant *variant;
	bool have_e2e;
	double e2e_rate, requests_per_job;
	double e2e_cpu_seconds; /* outboxd's CPU in the e2e phase */
	/* The e2e phase's CPU, the producers' own left out (their backends'
	 * and threads', from schedstat): what the pipeline cost, in ms per
	 * job, on PostgreSQL and on the whole machine; < 0: not measured. */
	double e2e_pipeline_postgres_cpu_ms_per_job;
	double e2e_pipeline_machine_cpu_ms_per_job;
	json_t *e2e_sqs;        /* owned reference: its requests per action, or NULL */
	struct bench_db_work e2e_db; /* the producers' enqueues and the daemon's work */
	long peak_rss_kib;
	struct bench_latency lat;
	struct bench_drain drain;
	struct bench_commits solo;         /* producers alone */
	struct bench_commits with_outboxd; /* the e2e phase's producers */
};

/* Everything outbox-bench prints but the soak. */
struct bench_figures {
	double enqueue_rate, relay_rate;
	struct bench_commits enqueue; /* phase 1's producers */
	struct bench_run cur;
	struct bench_run base;        /* when base.variant is not NULL */
};

/* Prints the figures on stdout (bench_print.c). */
void bench_print(const struct bench *b, const struct bench_figures *fg, bool json);

/* Sorts v (n > 0) and returns its p-th percentile (0..100). */
double bench_percentile(double *v, int n, int p);

/*
 * Reads SHOW fsync and SHOW synchronous_commit into b->durable and
 * b->durability (bench_server.c).  Returns 0, or -1 on a query error.
 */
int bench_check_durable(struct bench *b) OUTBOX_MUSTCHECK;

/* CPU of every process of the PostgreSQL server behind b->conn. */
struct bench_pg_cpu {
	pid_t postmaster;  /* 0: the server is not on this machine */
	pid_t own_backend; /* b->conn's backend, left out: its polls are the bench's */
	double seconds;    /* at the sample */
};

/* Samples the server's CPU so far; s->postmaster 0 (and a warning, once)
 * when the server is not a process of this machine.  Returns 0 or -1. */
int bench_pg_cpu_sample(struct bench *b, struct bench_pg_cpu *s) OUTBOX_MUSTCHECK;

/* The postmaster of backend pid when both are postgres processes of this
 * machine (a server elsewhere has pids of its own, which here may name any
 * process or none); else 0, and why says which is not. */
pid_t bench_local_postmaster(pid_t pid, char *why, size_t len);

/* utime + stime of a process (with its reaped children: cutime + cstime
 * when children is true), in seconds; -1 when unreadable. */
double bench_proc_cpu_seconds(pid_t pid, bool children);

/* --drain for b->variant: commits b->jobs jobs, then times the daemon from
 * its start to the last SUCCEEDED.  Returns 0 or -1. */
int bench_drain_run(struct bench *b, struct bench_drain *out) OUTBOX_MUSTCHECK;

/* Parses the fragment at path into s; errors as "FILE:LINE: ..." on stderr.
 * Returns 0 or -1. */
int bench_settings_load(const char *path, struct bench_settings *s) OUTBOX_MUSTCHECK;

/*
 * Writes "key = value" lines of section ("relay" or "consumer") to f:
 * the n keys/values given (the user's), each replaced by s's value for
 * the same key, then s's keys of that section not among them.  A NULL
 * value leaves its key out unless s sets it.  s may be NULL.
 */
void bench_settings_write(FILE *f, const char *section, const char *const *keys,
                          const char *const *values, int n, const struct bench_settings *s);

#endif
