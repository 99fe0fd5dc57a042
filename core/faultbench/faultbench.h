/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * faultbench/faultbench.h: what the parts of outbox-faultbench share (docs/reliability.md,
 * docs/reliability.md).
 *
 * faultbench.c        options, setup, the fork/kill helper, output
 * faultbench/queue.c  the "queue" of a scenario: the fake (a file that the
 *                     fake publisher appends to and the fake message port
 *                     records deletions in) or a real SQS queue; counting
 *                     what arrived; the message port children consume with
 * faultbench/seed.c   the four seed scenarios (docs/reliability.md)
 * faultbench/extra.c  the added scenarios (relay/consumer crashes, redrive
 *                     and window-correction races)
 * faultbench/pgcrash.c the pg_crash scenario: PostgreSQL killed under load
 *
 * Every scenario has its own destination (fb_NAME_RUN), so its events, jobs,
 * queue and plugin instance are its own.  Job identities carry a run tag,
 * so reruns against the same database never collide.
 */
#ifndef OUTBOX_CORE_FAULTBENCH_FAULTBENCH_H
#define OUTBOX_CORE_FAULTBENCH_FAULTBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "aws/env.h"
#include "aws/http.h"
#include "config/config.h"
#include "consumer/runner.h"
#include "common/compiler.h"
#include "plugin/loader.h"
#include "relay/publisher.h"
#include "relay/lane.h"

#define FB_PATH_MAX 512

/* One delivery: a message as a consumer would receive it.  Owned strings. */
struct fb_delivery {
	char *message_id;
	char *receipt_handle;
	char *body;
	size_t body_len;
	char event_id[384]; /* from the body; "" if unparseable */
};

struct fb_deliveries {
	struct fb_delivery *v; /* owned */
	size_t n;
	size_t cap;
};

/* One scenario's destination. */
struct fb_dest {
	struct cfg_destination d;           /* strings point into the fields below */
	struct cfg_plugin_option opts[3];
	char name[48];
	char queue_url[FB_PATH_MAX];
	char runs_log[FB_PATH_MAX];         /* bench_noop's plugin.runs_log */
	char journal[FB_PATH_MAX];          /* fake queue: M/D/V records */
	char stats[FB_PATH_MAX];            /* children's counter lines */
	char sleep_ms[16];
	struct plugin_instance *inst;       /* owned */
	struct fb_deliveries last;          /* sqs: the last receipts handed out */
};

struct fb {
	struct cfg *cfg;           /* owned: relay.ini */
	struct cfg run_cfg;        /* shallow copy with the bench's settings */
	const char *publisher;     /* "fake" or "sqs" */
	const char *pg_restart;    /* --pg-restart-command (borrowed from argv) or NULL */
	int reps;
	char run[48];              /* run tag in every identity */
	char dir[FB_PATH_MAX];     /* temporary files */
	char instance_id[128];
	PGconn *conn;              /* the parent's; children never touch it */
	struct plugin_registry *reg;
	struct consumer_services *svc;
	struct aws_env env;        /* sqs only */
	struct aws_http *sqs;      /* sqs only: the parent's client */
	int children_killed;       /* children that ended with 137 at their point */
	int children_other;        /* children that ended any other way */
};

/* What a child reports before it dies: summed by the parent. */
struct fb_child_report {
	struct consumer_counters c;
	unsigned long port_deletes;
};

/* --- faultbench.c --- */

/* Creates d for scenario name (fb_NAME) with its plugin instance and, for
 * sqs, its queue.  sleep_ms: bench_noop's execute() sleep. */
int fb_dest_init(struct fb *fb, struct fb_dest *d, const char *name, int sleep_ms)
	OUTBOX_MUSTCHECK;
void fb_dest_free(struct fb_dest *d);

/* A child body: does its part and must end at an armed fault point. */
typedef void (*fb_child_fn)(struct fb *fb, struct fb_dest *d, size_t i, void *arg);

/* Forks a child running fn; *pid set.  Returns 0 or -1. */
int fb_fork(struct fb *fb, fb_child_fn fn, struct fb_dest *d, size_t i, void *arg,
            pid_t *pid) OUTBOX_MUSTCHECK;
/* Waits for pid; counts 137 as killed, anything else as other. */
void fb_wait(struct fb *fb, pid_t pid);
/* fb_fork + fb_wait for i in 0..n-1, one after the other. */
int fb_each(struct fb *fb, fb_child_fn fn, struct fb_dest *d, void *arg, size_t n)
	OUTBOX_MUSTCHECK;

/* In a child: a new connection or _exit(1). */
PGconn *fb_child_connect(const struct fb *fb);

