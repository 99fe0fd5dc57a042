/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * schedule/slots.h: the slot times of a [schedule:NAME] (docs/configuration.md).
 *
 * Times are UTC seconds since the epoch.  every = N: the multiples of N.
 * cron: common/cron.h, read in UTC or in the schedule's time zone; for a
 * zone, PostgreSQL converts between UTC and the zone's wall clock (its zone
 * rules are the ones the database's now() is read with), so these
 * functions take a connection; without a zone they never use it.
 */
#ifndef OUTBOX_CORE_SCHEDULE_SLOTS_H
#define OUTBOX_CORE_SCHEDULE_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "common/compiler.h"
#include "config/config.h"

/* "2026-12-01T23:05:00Z" and its NUL */
#define SCHEDULE_SLOT_TEXT_LEN 21

/*
 * The slots of s (borrowed) in (after, upto], oldest first: the latest
 * `max` of them into out[0..*n).  conn (borrowed) is used only for a time
 * zone.  Returns 0, or -1 with err set.
 */
int schedule_slots_between(PGconn *conn, const struct cfg_schedule *s, int64_t after,
                           int64_t upto, int64_t *out, int max, int *n,
                           char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* The first slot of s after `after` into *out (-1: none within the cron
 * horizon).  Returns 0, or -1 with err set. */
int schedule_next_slot(PGconn *conn, const struct cfg_schedule *s, int64_t after,
                       int64_t *out, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* A slot time as RFC 3339 UTC, the "slot" of the job's identity. */
void schedule_slot_text(int64_t t, char out[SCHEDULE_SLOT_TEXT_LEN]);

#endif
