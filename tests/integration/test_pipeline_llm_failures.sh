#!/bin/bash
# test_pipeline_llm_failures.sh: LLM failures end to end through the real
# binaries (outboxd --role all, news_llm, the stub LLM's fault script,
# PostgreSQL, fauxqs):
#   - HTTP 500, then 200: RETRY with backoff, then exactly one extraction
#     (attempt_count 2, SUCCEEDED);
#   - a malformed answer (and a wrong-shaped one, and one cut at max_tokens):
#     DEAD with dead_reason PERMANENT, last_error naming the problem, no row;
#   - no answer within plugin.timeout_ms: RETRY (PENDING, next_attempt_at in
#     the future, last_error names the timeout), then success;
#   - outboxctl redrive of the permanently failed job: it runs once more and
#     stores its one row.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
pl_require

stub_start
RETRY_BASE=2 RETRY_MAX=8
pl_setup llmfail "plugin.timeout_ms = 1000"
outboxd_start "$TEST_TMP/outboxd.log"

# one_item N TITLE: enqueue one synthetic item; prints its job id
one_item() {
	news_line "$1" "$2" >"$TEST_TMP/item$1.jsonl"
	enqueue_news "$TEST_TMP/item$1.jsonl"
}
job() { q "SELECT $2 FROM outbox.jobs WHERE job_id = '$1'"; }
rows() { q "SELECT count(*) FROM news_llm.extractions WHERE job_id = '$1'"; }

# --- 500, then 200 -------------------------------------------------------
stub_script $'500\n200'
r0=$(stub_requests)
J=$(one_item 1 "Apple opens a new store")
check "500: the job goes back to PENDING, due later, with the HTTP status in last_error" wait_sql "$DB" \
	"SELECT status || ':' || attempt_count || ':' || (next_attempt_at > now()) || ':' || (last_error LIKE '%HTTP 500%')
	   FROM outbox.jobs WHERE job_id = '$J'" PENDING:1:true:true 20
check "500: no extraction yet" test "$(rows "$J")" = 0
check "then 200: SUCCEEDED on the second attempt" wait_sql "$DB" \
	"SELECT status || ':' || attempt_count FROM outbox.jobs WHERE job_id = '$J'" SUCCEEDED:2 20
check "exactly one extraction row" test "$(rows "$J")/$(q "SELECT count(*) FROM news_llm.extractions")" = 1/1
check "the retry waited for retry_base_seconds (2 s)" \
	test "$(job "$J" "extract(epoch FROM finished_at - created_at) >= 1.9")" = t
check "two LLM requests" test "$(( $(stub_requests) - r0 ))" = 2

# --- malformed, wrong shape, cut off: DEAD PERMANENT, no row -------------
n=2
for fault in "malformed|not a JSON object" "wrongshape|wrong shape" "truncated|cut off at max_tokens"; do
	stub_script "${fault%%|*}"
	r0=$(stub_requests)
	J=$(one_item $n "Apple store hours item $n")
	[ -n "${JM:-}" ] || JM=$J
	n=$((n + 1))
	check "${fault%%|*}: DEAD with dead_reason PERMANENT after one attempt" wait_sql "$DB" \
		"SELECT status || ':' || dead_reason || ':' || attempt_count FROM outbox.jobs WHERE job_id = '$J'" DEAD:PERMANENT:1 20
	check "${fault%%|*}: last_error names the problem (\"${fault#*|}\")" \
		test "$(job "$J" "last_error LIKE '%${fault#*|}%'")" = t
	check "${fault%%|*}: no extraction row" test "$(rows "$J")" = 0
	check "${fault%%|*}: the event was published once, the LLM asked once" \
		test "$(q "SELECT string_agg(status, ',') FROM outbox.outbox_events WHERE job_id = '$J'")/$(( $(stub_requests) - r0 ))" = PUBLISHED/1
done
check "outboxctl dead lists the three with PERMANENT" \
	test "$("$OUTBOXCTL" -c "$INI" --json dead | jq '[.jobs[] | select(.dead_reason == "PERMANENT")] | length')" = 3

# --- a timeout (the stub answers after 3 s, timeout_ms is 1000) ----------
stub_script 'sleep 3000'
r0=$(stub_requests)
J=$(one_item 9 "Apple configurator update")
check "timeout: RETRY -> PENDING, next_attempt_at in the future, last_error names the timeout" wait_sql "$DB" \
	"SELECT status || ':' || attempt_count || ':' || (next_attempt_at > now()) || ':' || (last_error LIKE '%timed out after 1000 ms%')
	   FROM outbox.jobs WHERE job_id = '$J'" PENDING:1:true:true 20
check "timeout: no extraction yet" test "$(rows "$J")" = 0
check "timeout: then SUCCEEDED on the second attempt" wait_sql "$DB" \
	"SELECT status || ':' || attempt_count FROM outbox.jobs WHERE job_id = '$J'" SUCCEEDED:2 20
check "timeout: exactly one extraction row" test "$(rows "$J")" = 1
check "timeout: two LLM requests" test "$(( $(stub_requests) - r0 ))" = 2

# --- a permanent failure redriven by hand once the cause is gone ---------
r0=$(stub_requests)
out=$("$OUTBOXCTL" -c "$INI" redrive "$JM" 2>&1)
check "redrive of the malformed-answer job prints its new event" test "$out" = "$JM news:$JM:1"
check "redrive: the job SUCCEEDED at redrive generation 1, one attempt" wait_sql "$DB" \
	"SELECT status || ':' || redrive_generation || ':' || attempt_count || ':' || coalesce(dead_reason, '-') FROM outbox.jobs WHERE job_id = '$JM'" \
	SUCCEEDED:1:1:- 20
check "redrive: exactly one extraction row" test "$(rows "$JM")" = 1
check "redrive: both generations' events PUBLISHED" \
	test "$(q "SELECT string_agg(redrive_generation || status, ',' ORDER BY redrive_generation) FROM outbox.outbox_events WHERE job_id = '$JM'")" = 0PUBLISHED,1PUBLISHED
check "redrive: one LLM request" test "$(( $(stub_requests) - r0 ))" = 1

check "nothing left to do" wait_idle 10
check "totals: 3 SUCCEEDED, 2 DEAD, 3 extractions" \
	test "$(q "SELECT count(*) FILTER (WHERE status = 'SUCCEEDED') || '/' || count(*) FILTER (WHERE status = 'DEAD') || '/' || (SELECT count(*) FROM news_llm.extractions) FROM outbox.jobs")" = 3/2/3
check "the API key never reached a log or last_error" \
	test "$(grep -c stub-key-not-a-secret "$TEST_TMP/outboxd.log" || true)/$(q "SELECT count(*) FROM outbox.jobs WHERE last_error LIKE '%stub-key-not-a-secret%'")" = 0/0
check "outboxd stops cleanly (exit 0)" outboxd_stop "$OPID"
finish
