#!/bin/bash
# Sessions that come back read-only (docs/operations.md, "Failover"): after
# a failover a reconnect may land on a node still in recovery, whose
# sessions refuse every write for as long as they live, while a new
# session reaches the primary.  Here the database's own setting stands for
# that node: ALTER DATABASE ... SET default_transaction_read_only = on and
# outboxd's relay, maintenance and heartbeat sessions terminated, so they
# reconnect read-only; then the setting is reset (the "primary" is back).
# Each part of outboxd must leave its read-only session for a new one:
# the relay publishes again, the heartbeat extends the lease of the
# handler that ran throughout (it runs once and succeeds), the sweeper
# runs again.  Before outboxd reconnected on SQLSTATE 25006, all three
# stayed on their read-only sessions until outboxd was restarted.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "read_only_sessions_$$"
DBNAME=${DB##*/}
QURL="$EP/000000000000/ros-$$"
DLQURL="$EP/000000000000/ros-$$-dlq"
# The script's own sessions write throughout; outboxd's are started
# without this (PGOPTIONS= below).
export PGOPTIONS="-c default_transaction_read_only=off"
SLOW=$(enqueue_job "$DB" news 1)
# A lease of 15 s beaten every 3.3 s (a third of the visibility timeout):
# the outage below ends well within one lease, so only a heartbeat that
# failed to come back lets it lapse.
LEASE=15 VIS=10 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL" \
	"plugin.sleep_ms = 25000
plugin.sleep_job = $SLOW"
printf '\n[sweeper]\ninterval_seconds = 1\n' >>"$TEST_TMP/c.ini"
"$OUTBOXCTL" -c "$TEST_TMP/c.ini" create-queues >"$TEST_TMP/cq.log" 2>&1 || { cat "$TEST_TMP/cq.log"; exit 99; }

stop_daemons_at_exit
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log" PGOPTIONS=
CPID_CONSUMER=$CPID
PGOPTIONS= "$OUTBOXD" -c "$TEST_TMP/c.ini" --role relay >>"$TEST_TMP/relay.log" 2>&1 &
RPID=$!
CPID=$CPID_CONSUMER

check "the slow job runs" wait_for 30 sh -c "[ \"\$(grep -c '^$SLOW ' '$TEST_TMP/executions.log' 2>/dev/null)\" = 1 ]"

# The outage: new sessions are read-only; the relay's, the maintenance's
# and the heartbeat's are ended (the worker running the slow job keeps its
# session, so that its completion is not what this test is about).
psql_q "$DB" "ALTER DATABASE \"$DBNAME\" SET default_transaction_read_only = on" >/dev/null
psql_q "$DB" "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
	WHERE datname = '$DBNAME' AND (application_name LIKE 'outboxd relay%'
	OR application_name IN ('outboxd maintenance', 'outboxd consumer heartbeat'))" >/dev/null
FAST=$(enqueue_job "$DB" news 2)
check "the heartbeat's new session refuses the lease" \
	wait_for 20 grep -q "could not extend the lease: cannot execute UPDATE in a read-only transaction" \
	"$TEST_TMP/consumer.log"
check "the relay's new session refuses its statements" \
	wait_for 20 grep -qE "could not (claim outbox events|record whether the relay lane is idle): .*read-only transaction" \
	"$TEST_TMP/relay.log"
check "nothing was published during the outage" \
	[ "$(psql_q "$DB" "SELECT status FROM outbox.outbox_events WHERE job_id = '$FAST'")" = NEW ]
psql_q "$DB" "ALTER DATABASE \"$DBNAME\" RESET default_transaction_read_only" >/dev/null
RESTORED=$(psql_q "$DB" "SELECT now()")

lease_extended() {
	[ "$(psql_q "$DB" "SELECT lease_until > '$RESTORED'::timestamptz + interval '12 s'
		FROM outbox.jobs WHERE job_id = '$SLOW'")" = t ]
}
sweeper_ran() {
	[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.maintenance_runs
		WHERE task = 'sweeper' AND ok AND started_at > '$RESTORED'")" = 1 ]
}
check "the heartbeat extends the lease again" wait_for 15 lease_extended
check "the relay publishes again: the new job SUCCEEDED" wait_for 30 status_is "$DB" "$FAST" SUCCEEDED
check "the sweeper runs again" wait_for 15 sweeper_ran
check "the slow job SUCCEEDED" wait_for 40 status_is "$DB" "$SLOW" SUCCEEDED
check "the slow job ran once" [ "$(executions "$SLOW")" = 1 ]
check "one committed row each" [ "$(recorder_rows "$DB" "$SLOW"):$(recorder_rows "$DB" "$FAST")" = 1:1 ]
check "no claim was lost" bash -c "! grep -q 'lost the claim' '$TEST_TMP/consumer.log'"
check "consumer exits 0" stop_consumer
CPID=
finish
