/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/pause.h: a paused destination (outboxctl pause DEST; docs/
 * outboxd.md, "Pausing a destination").
 *
 * The row in outbox.paused_destinations is the authority; each worker
 * reads it at most every CONSUMER_PAUSE_READ_MS, so every instance obeys
 * within about a second.  While paused a worker receives nothing and
 * claims nothing; messages a receive returned after the pause took effect
 * are left for later (visibility extended), never deleted.
 */
#ifndef OUTBOX_CORE_CONSUMER_PAUSE_H
#define OUTBOX_CORE_CONSUMER_PAUSE_H

#include <stdbool.h>

#include "aws/sqs.h"
#include "consumer/ledger.h"
#include "consumer/worker.h"

#define CONSUMER_PAUSE_READ_MS 1000

/* Is w's destination paused?  Reads the database when the last reading
 * is older than CONSUMER_PAUSE_READ_MS (and w is connected); on a
 * database error the last reading stands.  Logs each change. */
bool consumer_paused(struct consumer_worker *w);

/* Leaves every message of msgs (borrowed) for later: its visibility is set
 * to visibility_timeout_seconds again, so it is received after the pause
 * is lifted, not dead-lettered meanwhile by a receive loop. */
void consumer_leave_paused(struct consumer_worker *w, const struct sqs_messages *msgs);

#endif
