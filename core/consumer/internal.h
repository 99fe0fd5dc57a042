/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/internal.h: what consumer.c, consumer/worker.c and
 * consumer/dlq.c share.  Not for other parts of the core: they use
 * consumer.h.
 */
#ifndef OUTBOX_CORE_CONSUMER_INTERNAL_H
#define OUTBOX_CORE_CONSUMER_INTERNAL_H

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
#include "consumer/runner.h"
#include "consumer/heartbeat.h"
#include "consumer/ledger.h"
#include "aws/sqs.h"

struct consumer_worker {
	struct consumer *c;                    /* borrowed: the owner */
	const struct cfg_destination *dest;    /* borrowed from cfg */
	struct plugin_instance *inst;          /* borrowed; NULL for a DLQ reader */
	size_t slot;                           /* first of its [consumer] claim_max heartbeat slots */
	bool dlq;                              /* reads dest->dlq_url */
	char claimed_by[LEDGER_CLAIMED_BY_MAX]; /* unique per worker and process */
	PGconn *conn;                          /* owned; NULL while disconnected */
	struct aws_http *sqs;                  /* owned */
	int backoff_ms;                        /* next reconnect/receive backoff */
	int db_backoff_ms;                     /* next wait of consumer_worker_gate() */
	bool db_failed;                        /* a database error in the current batch */
	pthread_t thread;
	bool started;
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
	/* Borrowed from the consumer, one per destination, guarded by
	 * receive_lock: the destination's arrival rate (consumer/loop.c). */
	struct consumer_pace *pace;
	/* The receipt handles (borrowed from the receive batch) of the
	 * messages left to the per-message rules that wait behind the one
	 * being processed: its heartbeat keeps them visibility-fresh too.
	 * None outside a batch, and in consumer_runner. */
	const char *waiting[SQS_MAX_BATCH_ENTRIES];
	size_t n_waiting;
};

/* A destination's receive pacing (consumer/loop.c), under its receive lock. */
struct consumer_pace {
	double rate;       /* messages per ms, smoothed */
	int64_t last_ms;   /* CLOCK_MONOTONIC of the last receive's answer */
	size_t last_n;     /* what it brought */
};

struct consumer {
	const struct cfg *cfg;                       /* borrowed */
	struct consumer_services *svc;               /* borrowed */
	char *instance_id;                           /* owned */
	struct aws_env env;                          /* owned */
	struct heartbeat *hb;                        /* owned */
	struct consumer_worker *workers;             /* owned; n_workers */
	pthread_mutex_t *receive_locks;              /* owned; one per destination */
	struct consumer_pace *paces;                 /* owned; one per destination */
	size_t n_workers;
	atomic_bool stopping;
	pthread_mutex_t lock;                        /* guards busy; with cond */
	pthread_cond_t cond;                         /* stop requested / busy changed */
	int busy;                                    /* handlers between claim and completion */
	atomic_long terminal_skips;                  /* rule 2 deletions, for tests and benches */
	/* A statement failed (consumer_worker_db_failed) and no probe has
	 * passed since: nobody receives (consumer_worker_gate). */
	atomic_bool db_trouble;
};

/* Thread bodies. */
void *consumer_worker_main(void *arg);
void *consumer_dlq_main(void *arg);

/* True once consumer_stop() began. */
bool consumer_stopping(struct consumer *c);
/* Sleep ms or until stop is requested; returns consumer_stopping(). */
bool consumer_sleep(struct consumer *c, int ms);
/* Count a handler in (+1) or out (-1) for the shutdown wait. */
void consumer_busy(struct consumer *c, int delta);

/* Connect w->conn (and prepare the ledger) and w->sqs when missing.
 * Returns 0, or -1 (logged) after which the caller backs off. */
int consumer_worker_ensure(struct consumer_worker *w) OUTBOX_MUSTCHECK;
/* After any database error: close the connection if it is gone, so the
 * next ensure reconnects, and stop receiving until the database takes
 * statements again (consumer_worker_gate). */
void consumer_worker_db_failed(struct consumer_worker *w);
/*
 * Before a receive: 0 when the database is not known to refuse the
 * consumer's statements; else waits (doubling 0.5 s .. 30 s), probes
 * (ledger_probe) and returns 0 when it passes, -1 (logged) when not, so
 * that no message is received, and no receive counted towards
 * maxReceiveCount, while the database cannot decide it.
 */
int consumer_worker_gate(struct consumer_worker *w) OUTBOX_MUSTCHECK;
/* After a receive batch of n messages was handled. */
void consumer_worker_batch_done(struct consumer_worker *w, size_t n_messages);
/* Sleep the current backoff (doubling, 0.5 s .. 30 s). */
void consumer_worker_backoff(struct consumer_worker *w);
/* ensure + ReceiveMessage (consumer.* options) from queue_url into *msgs;
 * on failure logs, backs off, frees *msgs and returns -1. */
int consumer_worker_receive(struct consumer_worker *w, const char *queue_url,
                            struct sqs_messages *msgs) OUTBOX_MUSTCHECK;
/* Queue / flush deletions through w->port. */
void consumer_worker_delete(struct consumer_worker *w, const struct sqs_message *m);
void consumer_worker_flush_deletes(struct consumer_worker *w);
/* Spec section 4 for one delivery m (borrowed until the next flush). */
void consumer_worker_process(struct consumer_worker *w, const struct sqs_message *m);
/* RETRY (back to PENDING with backoff, visibility moved) or FAIL (DEAD
 * PERMANENT, message deleted) of a claim this worker holds; m and claim
 * borrowed. */
void consumer_worker_retry(struct consumer_worker *w, const struct sqs_message *m,
                           const struct ledger_claim *claim, const char *why);
void consumer_worker_fail(struct consumer_worker *w, const struct sqs_message *m,
                          const struct ledger_claim *claim, const char *why);
/* Shutdown before the handler ran: the claim back to PENDING (due now),
 * the message visible at once, else the outbox event re-armed. */
void consumer_worker_release(struct consumer_worker *w, const struct sqs_message *m,
                             const struct ledger_claim *claim);
/* Makes m visible again at once (a message not handled at shutdown). */
void consumer_worker_give_back(struct consumer_worker *w, const struct sqs_message *m);
/* BEGIN / COMMIT / ROLLBACK on w->conn; 0 or -1 with err. */
int consumer_tx(struct consumer_worker *w, const char *verb, char *err, size_t errlen)
	OUTBOX_MUSTCHECK;

#endif
