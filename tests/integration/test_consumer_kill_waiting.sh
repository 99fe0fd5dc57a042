#!/bin/bash
# test_consumer_kill_waiting.sh: a SIGKILL counts a crash only for the run
# that had started (docs/outboxd.md, "Quarantine").  One worker claims five
# news jobs in one batch (a slow model: 1.5 s a call) and is SIGKILLed while
# the first one's LLM call runs: only that job's run was recorded as
# started; after the leases expire a second outboxd runs all five, the
# four that never started count no crash and run once, and every job has
# one extraction.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
pl_require

export WORKERS=1 VIS=30 LEASE=30
STUB_DELAY_MS=1500 stub_start
pl_setup killwait
outboxd_start "$TEST_TMP/outboxd-a.log"
A=$OPID
check "outboxd is connected" wait_sql "$DB" \
	"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
	    AND application_name = 'outboxd relay listener'" 1 30
# The first call answers as the others (1.5 s), the next one (the batch's
# first) 5 s later still, so the checks below see the batch while it runs.
stub_script $'ok\nsleep 5000'
in_flight() { [ "$(curl -fsS "$STUB_URL/_stub/stats" | jq -r .in_flight)" -ge 1 ]; }
# Six jobs at once: before anything is measured a worker takes one message,
# whose run measures the handler (1.5 s: a worker then takes up to six, a
# third of the 30 s lease); the other five are published meanwhile, so the
# worker's next receive brings them all.
for i in 0 1 2 3 4 5; do news_line "$i"; done >"$TEST_TMP/items.jsonl"
enqueue_news "$TEST_TMP/items.jsonl" >/dev/null
check "the first job ends SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) >= 1 FROM outbox.jobs WHERE status = 'SUCCEEDED'" t 30
check "one batch claims all five" wait_sql "$DB" \
	"SELECT count(*) || '/' || count(DISTINCT claimed_by) FROM outbox.jobs WHERE status = 'CLAIMED'" 5/1 30
check "the batch's first LLM call is running" wait_for 30 in_flight
check "only the running job's run is recorded as started" \
	test "$(q "SELECT count(*) FROM outbox.jobs WHERE status = 'CLAIMED' AND started_by IS NOT NULL")" = 1
kill -KILL "$A"
wait "$A" 2>/dev/null || true

outboxd_start "$TEST_TMP/outboxd-b.log"
B=$OPID
check "a second outboxd runs all five to SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" 6 150
check "one crash counted, for the job that was running" \
	test "$(q "SELECT count(*) FILTER (WHERE crash_count > 0) || '/' || sum(crash_count) FROM outbox.jobs")" = 1/1
check "seven LLM calls: the killed one and one per job" test "$(stub_requests)" = 7
check "one extraction per job" test "$(q "SELECT count(*) FROM news_llm.extractions")" = 6
check "nothing DEAD, nothing in the DLQ" \
	test "$(q "SELECT (SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD') + (SELECT count(*) FROM outbox.dlq_messages)")" = 0
check "outboxd stops cleanly" outboxd_stop "$B"
finish
