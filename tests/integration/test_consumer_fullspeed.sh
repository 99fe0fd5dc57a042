#!/bin/bash
# test_consumer_fullspeed.sh: a slow LLM (the stub answers after 1 s) runs
# at the workers' concurrency: news_llm is OUTBOX_PLUGIN_CONCURRENT, so the
# four workers of one outboxd call the model at once (the stub counts the
# calls in flight); with [destination:news] max_in_flight = 2 it never sees
# more than two at once.  Every job runs once and nothing reaches the DLQ.
# The two-instance, 400-job version with figures is tests/bench/slow-llm.sh.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
pl_require

export WORKERS=4 VIS=30 LEASE=30
STUB_DELAY_MS=1000 stub_start
pl_setup fullspeed

# run_jobs N FIRST: enqueue N news items numbered from FIRST, wait until
# every job of the database is SUCCEEDED.
run_jobs() {
	local n=$1 first=$2 total
	for i in $(seq "$first" $((first + n - 1))); do news_line "$i"; done >"$TEST_TMP/items.jsonl"
	enqueue_news "$TEST_TMP/items.jsonl" >/dev/null
	total=$(q "SELECT count(*) FROM outbox.jobs")
	wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" "$total" 120
}

# --- four workers, no bound: calls overlap ----------------------------------
outboxd_start "$TEST_TMP/outboxd-a.log"
A=$OPID
check "outboxd is connected" wait_sql "$DB" \
	"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
	    AND application_name = 'outboxd relay listener'" 1 30
stub_script ''
check "40 jobs with a 1 s model end SUCCEEDED" run_jobs 40 1
check "one LLM call per job" test "$(stub_requests)" = 40
most=$(stub_max_in_flight)
check "the stub answered more than one call at once (most: $most)" test "$most" -gt 1
check "the stub never saw more calls at once than workers (most: $most)" test "$most" -le 4
check "every job ran once" test "$(q "SELECT count(*) FROM outbox.jobs WHERE attempt_count <> 1")" = 0
check "one extraction per job" test "$(q "SELECT count(*) FROM news_llm.extractions")" = 40
check "nothing in the DLQ" test "$(q "SELECT count(*) FROM outbox.dlq_messages")" = 0
check "outboxd stops cleanly" outboxd_stop "$A"

# --- max_in_flight = 2: never more than two calls at once -------------------
pl_ini "$INI" "$DB" fullspeed "max_in_flight = 2"
check "max_in_flight = 2 passes --check-config" "$OUTBOXD" -c "$INI" --check-config
outboxd_start "$TEST_TMP/outboxd-b.log"
B=$OPID
stub_script ''
check "20 more jobs end SUCCEEDED" run_jobs 20 101
check "one LLM call per new job" test "$(stub_requests)" = 60
most=$(stub_max_in_flight)
check "at most two calls at once at the stub (most: $most)" test "$most" -le 2
check "the two calls did overlap (most: $most)" test "$most" = 2
check "every job ran once" test "$(q "SELECT count(*) FROM outbox.jobs WHERE attempt_count <> 1")" = 0
check "nothing in the DLQ" test "$(q "SELECT count(*) FROM outbox.dlq_messages")" = 0
check "outboxd stops cleanly" outboxd_stop "$B"

# --- a bad value is refused with FILE:LINE -----------------------------------
pl_ini "$TEST_TMP/bad.ini" "$DB" fullspeed "max_in_flight = 65"
"$OUTBOXD" -c "$TEST_TMP/bad.ini" --check-config >"$TEST_TMP/bad.out" 2>&1 && rc=0 || rc=$?
check "max_in_flight = 65 is refused (exit 78)" test "$rc" = 78
check "the error names file, line, section and key" \
	grep -qE "bad\.ini:[0-9]+: \[destination:news\] max_in_flight: " "$TEST_TMP/bad.out"
finish
