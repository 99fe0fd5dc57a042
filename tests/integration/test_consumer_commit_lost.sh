#!/bin/bash
# A connection lost inside a plugin's commit() (PostgreSQL ended the
# worker's session while commit() was between two of its statements) is
# logged as a lost connection, not as the plugin ending the transaction;
# nothing of that attempt is committed, and the job runs again and ends
# SUCCEEDED with its effect written exactly once.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws
stop_daemons_at_exit

setup_db "consumer_commit_lost_$$"
make_queues "ccl-$$" 10 2
# The first attempt's commit() inserts its row, then waits 8 s before its
# next statement (SELECT 1): the test ends the session in that gap.
WORKERS=1 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL" \
	"$(printf 'plugin.commit_sleep_ms = 8000\nplugin.sleep_until_attempt = 1\nplugin.commit_sql = SELECT 1')"
J=$(enqueue_job "$DB" news 1)
# The relay too: it publishes the job's event again when the consumer gives
# the job back for its retry.
"$OUTBOXD" -c "$TEST_TMP/c.ini" --role all >>"$TEST_TMP/consumer.log" 2>&1 &
CPID=$!

in_commit="SELECT pid FROM pg_stat_activity WHERE datname = current_database()
	AND application_name = 'outboxd consumer' AND state = 'idle in transaction'
	AND query LIKE 'INSERT INTO public.recorder_runs%'"
in_commit() { [ -n "$(psql_q "$DB" "$in_commit")" ]; }
check "the first commit() holds its transaction open" wait_for 30 in_commit
check "PostgreSQL ends that session" [ "$(psql_q "$DB" "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
	FROM ($in_commit) s")" = 1 ]
check "the job ends SUCCEEDED" wait_for 60 status_is "$DB" "$J" SUCCEEDED
check "the log names the lost connection" \
	grep -q "the connection to PostgreSQL was lost during commit(); nothing of the attempt was committed.*job_id=$J" "$TEST_TMP/consumer.log"
check "not the plugin ending the transaction" \
	sh -c "! grep -q 'the plugin ended the transaction' '$TEST_TMP/consumer.log'"
check "the effect was written once" [ "$(recorder_rows "$DB" "$J")" = 1 ]
check "by the second attempt (the first was rolled back)" \
	[ "$(psql_q "$DB" "SELECT attempt FROM public.recorder_runs WHERE job_id = '$J'")" = 2 ]
check "execute() ran twice" [ "$(executions "$J")" = 2 ]
check "message deleted" wait_for 20 depth_is "$QURL" 0
check "outboxd exits 0" stop_consumer
CPID=
[ "$checks_failed" = 0 ] || sed "s/^/# /" "$TEST_TMP/consumer.log"
finish
