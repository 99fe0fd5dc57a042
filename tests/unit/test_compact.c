/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_compact.c: the compact size of a B-tree index that the pruner
 * compares an index with (maintenance/compact.h), against sizes measured
 * on PostgreSQL 15 right after REINDEX (docs/maintenance.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "maintenance/compact.h"

/* Within pct percent of what PostgreSQL built. */
static void expect_near(double tuples, const char *columns, double measured, double pct)
{
	double est = compact_size(tuples, columns, 90, 8192);

	if (fabs(est - measured) > measured * pct / 100.0)
		fail_msg("%.0f entries of \"%s\": estimated %.0f bytes, measured %.0f", tuples,
		         columns, est, measured);
}

static void test_measured(void **state)
{
	(void)state;
	/* jobs_pkey, outbox_events_job: 100,000 64-hex-digit job ids */
	expect_near(100000, "65:c", 9576448, 1);
	/* outbox_events_pkey: "news:<job id>:0" */
	expect_near(100000, "72:c", 9576448, 1);
	/* jobs_created (created_at, job_id) */
	expect_near(100000, "8:d,65:c", 10559488, 1);
	/* jobs_unfinished_due (destination, next_attempt_at), partial */
	expect_near(50347, "5:c,8:d", 1589248, 2);
}

static void test_shape(void **state)
{
	(void)state;
	/* 8-byte header + 8 = 16, + 4 line pointer: floor(8152 * 0.9 / 20) = 366 a page */
	assert_true(compact_size(366, "8:d", 90, 8192) == (1 * 1.01 + 2) * 8192);
	/* alignment: 8 + 5 = 13, padded to 16 for the timestamp, 24 + 4 */
	assert_true(compact_size(262, "5:c,8:d", 90, 8192) == (1 * 1.01 + 2) * 8192);
	assert_true(compact_size(263, "5:c,8:d", 90, 8192) == (2 * 1.01 + 2) * 8192);
	/* a lower fillfactor, a larger index */
	assert_true(compact_size(100000, "65:c", 50, 8192) > compact_size(100000, "65:c", 90, 8192));
	/* an empty index is its metapage and root */
	assert_true(compact_size(0, "65:c", 90, 8192) == 2 * 8192);
	/* text that is not a column list counts the header alone, never loops */
	assert_true(compact_size(366, "x", 90, 8192) == compact_size(366, "", 90, 8192));
	assert_true(compact_size(366, "8:", 90, 8192) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_measured),
		cmocka_unit_test(test_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
