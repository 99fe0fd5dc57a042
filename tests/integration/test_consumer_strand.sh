#!/bin/bash
# No job is stranded PENDING without a message (docs/consumer.md, "When a
# message is lost").
# (a) a DLQ copy of a job under a live lease is not deleted: it is looked at
#     again after the lease, and the job then gets a fresh message (its
#     event re-armed, the arrival counted) with the evidence kept;
# (b) a RETRY whose message vanished (queue purged while the handler runs)
#     re-arms the job's outbox event (NEW, due at the retry time), and the
#     relay's new message runs the job to success;
# (c) messages waiting behind a slow handler in the same receive batch keep
#     their visibility (maxReceiveCount 1: one extra receive would move them
#     to the DLQ);
# (d) a message whose job is leased elsewhere is hidden for the rest of the
#     lease instead of burning a receive every visibility timeout.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_strand_$$"
published() { # JOB: the relay has published its event
	psql_q "$DB" "UPDATE outbox.outbox_events SET status = 'PUBLISHED', published_at = now()
		WHERE job_id = '$1'" >/dev/null
}
lease_elsewhere() { # JOB SECONDS: CLAIMED by another consumer, lease live
	psql_q "$DB" "UPDATE outbox.jobs SET status = 'CLAIMED', claimed_by = 'elsewhere',
		attempt_count = 1, lease_until = now() + interval '$2 seconds' WHERE job_id = '$1'" >/dev/null
}
dead_reason_is() { [ "$(psql_q "$DB" "SELECT status || ':' || coalesce(dead_reason, '-') FROM outbox.jobs WHERE job_id = '$1'")" = "$2" ]; }
dlq_rows() { psql_q "$DB" "SELECT count(*) FROM outbox.dlq_messages WHERE job_id = '$1'"; }

# (a) a live-leased job's message on the DLQ
make_queues "cstr-a-$$" 10 2
consumer_ini "$TEST_TMP/a.ini" "$DB" news "$QURL" "$DLQURL"
JA=$(enqueue_job "$DB" news 1)
published "$JA"
lease_elsewhere "$JA" 4
send_body "$DLQURL" "$(event_body "$DB" "$JA")"
start_consumer "$TEST_TMP/a.ini" "$TEST_TMP/consumer.log"
check "(a) the DLQ copy is kept while the lease is live" wait_for 20 grep -q "job is under a live lease; dead-letter message kept" "$TEST_TMP/consumer.log"
check "(a) the job is still CLAIMED then" status_is "$DB" "$JA" CLAIMED
rearmed() { [ "$(psql_q "$DB" "SELECT j.dlq_arrivals || ':' || e.status FROM outbox.jobs j
	JOIN outbox.outbox_events e USING (job_id) WHERE job_id = '$JA'")" = 1:NEW ]; }
check "(a) after the lease expired the arrival is counted and the event re-armed" wait_for 30 rearmed
check "(a) the job is not DEAD: PostgreSQL still decides it" dead_reason_is "$JA" CLAIMED:-
check "(a) its evidence says rearmed" [ "$(psql_q "$DB" "SELECT string_agg(outcome, ',') FROM outbox.dlq_messages WHERE job_id = '$JA'")" = rearmed ]
check "(a) the DLQ copy is deleted" wait_for 10 depth_is "$DLQURL" 0
check "(a) nothing ran" [ "$(executions "$JA")" = 0 ]
check "(a) consumer exits 0" stop_consumer

# (b) RETRY after the message vanished: the event is re-armed
make_queues "cstr-b-$$" 10 2
consumer_ini "$TEST_TMP/b.ini" "$DB" news "$QURL" "$DLQURL" "plugin.sleep_ms = 2000
plugin.retry_until_attempt = 1"
JB=$(enqueue_job "$DB" news 2)
published "$JB"
send_body "$QURL" "$(event_body "$DB" "$JB")"
start_consumer "$TEST_TMP/b.ini" "$TEST_TMP/consumer.log"
ran_once() { [ "$(executions "$1")" = 1 ]; }
check "(b) the handler started" wait_for 20 ran_once "$JB"
sqs PurgeQueue "{\"QueueUrl\":\"$QURL\"}" >/dev/null
check "(b) the retry is recorded" wait_for 20 status_is "$DB" "$JB" PENDING
event_state() { psql_q "$DB" "SELECT status || ':' || (next_attempt_at > now() - interval '1 second')::text
	FROM outbox.outbox_events WHERE job_id = '$JB'"; }
check "(b) the event is NEW again, due at the retry time" [ "$(event_state)" = "NEW:true" ]
check "(b) one event, same event_id" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.outbox_events WHERE job_id = '$JB'")" = 1 ]
check "(b) consumer exits 0" stop_consumer
start_consumer "$TEST_TMP/b.ini" "$TEST_TMP/consumer.log"
"$OUTBOXD" -c "$TEST_TMP/b.ini" --role relay >>"$TEST_TMP/relay.log" 2>&1 &
RPID=$!
check "(b) the relay republishes and the job succeeds" wait_for 40 status_is "$DB" "$JB" SUCCEEDED
check "(b) exactly one committed row" [ "$(recorder_rows "$DB" "$JB")" = 1 ]
kill -TERM "$RPID"
wait "$RPID" || true
check "(b) consumer exits 0 again" stop_consumer

# (c) three messages in one batch behind 2.5 s handlers, visibility 2 s
make_queues "cstr-c-$$" 1 2
WORKERS=2 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL" "plugin.sleep_ms = 2500"
JC1=$(enqueue_job "$DB" news 3)
JC2=$(enqueue_job "$DB" news 4)
JC3=$(enqueue_job "$DB" news 5)
for j in "$JC1" "$JC2" "$JC3"; do send_body "$QURL" "$(event_body "$DB" "$j")"; done
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"
all_done() { for j in "$JC1" "$JC2" "$JC3"; do status_is "$DB" "$j" SUCCEEDED || return 1; done; }
check "(c) all three succeed" wait_for 40 all_done
check "(c) none reached the DLQ" [ "$(dlq_rows "$JC1")$(dlq_rows "$JC2")$(dlq_rows "$JC3")" = 000 ]
check "(c) each ran once" [ "$(executions "$JC1")$(executions "$JC2")$(executions "$JC3")" = 111 ]
check "(c) queue drained" wait_for 10 depth_is "$QURL" 0
check "(c) consumer exits 0" stop_consumer

# (d) a message of a job leased elsewhere (lease 8 s, visibility 1 s,
# maxReceiveCount 3): it waits for the lease instead of reaching the DLQ
make_queues "cstr-d-$$" 3 1
VIS=1 consumer_ini "$TEST_TMP/d.ini" "$DB" news "$QURL" "$DLQURL"
JD=$(enqueue_job "$DB" news 6)
published "$JD"
lease_elsewhere "$JD" 8
send_body "$QURL" "$(event_body "$DB" "$JD")"
start_consumer "$TEST_TMP/d.ini" "$TEST_TMP/consumer.log"
check "(d) after the lease expired the job runs and succeeds" wait_for 40 status_is "$DB" "$JD" SUCCEEDED
check "(d) the message never reached the DLQ" [ "$(dlq_rows "$JD")" = 0 ]
check "(d) ran once" [ "$(executions "$JD")" = 1 ]
check "(d) consumer exits 0" stop_consumer
finish
