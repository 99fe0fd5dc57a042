/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/suspect_turn.h: the process's one suspect run (docs/outboxd.md,
 * "Quarantine").  A suspect -- a job that was running when a process
 * died -- runs only while no other suspect's run does, in any consumer of
 * the process, from the record of its start until its completion.  So a
 * process that dies counts a crash for at most one suspect.  Without the
 * turn, the jobs of one crash reappear together after the restart, run
 * side by side again, and an innocent job that ran beside a poison job
 * would reach the quarantine with it.
 *
 * The wait is bounded (SUSPECT_TURN_WAIT_MAX_MS): a suspect that runs
 * long, or hangs until the watch abandons it, must not stall the others,
 * which hold a call slot of their destination while they wait.  One that
 * waited that long runs beside the holder, and a crash then counts for
 * both, as it did before there was a turn; the log says so.
 *
 * The turn is taken after consumer_call_begin(), never before, so that no
 * holder ever waits for a call slot.
 */
#ifndef OUTBOX_CORE_CONSUMER_SUSPECT_TURN_H
#define OUTBOX_CORE_CONSUMER_SUSPECT_TURN_H

#include <stdbool.h>

#include "consumer/worker.h"

/* The longest a suspect waits for the turn before it runs beside the
 * holder. */
#define SUSPECT_TURN_WAIT_MAX_MS 30000

enum suspect_turn {
	SUSPECT_TURN_TAKEN,    /* w holds the turn: suspect_turn_give(w) after the run */
	SUSPECT_TURN_BESIDE,   /* waited SUSPECT_TURN_WAIT_MAX_MS; runs without it */
	SUSPECT_TURN_STOPPING, /* w's consumer is stopping: nothing taken, do not run */
};

/* Waits until no suspect runs, then takes the turn for w and its job
 * job_id (copied, for the log of a suspect that runs beside it). */
enum suspect_turn suspect_turn_take(const struct consumer_worker *w, const char *job_id);
/* Gives the turn back if w holds it; nothing otherwise (the watch takes it
 * from a worker it abandons: that job is back to PENDING by then, so a
 * crash would no longer count for it anyway). */
void suspect_turn_give(const struct consumer_worker *w);
/* Gives the turn back if a worker of c holds it: for a consumer freed, or
 * left behind with a handler that never returned. */
void suspect_turn_give_consumer(const struct consumer *c);
/* Wakes the waiters, so that those of a consumer that stops see it. */
void suspect_turn_wake(void);

#endif
