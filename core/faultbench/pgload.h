/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * faultbench/pgload.h: the load of the pg_crash scenario (faultbench/pgcrash.c,
 * docs/reliability.md): forked children that keep producing, relaying and
 * consuming through PostgreSQL restarts, each reconnecting by itself.
 *
 * They stop when a file appears (a flag the parent raises by creating it:
 * it needs no signal handler and outlives nothing) and end with _exit(0),
 * or _exit(1) when they cannot even start.
 */
#ifndef OUTBOX_CORE_FAULTBENCH_PGLOAD_H
#define OUTBOX_CORE_FAULTBENCH_PGLOAD_H

#include "faultbench/faultbench.h"

/* Shared by the parent and the children (a copy in each after fork). */
struct fb_load {
	char produce_stop[FB_PATH_MAX]; /* exists: producers finish the job in hand, exit */
	char stop[FB_PATH_MAX];         /* exists: the relay and the consumer exit */
	char committed[FB_PATH_MAX];    /* producers append "JOB_ID\n" once COMMIT succeeded */
};

/* A committed-log line: the 64 hex digits of a job id and a newline. */
#define FB_LOAD_LINE_LEN 65

/* Child bodies for fb_fork(); arg is the struct fb_load.  Producer i
 * enqueues jobs i * FB_LOAD_STRIDE + 0, 1, 2, ... each in its own
 * transaction, retrying one whose COMMIT failed until it succeeds. */
#define FB_LOAD_STRIDE 1000000
void fb_load_producer(struct fb *fb, struct fb_dest *d, size_t i, void *arg);
/* A relay lane with fb->run_cfg's [relay] settings, passing continuously. */
void fb_load_relay(struct fb *fb, struct fb_dest *d, size_t i, void *arg);
/* A consumer runner fed from d's fake journal, redelivering every message
 * not deleted once its visibility expires, as SQS does. */
void fb_load_consumer(struct fb *fb, struct fb_dest *d, size_t i, void *arg);

#endif
