#!/bin/bash
# (b) A consumer killed during execute (fault point consumer.in_execute) or
# during the completion transaction (consumer.in_commit): the job stays
# CLAIMED, no partial plugin rows, and after the lease expires a new
# delivery runs it and it succeeds exactly once.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_crash_$$"
make_queues "ccrash-$$" 10 2
consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL"

crash_run() { # FAULT JOB: runs the consumer until the fault point ends it
	send_body "$QURL" "$(event_body "$DB" "$2")"
	start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log" OUTBOX_FAULT_POINT="$1"
	local rc=0
	wait "$CPID" || rc=$?
	[ "$rc" = 137 ]
}

J1=$(enqueue_job "$DB" news 1)
check "in_execute: the process dies with 137" crash_run consumer.in_execute "$J1"
check "in_execute: job left CLAIMED" status_is "$DB" "$J1" CLAIMED
check "in_execute: handler never ran" [ "$(executions "$J1")" = 0 ]
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"
check "in_execute: retried after the lease expired, succeeds" wait_for 30 status_is "$DB" "$J1" SUCCEEDED
check "in_execute: one execution, one row" [ "$(executions "$J1"):$(recorder_rows "$DB" "$J1")" = 1:1 ]
check "in_execute: second claim" [ "$(psql_q "$DB" "SELECT attempt_count FROM outbox.jobs WHERE job_id='$J1'")" = 2 ]
check "in_execute: message deleted" wait_for 10 depth_is "$QURL" 0
check "consumer exits 0" stop_consumer

J2=$(enqueue_job "$DB" news 2)
check "in_commit: the process dies with 137" crash_run consumer.in_commit "$J2"
check "in_commit: job left CLAIMED, not SUCCEEDED" status_is "$DB" "$J2" CLAIMED
check "in_commit: no partial plugin rows" [ "$(recorder_rows "$DB" "$J2")" = 0 ]
check "in_commit: handler ran once so far" [ "$(executions "$J2")" = 1 ]
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"
check "in_commit: retry succeeds" wait_for 30 status_is "$DB" "$J2" SUCCEEDED
check "in_commit: exactly one committed row" [ "$(recorder_rows "$DB" "$J2")" = 1 ]
check "in_commit: message deleted" wait_for 10 depth_is "$QURL" 0
check "consumer exits 0 again" stop_consumer
finish
