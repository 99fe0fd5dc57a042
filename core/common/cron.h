/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/cron.h: cron expressions, "MIN HOUR DOM MON DOW" (docs/configuration.md,
 * "[schedule:NAME]").
 *
 * The five fields of Vixie cron: numbers, ranges "a-b", steps "*\/n" and
 * "a-b/n" (and "a/n": a to the field's end), lists "a,b", month and weekday
 * names (JAN..DEC, SUN..SAT, any case), weekday 7 = Sunday, and the macros
 * @yearly @annually @monthly @weekly @daily @midnight @hourly.  When both
 * day fields are restricted a day matches either (as in Vixie cron); a day
 * field written with a leading "*" counts as unrestricted.
 *
 * Times are seconds since 1970-01-01 00:00 in the calendar the expression
 * is read in (UTC, or the wall clock of a time zone that the caller
 * converts to and from): this file never looks at a time zone.  The parser
 * reads untrusted text (relay.ini); tests/fuzz/fuzz_cron.c runs it.
 */
#ifndef OUTBOX_CORE_COMMON_CRON_H
#define OUTBOX_CORE_COMMON_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/compiler.h"

struct cron {
	uint64_t minutes;   /* bit m: minute m, 0..59 */
	uint32_t hours;     /* bit h: hour h, 0..23 */
	uint32_t days;      /* bit d: day of the month d, 1..31 */
	uint16_t months;    /* bit m: month m, 1..12 */
	uint8_t weekdays;   /* bit w: weekday w, 0 = Sunday .. 6 */
	bool days_any;      /* the day-of-month field starts with "*" */
	bool weekdays_any;  /* the day-of-week field starts with "*" */
};

/* A slot more than this far after the time asked about is "never". */
#define CRON_HORIZON_SECONDS (9LL * 366 * 86400)

/*
 * Parses text (borrowed) into *out.  Returns 0, or -1 with a message in err
 * naming the field and the problem ("field 2 (hour): 24 is out of range
 * 0-23"), also for an expression that can never fire ("day 30 never comes
 * in February").
 */
int cron_parse(const char *text, struct cron *out, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* The first whole minute strictly after `after` that c matches, or -1 if
 * there is none within CRON_HORIZON_SECONDS. */
int64_t cron_next(const struct cron *c, int64_t after);

#endif
