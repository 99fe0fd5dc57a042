#!/bin/bash
# The consumer's batch claim looks its rows up by job_id whatever the
# statistics say.  A destination's backlog of 30,000 due jobs arrives after
# the last ANALYZE (autovacuum off on outbox.jobs, as when a backlog builds
# faster than autovacuum analyzes): a plain join and filter let the planner
# scan the whole backlog on every claim (jobs_unfinished_due or the table, a
# few hundred buffers and more per claim, growing with the backlog); the
# claim must read about as many buffers per claimed row as on an empty
# table.  Counted by pg_stat_statements (buffers per call and per row).
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_claim_plan_$$"
if ! psql_q "$DB" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null 2>&1; then
	echo "SKIP: pg_stat_statements is not loaded (shared_preload_libraries)"
	exit 77
fi
BACKLOG=30000 BATCH=10
make_queues "cplan-$$" 5 30
WORKERS=1 VIS=30 LEASE=30 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL"
stop_daemons_at_exit

# Statistics taken while the destination had one job, then the backlog.
first=$(enqueue_job "$DB" news 0)
jtype=$(psql_q "$DB" "SELECT job_type FROM outbox.jobs WHERE job_id = '$first'")
psql_q "$DB" "ALTER TABLE outbox.jobs SET (autovacuum_enabled = off);
	ANALYZE outbox.jobs" >/dev/null
psql_q "$DB" "SELECT count(*) FROM (SELECT outbox.enqueue('$jtype', 'news',
	json_build_object('backlog', g), jsonb_build_object('n', g)) FROM generate_series(1, $BACKLOG) g) s" \
	>/dev/null
check "the backlog is due and the statistics predate it" \
	[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'PENDING'
		AND destination = 'news' AND next_attempt_at <= now()")" -gt "$BACKLOG" ]

statements_reset "$DB"
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"
# Ten rounds of a batch of deliveries of backlog jobs.
ids=$(psql_q "$DB" "SELECT job_id FROM outbox.jobs WHERE identity ? 'backlog'
	ORDER BY job_id LIMIT $((10 * BATCH))")
for id in $ids; do
	send_body "$QURL" "$(event_body "$DB" "$id")"
done
check "every delivered job succeeds" \
	wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE identity ? 'backlog'
		AND status = 'SUCCEEDED'" $((10 * BATCH)) 60
read -r calls rows blocks < <(psql_q "$DB" "SELECT s.calls, s.rows,
		s.shared_blks_hit + s.shared_blks_read
	FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
	WHERE d.datname = current_database() AND s.query LIKE 'WITH c AS (%unnest%FOR UPDATE%'" |
	tr '|' ' ')
echo "batch claims: ${calls:-0} calls, ${rows:-0} rows, ${blocks:-0} buffers"
check "the batch claim ran" [ "${calls:-0}" -ge 1 ]
check "it claimed the delivered jobs (${rows:-0} rows)" [ "${rows:-0}" -ge $((10 * BATCH)) ]
# A row's claim reads its primary key entry and heap page and writes a new
# version into every index (about 60 buffers); a scan of the backlog reads
# its ~700 heap pages on every call.
check "at most 100 buffers per claimed row ($blocks for $rows)" \
	[ "${blocks:-0}" -le $((100 * ${rows:-0})) ]
check "at most 400 buffers per claim" [ "${blocks:-0}" -le $((400 * ${calls:-1})) ]
check "one execution each" [ "$(wc -l <"$TEST_TMP/executions.log")" -eq $((10 * BATCH)) ]
check "consumer exits 0" stop_consumer
[ "$checks_failed" -eq 0 ] || tail -20 "$TEST_TMP/consumer.log"
finish
