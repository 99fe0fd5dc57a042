#!/bin/bash
# test_relay_two_instances.sh: two relay processes on one database publish
# every event, and each event is sent by exactly one of them: N events ->
# exactly N messages at the queue, N distinct bodies.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_relay_lib.sh"
require_pg
require_aws

relay_setup two twodest poll_interval_ms=20 batch_size=5

relay_run "$TEST_TMP/relay1.log" "$ini"
pid1=$RELAY_PID
relay_run "$TEST_TMP/relay2.log" "$ini"
pid2=$RELAY_PID
# Several commits while both run, so both compete for the same rows.
for i in 1 2 3 4 5 6; do
	insert_events "$ci" "two$i" twodest 50
done
check "all 300 events are PUBLISHED" \
	wait_sql "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'" 300 30
kill "$pid1" "$pid2"
wait "$pid1" "$pid2" || true

receive_bodies "$queue" 300 >"$TEST_TMP/bodies"
check "exactly 300 messages arrived" test "$(wc -l <"$TEST_TMP/bodies")" -eq 300
check "300 distinct events" test "$(sort -u "$TEST_TMP/bodies" | wc -l)" -eq 300
finish
