#!/bin/bash
# test_webhook.sh: the webhook plugin end to end (outboxd --role all,
# PostgreSQL, fauxqs) against a Node receiver that verifies every request
# with the reference `standardwebhooks` package.  20 jobs are delivered, one
# delivery row each, every signature valid and the headers and body as
# documented; then each answer's verdict: 503 + Retry-After (and a 429 whose
# Retry-After is longer than the backoff), 400, a redirect,
# a receiver that never answers, a 10 MiB answer.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_webhook_lib.sh"
wh_require

receiver_start node
wh_setup basic \
	"orders|ok|plugin.header.X-Test = static-value" \
	"busy|status/503?after=1&times=1" \
	"slowdown|status/429?after=3&times=1" \
	"refuse|status/400" \
	"moved|redirect" \
	"hang|hang|plugin.timeout_ms = 1000" \
	"big|big?mib=10|plugin.max_response_bytes = 65536"
outboxd_start "$TEST_TMP/outboxd.log"

# --- 20 jobs: SUCCEEDED, one delivery row each, every signature valid -------
enqueue_jobs orders 20 >"$TEST_TMP/orders.ids"
check "20 jobs enqueued" test "$(sort -u "$TEST_TMP/orders.ids" | wc -l)" = 20
check "all 20 end SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE destination = 'orders' AND status = 'SUCCEEDED'" 20 30
check "one delivery row per job, status 200, attempt 1" test "$(q "SELECT count(*) || '/' ||
	count(DISTINCT job_id) || '/' || bool_and(status_code = 200 AND attempt = 1 AND redrive_generation = 0)
	FROM webhook.deliveries d WHERE EXISTS (SELECT 1 FROM outbox.jobs j
	WHERE j.job_id = d.job_id AND j.destination = 'orders')")" = 20/20/true
check "every request to /ok had a valid signature (standardwebhooks)" \
	test "$(recv_count '.path == "/ok" and .valid')/$(recv_count '.path == "/ok"')" = 20/20
check "webhook-id is JOB_ID:0 for every job" test "$(jq -r 'select(.path == "/ok") | .id' "$RECV_LOG" |
	sort | tr '\n' ' ')" = "$(sed 's/$/:0/' "$TEST_TMP/orders.ids" | sort | tr '\n' ' ')"
check "the body's data.job_id matches webhook-id" \
	test "$(recv_count '.path == "/ok" and (.id == (.job_id + ":0"))')" = 20
check "type, traceparent (header and body), User-Agent and the static header" \
	test "$(recv_count '.path == "/ok" and .type == "order" and .extra == "static-value"
		and .traceparent == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		and .header_traceparent == .traceparent and (.user_agent | test("^outboxd/[0-9]"))')" = 20
check "the timestamp is Unix seconds of now" \
	test "$(recv_count '.path == "/ok" and ((.timestamp | tonumber) * 1000 - .at_ms | fabs) < 5000')" = 20

# --- 503 + Retry-After: 1, then 200 ----------------------------------------
B=$(enqueue_jobs busy 1)
check "busy: RETRY first (PENDING, attempt 1, the status in last_error)" wait_sql "$DB" \
	"SELECT status || ' ' || attempt_count || ' ' || (last_error LIKE '%HTTP 503, Retry-After 1 s%')
	 FROM outbox.jobs WHERE job_id = '$B' AND (status <> 'CLAIMED')" "PENDING 1 true" 20 ||
	q "SELECT status, attempt_count, last_error FROM outbox.jobs WHERE job_id = '$B'" >&2
first_ms=$(jq -r 'select(.path | startswith("/status/503")) | .at_ms' "$RECV_LOG" | head -n 1)
check "busy: the retry is due no sooner than 1 s after the 503 (next_attempt_at)" \
	test "$(q "SELECT extract(epoch FROM next_attempt_at) * 1000 >= $first_ms + 1000
	          FROM outbox.jobs WHERE job_id = '$B'")" = t
check "busy: then SUCCEEDED on attempt 2" wait_sql "$DB" \
	"SELECT status || ' ' || attempt_count FROM outbox.jobs WHERE job_id = '$B'" "SUCCEEDED 2" 20
second_ms=$(jq -r 'select(.path | startswith("/status/503")) | .at_ms' "$RECV_LOG" | sed -n 2p)
check "busy: the second request came at least 1 s after the first" \
	test "$(( ${second_ms:-0} - ${first_ms:-0} ))" -ge 1000
check "busy: same webhook-id on both attempts, both signatures valid" \
	test "$(jq -r 'select(.path | startswith("/status/503")) | "\(.id) \(.valid)"' "$RECV_LOG" | sort -u)" = "$B:0 true"
check "busy: its delivery row says attempt 2, status 200" \
	test "$(q "SELECT attempt || '/' || status_code FROM webhook.deliveries WHERE job_id = '$B'")" = 2/200

