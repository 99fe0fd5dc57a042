#!/bin/bash
# test_webhook_crash.sh: what a receiver sees when things go wrong.
#  - outboxd is SIGKILLed while a request is in flight: the job is delivered
#    again, with the same webhook-id (the receiver's idempotency key), and
#    still has exactly one delivery row.
#  - hostile receivers (headers one byte at a time, a body without end, a
#    body one byte at a time) cost their own destination timeout_ms or
#    max_response_bytes per attempt and never hold up another destination.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_webhook_lib.sh"
wh_require

receiver_start node
LEASE=5 VIS=5 wh_setup crash \
	"held|hold-first|plugin.timeout_ms = 30000" \
	"fine|ok" \
	"slowhead|slow-headers|plugin.timeout_ms = 1500" \
	"endless|endless|plugin.max_response_bytes = 1048576" \
	"trickle|trickle|plugin.timeout_ms = 1500"

# --- SIGKILL with a request in flight ----------------------------------------
outboxd_start "$TEST_TMP/outboxd-a.log"
A=$OPID
J=$(enqueue_jobs held 1)
check "the first request reached the receiver" wait_for 20 grep -qF -- "$J:0" "$RECV_LOG"
check "it is CLAIMED while the receiver holds the request" \
	test "$(q "SELECT status FROM outbox.jobs WHERE job_id = '$J'")" = CLAIMED
kill -KILL "$A"
wait "$A" 2>/dev/null || true
check "no delivery row while the request was in flight" \
	test "$(q "SELECT count(*) FROM webhook.deliveries")" = 0
outboxd_start "$TEST_TMP/outboxd-b.log"
check "after the restart the job ends SUCCEEDED" wait_sql "$DB" \
	"SELECT status FROM outbox.jobs WHERE job_id = '$J'" SUCCEEDED 40
check "the receiver saw it twice, with the same webhook-id, both signatures valid" \
	test "$(jq -r "select(.job_id == \"$J\") | \"\(.id) \(.valid)\"" "$RECV_LOG" | sort | uniq -c |
	        awk '{print $1, $2, $3}')" = "2 $J:0 true"
check "still exactly one delivery row, for the second attempt" \
	test "$(q "SELECT count(*) || '/' || min(attempt) FROM webhook.deliveries WHERE job_id = '$J'")" = 1/2

# --- hostile receivers do not stall other destinations ----------------------
enqueue_jobs slowhead 4 >/dev/null
enqueue_jobs endless 4 >/dev/null
enqueue_jobs trickle 4 >/dev/null
started=$SECONDS
enqueue_jobs fine 20 >/dev/null
check "meanwhile 20 jobs to a well-behaved receiver all SUCCEED" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE destination = 'fine' AND status = 'SUCCEEDED'" 20 30
echo "# the 20 'fine' jobs took $((SECONDS - started)) s"
check "a body without end is read up to max_response_bytes and judged by its 200" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE destination = 'endless' AND status = 'SUCCEEDED'" 4 30
check "slow headers: RETRY after timeout_ms" wait_sql "$DB" \
	"SELECT bool_and(attempt_count >= 1 AND last_error LIKE '%no complete answer within timeout_ms (1500 ms)%')
	 FROM outbox.jobs WHERE destination = 'slowhead' AND status <> 'CLAIMED'" t 30
check "a body one byte at a time: RETRY after timeout_ms" wait_sql "$DB" \
	"SELECT bool_and(attempt_count >= 1 AND last_error LIKE '%no complete answer within timeout_ms (1500 ms)%')
	 FROM outbox.jobs WHERE destination = 'trickle' AND status <> 'CLAIMED'" t 30
rss_kib=$(awk '/^VmHWM/ {print $2}' "/proc/$OPID/status")
check "outboxd's peak RSS stays small (${rss_kib} KiB < 64 MiB)" test "$rss_kib" -lt 65536
check "every request had a valid signature" test "$(recv_count '.valid | not')" = 0
finish
