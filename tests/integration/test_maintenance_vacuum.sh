#!/bin/bash
# The pruner's VACUUM (core/maintenance/vacuum.h): with autovacuum off on
# outbox.jobs and outbox.outbox_events, (a) ten rounds of 1,500 jobs that
# the pruner deletes leave the time-ordered index jobs_created within
# two rounds' pages of its size after the second round, because outboxd
# vacuums both tables after every vacuum_after_rows (1,000) deleted rows;
# without those vacuums the emptied pages are never recycled and every round
# adds about twenty-five; the VACUUM leaves the emptied heap its pages
# (TRUNCATE false: no ACCESS EXCLUSIVE lock against the producers), and
# both tables tell autovacuum the same (V13: vacuum_truncate = false);
# (b) fewer deleted rows than that start no VACUUM, and rows deleted by
# several runs add up until they reach it; (c) a role that
# may not vacuum the tables is told once what to do, and again after a
# reload.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_maintenance_lib.sh"
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
require_pg
require_aws

setup_db "maint_vacuum_$$"
make_queues "mvac-$$" 10 2
sql() { psql_q "$DB" "$1" >/dev/null; }
PORT=$(free_port)
# Horizon: 60 s queue + 60 s DLQ = 120 s; the test's jobs finished 2 h ago.
extra=$(printf '[retention]\ninterval_seconds = 1\nsucceeded_jobs_seconds = 3600\ndead_jobs_seconds = 3600\nevents_seconds = 3600\ndlq_messages_seconds = 3600\nbatch_size = 500\nvacuum_after_rows = 1000\n\n[metrics]\nlisten = 127.0.0.1:%s\n' "$PORT")
m_ini "$TEST_TMP/relay.ini" "$DB" "$extra" \
	"news $QURL $DLQURL message_retention_seconds = 60|dlq_message_retention_seconds = 60"
sql "ALTER TABLE outbox.jobs SET (autovacuum_enabled = off);
	ALTER TABLE outbox.outbox_events SET (autovacuum_enabled = off)"

# ROUND N: N jobs that SUCCEEDED two hours ago, each with its PUBLISHED
# event, created in order at distinct times after every earlier round's
# (jobs of one statement share now(): equal keys, which deduplication would
# fold into one entry).
round=0
add_jobs() {
	round=$((round + 1))
	sql "WITH j AS (INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload,
		                              status, created_at, finished_at)
		SELECT encode(sha256(('job $round ' || g)::bytea), 'hex'), 'news', 'news', '{}', '{}',
		       'SUCCEEDED', now() + g * interval '1 millisecond', now() - interval '2 hours'
		  FROM generate_series(1, $1) g RETURNING job_id)
		INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination,
		                                  redrive_generation, body, status, published_at)
		SELECT 'news:' || job_id || ':0', 'news', job_id, 'news', 0, '{}', 'PUBLISHED',
		       now() - interval '2 hours' FROM j"
}
jobs_left() { psql_q "$DB" "SELECT count(*) FROM outbox.jobs"; }
none_left() { [ "$(jobs_left)" = 0 ]; }
vacuums() { # TABLE: the VACUUMs that finished on it
	psql_q "$DB" "SELECT vacuum_count FROM pg_stat_user_tables WHERE schemaname = 'outbox' AND relname = '$1'"
}
vacuumed_since() { [ "$(vacuums "$1")" -gt "$2" ]; }
pages() { psql_q "$DB" "SELECT pg_relation_size('outbox.${1:-jobs_created}') / 8192"; }
pruner_runs() { psql_q "$DB" "SELECT coalesce((SELECT runs FROM outbox.maintenance_runs WHERE task = 'pruner'), 0)"; }
runs_at_least() { [ "$(pruner_runs)" -ge "$1" ]; }

