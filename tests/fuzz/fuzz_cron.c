/*
 * fuzz_cron.c: libFuzzer harness for the cron expression parser and the
 * next-slot search (core/common/cron.c, docs/configuration.md
 * "[schedule:NAME]"), which read relay.ini's text.
 *
 * The input is the expression (at most 256 bytes, NUL-terminated here).
 * An accepted expression must give, from a few starting times, a next slot
 * that is later, on a whole minute, and matched by every field; one that
 * the parser called possible must have a slot within the search horizon.
 * A violation aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_cron: violated: %s\n", what);
		abort();
	}
}

static void check_slot(const struct cron *c, int64_t after)
{
	int64_t t = cron_next(c, after);
	time_t tt = (time_t)t;
	struct tm tm;
	int dom, dow, day;

	require(t > after, "a next slot later than the start");
	require(t % 60 == 0, "the slot is a whole minute");
	require(gmtime_r(&tt, &tm) != NULL, "the slot is a time");
	require(c->minutes >> tm.tm_min & 1, "the minute matches");
	require(c->hours >> tm.tm_hour & 1, "the hour matches");
	require(c->months >> (tm.tm_mon + 1) & 1, "the month matches");
	dom = c->days >> tm.tm_mday & 1;
	dow = c->weekdays >> tm.tm_wday & 1;
	day = c->days_any && c->weekdays_any ? 1 : c->days_any ? dow : c->weekdays_any ? dom : dom || dow;
	require(day, "the day matches");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int64_t starts[] = {0, 951782400 /* 2000-02-29 */, 1796169600, 4102444799};
	char text[257], err[256];
	struct cron c;

	if (size > 256)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (cron_parse(text, &c, err, sizeof(err)) != 0) {
		require(err[0] != '\0', "a refusal says why");
		return 0;
	}
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
		check_slot(&c, starts[i]);
	return 0;
}
