#!/bin/bash
# test_pipeline_news.sh: end to end through the real binaries (outboxd
# --role all, news_llm, the stub LLM, PostgreSQL, fauxqs).  A news item ends
# as exactly one extraction row; enqueueing it again changes nothing; with a
# second outboxd running at the same time, every item is still extracted
# exactly once; SIGTERM during a handler finishes it within the grace period,
# or releases its claim after it, and the job then runs once more.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
pl_require

stub_start
pl_setup news
outboxd_start "$TEST_TMP/outboxd-a.log"
A=$OPID

# --- one item: one extraction, job SUCCEEDED, event PUBLISHED ---------------
grep '"published_at": "2026-11-27T14:33:00Z"' "$OUTBOX_SRCDIR/conf/sample/news.jsonl" >"$TEST_TMP/one.jsonl"
J=$(enqueue_news "$TEST_TMP/one.jsonl")
check "enqueue-news printed one job id" test "$(printf '%s\n' "$J" | grep -cE '^[0-9a-f]{64}$')" = 1
check "the job ends SUCCEEDED" wait_sql "$DB" "SELECT status FROM outbox.jobs WHERE job_id = '$J'" SUCCEEDED 20
check "its event is PUBLISHED" test "$(q "SELECT string_agg(status, ',') FROM outbox.outbox_events WHERE job_id = '$J'")" = PUBLISHED
check "exactly one extraction row, keyed by the job id" \
	test "$(q "SELECT count(*) FROM news_llm.extractions")/$(q "SELECT count(*) FROM news_llm.extractions WHERE job_id = '$J'")" = 1/1
check "the extraction is the 14:33 headline, NVDA, positive, by stub-llm" \
	test "$(q "SELECT title LIKE '%approves Nvidia export license%' AND 'NVDA' = ANY (symbols) AND sentiment > 0
	            AND model = 'stub-llm' AND published_at = '2026-11-27T14:33:00Z' FROM news_llm.extractions")" = t
check "one attempt, no error" test "$(q "SELECT attempt_count || ':' || coalesce(last_error, '-') FROM outbox.jobs WHERE job_id = '$J'")" = "1:-"
check "one LLM request" test "$(stub_requests)" = 1

# --- the same item again: nothing changes ----------------------------------
before=$(q "SELECT status || updated_at || attempt_count FROM outbox.jobs WHERE job_id = '$J'")
"$OUTBOXCTL" -c "$INI" enqueue-news "$TEST_TMP/one.jsonl" >"$TEST_TMP/again.out" 2>/dev/null
check "enqueue again: reported as already enqueued" grep -q "^$J news:$J:0 (already enqueued)\$" "$TEST_TMP/again.out"
check "enqueue again: still one job and one event" \
	test "$(q "SELECT (SELECT count(*) FROM outbox.jobs) || '/' || (SELECT count(*) FROM outbox.outbox_events)")" = 1/1
check "enqueue again: the job row is untouched" \
	test "$(q "SELECT status || updated_at || attempt_count FROM outbox.jobs WHERE job_id = '$J'")" = "$before"
check "enqueue again: no NEW event, still one extraction" \
	test "$(q "SELECT (SELECT count(*) FROM outbox.outbox_events WHERE status = 'NEW') || '/' || (SELECT count(*) FROM news_llm.extractions)")" = 0/1

# --- a second outboxd at the same time: still one row per job --------------
outboxd_start "$TEST_TMP/outboxd-b.log"
B=$OPID
# Both instances are up (each has its relay listener connection) before
# the items are enqueued, so both relays and both consumers compete.
check "both instances are connected" wait_sql "$DB" \
	"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
	    AND application_name = 'outboxd relay listener'" 2 20
cp "$OUTBOX_SRCDIR/conf/sample/news.jsonl" "$TEST_TMP/all.jsonl"
for n in $(seq 1 30); do news_line "$n"; done >>"$TEST_TMP/all.jsonl"
enqueue_news "$TEST_TMP/all.jsonl" >"$TEST_TMP/all.ids"
total=$(sort -u "$TEST_TMP/all.ids" | wc -l)
check "64 jobs enqueued (the sample's 34, one of them already there, and 30 more)" \
	test "$total/$(q "SELECT count(*) FROM outbox.jobs")" = 64/64