# ---- (a) ten rounds, each pruned and vacuumed ----
m_start "$TEST_TMP/relay.ini" "$TEST_TMP/outboxd.log"
unvacuumed=0
for r in 1 2 3 4 5 6 7 8 9 10; do
	j=$(vacuums jobs) e=$(vacuums outbox_events)
	add_jobs 1500
	[ "$unvacuumed" -gt 0 ] || { wait_for 30 none_left && wait_for 30 vacuumed_since jobs "$j" &&
		wait_for 30 vacuumed_since outbox_events "$e"; } || unvacuumed=$r
	[ "$r" != 2 ] || after2=$(pages)
done
after10=$(pages)
check "the pruner deleted every round and each was followed by a VACUUM of both tables" \
	test "$unvacuumed" = 0
echo "# jobs_created: $after2 pages after round 2, $after10 after round 10"
check "eight more rounds left jobs_created within two rounds' pages (40)" \
	test "$after10" -le $((after2 + 40))
check "the emptied heaps keep their pages: no truncation ($(pages jobs), $(pages outbox_events))" \
	test "$(pages jobs)" -gt 0 -a "$(pages outbox_events)" -gt 0
# Autovacuum truncates unless told not to: the soak saw each of its runs
# cut the heaps by up to a third (docs/maintenance.md).  V13 tells it.
for t in jobs outbox_events; do
	check "outbox.$t: vacuum_truncate = false, which autovacuum honours" \
		test "$(psql_q "$DB" "SELECT 'vacuum_truncate=false' = ANY (reloptions) FROM pg_class WHERE oid = 'outbox.$t'::regclass")" = t
done
check "the log says what was vacuumed" \
	grep -q 'vacuumed outbox.jobs, outbox.outbox_events in [0-9.]* s' "$TEST_TMP/outboxd.log"
curl -fsS "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics.txt" || true
check "outboxd_table_vacuums_total counts them" \
	grep -qE '^outboxd_table_vacuums_total\{table="jobs"\} ([5-9]|[1-9][0-9]+)$' "$TEST_TMP/metrics.txt"

# ---- (b) below the threshold, then across runs ----
j=$(vacuums jobs)
add_jobs 400
check "400 jobs are pruned" wait_for 30 none_left
runs=$(pruner_runs)
check "three more pruner runs" wait_for 30 runs_at_least $((runs + 3))
check "400 deleted rows start no VACUUM" test "$(vacuums jobs)" = "$j"
add_jobs 700
check "700 more jobs are pruned" wait_for 30 none_left
check "1,100 deleted rows over two runs start one" wait_for 30 vacuumed_since jobs "$j"
m_stop "$MPID"
check "no VACUUM failed" bash -c "! grep -q 'VACUUM of .* failed' '$TEST_TMP/outboxd.log'"

# ---- (c) a role that may not vacuum: told once, again after a reload ----
ROLE="mvac_$$"
m_role_create "$ROLE" "$TEST_TMP/relay.ini" "$TEST_TMP/role.ini"
j=$(vacuums jobs)
m_start "$TEST_TMP/role.ini" "$TEST_TMP/role.log"
warned() { [ "$(grep -c 'cannot vacuum tables' "$TEST_TMP/role.log")" -ge "$1" ]; }
add_jobs 1500
check "a role that may not vacuum is warned" wait_for 30 warned 1
check "the warning says what to do" \
	grep -q 'this role owns neither them nor the database; run outboxd as the role that owns the outbox tables, or set \[retention\] vacuum_after_rows = 0' "$TEST_TMP/role.log"
add_jobs 1500
check "its pruner deleted 3,000 jobs" wait_for 30 none_left
check "the warning was said once" [ "$(grep -c 'cannot vacuum tables' "$TEST_TMP/role.log")" = 1 ]
kill -HUP "$MPID"
add_jobs 1500
check "after a reload it checks again, and says so again" wait_for 30 warned 2
m_stop "$MPID"
check "nothing was vacuumed for it" test "$(vacuums jobs)" = "$j"
m_role_drop "$ROLE"
finish