/* Enqueues job i of d (job type "faultbench") on conn in its own
 * transaction; job_id (65 bytes) may be NULL.  Returns 0 or -1. */
int fb_enqueue(const struct fb *fb, PGconn *conn, const struct fb_dest *d, size_t i,
               bool commit, char *job_id) OUTBOX_MUSTCHECK;

/* One integer from sql with $1 = d's destination; -1 on error. */
long fb_count(struct fb *fb, const struct fb_dest *d, const char *sql);

/* Waits (polling, deadline 30 s) until no job of d holds a live lease and
 * no event of d a live claim.  Returns 0 or -1 on timeout. */
int fb_wait_leases(struct fb *fb, const struct fb_dest *d) OUTBOX_MUSTCHECK;

/* Runs relay passes for d in this process until one claims nothing.
 * *batches gets the passes that claimed something, *idle_claimed what
 * the last pass claimed (0).  Returns 0 or -1. */
int fb_relay_drain(struct fb *fb, struct fb_dest *d, int batch_size, long *batches,
                   long *idle_claimed) OUTBOX_MUSTCHECK;

/* --- faultbench/queue.c --- */

/* Appends len bytes of buf to path with one write() (O_APPEND, created
 * 0600), so a record of a killed writer is never torn.  Returns 0 or -1. */
int fb_append(const char *path, const char *buf, size_t len) OUTBOX_MUSTCHECK;

/* Called for each message record of a fake journal: id and body point
 * into the scanned buffer.  A negative return ends the scan. */
typedef int (*fb_journal_fn)(void *arg, const char *id, const char *body, size_t len);

/* Calls fn for every complete "M" record of buf[0..len) in order, skipping
 * other records.  Returns the bytes consumed: a record still being written
 * at the end is left for the next scan. */
size_t fb_journal_scan(const char *buf, size_t len, fb_journal_fn fn, void *arg);

/* Fake queue only: every message the publisher accepted for d, deleted or
 * not, in the order sent.  *out is replaced.  Returns 0 or -1. */
int fb_queue_sent(const struct fb_dest *d, struct fb_deliveries *out) OUTBOX_MUSTCHECK;

/* A publisher for d: fake (appending to d's journal) or sqs.  Free with
 * publisher_free(). */
int fb_publisher(struct fb *fb, struct fb_dest *d, struct publisher **out) OUTBOX_MUSTCHECK;

/* Every message of d's queue not deleted yet, each with a fresh receipt
 * (sqs: earlier receipts are made visible again, then all are received).
 * *out is replaced.  Returns 0 or -1. */
int fb_queue_fetch(struct fb *fb, struct fb_dest *d, struct fb_deliveries *out)
	OUTBOX_MUSTCHECK;
void fb_deliveries_free(struct fb_deliveries *ds);
/* Index of the first delivery of event_id from 'from' on, or -1. */
long fb_deliveries_find(const struct fb_deliveries *ds, const char *event_id, size_t from);
/* Distinct event ids among ds. */
size_t fb_deliveries_distinct(const struct fb_deliveries *ds);

/* In a child: a consumer runner on d with a port for d's queue; process
 * the deliveries dvs[0..n) (borrowed) each as its own receive batch, then
 * append the report to d's stats file. */
void fb_child_consume(struct fb *fb, struct fb_dest *d, const struct fb_delivery *const *dvs,
                      size_t n);

/* Sums the reports children wrote for d. */
void fb_reports_sum(const struct fb_dest *d, struct fb_child_report *sum);

/* Lines of d's runs log: total, and those of generation gen (-1: any). */
long fb_runs(const struct fb_dest *d, int gen);

/* --- faultbench/seed.c / faultbench/extra.c --- */

/* Each runs one scenario and adds its counters to out (borrowed). */
int fb_scenario_direct_publish(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;
int fb_scenario_in_transaction(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;
int fb_scenario_after_commit(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;
int fb_scenario_delivered_twice(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;
int fb_scenario_relay_after_send(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;
int fb_scenario_consumer_in_execute(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;
int fb_scenario_consumer_in_commit(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;
int fb_scenario_redrive_race(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;
int fb_scenario_correction_race(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;

/* --- faultbench/pgcrash.c --- */

/* PostgreSQL killed (fb->pg_restart) under producers, relay and consumer
 * load; fills out with its counters, or with "skipped" and the reason
 * when there is no restart command or the publisher is not fake. */
int fb_scenario_pg_crash(struct fb *fb, json_t *out) OUTBOX_MUSTCHECK;

/* Common result keys of a delivered scenario: lost jobs (not SUCCEEDED
 * or DEAD), duplicate business effects, handler runs. */
int fb_outcome(struct fb *fb, const struct fb_dest *d, json_t *obj) OUTBOX_MUSTCHECK;

#endif
