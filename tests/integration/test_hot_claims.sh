#!/bin/bash
# A claim updates its job in place (V14, docs/schema.md): (a) no index of
# outbox.jobs uses a column the consumer's claim writes; (b) 100 jobs run
# by outboxd leave at least 40 HOT updates in
# pg_stat_user_tables (before V14 none could be: status was in four of the
# indexes); (c) the constraint that lets finished_at stand for the terminal
# states refuses a terminal job without it; (d) V14 puts right the rows of
# an older database that disagree with it before it adds the constraint.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "hot_claims_$$"
make_queues "hot-$$" 5 5
WORKERS=2 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL"
stop_daemons_at_exit

# (a) What ST_CLAIM and ST_CLAIM_BATCH (consumer/ledger.c) write.
claim_columns="status claimed_by lease_until attempt_count started_by crash_count updated_at"
used=$(psql_q "$DB" "SELECT string_agg(DISTINCT a.attname, ' ')
	FROM pg_catalog.pg_index x
	JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum > 0
	WHERE x.indrelid = 'outbox.jobs'::regclass
	  AND a.attname = ANY (string_to_array('$claim_columns', ' '))
	  AND (a.attnum = ANY (x.indkey::int2[])
	       OR coalesce(pg_get_expr(x.indexprs, x.indrelid), '') ~ ('\\m' || a.attname || '\\M')
	       OR coalesce(pg_get_expr(x.indpred, x.indrelid), '') ~ ('\\m' || a.attname || '\\M'))")
[ -z "$used" ] || echo "# indexed columns the claim writes: $used"
check "no index of outbox.jobs uses a column the claim writes" test -z "$used"

# (b) The relay publishes, the consumer claims and completes.
first=$(enqueue_job "$DB" news 0)
jtype=$(psql_q "$DB" "SELECT job_type FROM outbox.jobs WHERE job_id = '$first'")
psql_q "$DB" "SELECT count(*) FROM generate_series(1, 99) g,
	LATERAL outbox.enqueue('$jtype', 'news', json_build_object('g', g), '{}'::jsonb)" >/dev/null
"$OUTBOXD" -c "$TEST_TMP/c.ini" --role all >>"$TEST_TMP/outboxd.log" 2>&1 &
CPID=$!
check "outboxd runs the 100 jobs" \
	wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" 100 60
check "outboxd stops cleanly" stop_consumer
# A backend reports its table counts when it exits at the latest.
hot_at_least() {
	[ "$(psql_q "$DB" "SELECT n_tup_hot_upd >= $1 FROM pg_catalog.pg_stat_user_tables
		WHERE relid = 'outbox.jobs'::regclass")" = t ]
}
# 65-79 of them measured; none could be before V14
check "at least 40 of the 100 claims were HOT updates" wait_for 20 hot_at_least 40
echo "# outbox.jobs: $(psql_q "$DB" "SELECT n_tup_upd || ' updates, ' || n_tup_hot_upd || ' HOT'
	FROM pg_catalog.pg_stat_user_tables WHERE relid = 'outbox.jobs'::regclass")"

# (c)
out=$(psql -X -q -d "$DB" -c "UPDATE outbox.jobs SET finished_at = NULL WHERE job_id = '$first'" 2>&1 || true)
check "a SUCCEEDED job without finished_at is refused, naming the constraint" \
	grep -q 'jobs_finished_when_terminal' <<<"$out"

# (d) An older database: the migrations up to V13, rows that disagree, V14.
OLD=$(newdb "hot_claims_old_$$")
write_ini "$TEST_TMP/old.ini" "$OLD"
mkdir "$TEST_TMP/v13"
cp "$OUTBOX_SRCDIR"/migrations/V*.sql "$TEST_TMP/v13/"
rm "$TEST_TMP/v13/V14__hot_claims.sql"
OUTBOX_MIGRATIONS_DIR="$TEST_TMP/v13" "$OUTBOXCTL" -c "$TEST_TMP/old.ini" migrate >/dev/null
psql_q "$OLD" "INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload, status,
		finished_at, updated_at)
	VALUES (repeat('a', 64), 't', 'news', '{}', '{}', 'SUCCEEDED', NULL, '2026-01-01T00:00:00Z'),
	       (repeat('b', 64), 't', 'news', '{}', '{}', 'PENDING', now(), now())" >/dev/null
check "V14 applies to a database with rows that disagree with it" \
	"$OUTBOXCTL" -c "$TEST_TMP/old.ini" migrate
check "a SUCCEEDED job without finished_at gets its updated_at" \
	wait_sql "$OLD" "SELECT finished_at = '2026-01-01T00:00:00Z' FROM outbox.jobs
		WHERE job_id = repeat('a', 64)" t 1
check "a PENDING job with finished_at loses it" \
	wait_sql "$OLD" "SELECT finished_at IS NULL FROM outbox.jobs WHERE job_id = repeat('b', 64)" t 1
finish
