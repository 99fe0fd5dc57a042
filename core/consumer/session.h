/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/session.h: a worker's session with its services: the database
 * connection and the SQS client (made when missing, dropped when lost),
 * the gate that stops receiving while the database refuses the consumer's
 * statements, transactions, and the operations on messages through the
 * worker's port (consumer/port.h).  The lowest step of the consumer: it
 * calls the ledger, the port and nothing above it.
 */
#ifndef OUTBOX_CORE_CONSUMER_SESSION_H
#define OUTBOX_CORE_CONSUMER_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "aws/sqs.h"
#include "common/compiler.h"
#include "config/config.h"
#include "consumer/ledger.h"
#include "consumer/worker.h"

/* Connect w->conn (and prepare the ledger) and w->sqs when missing.
 * Returns 0, or -1 (logged) after which the caller backs off. */
int consumer_worker_ensure(struct consumer_worker *w) OUTBOX_MUSTCHECK;
/* After any database error: close the connection if it is gone, so the
 * next ensure reconnects, and stop receiving until the database takes
 * statements again (consumer_worker_gate). */
void consumer_worker_db_failed(struct consumer_worker *w);
/*
 * Before a receive: 0 when the database is not known to refuse the
 * consumer's statements; else waits, probes (ledger_probe) and returns 0
 * when it passes, -1 (logged) when not, so that no message is received,
 * and no receive counted towards maxReceiveCount, while the database
 * cannot decide it.  The wait doubles from 0.5 s: to 5 s while probes are
 * refused, to 30 s while batches fail after probes that passed.
 */
int consumer_worker_gate(struct consumer_worker *w) OUTBOX_MUSTCHECK;
/* After a receive batch of n messages was handled. */
void consumer_worker_batch_done(struct consumer_worker *w, size_t n_messages);
/* Sleep the current backoff (doubling, 0.5 s .. 30 s). */
void consumer_worker_backoff(struct consumer_worker *w);
/* The ReceiveMessage options of a main queue's consumer: ten messages,
 * the [consumer] visibility timeout, the long-poll wait unless !wait (a
 * receive joined to a full one asks without waiting), and no attribute but
 * "traceparent". */
struct sqs_receive_options consumer_receive_options(const struct cfg *cfg, bool wait);
/* ensure + ReceiveMessage (consumer_receive_options, at most max messages,
 * 1..10, every attribute for a DLQ reader) from queue_url into *msgs; on
 * failure logs, backs off, frees *msgs and returns -1. */
int consumer_worker_receive(struct consumer_worker *w, const char *queue_url, int max,
                            struct sqs_messages *msgs) OUTBOX_MUSTCHECK;
/* Queue / flush deletions through w->port. */
void consumer_worker_delete(struct consumer_worker *w, const struct sqs_message *m);
void consumer_worker_flush_deletes(struct consumer_worker *w);
/* m's visibility timeout to seconds (capped); 0, or -1 logged with job_id. */
int consumer_worker_set_visibility(struct consumer_worker *w, const struct sqs_message *m,
                                   int seconds, const char *job_id);
/* The job was given back but its message could not be moved: its outbox
 * event re-armed, so the relay publishes it again; logged. */
void consumer_worker_rearm(struct consumer_worker *w, const struct ledger_claim *claim);
/* Makes m visible again at once (a message not handled at shutdown). */
void consumer_worker_give_back(struct consumer_worker *w, const struct sqs_message *m);
/* BEGIN / COMMIT / ROLLBACK on w->conn; 0 or -1 with err. */
int consumer_tx(struct consumer_worker *w, const char *verb, char *err, size_t errlen)
	OUTBOX_MUSTCHECK;

#endif
