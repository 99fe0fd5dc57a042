#!/bin/bash
# A consumer-only instance started while PostgreSQL is down (outboxd starts
# without checking a database it cannot reach) waits for it with the
# maintenance thread's reconnect backoff, not in a loop that burns a core,
# and registers in outbox.relay_instances once PostgreSQL is back.  Uses a
# private cluster (the shared one is never stopped).
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws
private_pg_start || { echo "ERROR: could not start a private PostgreSQL"; exit 99; }
trap 'rc=$?; [ -n "${CPID:-}" ] && kill -TERM "$CPID" 2>/dev/null && wait "$CPID"; private_pg_stop; rm -rf "$TEST_TMP"; exit $rc' EXIT

psql_q "$PRIV_PG_CONNINFO" "CREATE DATABASE roles_outage" >/dev/null
DB="postgresql://postgres@127.0.0.1:$PRIV_PG_PORT/roles_outage"
write_ini "$TEST_TMP/ctl.ini" "$DB"
"$OUTBOXCTL" -c "$TEST_TMP/ctl.ini" migrate >/dev/null
make_queues "roles-outage-$$" 5 2
consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL"

check "PostgreSQL stopped" private_pg_ctl -m fast -w stop
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"
check "the consumer runs without its database" wait_for 10 grep -q "maintenance could not connect" "$TEST_TMP/consumer.log"
# CPU time (user + system, in clock ticks) over a 3 s window of the outage:
# backing off, the process's threads sleep nearly all of it.
ticks() { awk '{print $14 + $15}' "/proc/$CPID/stat"; }
t0=$(ticks)
sleep 3
used=$(( $(ticks) - t0 ))
echo "# CPU used during 3 s of outage: $used ticks of $(getconf CLK_TCK) per second"
check "no thread spins while the database is down (under a third of a core)" \
	[ "$used" -lt "$(getconf CLK_TCK)" ]

check "PostgreSQL started again" private_pg_ctl -w start
check "the instance registers once the database is back" \
	wait_sql "$DB" "SELECT role || ' ' || destinations::text FROM outbox.relay_instances WHERE instance_id LIKE '%:$CPID'" 'consumer ["news"]' 30
check "a clean stop exits 0" stop_consumer
CPID=
check "a clean stop deletes the row" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.relay_instances")" = 0 ]
finish
