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
 * The turn is taken after consumer_call_begin(), never before: its holder
 * never waits for anything but its own run.
 */
#ifndef OUTBOX_CORE_CONSUMER_SUSPECT_TURN_H
#define OUTBOX_CORE_CONSUMER_SUSPECT_TURN_H

#include <stdbool.h>

#include "consumer/worker.h"

/* Waits until no suspect runs, then takes the turn for w; false (nothing
 * taken) when w's consumer is stopping first.  Every true is followed by
 * suspect_turn_give(w). */
bool suspect_turn_take(const struct consumer_worker *w);
/* Gives the turn back if w holds it; nothing otherwise (the watch takes it
 * from a worker it abandons). */
void suspect_turn_give(const struct consumer_worker *w);
/* Gives the turn back if a worker of c holds it: for a consumer freed, or
 * left behind with a handler that never returned. */
void suspect_turn_give_consumer(const struct consumer *c);
/* Wakes the waiters, so that those of a consumer that stops see it. */
void suspect_turn_wake(void);

#endif
