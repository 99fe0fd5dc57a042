#!/bin/bash
# Every outboxd process registers in outbox.relay_instances with its role
# (docs/schema.md): a consumer-only instance (role consumer, the maintenance
# thread keeps its row) shows in outboxctl status with its destinations,
# its heartbeat is refreshed, a reload updates its destinations and a clean
# stop deletes the row; --role all registers one row with role all, --role
# relay one with role relay.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws
stop_daemons_at_exit

setup_db "instance_roles_$$"
make_queues "roles-$$-price" 5 2
PQ=$QURL PDLQ=$DLQURL
make_queues "roles-$$-news" 5 2
INI=$TEST_TMP/c.ini
consumer_ini "$INI" "$DB" news "$QURL" "$DLQURL"
recorder_destination price "$PQ" "$PDLQ" >>"$INI"
ctl() { "$OUTBOXCTL" -c "$INI" "$@"; }
row() { psql_q "$DB" "SELECT role || ' ' || destinations::text FROM outbox.relay_instances WHERE instance_id LIKE '%:$1'"; }
rows() { psql_q "$DB" "SELECT count(*) FROM outbox.relay_instances"; }
# the status --json instance of pid $1, as "role destinations live"
status_of() {
	ctl --json status | jq -r --arg p ":$1" \
		'.instances[] | select(.instance_id | endswith($p)) | "\(.role) \(.destinations | join(",")) \(.live)"'
}

# --- --role consumer --------------------------------------------------------
start_consumer "$INI" "$TEST_TMP/consumer.log"
check "consumer-only: registered with role consumer and its destinations" \
	wait_sql "$DB" "SELECT role || ' ' || destinations::text FROM outbox.relay_instances WHERE instance_id LIKE '%:$CPID'" 'consumer ["news", "price"]' 20
check "consumer-only: one row" [ "$(rows)" = 1 ]
check "status --json: role consumer, its destinations, live" [ "$(status_of "$CPID")" = "consumer news,price true" ]
check "status text: the instance's line says consumer" sh -c "'$OUTBOXCTL' -c '$INI' status | grep -qE ':$CPID +consumer +.* yes +news, price\$'"

# The heartbeat is refreshed on the relay's cadence (every 30 s).
psql_q "$DB" "UPDATE outbox.relay_instances SET heartbeat_at = now() - interval '5 min'" >/dev/null
check "status: a row 5 min old is not live" [ "$(status_of "$CPID")" = "consumer news,price false" ]
check "consumer-only: the heartbeat is refreshed within 35 s" \
	wait_sql "$DB" "SELECT heartbeat_at > now() - interval '10 s' FROM outbox.relay_instances WHERE instance_id LIKE '%:$CPID'" t 35

# A reload that removes a destination re-registers at once without it.
consumer_ini "$INI" "$DB" news "$QURL" "$DLQURL"
kill -HUP "$CPID"
check "reload: the row lists the destinations in force" \
	wait_sql "$DB" "SELECT role || ' ' || destinations::text FROM outbox.relay_instances WHERE instance_id LIKE '%:$CPID'" 'consumer ["news"]' 20

check "consumer-only: a clean stop exits 0" stop_consumer
check "consumer-only: a clean stop deletes the row" [ "$(rows)" = 0 ]
CPID=

# --- --role all and --role relay -------------------------------------------
"$OUTBOXD" -c "$INI" >>"$TEST_TMP/all.log" 2>&1 &
RPID=$!
check "--role all: one row, role all" \
	wait_sql "$DB" "SELECT string_agg(role || ' ' || destinations::text, ';') FROM outbox.relay_instances WHERE instance_id LIKE '%:$RPID'" 'all ["news"]' 20
check "status --json: role all" [ "$(status_of "$RPID")" = "all news true" ]
kill -TERM "$RPID"
check "--role all: a clean stop exits 0" wait "$RPID"
check "--role all: a clean stop deletes the row" [ "$(rows)" = 0 ]

"$OUTBOXD" -c "$INI" --role relay >>"$TEST_TMP/relay.log" 2>&1 &
RPID=$!
check "--role relay: role relay" \
	wait_sql "$DB" "SELECT role || ' ' || destinations::text FROM outbox.relay_instances WHERE instance_id LIKE '%:$RPID'" 'relay ["news"]' 20
kill -TERM "$RPID"
check "--role relay: a clean stop exits 0" wait "$RPID"
check "--role relay: a clean stop deletes the row" [ "$(rows)" = 0 ]
RPID=

finish
