/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/services.h: the database and S3 services the consumer lends to
 * plugins (struct plugin_host_services), and struct outbox_tx.
 *
 * consumer_services_create/_table/_free are declared in consumer.h.
 *
 *   query         read-only, on a connection private to the calling thread
 *                 (opened on first use, session default_transaction_read_only)
 *   tx_exec       in the job's completion transaction (outbox_tx)
 *   tx_enqueue    outbox_enqueue_job() in that same transaction
 *   artifact_get  S3 GetObject from [s3] bucket with a per-thread client
 */
#ifndef OUTBOX_CORE_CONSUMER_SERVICES_H
#define OUTBOX_CORE_CONSUMER_SERVICES_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "consumer/consumer.h"

/*
 * The transaction commit() runs in: the worker's connection with BEGIN
 * issued, or, when lazy is set, to be issued before the plugin's first
 * statement (began then tells it was): a completion whose commit()s write
 * nothing needs no transaction at all.  conn is borrowed from the worker.
 * tx_exec refuses transaction control (BEGIN, START, COMMIT, END,
 * ROLLBACK, ABORT, SAVEPOINT, RELEASE, PREPARE TRANSACTION) and checks
 * after every statement that the transaction is still open; a violation
 * sets ended and why, refuses every later statement, and the worker then
 * fails the job permanently.
 *
 * When savepoint is set (a batch completion: several jobs in one
 * transaction), the host sends SAVEPOINT outbox_job before the job's first
 * tx_exec/tx_enqueue statement (savepoint_taken), so the worker can roll
 * back this job's writes alone.
 */
struct outbox_tx {
	PGconn *conn;
	bool ended;     /* the plugin tried to end or split the transaction */
	char why[256];  /* what it did, when ended */
	bool savepoint;
	bool savepoint_taken;
	bool lazy;      /* BEGIN is sent before the first statement, unless began */
	bool began;     /* lazy, and BEGIN was sent */
};

/*
 * True when the transaction commit() ran in is no longer the host's: tx
 * ended, or conn is neither in the transaction nor in a failed one
 * (PQTRANS_INTRANS / PQTRANS_INERROR), or, lazy and not begun yet, not
 * idle (PQTRANS_IDLE).  Sets tx->why when it was not set.
 */
bool consumer_tx_violated(struct outbox_tx *tx);

/* Before each of the plugin's statements in tx: BEGIN when tx is lazy and
 * has not begun, and SAVEPOINT outbox_job once if tx->savepoint (in the
 * same round trip).  Returns 0, or -1 with err. */
int consumer_tx_prepare(struct outbox_tx *tx, char *err, size_t errlen) OUTBOX_MUSTCHECK;

#endif
