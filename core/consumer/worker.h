/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/worker.h: the consumer's data model: struct consumer (one per
 * daemon, or one per consumer_runner) and its workers, each with the
 * resources its thread owns.  The steps that use them are declared in
 * their own headers (session.h, control.h, batch.h, rules.h, loop.h,
 * dlq.h).  Not for other parts of the core: they use consumer.h.
 */
#ifndef OUTBOX_CORE_CONSUMER_WORKER_H
#define OUTBOX_CORE_CONSUMER_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "aws/env.h"
#include "aws/http.h"
#include "consumer/consumer.h"
#include "consumer/counters.h"
#include "consumer/port.h"
#include "consumer/heartbeat.h"
#include "consumer/ledger.h"
#include "aws/sqs.h"

struct batch_scratch;
struct delete_pools;

/* Where a worker's thread is, for the watch that abandons a hung handler
 * (consumer/consumer.c; docs/consumer.md, "Time limits").  IN_HANDLER is
 * left by the thread (back to RUNNING) or by the watch (ABANDONED), with
 * one compare-and-set each, so exactly one of them decides.  The state
 * word also counts the calls (WORKER_STATE()), so that the watch's
 * compare-and-set fails when the call it judged returned meanwhile and
 * another began. */
enum worker_phase {
	WORKER_RUNNING,    /* the loop, the claim or the completion */
	WORKER_IN_HANDLER, /* inside execute() of heartbeat slot handler_slot */
	WORKER_ABANDONED,  /* replaced; the thread, if it returns, touches nothing shared */
	WORKER_GONE,       /* an abandoned thread returned, freed what it owns, exited */
};
#define WORKER_PHASE(state) ((int)((state) & 3u))
#define WORKER_STATE(state, phase) (((state) & ~3ull) | (unsigned long long)(phase))

struct consumer_worker {
	struct consumer *c;                    /* borrowed: the owner */
	const struct cfg_destination *dest;    /* borrowed from cfg */
	struct plugin_instance *inst;          /* borrowed; NULL for a DLQ reader */
	size_t slot;                           /* first of its [consumer] claim_max heartbeat slots */
	bool dlq;                              /* reads dest->dlq_url */
	char claimed_by[LEDGER_CLAIMED_BY_MAX]; /* unique per worker and process */
	PGconn *conn;                          /* owned; NULL while disconnected */
	struct aws_http *sqs;                  /* owned */
	int backoff_failures;                  /* receive/connect failures in a row */
	int gate_failures;                     /* gate openings without a clean batch since */
	int probe_refusals;                    /* refused probes of consumer_worker_gate() in a row */
	bool db_failed;                        /* a database error in the current batch */
	/* The last success completion's commit()s ran statements: the next
	 * one locks its claims before the first commit() (consumer/complete.c) */
	bool commit_writes;
	pthread_t thread;
	bool started;                          /* joinable: false once abandoned (detached) */
	atomic_ullong state;                   /* calls << 2 | enum worker_phase */
	atomic_size_t handler_slot;            /* the slot in execute(), set before IN_HANDLER */
	/* Where deletions and visibility changes go: the SQS port of the
	 * worker's queue (dest->queue_url, or dest->dlq_url for a DLQ reader)
	 * in the daemon, another port in consumer_runner.  Deletions wait in
	 * the port for one DeleteMessageBatch; handles borrowed from the
	 * receive batch being processed. */
	struct consumer_port port;
	struct consumer_sqs_port sqs_port; /* used when uses_sqs */
	bool uses_sqs;                     /* false: no SQS client is made */
	struct consumer_counters counters; /* this worker's, written by its thread */
	int64_t batch_received_ms;         /* CLOCK_MONOTONIC of the current receive */
	/* outboxctl pause, as last read (consumer/pause.c): paused, and when
	 * it was read (CLOCK_MONOTONIC ms; 0: never). */
	bool paused;
	int64_t pause_read_ms;
	/* Borrowed from the consumer, one per destination (NULL: none): held
	 * around ReceiveMessage, so one worker of a queue polls at a time and
	 * gets every message waiting (up to 10) instead of all of them waking
	 * for the same few (docs/consumer.md, "Threads"). */
	pthread_mutex_t *receive_lock;
	/* Borrowed from the consumer, one per destination (NULL: none): the
	 * destination's arrival rate, calls in flight and handler duration
	 * (consumer/loop.c, consumer/control.c). */
	struct consumer_pace *pace;
	/* Owned: the pipeline's arrays, sized by [consumer] claim_max, made
	 * at the first batch (consumer/batch.h). */
	struct batch_scratch *scratch;
};

/* A destination's pacing: how fast messages arrive (consumer/loop.c,
 * under its receive lock), how many handler calls run and may run at once
 * (consumer/control.c, under the consumer's lock), and how long a handler
 * call takes (consumer/batch.c writes it, loop.c reads it). */
struct consumer_pace {
	double rate;       /* messages per ms, smoothed */
	int64_t last_ms;   /* CLOCK_MONOTONIC of the last receive's answer */
	size_t last_n;     /* what it brought */
	int full_waited;   /* receives in a row that waited and came back full */
	int in_flight;     /* execute() calls running now */
	int max_in_flight; /* at most; [destination] max_in_flight, else workers */
	atomic_llong handler_ms; /* smoothed execute() duration; 0: none measured */
};

struct consumer {
	const struct cfg *cfg;                       /* borrowed */
	struct consumer_services *svc;               /* borrowed */
	char *instance_id;                           /* owned */
	struct aws_env env;                          /* owned */
	struct heartbeat *hb;                        /* owned */
	/* Owned; n_workers in use of max_workers: the spares are for the
	 * replacements of abandoned workers (CONSUMER_MAX_ABANDONED), so an
	 * abandoned thread's element never moves. */
	struct consumer_worker *workers;
	size_t max_workers;
	pthread_mutex_t *receive_locks;              /* owned; one per destination */
	struct consumer_pace *paces;                 /* owned; one per destination */
	/* Owned; NULL when [consumer] linger_max_ms = 0: the destinations'
	 * shared deletions (consumer/delete_pool.h). */
	struct delete_pools *delete_pools;
	size_t n_workers;        /* grows only in the watch thread, read after it is joined */
	size_t n_replaced;       /* replacements started */
	pthread_t watch;         /* abandons hung handlers (consumer/consumer.c) */
	bool watch_started;
	atomic_bool stopping;
	pthread_mutex_t lock;                        /* guards busy; with cond */
	pthread_cond_t cond;                         /* stop requested / busy changed */
	int busy;                                    /* handlers between claim and completion */
	atomic_long terminal_skips;                  /* rule 2 deletions, for tests and benches */
	/* A statement failed (consumer_worker_db_failed) and no probe has
	 * passed since: nobody receives (consumer_worker_gate). */
	atomic_bool db_trouble;
};

#endif
