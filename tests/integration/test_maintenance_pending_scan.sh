#!/bin/bash
# The scan of jobs_unfinished_due (core/maintenance/pending_scan.h): with
# autovacuum off on outbox.jobs, (a) the index entries of jobs that
# finished are marked dead by outboxd alone (pageinspect's dead flag), and
# (b) thirty rounds of 100 jobs that enter the index and finish, each
# round waiting for a scan that began after it committed, leave the index
# within two pages of its size before them: a full page frees its dead
# entries instead of splitting.  Without the scan the same rounds need a
# new page every ~200 jobs (15 or more).
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_maintenance_lib.sh"
require_pg
require_aws

setup_db "maint_pscan_$$"
make_queues "mps-$$-news" 10 2
m_ini "$TEST_TMP/m.ini" "$DB" "" "news $QURL $DLQURL"
first=$(enqueue_job "$DB" news 0)
jtype=$(psql_q "$DB" "SELECT job_type FROM outbox.jobs WHERE job_id = '$first'")
psql_q "$DB" "CREATE EXTENSION IF NOT EXISTS pageinspect;
	ALTER TABLE outbox.jobs SET (autovacuum_enabled = off)" >/dev/null

# ROUND: 100 jobs enqueued, then every PENDING job SUCCEEDED, as a
# consumer's claim and completion would leave them.  Each job due at its
# own time, as jobs enqueued in their own transactions are (jobs of one
# statement share now(): equal keys, which deduplication folds into one
# entry).  Like the completion, which
# finds its rows by job_id, the update must not read jobs_unfinished_due (an
# index scan there would flag the entries itself): a sequential scan.
round() {
	psql_q "$DB" "SELECT count(*) FROM (SELECT outbox.enqueue('$jtype', 'news',
		json_build_object('r', $1, 'g', g), '{}'::jsonb,
		run_at => now() + ($1 * 1000 + g) * interval '1 millisecond')
		FROM generate_series(1, 100) g) s" >/dev/null
	psql_q "$DB" "BEGIN;
		SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
		UPDATE outbox.jobs SET status = 'SUCCEEDED', finished_at = now() WHERE status = 'PENDING';
		COMMIT" >/dev/null
}
# Leaf entries of jobs_unfinished_due flagged dead (block 0 is the metapage).
dead_flagged() {
	psql_q "$DB" "SELECT coalesce(sum((SELECT count(*) FROM bt_page_items('outbox.jobs_unfinished_due', b)
		WHERE dead)), 0) FROM generate_series(1, pg_relation_size('outbox.jobs_unfinished_due') / 8192 - 1) b"
}
index_pages() { psql_q "$DB" "SELECT pg_relation_size('outbox.jobs_unfinished_due') / 8192"; }
scans() {
	psql_q "$DB" "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'jobs_unfinished_due'"
}
# Two more scans than $1: one of them began after the last round committed.
scanned_since() { [ "$(scans)" -ge $(( $1 + 2 )) ]; }
flagged_at_least() { [ "$(dead_flagged)" -ge "$1" ]; }

# (a) 1,000 entries of jobs no longer PENDING, nothing running.
for r in 1 2 3 4 5 6 7 8 9 10; do round "$r"; done
check "no entry is flagged while nothing reads the index" test "$(dead_flagged)" = 0
m_start "$TEST_TMP/m.ini" "$TEST_TMP/outboxd.log" relay
check "outboxd flags the entries of the 1,001 jobs that finished" \
	wait_for 30 flagged_at_least 1001

# (b) Thirty more rounds, each followed by a scan.
# Once a round waited in vain, the rest run without waiting, so that the
# size is still measured over all 3,000 jobs.
before=$(index_pages) unscanned=0
for r in $(seq 11 40); do
	round "$r"
	n=$(scans)
	[ "$unscanned" -gt 0 ] || wait_for 30 scanned_since "$n" || unscanned=$r
done
after=$(index_pages)
check "a scan followed each of the thirty rounds" test "$unscanned" = 0
echo "# jobs_unfinished_due: $before pages before 3,000 more jobs went through it, $after after"
check "3,000 more jobs left the index within two pages of its size" test "$after" -le $(( before + 2 ))
check "the scan's failures were not logged" \
	bash -c "! grep -q 'scan of outbox.jobs_unfinished_due failed' '$TEST_TMP/outboxd.log'"
finish