# --- 429 + Retry-After: 3, longer than the backoff (1 s): the ask wins ------
S=$(enqueue_jobs slowdown 1)
check "slowdown: SUCCEEDED on attempt 2" wait_sql "$DB" \
	"SELECT status || ' ' || attempt_count FROM outbox.jobs WHERE job_id = '$S'" "SUCCEEDED 2" 30
check "slowdown: the second request came at least 3 s after the first" \
	test "$(jq -s "[.[] | select(.id == \"$S:0\") | .at_ms] | .[1] - .[0]" "$RECV_LOG")" -ge 3000

# --- 400: DEAD PERMANENT with the body's start, escaped ---------------------
R=$(enqueue_jobs refuse 1)
check "refuse: DEAD PERMANENT after one attempt" wait_sql "$DB" \
	"SELECT status || ' ' || dead_reason || ' ' || attempt_count FROM outbox.jobs WHERE job_id = '$R'" \
	"DEAD PERMANENT 1" 20
err=$(q "SELECT last_error FROM outbox.jobs WHERE job_id = '$R'")
check "refuse: last_error has the status and the body excerpt" \
	grep -qF 'refused the job with HTTP 400: bad request: field "amount" \x00\x1b[31m\x0d\x0a\xff\xfe\xc3 \\ end;xxx' <<<"$err"
# 46 bytes before the run of x: the excerpt is the body's first 512 bytes
check "refuse: the excerpt stops at 512 bytes of body" \
	test "$(grep -o 'x*$' <<<"$err" | tr -d '\n' | wc -c)" = $((512 - 46))
check "refuse: no delivery row" test "$(q "SELECT count(*) FROM webhook.deliveries WHERE job_id = '$R'")" = 0

# --- a redirect: FAIL, not followed -----------------------------------------
M=$(enqueue_jobs moved 1)
check "moved: DEAD PERMANENT, redirect named in last_error" wait_sql "$DB" \
	"SELECT status || ' ' || dead_reason || ' ' || (last_error LIKE '%HTTP 302 (redirect to \"http://127.0.0.1:%/ok\"): redirects are not followed%')
	 FROM outbox.jobs WHERE job_id = '$M'" "DEAD PERMANENT true" 20
check "moved: the redirect was not followed (no request to /ok for it)" \
	test "$(recv_count ".id == \"$M:0\"")" = 1

# --- a receiver that never answers: RETRY at timeout_ms ---------------------
H=$(enqueue_jobs hang 1)
check "hang: RETRY with the timeout in last_error" wait_sql "$DB" \
	"SELECT status || ' ' || (last_error LIKE '%no complete answer within timeout_ms (1000 ms)%')
	 FROM outbox.jobs WHERE job_id = '$H' AND attempt_count >= 1 AND status = 'PENDING'" "PENDING true" 20
# The attempt and the time its retry was recorded, read together (it keeps
# being retried), against the receiver's time of that attempt's request.
# timeout_ms runs from before the request reached the receiver, hence 900.
IFS='|' read -r hang_attempt gave_up <<<"$(q "SELECT attempt_count,
	round(extract(epoch FROM updated_at) * 1000) FROM outbox.jobs WHERE job_id = '$H' AND status = 'PENDING'")"
hang_ms=$(jq -r "select(.id == \"$H:0\" and .attempt == ${hang_attempt:-0}) | .at_ms" "$RECV_LOG")
check "hang: attempt ${hang_attempt:-?} given up $(( ${gave_up:-0} - ${hang_ms:-0} )) ms after its request (900 to 4000: about timeout_ms)" \
	test "$(( ${gave_up:-0} - ${hang_ms:-0} ))" -ge 900 -a "$(( ${gave_up:-0} - ${hang_ms:-0} ))" -lt 4000

# --- a 10 MiB answer: read up to max_response_bytes, judged by its status ---
# The peak RSS before and after: a body read whole would raise it by its
# 10 MiB (a growth, not a total, so that a sanitizer build's larger
# footprint does not count).
hwm_before=$(awk '/^VmHWM/ {print $2}' "/proc/$OPID/status")
G=$(enqueue_jobs big 1)
check "big: SUCCEEDED (200) although the body is far beyond the cap" wait_sql "$DB" \
	"SELECT status FROM outbox.jobs WHERE job_id = '$G'" SUCCEEDED 20
rss_kib=$(awk '/^VmHWM/ {print $2}' "/proc/$OPID/status")
check "big: outboxd's peak RSS grows by less than 4 MiB (${hwm_before} -> ${rss_kib} KiB)" \
	test "$(( rss_kib - hwm_before ))" -lt 4096
check "every request the receiver saw had a valid signature" test "$(recv_count '.valid | not')" = 0

outboxd_stop "$OPID"
check "outboxd stopped cleanly" test $? = 0
check "the secret is in no log line" sh -c "! grep -rqF -- '${WH_SECRET#whsec_}' '$TEST_TMP'/outboxd*.log"
finish
