#!/bin/bash
# Statements per duplicate delivery, counted by pg_stat_statements: a
# message of a job that already succeeded costs the pipeline's claim
# statement and the rules' lookup, at most two statements, and is deleted.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_statements_$$"
if ! psql_q "$DB" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null 2>&1; then
	echo "SKIP: pg_stat_statements is not loaded (shared_preload_libraries)"
	exit 77
fi
make_queues "cstmts-$$" 5 5
WORKERS=1 VIS=5 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL"
# The sweeper and the pruner run once at start, then not again for a day,
# so none of their statements falls between the reset and the count below.
cat >>"$TEST_TMP/c.ini" <<INI

[sweeper]
interval_seconds = 86400

[retention]
interval_seconds = 86400
INI
stop_daemons_at_exit
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"

J=$(enqueue_job "$DB" news 1)
B=$(event_body "$DB" "$J")
send_body "$QURL" "$B"
check "the first delivery succeeds" wait_for 20 status_is "$DB" "$J" SUCCEEDED
check "its message is deleted" wait_for 10 depth_is "$QURL" 0
check "the maintenance tasks ran their first run" \
	wait_sql "$DB" "SELECT count(*) FROM outbox.maintenance_runs" 2 20

# What the consumer runs between the duplicates' arrival and their
# deletion: consumer_statements (test_consumer_lib.sh).  The deletions wait
# up to 100 ms in the destination's pool, so the five rounds take long
# enough for a maintenance scan to fall between them.

N=5
statements_reset "$DB"
for i in $(seq "$N"); do
	send_body "$QURL" "$B"
	check "duplicate $i deleted" wait_for 15 depth_is "$QURL" 0
done
calls=$(consumer_statements "$DB")
psql_q "$DB" "SELECT s.calls, left(regexp_replace(s.query, '\s+', ' ', 'g'), 100)
	FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
	WHERE d.datname = current_database() ORDER BY s.calls DESC"
echo "statements for $N duplicate deliveries: $calls"
check "duplicates counted as terminal skips" \
	[ "$(grep -c "terminal skip.*job_id=$J" "$TEST_TMP/consumer.log")" -ge "$N" ]
check "the statements are counted at all ($calls)" [ "$calls" -ge "$N" ]
check "at most two statements per duplicate delivery ($calls for $N)" [ "$calls" -le $((2 * N)) ]
check "one execution" [ "$(executions "$J")" = 1 ]
check "consumer exits 0" stop_consumer
finish
