#!/bin/bash
# A hung handler stalls only itself (docs/consumer.md, "Time limits"): the
# real relay and consumer, with short limits:
# (a) a commit() that hangs (8 s, idle in its transaction, holding the
#     job's row) is ended by idle_in_transaction_timeout_seconds (2 s):
#     outboxctl redrive of that job answers within the limit instead of
#     waiting for the hang, another job completes meanwhile, and the job is
#     retried and SUCCEEDED with one committed row;
# (b) an execute() that hangs (8 s) past handler_timeout_seconds (3 s) is
#     warned about while it runs, given up on (a RETRY), and the job's
#     next attempt runs and succeeds before the hung one returns; its late
#     result is discarded.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_hang_$$"
make_queues "chang-$$" 5 2
stop_daemons_at_exit

# hang_ini FILE EXTRA_PLUGIN_LINES
hang_ini() {
	consumer_ini "$1" "$DB" news "$QURL" "$DLQURL" "handler_timeout_seconds = 3
$2"
	sed -i -e 's/^conninfo = .*/&\nlock_timeout_seconds = 2\nstatement_timeout_seconds = 10\nidle_in_transaction_timeout_seconds = 2/' \
		-e 's/^retry_base_seconds = .*/retry_base_seconds = 1\npoll_interval_ms = 100/' \
		-e 's/^retry_max_seconds = .*/retry_max_seconds = 1/' "$1"
}
hang_ini "$TEST_TMP/relay.ini" ""
"$OUTBOXD" -c "$TEST_TMP/relay.ini" --role relay >>"$TEST_TMP/relay.log" 2>&1 &
RPID=$!
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# (a) a hung commit()
J1=$(enqueue_job "$DB" news 1)
hang_ini "$TEST_TMP/a.ini" "plugin.commit_sleep_ms = 8000
plugin.sleep_until_attempt = 1
plugin.sleep_job = $J1"
start_consumer "$TEST_TMP/a.ini" "$TEST_TMP/consumer.log"
idle_in_tx() { [ "$(psql_q "$DB" "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'outboxd consumer' AND state = 'idle in transaction'")" -ge 1 ]; }
check "(a) commit() hangs idle in its transaction" wait_for 20 idle_in_tx
t0=$(ms)
"$OUTBOXCTL" -c "$TEST_TMP/ctl.ini" redrive "$J1" >"$TEST_TMP/redrive.out" 2>&1 || true
t1=$(ms)
check "(a) redrive answered within the limit, not after the hang ($((t1 - t0)) ms)" [ $((t1 - t0)) -lt 5000 ]
J2=$(enqueue_job "$DB" news 2)
check "(a) another job completes meanwhile" wait_for 5 status_is "$DB" "$J2" SUCCEEDED
check "(a) the hung job is retried and SUCCEEDED" wait_for 30 status_is "$DB" "$J1" SUCCEEDED
check "(a) it ran twice, one row committed" [ "$(executions "$J1"):$(recorder_rows "$DB" "$J1")" = 2:1 ]
check "(a) never DEAD" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD'")" = 0 ]
check "(a) consumer exits 0" stop_consumer
CPID=

# (b) a hung execute()
J3=$(enqueue_job "$DB" news 3)
hang_ini "$TEST_TMP/b.ini" "plugin.sleep_ms = 8000
plugin.sleep_until_attempt = 1
plugin.sleep_job = $J3"
start_consumer "$TEST_TMP/b.ini" "$TEST_TMP/consumer-b.log"
check "(b) a warning while the handler runs long" \
	wait_for 20 grep -q "handler has been running for .* s; its time limit is 3 s dest=news job_id=$J3" "$TEST_TMP/consumer-b.log"
check "(b) given up on at the limit" \
	wait_for 10 grep -q "handler exceeded its time limit of 3 s; the job is retried" "$TEST_TMP/consumer-b.log"
check "(b) the next attempt SUCCEEDED" wait_for 20 status_is "$DB" "$J3" SUCCEEDED
t1=$(awk -v j="$J3" '$1==j && $2==1 {print $4}' "$TEST_TMP/executions.log")
t2=$(awk -v j="$J3" '$1==j && $2==2 {print $4}' "$TEST_TMP/executions.log")
started_before_return() { [ -n "$t1" ] && [ -n "$t2" ] && [ $((t2 - t1)) -lt 8000 ]; }
check "(b) attempt 2 started before the hung attempt 1 returned ($((${t2:-0} - ${t1:-0})) ms)" started_before_return
check "(b) the hung attempt's late result is discarded" \
	wait_for 15 grep -q "handler finished after its claim was released; result discarded job_id=$J3" "$TEST_TMP/consumer-b.log"
check "(b) one committed row, two executions" [ "$(executions "$J3"):$(recorder_rows "$DB" "$J3")" = 2:1 ]
check "(b) consumer exits 0" stop_consumer
CPID=
finish
