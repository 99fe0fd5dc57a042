#!/bin/bash
# Consumer rules against PostgreSQL and fauxqs with the real outboxd:
# (a) one event delivered twice, in sequence and concurrently: one run;
# (c) RETRY backs off per retry_base_seconds, FAIL leaves the job DEAD and
#     the message deleted; (e) after outboxctl redrive, a late message of the
#     old generation cannot claim the job and the new generation runs once.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_basic_$$"
make_queues "cbasic-$$" 5 2
consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL" \
	"plugin.sleep_ms = 1500
plugin.retry_until_attempt = 0"
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"

# (a) sequential duplicate
J1=$(enqueue_job "$DB" news 1)
B1=$(event_body "$DB" "$J1")
send_body "$QURL" "$B1"
check "first delivery succeeds" wait_for 20 status_is "$DB" "$J1" SUCCEEDED
check "message deleted after success" wait_for 10 depth_is "$QURL" 0
send_body "$QURL" "$B1"
check "duplicate deleted" wait_for 10 depth_is "$QURL" 0
check "duplicate counted as terminal skip" grep -q "terminal skip.*job_id=$J1" "$TEST_TMP/consumer.log"
check "sequential: one execution" [ "$(executions "$J1")" = 1 ]
check "sequential: one committed row" [ "$(recorder_rows "$DB" "$J1")" = 1 ]

# (a) concurrent duplicate: both copies in flight at once, two workers
J2=$(enqueue_job "$DB" news 2)
B2=$(event_body "$DB" "$J2")
send_body "$QURL" "$B2"
send_body "$QURL" "$B2"
check "concurrent: succeeds" wait_for 20 status_is "$DB" "$J2" SUCCEEDED
check "concurrent: both copies deleted" wait_for 20 depth_is "$QURL" 0
check "concurrent: one execution" [ "$(executions "$J2")" = 1 ]
check "concurrent: one committed row" [ "$(recorder_rows "$DB" "$J2")" = 1 ]
check "concurrent: attempt_count 1" [ "$(psql_q "$DB" "SELECT attempt_count FROM outbox.jobs WHERE job_id='$J2'")" = 1 ]
check "consumer exits 0" stop_consumer

# (c) RETRY then OK; (e) FAIL on generation 0, redrive, generation 1 runs
consumer_ini "$TEST_TMP/c2.ini" "$DB" news "$QURL" "$DLQURL" \
	"plugin.retry_until_attempt = 1
plugin.fail_before_generation = 1"
start_consumer "$TEST_TMP/c2.ini" "$TEST_TMP/consumer2.log"
J3=$(enqueue_job "$DB" news 3)
psql_q "$DB" "UPDATE outbox.jobs SET redrive_generation = 1 WHERE job_id = '$J3'" >/dev/null
psql_q "$DB" "INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination, redrive_generation, body)
	SELECT 'news:$J3:1', 'news', '$J3', 'news', 1, replace(replace(body, ':0\"', ':1\"'), '\"redrive_generation\":0', '\"redrive_generation\":1')
	  FROM outbox.outbox_events WHERE job_id = '$J3'" >/dev/null
publish_event "$DB" "$QURL" "$J3" 1
# The bound includes the consumer's start (on a loaded machine, seconds).
check "retry: PENDING after the first attempt" wait_for 30 \
	test "$(psql_q "$DB" "SELECT status || attempt_count FROM outbox.jobs WHERE job_id='$J3'")" = PENDING1
