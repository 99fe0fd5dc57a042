#!/bin/bash
# A message binds the job to the queue it came from, in the CAS itself
# (docs/consumer.md, rule 1 and "Dead-letter queues"): two destinations,
# alpha and beta, with the recorder plugin.
# (a) on beta's DLQ, a copy naming a PENDING alpha job (its body forged to
#     say "beta") is recorded wrong_destination and the job is not touched;
# (b) on beta's main queue, alpha's message (as sent and forged) never runs
#     the job; when those copies reach beta's DLQ they do not kill it
#     either;
# the alpha job then runs once from its own queue.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_binding_$$"
make_queues "cbind-a-$$" 2 1
AQ=$QURL ADLQ=$DLQURL
make_queues "cbind-b-$$" 2 1
BQ=$QURL BDLQ=$DLQURL
VIS=1 consumer_ini "$TEST_TMP/c.ini" "$DB" alpha "$AQ" "$ADLQ"
recorder_destination beta "$BQ" "$BDLQ" >>"$TEST_TMP/c.ini"
cp "$TEST_TMP/c.ini" "$TEST_TMP/ctl.ini" # enqueue_job needs both destinations

JA=$(enqueue_job "$DB" alpha 1)
JB=$(enqueue_job "$DB" alpha 2)
body_a=$(event_body "$DB" "$JA")
body_b=$(event_body "$DB" "$JB")
forged() { sed 's/"destination":"alpha"/"destination":"beta"/' <<<"$1"; }
check "the forged body names beta" grep -q '"destination":"beta"' <<<"$(forged "$body_a")"

# (a) straight onto beta's DLQ
send_body "$BDLQ" "$(forged "$body_a")"
# (b) through beta's main queue, as sent and forged
send_body "$BQ" "$body_b"
send_body "$BQ" "$(forged "$body_b")"
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"

outcomes() { psql_q "$DB" "SELECT string_agg(outcome, ',' ORDER BY outcome) FROM outbox.dlq_messages WHERE job_id = '$1'"; }
outcomes_are() { [ "$(outcomes "$1")" = "$2" ]; }
check "(a) recorded wrong_destination" wait_for 30 outcomes_are "$JA" wrong_destination
check "(a) the alpha job is untouched" [ "$(psql_q "$DB" "SELECT status || attempt_count || coalesce(dead_reason, '-') FROM outbox.jobs WHERE job_id = '$JA'")" = "PENDING0-" ]
check "(b) both copies reached beta's DLQ and were recorded" wait_for 40 outcomes_are "$JB" wrong_destination,wrong_destination
check "(b) the alpha job never ran and is untouched" [ "$(psql_q "$DB" "SELECT status || attempt_count || coalesce(dead_reason, '-') FROM outbox.jobs WHERE job_id = '$JB'")" = "PENDING0-" ]
check "(b) nothing ran" [ "$(executions "$JA"):$(executions "$JB")" = 0:0 ]
check "beta's queues are drained" wait_for 10 depth_is "$BDLQ" 0

send_body "$AQ" "$body_a"
send_body "$AQ" "$body_b"
both_succeeded() { status_is "$DB" "$JA" SUCCEEDED && status_is "$DB" "$JB" SUCCEEDED; }
check "from alpha's own queue the jobs run" wait_for 20 both_succeeded
check "each once" [ "$(executions "$JA"):$(executions "$JB")" = 1:1 ]
check "consumer exits 0" stop_consumer
finish
