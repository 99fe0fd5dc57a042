/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * schedule/slots.c: see schedule/slots.h.
 *
 * A zone's cron slots are found on its wall clock: both ends of the
 * interval are converted to wall-clock seconds, cron_next() walks between
 * them, and the slots found are converted back.  A wall-clock time that
 * does not exist (the hour a clock goes forward) comes back as PostgreSQL
 * reads it, an hour later; two slots of the repeated hour that map to one
 * time are one slot.
 */
#include "schedule/slots.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db.h"

/* Wall-clock seconds of the zone for UTC times, and back, in one statement
 * each; $1 is an array of bigints. */
static const char to_wall_sql[] =
	"SELECT array_agg(extract(epoch FROM to_timestamp(t) AT TIME ZONE $2)::bigint ORDER BY o)"
	"  FROM unnest($1::bigint[]) WITH ORDINALITY AS u(t, o)";
static const char to_utc_sql[] =
	"SELECT array_agg(extract(epoch FROM (to_timestamp(t) AT TIME ZONE 'UTC') AT TIME ZONE $2)"
	"                 ::bigint ORDER BY o)"
	"  FROM unnest($1::bigint[]) WITH ORDINALITY AS u(t, o)";

/* Converts t[0..n) in place with sql (to_wall_sql or to_utc_sql). */
static int convert(PGconn *conn, const char *sql, const char *zone, int64_t *t, int n,
                   char *err, size_t errlen)
{
	size_t cap = (size_t)n * 22 + 3;
	char *arr = malloc(cap), *p;
	const char *params[2] = {arr, zone};
	PGresult *res;
	int i = 0, len = 0;

	if (arr == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p = arr;
	*p++ = '{';
	for (i = 0; i < n; i++)
		p += snprintf(p, cap - (size_t)(p - arr), "%s%" PRId64, i ? "," : "", t[i]);
	snprintf(p, cap - (size_t)(p - arr), "}");
	res = db_query(conn, sql, 2, params, err, errlen);
	free(arr);
	if (res == NULL)
		return -1;
	p = PQgetvalue(res, 0, 0);
	for (i = 0, p += *p == '{'; i < n && sscanf(p, "%" SCNd64 "%n", &t[i], &len) == 1; i++)
		p += len + 1;
	PQclear(res);
	if (i != n) {
		snprintf(err, errlen, "could not convert times of time zone \"%s\"", zone);
		return -1;
	}
	return 0;
}

/* out[0..max) was filled as a ring by `total` slots: the latest in order. */
static int unring(int64_t *out, int max, long total)
{
	long start = total > max ? total % max : 0;
	int64_t *copy;

	if (total <= max || start == 0)
		return total < max ? (int)total : max;
	copy = malloc((size_t)max * sizeof(*copy));
	if (copy == NULL)
		return -1;
	for (int i = 0; i < max; i++)
		copy[i] = out[(start + i) % max];
	memcpy(out, copy, (size_t)max * sizeof(*copy));
	free(copy);
	return max;
}

static void every_slots(int64_t every, int64_t after, int64_t upto, int64_t *out, int max,
                        int *n)
{
	int64_t first = (after >= 0 ? after / every : (after - every + 1) / every) * every + every;
	int64_t last = (upto >= 0 ? upto / every : (upto - every + 1) / every) * every;

	if (last < first)
		return;
	if ((last - first) / every >= max)
		first = last - (int64_t)(max - 1) * every;
	for (int64_t t = first; t <= last; t += every)
		out[(*n)++] = t;
}

int schedule_slots_between(PGconn *conn, const struct cfg_schedule *s, int64_t after,
                           int64_t upto, int64_t *out, int max, int *n,
                           char *err, size_t errlen)
{
	int64_t ends[2] = {after, upto}, t;
	long total = 0;
	int kept;

	*n = 0;
	if (s->every_seconds > 0) {
		every_slots(s->every_seconds, after, upto, out, max, n);
		return 0;
	}
	if (s->timezone != NULL && convert(conn, to_wall_sql, s->timezone, ends, 2, err, errlen) < 0)
		return -1;
	for (t = cron_next(&s->cron_expr, ends[0]); t >= 0 && t <= ends[1];
	     t = cron_next(&s->cron_expr, t))
		out[total++ % max] = t;
	kept = unring(out, max, total);
	if (kept < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (s->timezone != NULL && kept > 0
	    && convert(conn, to_utc_sql, s->timezone, out, kept, err, errlen) < 0)
		return -1;
	/* back in UTC, a slot may repeat (or, at the edges, fall outside) */
	for (int i = 0; i < kept; i++) {
		if (out[i] > after && out[i] <= upto && (*n == 0 || out[i] > out[*n - 1]))
			out[(*n)++] = out[i];
	}
	return 0;
}

int schedule_next_slot(PGconn *conn, const struct cfg_schedule *s, int64_t after,
                       int64_t *out, char *err, size_t errlen)
{
	int64_t t = after;

	if (s->every_seconds > 0) {
		*out = (after >= 0 ? after / s->every_seconds
		                   : (after - s->every_seconds + 1) / s->every_seconds)
		       * s->every_seconds + s->every_seconds;
		return 0;
	}
	if (s->timezone != NULL && convert(conn, to_wall_sql, s->timezone, &t, 1, err, errlen) < 0)
		return -1;
	/* a wall-clock slot that maps back to a time not after `after` (the
	 * repeated hour) is passed over */
	for (int guard = 0; guard < 4; guard++) {
		int64_t u;

		t = cron_next(&s->cron_expr, t);
		if (t < 0 || s->timezone == NULL) {
			*out = t;
			return 0;
		}
		u = t;
		if (convert(conn, to_utc_sql, s->timezone, &u, 1, err, errlen) < 0)
			return -1;
		if (u > after) {
			*out = u;
			return 0;
		}
	}
	*out = -1;
	return 0;
}

void schedule_slot_text(int64_t t, char out[SCHEDULE_SLOT_TEXT_LEN])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL || strftime(out, SCHEDULE_SLOT_TEXT_LEN,
	                                           "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, SCHEDULE_SLOT_TEXT_LEN, "invalid");
}