# The retry deleted the message and re-armed the event; the test plays the relay.
check "retry: message deleted" wait_for 10 depth_is "$QURL" 0
check "retry: event re-armed, due at the retry" [ "$(psql_q "$DB" "SELECT e.status || ':' || (e.next_attempt_at = j.next_attempt_at) FROM outbox.outbox_events e JOIN outbox.jobs j USING (job_id) WHERE e.job_id='$J3' AND e.redrive_generation = 1")" = NEW:true ]
check "retry: next_attempt_at = now + 2 s" [ "$(psql_q "$DB" "SELECT round(extract(epoch FROM next_attempt_at - updated_at)) FROM outbox.jobs WHERE job_id='$J3'")" = 2 ]
check "retry: last_error kept" [ -n "$(psql_q "$DB" "SELECT last_error FROM outbox.jobs WHERE job_id='$J3'")" ]
republish_when_due "$DB" "$QURL" "$J3" 1 10
check "retry: second attempt succeeds" wait_for 15 status_is "$DB" "$J3" SUCCEEDED
t1=$(awk -v j="$J3" '$1==j && $2==1 {print $4}' "$TEST_TMP/executions.log")
t2=$(awk -v j="$J3" '$1==j && $2==2 {print $4}' "$TEST_TMP/executions.log")
check "retry: the message came back after the backoff, not before ($((t2 - t1)) ms)" [ $((t2 - t1)) -ge 1900 ]
check "retry: two executions" [ "$(executions "$J3")" = 2 ]
check "retry: one committed row" [ "$(recorder_rows "$DB" "$J3")" = 1 ]

J4=$(enqueue_job "$DB" news 4)
B4=$(event_body "$DB" "$J4")
send_body "$QURL" "$B4"
check "fail: DEAD PERMANENT" wait_for 15 \
	test "$(psql_q "$DB" "SELECT status || ':' || dead_reason FROM outbox.jobs WHERE job_id='$J4'")" = DEAD:PERMANENT
check "fail: message deleted" wait_for 10 depth_is "$QURL" 0
check "fail: no committed row" [ "$(recorder_rows "$DB" "$J4")" = 0 ]
check "dead lists the job" sh -c "'$OUTBOXCTL' -c '$TEST_TMP/ctl.ini' --json dead | jq -e '.jobs[] | select(.job_id == \"$J4\" and .dead_reason == \"PERMANENT\" and .attempt_count == 1)'"
check "dead --destination filters" sh -c "'$OUTBOXCTL' -c '$TEST_TMP/ctl.ini' --json dead --destination price | jq -e '.jobs == []'"

# (e) redrive
rc=0
out=$("$OUTBOXCTL" -c "$TEST_TMP/ctl.ini" redrive "$J4" 0000000000000000000000000000000000000000000000000000000000000000 2>"$TEST_TMP/redrive.err") || rc=$?
check "redrive: exit 1 because one id is unknown" [ "$rc" = 1 ]
check "redrive: unknown id reported" grep -q "no such job" "$TEST_TMP/redrive.err"
check "redrive: prints job and new event" [ "$out" = "$J4 news:$J4:1" ]
check "redrive: PENDING generation 1 attempt 0" [ "$(psql_q "$DB" "SELECT status || redrive_generation || attempt_count || coalesce(dead_reason, '-') FROM outbox.jobs WHERE job_id='$J4'")" = "PENDING10-" ]
send_body "$QURL" "$B4"
check "redrive: old-generation message deleted" wait_for 10 depth_is "$QURL" 0
check "redrive: old generation did not claim" [ "$(psql_q "$DB" "SELECT status || attempt_count FROM outbox.jobs WHERE job_id='$J4'")" = PENDING0 ]
publish_event "$DB" "$QURL" "$J4" 1
republish_when_due "$DB" "$QURL" "$J4" 1 15
check "redrive: new generation succeeds" wait_for 15 status_is "$DB" "$J4" SUCCEEDED
# retry_until_attempt = 1 also applies to generation 1: attempt 1 retries, 2 succeeds
n=$(awk -v j="$J4" '$1==j && $3==1 {printf "%s ", $2}' "$TEST_TMP/executions.log")
check "redrive: generation 1 ran once per attempt ($n)" [ "$n" = "1 2 " ]
check "redrive: one row, of generation 1" [ "$(psql_q "$DB" "SELECT string_agg(generation::text, ',') FROM public.recorder_runs WHERE job_id='$J4'")" = 1 ]
check "consumer exits 0 again" stop_consumer
finish
