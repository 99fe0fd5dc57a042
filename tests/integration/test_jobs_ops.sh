#!/bin/bash
# outboxctl jobs, show, cancel and retry (docs/outboxctl.md) against a
# running outboxd with the recorder plugin:
#   jobs: newest first, filters, pages by cursor that neither repeat nor
#         skip a job; bad filters are usage errors;
#   show: every column, events, the payload cut at 4 KiB unless --full,
#         hostile bytes of a payload and an error escaped in text;
#   cancel: a PENDING job never runs, even when its message arrives; a
#         CLAIMED one is refused (exit 1) and --wait cancels it once its
#         attempt ends without success; cancelling again changes nothing;
#   retry: a job in a 300 s backoff runs within two seconds.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
require_pg
require_aws

DB=$(newdb "jobs_ops_$$")
INI="$TEST_TMP/relay.ini"
ini_head "$INI" "$DB"
cat >>"$INI" <<INI
[relay]
poll_interval_ms = 100
retry_base_seconds = 300
retry_max_seconds = 600

$(consumer_section)
INI
ops_dest "$INI" fast
ops_dest "$INI" backoff "plugin.retry_until_attempt = 1"
ops_dest "$INI" slow "plugin.sleep_ms = 3000
plugin.retry_until_attempt = 10"
cp "$INI" "$TEST_TMP/ctl.ini"
ctl() { "$OUTBOXCTL" -c "$INI" "$@"; }
ctl migrate >/dev/null 2>&1
ctl create-queues >/dev/null
psql_q "$DB" "CREATE TABLE public.recorder_runs (job_id text NOT NULL,
	attempt integer NOT NULL, generation integer NOT NULL)" >/dev/null
# enq DEST KEY [PAYLOAD [RUN_AT]]: prints the job_id
enq() {
	psql_q "$DB" "SELECT job_id FROM outbox.enqueue('t_$1', '$1', json_build_object('k', '$2'),
		${3:-'{}'}::jsonb, run_at => ${4:-NULL})"
}
runs_of() { executions "$1"; }

# --- jobs ----------------------------------------------------------------
ids=()
for i in 1 2 3 4 5 6 7; do ids+=("$(enq fast "list-$i" "'{}'" "now() + interval '1 hour'")"); done
other=$(enq slow list-other "'{}'" "now() + interval '1 hour'")
page1=$(ctl --json jobs --destination fast --limit 3)
check "jobs --json: a JSON array of 3 with the spec's keys" \
	[ "$(jq -c 'map(keys | contains(["job_id","job_type","destination","status","attempt_count","created_at"])) | unique' <<<"$page1")" = '[true]' ]
check "jobs: newest first (the last enqueued first)" [ "$(jq -r '.[0].job_id' <<<"$page1")" = "${ids[6]}" ]
c1=$(jq -r '.[2].cursor' <<<"$page1")
page2=$(ctl --json jobs --destination fast --limit 3 --before "$c1")
c2=$(jq -r '.[2].cursor' <<<"$page2")
page3=$(ctl --json jobs --destination fast --limit 3 --before "$c2")
all=$(jq -rs 'add | map(.job_id) | .[]' <(echo "$page1") <(echo "$page2") <(echo "$page3") | sort)
check "three pages hold the 7 jobs, none twice" [ "$all" = "$(printf '%s\n' "${ids[@]}" | sort)" ]
check "the last page is short" [ "$(jq length <<<"$page3")" = 1 ]
check "jobs --type" [ "$(ctl --json jobs --type t_slow | jq -r '.[].job_id')" = "$other" ]
check "jobs --status DEAD: none yet" [ "$(ctl --json jobs --status DEAD | jq length)" = 0 ]
psql_q "$DB" "UPDATE outbox.jobs SET created_at = now() - interval '2 hours' WHERE job_id = '${ids[0]}'" >/dev/null
check "jobs --since 1h leaves out an older job" [ "$(ctl --json jobs --since 1h --destination fast | jq length)" = 6 ]
check "jobs text: a full page names the next one" sh -c "'$OUTBOXCTL' -c '$INI' jobs --limit 2 | grep -q '^next page: --before '"
rc=0; ctl jobs --status RUNNING 2>"$TEST_TMP/err" || rc=$?
check "jobs --status RUNNING: usage error naming the status" \
	sh -c "[ $rc = 64 ] && grep -q 'invalid status \"RUNNING\"' '$TEST_TMP/err'"
