/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * schedule/scheduler.h: the periodic jobs of [schedule:NAME] inside outboxd
 * (docs/configuration.md, "[schedule:NAME]").
 *
 * One thread per process with its own connection, started only when the
 * file has schedules.  One instance at a time enqueues, across all the
 * outboxd processes of a database: the one whose session holds the
 * advisory lock (SCHEDULE_LOCK_CLASS, SCHEDULE_LOCK_OBJECT); the others try
 * to take it every second, so when the holder dies (its session ends and
 * PostgreSQL releases the lock) or stops, another takes over within about
 * a second.  Each slot is enqueued as the job of identity {"schedule":
 * NAME, "slot": "<RFC 3339 UTC>"}, so a slot enqueued twice (by two
 * instances, across a takeover) is still one job; outbox.schedules keeps
 * each schedule's last slot for the next holder.  An instance that takes
 * the lock applies catch_up to the slots that passed since; while it holds
 * it, it enqueues every slot, however late its wake-up.
 */
#ifndef OUTBOX_CORE_SCHEDULE_SCHEDULER_H
#define OUTBOX_CORE_SCHEDULE_SCHEDULER_H

#include "common/compiler.h"
#include "config/config.h"

/* pg_try_advisory_lock(SCHEDULE_LOCK_CLASS, SCHEDULE_LOCK_OBJECT) */
#define SCHEDULE_LOCK_CLASS 0x6f627873 /* "obxs" */
#define SCHEDULE_LOCK_OBJECT 1

struct scheduler;

/*
 * Starts the thread when cfg has schedules (else *out is NULL and nothing
 * runs).  cfg is borrowed and must outlive scheduler_stop(); instance_id is
 * copied.  Returns 0, or -1 (logged).
 */
int scheduler_start(const struct cfg *cfg, const char *instance_id,
                    struct scheduler **out) OUTBOX_MUSTCHECK;

/* Stops the thread (a statement in progress finishes), releases the lock
 * and frees s.  NULL is a no-op. */
void scheduler_stop(struct scheduler *s);

#endif
