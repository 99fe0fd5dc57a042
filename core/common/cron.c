/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/cron.c: see common/cron.h.
 */
#include "common/cron.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct field {
	const char *name;
	int lo, hi;
	const char *const *names; /* names[i] is value lo + i; NULL: none */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const weekday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

static const struct field fields[5] = {
	{"minute", 0, 59, NULL},
	{"hour", 0, 23, NULL},
	{"day-of-month", 1, 31, NULL},
	{"month", 1, 12, month_names},
	{"day-of-week", 0, 7, weekday_names},
};

static const struct {
	const char *name, *expansion;
} macros[] = {
	{"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
	{"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
	{"@hourly", "0 * * * *"},
};

#define FIELD_MAX 64 /* one field's text at most */

/* A number or a name of field f at *s; advances *s.  -1 with err. */
static int value(const struct field *f, int idx, const char **s, int *out, char *err, size_t errlen)
{
	const char *p = *s;
	long v = 0;
	int n = 0;

	if (*p >= '0' && *p <= '9') {
		while (*p >= '0' && *p <= '9' && n < 4) {
			v = v * 10 + (*p++ - '0');
			n++;
		}
		if ((*p >= '0' && *p <= '9') || v < f->lo || v > f->hi) {
			snprintf(err, errlen, "field %d (%s): %.8s is out of range %d-%d", idx + 1, f->name,
			         *s, f->lo, f->hi);
			return -1;
		}
	} else {
		int count = f->hi - f->lo + 1 - (f->names == weekday_names);

		for (n = 0; f->names != NULL && n < count; n++) {
			if (strncasecmp(p, f->names[n], 3) == 0)
				break;
		}
		if (f->names == NULL || n == count) {
			snprintf(err, errlen, "field %d (%s): unexpected \"%.8s\"", idx + 1, f->name, p);
			return -1;
		}
		v = f->lo + n;
		p += 3;
	}
	*out = (int)v;
	*s = p;
	return 0;
}

/* One element of a list: "*", "a", "a-b", each with an optional "/step". */
static int element(const struct field *f, int idx, const char *s, uint64_t *bits, char *err,
                   size_t errlen)
{
	int lo = f->lo, hi = f->hi, step = 1;

	if (*s == '*') {
		s++;
	} else {
		if (value(f, idx, &s, &lo, err, errlen) < 0)
			return -1;
		hi = lo;
		if (*s == '-') {
			s++;
			if (value(f, idx, &s, &hi, err, errlen) < 0)
				return -1;
			if (hi < lo) {
				snprintf(err, errlen, "field %d (%s): range %d-%d runs backwards", idx + 1,
				         f->name, lo, hi);
				return -1;
			}
		} else if (*s == '/') {
			hi = f->hi; /* "a/n": from a to the end, as Vixie cron reads it */
		}
	}
	if (*s == '/') {
		const char *p = ++s;

		step = 0;
		while (*p >= '0' && *p <= '9' && step <= f->hi)
			step = step * 10 + (*p++ - '0');
		if (p == s || *p != '\0' || step < 1 || step > f->hi) {
			snprintf(err, errlen, "field %d (%s): step \"%.8s\" must be a number from 1 to %d",
			         idx + 1, f->name, s, f->hi);
			return -1;
		}
		s = p;
	}
	if (*s != '\0') {
		snprintf(err, errlen, "field %d (%s): unexpected \"%.8s\"", idx + 1, f->name, s);
		return -1;
	}
	for (int v = lo; v <= hi; v += step)
		*bits |= 1ULL << v;
	return 0;
}

/* A whole field (a comma-separated list) into bits. */
static int field(int idx, const char *text, size_t len, uint64_t *bits, char *err, size_t errlen)
{
	char buf[FIELD_MAX + 1], *item, *next;

	if (len > FIELD_MAX) {
		snprintf(err, errlen, "field %d (%s) is longer than %d bytes", idx + 1, fields[idx].name,
		         FIELD_MAX);
		return -1;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	*bits = 0;
	for (item = buf; item != NULL; item = next) {
		next = strchr(item, ',');
		if (next != NULL)
			*next++ = '\0';
		if (*item == '\0') {
			snprintf(err, errlen, "field %d (%s): empty list element", idx + 1, fields[idx].name);
			return -1;
		}
		if (element(&fields[idx], idx, item, bits, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int days_in_month(int month) /* February as in a leap year */
{
	static const int d[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return d[month];
}

/* Only the day of the month restricts the day: some month must have one. */
static int check_possible(const struct cron *c, char *err, size_t errlen)
{
	int first_day = 0, first_month = 0;

	if (c->days_any || !c->weekdays_any)
		return 0;
	for (int m = 1; m <= 12; m++) {
		if (!(c->months >> m & 1))
			continue;
		first_month = first_month ? first_month : m;
		for (int d = 1; d <= days_in_month(m); d++) {
			if (c->days >> d & 1)
				return 0;
		}
	}
	for (first_day = 1; !(c->days >> first_day & 1); first_day++)
		;
	snprintf(err, errlen, "never fires: day %d (or any later day given) never comes in %s",
	         first_day, month_names[first_month - 1]);
	return -1;
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int cron_parse(const char *text, struct cron *out, char *err, size_t errlen)
{
	uint64_t bits[5];
	const char *s = skip_space(text);
	int n = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; *s == '@' && i < sizeof(macros) / sizeof(macros[0]); i++) {
		if (strcasecmp(s, macros[i].name) == 0)
			return cron_parse(macros[i].expansion, out, err, errlen);
	}
	if (*s == '@') {
		snprintf(err, errlen, "unknown macro \"%.20s\"", s);
		return -1;
	}
	while (*s != '\0') {
		size_t len = strcspn(s, " \t");

		if (n == 5) {
			snprintf(err, errlen, "more than 5 fields (minute hour day-of-month month day-of-week)");
			return -1;
		}
		if (n == 2)
			out->days_any = *s == '*';
		if (n == 4)
			out->weekdays_any = *s == '*';
		if (field(n, s, len, &bits[n], err, errlen) < 0)
			return -1;
		n++;
		s = skip_space(s + len);
	}
	if (n != 5) {
		snprintf(err, errlen, "%d field%s, not 5 (minute hour day-of-month month day-of-week)", n,
		         n == 1 ? "" : "s");
		return -1;
	}
	out->minutes = bits[0];
	out->hours = (uint32_t)bits[1];
	out->days = (uint32_t)bits[2];
	out->months = (uint16_t)bits[3];
	/* weekday 7 is Sunday too */
	out->weekdays = (uint8_t)((bits[4] | bits[4] >> 7) & 0x7f);
	return check_possible(out, err, errlen);
}

static bool day_matches(const struct cron *c, const struct tm *tm)
{
	bool dom = c->days >> tm->tm_mday & 1, dow = c->weekdays >> tm->tm_wday & 1;

	if (c->days_any && c->weekdays_any)
		return true;
	if (c->days_any)
		return dow;
	if (c->weekdays_any)
		return dom;
	return dom || dow;
}

int64_t cron_next(const struct cron *c, int64_t after)
{
	int64_t t = (after < 0 ? after - 59 : after) / 60 * 60 + 60;
	int64_t end = after + CRON_HORIZON_SECONDS;
	struct tm tm;

	while (t <= end) {
		time_t tt = (time_t)t;

		if (gmtime_r(&tt, &tm) == NULL)
			return -1;
		if (!(c->months >> (tm.tm_mon + 1) & 1)) {
			/* the first day of the next month (timegm carries December over) */
			struct tm next = {.tm_year = tm.tm_year, .tm_mon = tm.tm_mon + 1, .tm_mday = 1};

			t = (int64_t)timegm(&next);
		} else if (!day_matches(c, &tm)) {
			t += 86400 - tm.tm_hour * 3600 - tm.tm_min * 60;
		} else if (!(c->hours >> tm.tm_hour & 1)) {
			t += 3600 - tm.tm_min * 60;
		} else if (!(c->minutes >> tm.tm_min & 1)) {
			t += 60;
		} else {
			return t;
		}
	}
	return -1;
}