rc=0; ctl jobs --before nonsense 2>/dev/null || rc=$?
check "jobs --before nonsense: usage error" [ "$rc" = 64 ]
rc=0; ctl jobs --since 1y 2>/dev/null || rc=$?
check "jobs --since 1y: usage error" [ "$rc" = 64 ]

# --- show ----------------------------------------------------------------
hostile=$(enq fast hostile "jsonb_build_object('text', E'\\x1b[2J\\x1b]0;owned\\x07 \\u202e evil \\n next')" "now() + interval '1 hour'")
psql_q "$DB" "UPDATE outbox.jobs SET last_error = E'handler said \\x1b[31mred\\x1b[0m\\r' WHERE job_id = '$hostile'" >/dev/null
ctl show "$hostile" >"$TEST_TMP/show.txt"
check "show: no escape, bell, carriage return or bidi byte reaches the terminal" \
	sh -c "! LC_ALL=C grep -q \"\$(printf '[\\033\\007\\r]')\" '$TEST_TMP/show.txt' && ! grep -q \"\$(printf '\\342\\200\\256')\" '$TEST_TMP/show.txt'"
check "show: the payload's bytes are shown escaped" grep -qF '\u001B]0;owned\u0007 \xe2\x80\xae evil \n next' "$TEST_TMP/show.txt"
check "show: last_error escaped" grep -qF 'last_error: handler said \x1b[31mred\x1b[0m\r' "$TEST_TMP/show.txt"
check "show: run_at and the event" sh -c "grep -q '^run_at: 20' '$TEST_TMP/show.txt' && grep -q 'event_id: t_fast:$hostile:0' '$TEST_TMP/show.txt'"
check "show --json: the payload as JSON, the raw text intact" \
	[ "$(ctl --json show "$hostile" | jq -r '.payload.text' | od -An -c | tr -s ' ' | head -1 | cut -c1-8)" = " 033 [ 2" ]
big=$(enq fast big "jsonb_build_object('blob', repeat('x', 10000))" "now() + interval '1 hour'")
bigbytes=$(psql_q "$DB" "SELECT octet_length(payload::text) FROM outbox.jobs WHERE job_id = '$big'")
check "show --json: a 10 KB payload is cut at 4 KiB" \
	[ "$(ctl --json show "$big" | jq -c '[.payload_truncated, (.payload | length), .payload_bytes]')" = "[true,4096,$bigbytes]" ]
check "show --full --json: the whole payload" \
	[ "$(ctl --json show --full "$big" | jq -c '[.payload_truncated, (.payload.blob | length)]')" = "[false,10000]" ]
check "show text says the payload is cut" sh -c "'$OUTBOXCTL' -c '$INI' show '$big' | grep -q 'the payload is cut at 4096 of its $bigbytes bytes'"
rc=0; ctl show "$(printf '%064d' 0)" 2>"$TEST_TMP/err" || rc=$?
check "show of an unknown job: exit 1, named" sh -c "[ $rc = 1 ] && grep -q 'no job' '$TEST_TMP/err'"
rc=0; ctl show nothex 2>/dev/null || rc=$?
check "show of a malformed id: usage error" [ "$rc" = 64 ]

ops_start "$INI" "$TEST_TMP/outboxd.log"
W=$(enq fast warmup)
check "outboxd serves (a job of fast succeeds)" wait_for 30 status_is "$DB" "$W" SUCCEEDED

