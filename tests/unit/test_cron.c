/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_cron.c: cron expressions (common/cron.h): what they match, the next
 * slot across months, leap years and both day fields, and the errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/cron.h"

/* "YYYY-MM-DD HH:MM" as UTC seconds */
static int64_t at(const char *s)
{
	struct tm tm = {0};

	assert_int_equal(sscanf(s, "%d-%d-%d %d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	                        &tm.tm_hour, &tm.tm_min), 5);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm);
}

static void expect_next(const char *expr, const char *after, const char *next)
{
	struct cron c;
	char err[256];

	if (cron_parse(expr, &c, err, sizeof(err)) != 0)
		fail_msg("\"%s\": %s", expr, err);
	if (cron_next(&c, at(after)) != at(next))
		fail_msg("\"%s\" after %s: expected %s, got %lld", expr, after, next,
		         (long long)cron_next(&c, at(after)));
}

static void expect_error(const char *expr, const char *fragment)
{
	struct cron c;
	char err[256] = "";

	if (cron_parse(expr, &c, err, sizeof(err)) == 0)
		fail_msg("\"%s\" was accepted", expr);
	if (strstr(err, fragment) == NULL)
		fail_msg("\"%s\": \"%s\" does not say \"%s\"", expr, err, fragment);
}

static void test_next(void **state)
{
	(void)state;
	expect_next("* * * * *", "2026-12-01 10:00", "2026-12-01 10:01");
	expect_next("*/15 * * * *", "2026-12-01 10:01", "2026-12-01 10:15");
	expect_next("0 9 * * 1-5", "2026-12-04 09:00", "2026-12-07 09:00"); /* Fri -> Mon */
	expect_next("30 2 1 * *", "2026-12-15 00:00", "2027-01-01 02:30");
	expect_next("0 0 29 2 *", "2026-03-01 00:00", "2028-02-29 00:00");
	expect_next("0 0 31 * *", "2026-04-01 00:00", "2026-05-31 00:00");
	expect_next("0 0 * 3 *", "2026-02-27 00:00", "2026-03-01 00:00"); /* not Feb 28 + 2 */
	expect_next("0 0 * 3 *", "2028-02-27 00:00", "2028-03-01 00:00"); /* leap year */
	/* both day fields restricted: either matches (the 13th, or a Friday) */
	expect_next("0 0 13 * 5", "2026-12-01 00:00", "2026-12-04 00:00");
	expect_next("0 0 13 * 5", "2026-12-11 00:00", "2026-12-13 00:00");
	/* a leading "*" leaves the field unrestricted: only Fridays */
	expect_next("0 0 */1 * 5", "2026-12-11 00:00", "2026-12-18 00:00");
	expect_next("0 12 * JAN,jul sun", "2026-12-01 00:00", "2027-01-03 12:00");
	expect_next("0 0 * * 7", "2026-12-01 00:00", "2026-12-06 00:00"); /* 7 is Sunday */
	expect_next("5/20 * * * *", "2026-12-01 10:06", "2026-12-01 10:25");
	expect_next("@hourly", "2026-12-01 10:00", "2026-12-01 11:00");
	expect_next("  @Daily", "2026-12-31 23:59", "2027-01-01 00:00");
	expect_next("0 0 1 1 *", "2026-12-31 23:59", "2027-01-01 00:00");
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("", "0 fields, not 5");
	expect_error("* * * *", "4 fields, not 5");
	expect_error("* * * * * *", "more than 5 fields");
	expect_error("60 * * * *", "field 1 (minute): 60 is out of range 0-59");
	expect_error("* 24 * * *", "field 2 (hour): 24 is out of range 0-23");
	expect_error("* * 0 * *", "field 3 (day-of-month): 0 is out of range 1-31");
	expect_error("* * * 13 *", "field 4 (month): 13 is out of range 1-12");
	expect_error("* * * * 8", "field 5 (day-of-week): 8 is out of range 0-7");
	expect_error("* * * FOO *", "field 4 (month): unexpected \"FOO\"");
	expect_error("*/0 * * * *", "step \"0\" must be a number from 1 to 59");
	expect_error("*/ * * * *", "step");
	expect_error("5-1 * * * *", "range 5-1 runs backwards");
	expect_error("1,,2 * * * *", "empty list element");
	expect_error("0 0 30 2 *", "day 30 (or any later day given) never comes in feb");
	expect_error("0 0 31 4,6,9,11 *", "never comes in apr");
	expect_error("@sometimes", "unknown macro");
	expect_error("99999999999 * * * *", "out of range");
	expect_error("1-2-3 * * * *", "unexpected \"-3\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
