/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/liveness.h: how another process tells a dead consumer process
 * from a live one (docs/outboxd.md, "Quarantine").
 *
 * Each process has a random liveness key.  Its heartbeat connection and
 * every worker's connection hold the shared advisory lock
 * (LIVENESS_LOCK_SPACE_SQL, key) for as long as they are connected;
 * PostgreSQL drops the lock when the process dies and its connections
 * close.  A worker takes it before its first claim on a new connection, so
 * after a PostgreSQL restart its own claims never see this process's runs
 * as crashed, whichever of its connections comes back first.  A claim records the key in outbox.jobs.started_by
 * when the handler run starts; a later claim that finds the lock gone
 * counts a crash (consumer/ledger.c, RUN_CRASHED).  A process cut off
 * from PostgreSQL for a whole lease looks dead too: its claims lapse
 * either way.
 */
#ifndef OUTBOX_CORE_CONSUMER_LIVENESS_H
#define OUTBOX_CORE_CONSUMER_LIVENESS_H

#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"

/* The first key of the two-key advisory lock ('obxd'), as SQL text. */
#define LIVENESS_LOCK_SPACE_SQL "1868724324"

/* This process's key: 1..2^31-1, random, the same for the process's life. */
int liveness_key(void);

/* Takes this process's shared liveness lock on conn (session level; taking
 * it again on the same connection is harmless).  Returns 0 or -1 with err. */
int liveness_hold(PGconn *conn, char *err, size_t errlen) OUTBOX_MUSTCHECK;

#endif