# --- cancel --------------------------------------------------------------
C=$(enq fast cancel-me "'{}'" "now() + interval '1 hour'")
check "cancel a PENDING job" [ "$(ctl cancel "$C")" = "$C cancelled" ]
check "its event is retired" [ "$(psql_q "$DB" "SELECT status || ' ' || dead_reason FROM outbox.outbox_events WHERE job_id = '$C'")" = "DEAD CANCELLED" ]
check "the job is DEAD CANCELLED" [ "$(psql_q "$DB" "SELECT status || ' ' || dead_reason FROM outbox.jobs WHERE job_id = '$C'")" = "DEAD CANCELLED" ]
check "cancel again: already cancelled, exit 0" [ "$(ctl cancel "$C")" = "$C already_cancelled" ]
send_body "$EP/000000000000/ops-$$-fast" "$(event_body "$DB" "$C")"
check "its message, arriving anyway, is deleted" wait_for 20 depth_is "$EP/000000000000/ops-$$-fast" 0
W2=$(enq fast after-cancel)
check "(the consumer keeps serving)" wait_for 30 status_is "$DB" "$W2" SUCCEEDED
check "the cancelled job never ran" [ "$(runs_of "$C")" = 0 ]
check "cancel --json of a finished job: refused, exit 1" \
	sh -c "'$OUTBOXCTL' -c '$INI' --json cancel '$W' 2>/dev/null; [ \$? = 1 ]"
check "cancel --json names the outcome" \
	[ "$(ctl --json cancel "$W" 2>/dev/null | jq -r '.failed[0].outcome + " " + .failed[0].status')" = "finished SUCCEEDED" ]

S=$(enq slow wait-for-me)
claimed() { [ "$(job_status "$DB" "$S")" = CLAIMED ] && [ "$(runs_of "$S")" = 1 ]; }
check "a slow job is CLAIMED and running" wait_for 30 claimed
rc=0; ctl cancel "$S" 2>"$TEST_TMP/err" || rc=$?
check "cancel of a CLAIMED job: refused, exit 1, saying why" \
	sh -c "[ $rc = 1 ] && grep -q 'is CLAIMED: an attempt is running' '$TEST_TMP/err'"
check "(still CLAIMED)" status_is "$DB" "$S" CLAIMED
check "cancel --wait returns once the attempt ended, cancelled" [ "$(ctl cancel --wait "$S")" = "$S cancelled" ]
check "it ran once, and is DEAD CANCELLED" \
	[ "$(runs_of "$S") $(psql_q "$DB" "SELECT status || ' ' || dead_reason FROM outbox.jobs WHERE job_id = '$S'")" = "1 DEAD CANCELLED" ]

# --- retry ---------------------------------------------------------------
B=$(enq backoff retry-me)
in_backoff() { [ "$(psql_q "$DB" "SELECT status = 'PENDING' AND attempt_count = 1 AND next_attempt_at > now() + interval '200 seconds' FROM outbox.jobs WHERE job_id = '$B'")" = t ]; }
check "a job that asked to retry waits out a 300 s backoff" wait_for 30 in_backoff
check "retry: due now" [ "$(ctl retry "$B")" = "$B due_now" ]
t0=$(date +%s%N)
check "it runs again and succeeds within 2 s" wait_for 2 status_is "$DB" "$B" SUCCEEDED
echo "# SUCCEEDED $(( ($(date +%s%N) - t0) / 1000000 )) ms after outboxctl retry"
check "retry of a SUCCEEDED job: refused, exit 1" sh -c "'$OUTBOXCTL' -c '$INI' retry '$B' 2>/dev/null; [ \$? = 1 ]"
F=$(enq fast retry-future "'{}'" "now() + interval '1 hour'")
check "SQL: retry_now() twice in one transaction: due_now, then already_due" \
	[ "$(psql -X -q -At -d "$DB" -c "BEGIN" -c "SELECT outcome FROM outbox.retry_now('$F')" \
		-c "SELECT outcome FROM outbox.retry_now('$F')" -c "ROLLBACK" | tr '\n' ' ')" = "due_now already_due " ]
check "retry --json of a job scheduled for later: due_now" \
	[ "$(ctl --json retry "$F" | jq -r '.retried[0].outcome')" = due_now ]
check "the scheduled job, made due, runs" wait_for 20 status_is "$DB" "$F" SUCCEEDED
check "outboxd logged who cancelled nothing: the log lines are outboxctl's" \
	sh -c "! grep -q 'job cancelled' '$TEST_TMP/outboxd.log'"
check "SQL: outbox.cancel() of an unknown job says not_found" \
	[ "$(psql_q "$DB" "SELECT outcome FROM outbox.cancel(repeat('0', 64))")" = not_found ]
ops_stop "$OPID"
finish
