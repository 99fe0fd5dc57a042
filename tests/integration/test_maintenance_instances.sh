#!/bin/bash
# Two outboxd instances on one database: the sweeper and the pruner each
# run on one of them at a time (one holder of each advisory lock, every run
# recorded by that instance); killing it (SIGKILL, no clean-up) moves both
# tasks to the other within a few intervals.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_maintenance_lib.sh"
require_pg
require_aws

setup_db "maint_two_$$"
make_queues "mtwo-$$" 10 2
m_ini "$TEST_TMP/m.ini" "$DB" "[sweeper]
horizon_seconds = 3
interval_seconds = 1

[retention]
interval_seconds = 1
succeeded_jobs_seconds = 120
dead_jobs_seconds = 120
events_seconds = 120
dlq_messages_seconds = 120" \
	"news $QURL $DLQURL message_retention_seconds = 60|dlq_message_retention_seconds = 60"

run_by() { # TASK PID: the task's last run was this process's
	[ "$(m_run "$1" instance_id)" = "$(hostname):$2" ]
}
holders() { # the backends holding the task's advisory lock
	psql_q "$DB" "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND classid = $((0x6f627864)) AND objid = $1 AND database =
		(SELECT oid FROM pg_database WHERE datname = current_database())"
}

m_start "$TEST_TMP/m.ini" "$TEST_TMP/outboxd-a.log" relay
A=$MPID
check "instance A runs the sweeper" wait_for 15 run_by sweeper "$A"
check "instance A runs the pruner" wait_for 15 run_by pruner "$A"
m_start "$TEST_TMP/m.ini" "$TEST_TMP/outboxd-b.log" relay
B=$MPID
check "instance B is up" wait_for 15 grep -q "outboxd started" "$TEST_TMP/outboxd-b.log"
runs0=$(m_run sweeper runs)
prunes0=$(m_run pruner runs)
more_runs() { [ "$(m_run sweeper runs)" -ge $((runs0 + 4)) ] && [ "$(m_run pruner runs)" -ge $((prunes0 + 4)) ]; }
# While both run: A keeps both tasks, B only waits for the locks.
all_by_a=true
for _ in $(seq 1 40); do
	if ! run_by sweeper "$A" || ! run_by pruner "$A"; then all_by_a=false; fi
	if more_runs; then break; fi
	sleep 0.2
done
check "both kept running while two instances were up" more_runs
check "every run meanwhile was A's" $all_by_a
check "one holder of the sweeper's lock" [ "$(holders 1)" = 1 ]
check "one holder of the pruner's lock" [ "$(holders 2)" = 1 ]
b_idle() { ! grep -q "this instance runs the" "$TEST_TMP/outboxd-b.log"; }
check "B never took a task" b_idle

kill -KILL "$A"
wait "$A" 2>/dev/null || true
check "B takes over the sweeper" wait_for 20 run_by sweeper "$B"
check "B takes over the pruner" wait_for 20 run_by pruner "$B"
check "B logged that it runs both" [ "$(grep -c "this instance runs the" "$TEST_TMP/outboxd-b.log")" = 2 ]
check "still one holder of each lock" [ "$(holders 1):$(holders 2)" = 1:1 ]
m_stop "$B"
check "a clean stop releases the locks" [ "$(holders 1):$(holders 2)" = 0:0 ]
finish
