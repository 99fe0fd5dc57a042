#!/bin/bash
# (f) A handler running longer than the visibility timeout (2 s, handler
# 5 s) is not executed a second time: the heartbeat extends its lease and
# the message visibility.  (g) SIGTERM during a running handler: exit 0 and
# the job either finished (grace long enough) or its claim was released
# (PENDING), never lost; the released job then runs once.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_long_$$"
make_queues "clong-$$" 10 2
consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL" "plugin.sleep_ms = 7000"

J1=$(enqueue_job "$DB" news 1)
send_body "$QURL" "$(event_body "$DB" "$J1")"
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"
check "long handler succeeds" wait_for 30 status_is "$DB" "$J1" SUCCEEDED
check "long handler executed once" [ "$(executions "$J1")" = 1 ]
check "one claim, one row" [ "$(psql_q "$DB" "SELECT attempt_count FROM outbox.jobs WHERE job_id='$J1'"):$(recorder_rows "$DB" "$J1")" = 1:1 ]
check "message deleted" wait_for 10 depth_is "$QURL" 0
check "consumer exits 0" stop_consumer

running() { [ "$(executions "$1")" = 1 ]; }

# grace 10 s > handler 3 s: the handler finishes
GRACE=10 consumer_ini "$TEST_TMP/g.ini" "$DB" news "$QURL" "$DLQURL" "plugin.sleep_ms = 3000"
J2=$(enqueue_job "$DB" news 2)
send_body "$QURL" "$(event_body "$DB" "$J2")"
start_consumer "$TEST_TMP/g.ini" "$TEST_TMP/consumer.log"
check "handler started" wait_for 20 running "$J2"
check "SIGTERM with a long grace: exit 0" stop_consumer
check "the handler finished: SUCCEEDED" status_is "$DB" "$J2" SUCCEEDED

# grace 1 s < handler 4 s: the claim is released
GRACE=1 consumer_ini "$TEST_TMP/r.ini" "$DB" news "$QURL" "$DLQURL" "plugin.sleep_ms = 4000"
J3=$(enqueue_job "$DB" news 3)
send_body "$QURL" "$(event_body "$DB" "$J3")"
start_consumer "$TEST_TMP/r.ini" "$TEST_TMP/consumer.log"
check "handler started" wait_for 20 running "$J3"
check "SIGTERM with a short grace: exit 0" stop_consumer
check "the claim was released: PENDING, no claim" [ "$(psql_q "$DB" "SELECT status || coalesce(claimed_by, '-') FROM outbox.jobs WHERE job_id='$J3'")" = "PENDING-" ]
check "nothing committed" [ "$(recorder_rows "$DB" "$J3")" = 0 ]
consumer_ini "$TEST_TMP/c2.ini" "$DB" news "$QURL" "$DLQURL"
start_consumer "$TEST_TMP/c2.ini" "$TEST_TMP/consumer.log"
check "the released job runs again and succeeds" wait_for 20 status_is "$DB" "$J3" SUCCEEDED
check "exactly one committed row" [ "$(recorder_rows "$DB" "$J3")" = 1 ]
check "consumer exits 0 at the end" stop_consumer
finish
