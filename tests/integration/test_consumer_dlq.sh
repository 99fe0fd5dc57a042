#!/bin/bash
# (d) A garbage body, an unknown job and a message for another destination
# are neither run nor deleted; after maxReceiveCount (2) they reach the DLQ,
# where the DLQ reader records them; the jobs are otherwise unchanged.  A
# message of a live job arriving on the DLQ is counted and re-arms the job's
# event (a fresh message) three times, evidence kept; the fourth arrival
# marks the job DEAD 'DLQ'.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_dlq_$$"
make_queues "cdlq-$$" 2 1
VIS=1 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL"

J1=$(enqueue_job "$DB" news 1)
J2=$(enqueue_job "$DB" news 2)
snapshot() {
	psql_q "$DB" "SELECT md5(string_agg(j::text, ',' ORDER BY job_id)) FROM outbox.jobs j
		WHERE job_id <> '$J2'"
}
before=$(snapshot)
UNKNOWN=$(printf 'a%.0s' $(seq 64))
send_body "$QURL" "this is not json {"
send_body "$QURL" "{\"event_id\":\"news:$UNKNOWN:0\",\"job_id\":\"$UNKNOWN\",\"job_type\":\"news\",\"destination\":\"news\",\"redrive_generation\":0}"
send_body "$QURL" "$(event_body "$DB" "$J1" | sed 's/"destination":"news"/"destination":"price"/')"
for _ in 1 2 3 4; do send_body "$DLQURL" "$(event_body "$DB" "$J2")"; done
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"

dlq_count() { [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.dlq_messages")" = "$1" ]; }
check "all seven recorded from the DLQ" wait_for 40 dlq_count 7
outcome() { psql_q "$DB" "SELECT string_agg(outcome || ':' || coalesce(job_id, '-'), ',') FROM outbox.dlq_messages WHERE $1"; }
check "garbage recorded as unparseable" [ "$(outcome "body LIKE 'this is not json%'")" = "unparseable:-" ]
check "unknown job recorded" [ "$(outcome "job_id = '$UNKNOWN'")" = "unknown_job:$UNKNOWN" ]
check "wrong destination recorded" [ "$(outcome "job_id = '$J1'")" = "wrong_destination:$J1" ]
check "receive counts kept" [ "$(psql_q "$DB" "SELECT min(receive_count) FROM outbox.dlq_messages WHERE job_id IS DISTINCT FROM '$J2'")" -ge 1 ]
check "attributes kept" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.dlq_messages WHERE attributes ? 'ApproximateReceiveCount'")" = 7 ]
check "live job on the DLQ: DEAD DLQ at the fourth arrival" [ "$(psql_q "$DB" "SELECT status || ':' || dead_reason || ':' || dlq_arrivals FROM outbox.jobs WHERE job_id='$J2'")" = DEAD:DLQ:3 ]
check "its evidence: three times rearmed, then marked_dead" [ "$(psql_q "$DB" "SELECT string_agg(outcome, ',' ORDER BY id) FROM outbox.dlq_messages WHERE job_id = '$J2'")" = rearmed,rearmed,rearmed,marked_dead ]
check "its event was re-armed (NEW: a relay sends a fresh message)" [ "$(psql_q "$DB" "SELECT status FROM outbox.outbox_events WHERE job_id = '$J2'")" = NEW ]
check "source queue drained into the DLQ" wait_for 10 depth_is "$QURL" 0
check "DLQ copies deleted" wait_for 10 depth_is "$DLQURL" 0
check "the other jobs are unchanged" [ "$(snapshot)" = "$before" ]
check "nothing ran" [ "$(executions "$J1")" = 0 ]
check "ignored messages were logged" grep -q "ignoring a message that is not an outbox event" "$TEST_TMP/consumer.log"
check "consumer exits 0" stop_consumer
finish
