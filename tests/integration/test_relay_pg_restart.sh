#!/bin/bash
# test_relay_pg_restart.sh: PostgreSQL restarted (-m immediate) under a
# running relay.  Uses a PRIVATE cluster (the shared one must never be
# restarted): the relay reconnects, logs it, and publishes everything that
# was committed; nothing is lost.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_relay_lib.sh"
require_pg
require_aws

# pg_start from services.sh exports OUTBOX_TEST_PG_*; keep the shared
# cluster's values aside and use the private ones only here.
shared_data=${OUTBOX_TEST_PG_DATA:-}
shared_conninfo=$OUTBOX_TEST_PG_CONNINFO
shared_port=$OUTBOX_TEST_PG_PORT
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
pg_start || { echo "ERROR: could not start a private PostgreSQL"; exit 99; }
priv_data=$OUTBOX_TEST_PG_DATA
priv_port=$OUTBOX_TEST_PG_PORT
export OUTBOX_TEST_PG_DATA=$shared_data OUTBOX_TEST_PG_CONNINFO=$shared_conninfo OUTBOX_TEST_PG_PORT=$shared_port
cleanup() {
	[ -n "${RELAY_PID:-}" ] && kill "$RELAY_PID" 2>/dev/null
	runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$priv_data" -m immediate stop >/dev/null 2>&1
	rm -rf "$(dirname "$priv_data")" "$TEST_TMP"
}
trap cleanup EXIT

ci="postgresql://postgres@127.0.0.1:$priv_port/postgres"
queue=$(create_queue "relay-restart-$$")
ini="$TEST_TMP/relay.ini"
relay_ini "$ini" "$ci" restartdest "$queue" poll_interval_ms=100 claim_lease_seconds=5
"$OUTBOXCTL" -c "$ini" migrate >/dev/null

relay_run "$TEST_TMP/relay.log" "$ini"
insert_events "$ci" before restartdest 20
check "published before the restart" \
	wait_sql "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'" 20 10
insert_events "$ci" racing restartdest 30
runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$priv_data" -l "$(dirname "$priv_data")/server.log" \
	-m immediate -w restart >/dev/null
insert_events "$ci" after restartdest 20
check "everything committed is published after the restart" \
	wait_sql "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'" 70 30
check "the relay is still running" kill -0 "$RELAY_PID"
check "it logged the reconnect" grep -q "reconnected to the database" "$TEST_TMP/relay.log"
kill "$RELAY_PID"
rc=0
wait "$RELAY_PID" || rc=$?
RELAY_PID=
check "it stops cleanly" test "$rc" -eq 0
receive_bodies "$queue" 70 >"$TEST_TMP/bodies"
check "all 70 events arrived (duplicates allowed)" test "$(sort -u "$TEST_TMP/bodies" | wc -l)" -eq 70
finish
