#!/bin/bash
# test_consumer_kill_waiting.sh: a SIGKILL counts a crash only for the run
# that had started (docs/outboxd.md, "Quarantine").  One worker claims five
# news jobs in one batch (a slow model: 3 s a call) and is SIGKILLed while
# the first one's LLM call runs: only that job's run was recorded as
# started; after the leases expire a second outboxd runs all five, the
# four that never started count no crash and run once, and every job has
# one extraction.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
pl_require

export WORKERS=1 VIS=10 LEASE=5
STUB_DELAY_MS=3000 stub_start
pl_setup killwait
# Published by a relay alone, so that the consumer's first receive brings
# all five.
"$OUTBOXD" -c "$INI" --role relay >>"$TEST_TMP/outboxd-relay.log" 2>&1 &
R=$!
pl_pids+=("$R")
for i in 1 2 3 4 5; do news_line "$i"; done >"$TEST_TMP/items.jsonl"
enqueue_news "$TEST_TMP/items.jsonl" >/dev/null
check "the five events are published" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'" 5 30
check "the relay stops cleanly" outboxd_stop "$R"
stub_script ''
outboxd_start "$TEST_TMP/outboxd-a.log"
A=$OPID
check "one batch claims all five" wait_sql "$DB" \
	"SELECT count(*) || '/' || count(DISTINCT claimed_by) FROM outbox.jobs WHERE status = 'CLAIMED'" 5/1 30
in_flight() { [ "$(curl -fsS "$STUB_URL/_stub/stats" | jq -r .in_flight)" -ge 1 ]; }
check "the first job's LLM call is running" wait_for 30 in_flight
check "only the running job's run is recorded as started" \
	test "$(q "SELECT count(*) FROM outbox.jobs WHERE status = 'CLAIMED' AND started_by IS NOT NULL")" = 1
kill -KILL "$A"
wait "$A" 2>/dev/null || true

outboxd_start "$TEST_TMP/outboxd-b.log"
B=$OPID
check "a second outboxd runs all five to SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" 5 90
check "one crash counted, for the job that was running" \
	test "$(q "SELECT count(*) FILTER (WHERE crash_count > 0) || '/' || sum(crash_count) FROM outbox.jobs")" = 1/1
check "six LLM calls: the killed one and one per job" test "$(stub_requests)" = 6
check "one extraction per job" test "$(q "SELECT count(*) FROM news_llm.extractions")" = 5
check "nothing DEAD, nothing in the DLQ" \
	test "$(q "SELECT (SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD') + (SELECT count(*) FROM outbox.dlq_messages)")" = 0
check "outboxd stops cleanly" outboxd_stop "$B"
finish
