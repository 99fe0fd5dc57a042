#!/bin/bash
# A bounded stop (docs/outboxd.md, "Stopping"): a handler that never
# returns does not keep outboxd alive.  SIGTERM -> after
# shutdown_grace_seconds its claim is released, the process exits 0 within
# grace + 5 s (the consumer's release wait), the job is PENDING again and
# runs once on the next start.  A stop stuck elsewhere (a plugin whose
# destroy() never returns) ends at the hard bound, grace + 15 s.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

GRACE=2
setup_db "shutdown_bound_$$"
make_queues "sbound-$$" 10 2

running() { [ "$(executions "$1")" -ge 1 ]; }
# stop_timed: SIGTERM, wait; sets ELAPSED (seconds) and STOP_RC
stop_timed() {
	local t0
	t0=$(date +%s%N)
	STOP_RC=0
	kill -TERM "$CPID"
	wait "$CPID" || STOP_RC=$?
	ELAPSED=$(( ($(date +%s%N) - t0) / 1000000000 ))
	echo "stopped in ${ELAPSED} s, status $STOP_RC"
}

J1=$(enqueue_job "$DB" news 1)
GRACE=$GRACE consumer_ini "$TEST_TMP/hang.ini" "$DB" news "$QURL" "$DLQURL" "plugin.hang_job = $J1"
send_body "$QURL" "$(event_body "$DB" "$J1")"
start_consumer "$TEST_TMP/hang.ini" "$TEST_TMP/consumer.log"
check "the handler that never returns started" wait_for 20 running "$J1"
check "the job is CLAIMED while it hangs" status_is "$DB" "$J1" CLAIMED
stop_timed
check "SIGTERM: exit 0" [ "$STOP_RC" = 0 ]
check "SIGTERM: exited within grace + 5 s (+1 s slack)" [ "$ELAPSED" -le $((GRACE + 5 + 1)) ]
check "SIGTERM: not before the grace period" [ "$ELAPSED" -ge "$GRACE" ]
check "the claim was released: PENDING, no claim, due now" \
	[ "$(psql_q "$DB" "SELECT status || ':' || coalesce(claimed_by, '-') || ':' || (next_attempt_at <= now())
	      FROM outbox.jobs WHERE job_id = '$J1'")" = "PENDING:-:true" ]
check "the log says the claim was released" grep -q "claim released job_id=$J1" "$TEST_TMP/consumer.log"
check "the log says why the process exits" grep -q "handlers did not return 5 s after their claims were released" "$TEST_TMP/consumer.log"
check "nothing committed for the hung run" [ "$(recorder_rows "$DB" "$J1")" = 0 ]

consumer_ini "$TEST_TMP/ok.ini" "$DB" news "$QURL" "$DLQURL"
start_consumer "$TEST_TMP/ok.ini" "$TEST_TMP/consumer2.log"
check "next start: the job runs and succeeds" wait_for 30 status_is "$DB" "$J1" SUCCEEDED
check "next start: two executions in all, one committed row" \
	[ "$(executions "$J1"):$(recorder_rows "$DB" "$J1")" = 2:1 ]
check "next start: the message is deleted" wait_for 10 depth_is "$QURL" 0
check "next start: stops cleanly" stop_consumer

# destroy() never returns: only the watchdog ends the stop
GRACE=1 consumer_ini "$TEST_TMP/destroy.ini" "$DB" news "$QURL" "$DLQURL" "plugin.hang_destroy = true"
J2=$(enqueue_job "$DB" news 2)
send_body "$QURL" "$(event_body "$DB" "$J2")"
start_consumer "$TEST_TMP/destroy.ini" "$TEST_TMP/consumer3.log"
check "hang_destroy: the job succeeds first" wait_for 30 status_is "$DB" "$J2" SUCCEEDED
stop_timed
check "hang_destroy: exit 0 from the watchdog" [ "$STOP_RC" = 0 ]
check "hang_destroy: exited at the hard bound, grace + 15 s (+1 s slack)" \
	[ "$ELAPSED" -ge 15 -a "$ELAPSED" -le $((1 + 15 + 1)) ]
check "hang_destroy: the bound was logged" grep -q "stopping: outboxd exits within 16 s" "$TEST_TMP/consumer3.log"
check "hang_destroy: the watchdog said why" grep -q "shutdown did not finish within 16 s; exiting now" "$TEST_TMP/consumer3.log"
check "every job SUCCEEDED once" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'"):$(psql_q "$DB" "SELECT count(*) FROM public.recorder_runs")" = 2:2 ]
finish