check "every job ends SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" 64 40
check "every event is PUBLISHED once" \
	test "$(q "SELECT count(*) || '/' || count(DISTINCT job_id) FROM outbox.outbox_events WHERE status = 'PUBLISHED'")" = 64/64
check "exactly one extraction per job, none for anything else" \
	test "$(q "SELECT count(*) || '/' || count(DISTINCT e.job_id) || '/' || count(j.job_id) FROM news_llm.extractions e LEFT JOIN outbox.jobs j USING (job_id)")" = 64/64/64
check "every job ran once (attempt_count 1)" \
	test "$(q "SELECT count(*) FROM outbox.jobs WHERE attempt_count <> 1")" = 0
check "the stub answered exactly one request per job" test "$(stub_requests)" = 64
check "both instances ran jobs (claimed_by names two processes)" \
	test "$(q "SELECT count(DISTINCT split_part(claimed_by, '/', 1)) FROM outbox.jobs")" = 2
check "both instances are alive" kill -0 "$A" "$B"
check "instance B stops cleanly (exit 0)" outboxd_stop "$B"
check "instance A stops cleanly (exit 0)" outboxd_stop "$A"
check "no job left CLAIMED or PENDING" \
	test "$(q "SELECT count(*) FROM outbox.jobs WHERE status <> 'SUCCEEDED'")" = 0

# --- SIGTERM while a handler runs: it finishes within the grace period ----
stub_script 'sleep 2000'
outboxd_start "$TEST_TMP/outboxd-c.log"
J=$(news_line 201 | enqueue_news -)
check "graceful: the job is CLAIMED and its LLM call is running" wait_sql "$DB" \
	"SELECT status FROM outbox.jobs WHERE job_id = '$J'" CLAIMED 20
check "graceful: SIGTERM during the handler, outboxd exits 0" outboxd_stop "$OPID"
check "graceful: the running handler finished and recorded its verdict (SUCCEEDED, 1 attempt, 1 row)" \
	test "$(q "SELECT status || ':' || attempt_count || ':' || (SELECT count(*) FROM news_llm.extractions WHERE job_id = '$J') FROM outbox.jobs WHERE job_id = '$J'")" = SUCCEEDED:1:1

# --- SIGTERM while a handler outlives the grace period: its claim is released
GRACE=1 pl_ini "$TEST_TMP/grace1.ini" "$DB" news
stub_script 'sleep 15000'
OUTBOXD_INI="$TEST_TMP/grace1.ini" outboxd_start "$TEST_TMP/outboxd-d.log"
J=$(news_line 202 | enqueue_news -)
check "release: the job is CLAIMED and its LLM call is hanging" wait_sql "$DB" \
	"SELECT status FROM outbox.jobs WHERE job_id = '$J'" CLAIMED 20
check "release: SIGTERM, outboxd exits 0 without waiting for the LLM" outboxd_stop "$OPID"
check "release: the claim was released (PENDING, due, attempt_count kept, no claim, no row)" \
	test "$(q "SELECT status || ':' || attempt_count || ':' || (next_attempt_at <= now()) || ':' || coalesce(claimed_by, '-') || ':'
	            || (SELECT count(*) FROM news_llm.extractions WHERE job_id = '$J') FROM outbox.jobs WHERE job_id = '$J'")" = "PENDING:1:true:-:0"
outboxd_start "$TEST_TMP/outboxd-e.log"
check "release: after a restart the job runs again and SUCCEEDED (attempt 2)" wait_sql "$DB" \
	"SELECT status || ':' || attempt_count FROM outbox.jobs WHERE job_id = '$J'" SUCCEEDED:2 20
check "release: exactly one extraction row" \
	test "$(q "SELECT count(*) FROM news_llm.extractions WHERE job_id = '$J'")" = 1
check "outboxd stops cleanly (exit 0)" outboxd_stop "$OPID"
finish
