#!/bin/bash
# test_relay_crash_after_send.sh: a relay killed after SendMessageBatch
# returned and before it marked the events (fault point relay.after_send)
# leaves them NEW and claimed; once the lease expires a restarted relay
# sends them again (each arrives twice) and marks them PUBLISHED.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_relay_lib.sh"
require_pg
require_aws

relay_setup crash crashdest poll_interval_ms=100 claim_lease_seconds=5
insert_events "$ci" crash crashdest 3

relay_run "$TEST_TMP/relay1.log" "$ini" OUTBOX_FAULT_POINT=relay.after_send
rc=0
wait "$RELAY_PID" || rc=$?
check "the relay died at relay.after_send (exit 137)" test "$rc" -eq 137
check "the sent events are still NEW and claimed" test \
	"$(psql_q "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'NEW' AND claimed_by IS NOT NULL")" = 3

relay_run "$TEST_TMP/relay2.log" "$ini"
check "the restarted relay publishes them after the lease" \
	wait_sql "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'" 3 20
check "not before the lease expired" test \
	"$(psql_q "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE published_at < created_at + interval '4.9 s'")" = 0
kill "$RELAY_PID"
rc=0
wait "$RELAY_PID" || rc=$?
check "the relay stops cleanly on SIGTERM" test "$rc" -eq 0

receive_bodies "$queue" 6 >"$TEST_TMP/bodies"
check "six messages arrived" test "$(wc -l <"$TEST_TMP/bodies")" -eq 6
check "every event arrived exactly twice" test \
	"$(sort "$TEST_TMP/bodies" | uniq -c | awk '{print $1}' | sort -u | tr -d '\n')" = 2
check "the three events are the ones in the outbox" test \
	"$(psql_q "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE body IN ($(sort -u "$TEST_TMP/bodies" | sed "s/.*/'&'/" | paste -sd,))")" = 3
finish
