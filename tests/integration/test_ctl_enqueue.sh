#!/usr/bin/env bash
# test_ctl_enqueue.sh: outboxctl enqueue, one job from options and many
# from JSON lines, on a real PostgreSQL.  Good input is enqueued once (a
# second run is a no-op with the same ids, the ids those of
# outbox.job_id()); bad input is named (FILE:LINE for lines), writes
# nothing, and never takes good lines with it.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg

db=$(newdb "outbox_test_ctl_enqueue_$$")
ini="$TEST_TMP/relay.ini"
write_ini "$ini" "$db"
"$OUTBOXCTL" -c "$ini" migrate >/dev/null 2>&1
ctl() { "$OUTBOXCTL" -c "$ini" "$@"; }
rows() { psql_q "$db" "SELECT count(*) || '/' || (SELECT count(*) FROM outbox.outbox_events) FROM outbox.jobs"; }

# --- one job from options -------------------------------------------------
identity='{"type":"welcome","user":42,"name":"Zoë/\"q\""}'
out=$(ctl enqueue --type welcome --destination news --identity "$identity" --payload '{"to":"a@example.com"}')
want=$(psql_q "$db" "SELECT outbox.job_id('$(sed "s/'/''/g" <<<"$identity")')")
check "enqueue prints JOB_ID EVENT_ID" test "$out" = "$want welcome:$want:0"
check "one job, one event" test "$(rows)" = "1/1"
check "the job row holds type, destination and payload" test \
	"$(psql_q "$db" "SELECT job_type || ' ' || destination || ' ' || (payload->>'to') FROM outbox.jobs")" = \
	"welcome news a@example.com"
out2=$(ctl enqueue --type welcome --destination news --identity "$identity" --payload '{"to":"other"}')
check "a second enqueue is a no-op with the same ids" test "$out2" = "$want welcome:$want:0 (already enqueued)"
check "still one job, one event" test "$(rows)" = "1/1"
json=$(ctl --json enqueue --type welcome --destination news --identity "$identity" --payload '{}')
check "--json prints the ids and created" test "$(jq -c . <<<"$json")" = \
	"{\"job_id\":\"$want\",\"event_id\":\"welcome:$want:0\",\"created\":false}"
tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
ctl enqueue --type welcome --destination news --identity '{"user":43}' --payload '{}' \
	--traceparent "$tp" >/dev/null
check "--traceparent is stored with the event" test \
	"$(psql_q "$db" "SELECT traceparent FROM outbox.outbox_events e JOIN outbox.jobs j USING (job_id) WHERE j.identity = '{\"user\":43}'")" = "$tp"

# --- bad options: named, nothing written -----------------------------------
bad() { # bad WANT_RC WANT_MESSAGE ARGS...
	local want_rc=$1 msg=$2 rc=0
	shift 2
	ctl enqueue "$@" >"$TEST_TMP/bad.out" 2>"$TEST_TMP/bad.err" || rc=$?
	[ "$rc" -eq "$want_rc" ] && grep -qF -- "$msg" "$TEST_TMP/bad.err" && [ "$(rows)" = "2/2" ] || {
		echo "exit $rc (wanted $want_rc):"; cat "$TEST_TMP/bad.err"; return 1; }
}
check "identity that is not an object" bad 1 \
	'could not enqueue the job: job identity must be a JSON object, not array' \
	--type t --destination news --identity '[1]' --payload '{}'
check "malformed identity" bad 64 'invalid JSON in "--identity" at column' \
	--type t --destination news --identity '{"a":' --payload '{}'
check "duplicate member" bad 64 'invalid JSON in "--identity"' \
	--type t --destination news --identity '{"a":1,"a":2}' --payload '{}'
check "a number a double cannot hold" bad 64 \
	'"--identity": number 9007199254740993.0 in a job identity does not survive a round trip through a double' \
	--type t --destination news --identity '{"n":9007199254740993.0}' --payload '{}'
check "payload that is a number" bad 1 'job payload must be a JSON object or array, not number' \
	--type t --destination news --identity '{"a":1}' --payload '7'
check "empty type" bad 1 'job type must not be empty' \
	--type '' --destination news --identity '{"a":1}' --payload '{}'
check "bad traceparent" bad 1 'invalid traceparent "xyz"' \
	--type t --destination news --identity '{"a":1}' --payload '{}' --traceparent xyz
check "unconfigured destination" bad 64 'destination "nowhere" is not configured' \
	--type t --destination nowhere --identity '{"a":1}' --payload '{}'
check "missing --payload" bad 64 'usage: enqueue --type T' --type t --destination news --identity '{}'
check "file and --identity together" bad 64 'usage: enqueue' --identity '{}' -

# --- JSON lines ------------------------------------------------------------
cat >"$TEST_TMP/jobs.jsonl" <<JSONL
{"identity":{"order":1},"payload":{"total":10}}
{"identity":{"order":2},"payload":{"total":20}, broken
{"job_type":"refund","identity":{"order":3},"payload":{},"traceparent":"$tp"}

{"identity":[3],"payload":{}}
{"identity":{"order":4}}
{"identity":{"order":5},"payload":{},"destination":"nowhere"}
[1,2]
{"identity":{"order":6},"payload":{},"destination":"price"}
JSONL
rc=0
ctl enqueue --type order --destination news "$TEST_TMP/jobs.jsonl" >"$TEST_TMP/l1.out" 2>"$TEST_TMP/l1.err" || rc=$?
check "lines with bad ones exit 1" test "$rc" -eq 1
check "malformed line named" grep -q 'jobs.jsonl:2: invalid JSON at column' "$TEST_TMP/l1.err"
check "non-object identity named" grep -q 'jobs.jsonl:5: could not enqueue the job: job identity must be a JSON object, not array' "$TEST_TMP/l1.err"
check "missing payload named" grep -q 'jobs.jsonl:6: line needs "identity" and "payload"' "$TEST_TMP/l1.err"
check "unconfigured destination named" grep -q 'jobs.jsonl:7: destination "nowhere" is not configured' "$TEST_TMP/l1.err"
check "non-object line named" grep -q 'jobs.jsonl:8: line must be a JSON object' "$TEST_TMP/l1.err"
check "summary counts" grep -q 'outboxctl: 3 enqueued, 0 already enqueued, 5 rejected' "$TEST_TMP/l1.err"
check "three good lines printed" test "$(grep -cE '^[0-9a-f]{64} (order|refund):[0-9a-f]{64}:0$' "$TEST_TMP/l1.out")" -eq 3
check "good lines written, bad ones not" test "$(rows)" = "5/5"
check "job_type and destination from the line win over the options" test \
	"$(psql_q "$db" "SELECT string_agg(job_type || '@' || destination, ' ' ORDER BY identity->>'order') FROM outbox.jobs WHERE identity ? 'order'")" = \
	"order@news refund@news order@price"
check "traceparent from a line is stored" test \
	"$(psql_q "$db" "SELECT count(*) FROM outbox.outbox_events WHERE event_type = 'refund' AND traceparent = '$tp'")" = 1
rc=0
ctl --json enqueue --type order --destination news - <"$TEST_TMP/jobs.jsonl" >"$TEST_TMP/l2.json" 2>/dev/null || rc=$?
check "stdin again: exit 1, all good lines already enqueued" test \
	"$rc $(jq -c '[.enqueued, .already_enqueued, .rejected_count, [.rejected[].line]]' "$TEST_TMP/l2.json")" = \
	"1 [0,3,5,[2,5,6,7,8]]"
check "stdin again: no new rows" test "$(rows)" = "5/5"
rc=0
ctl enqueue --type order --destination news "$TEST_TMP/missing.jsonl" 2>"$TEST_TMP/l3.err" || rc=$?
check "missing file: exit 1, named" test "$rc" -eq 1 -a -n "$(grep 'could not open' "$TEST_TMP/l3.err")"

# a line over 16 MiB and a line with a NUL byte: refused by line, the rest go on
{ printf '{"identity":{"order":7},"payload":{"pad":"'; head -c 16777216 /dev/zero | tr '\0' x; printf '"}}\n'
  printf '{"identity":{"order":8},"payload":{}}\0\n'
  printf '{"identity":{"order":9},"payload":{}}\n'; } >"$TEST_TMP/limits.jsonl"
rc=0
ctl enqueue --type order --destination news "$TEST_TMP/limits.jsonl" >/dev/null 2>"$TEST_TMP/l4.err" || rc=$?
check "over-long line refused by line" grep -q 'limits.jsonl:1: job is too large (more than 16777216 bytes on one line)' "$TEST_TMP/l4.err"
check "NUL byte refused by line" grep -q 'limits.jsonl:2: line contains a NUL byte' "$TEST_TMP/l4.err"
check "the good line after them is enqueued" test "$rc $(rows)" = "1 6/6"

# enqueue-news still works (it shares the JSON-lines loop)
printf '%s\n' '{"source":"s","url":"https://example.com/x","published_at":"2026-11-30T09:00:00Z","title":"t","body":"b"}' |
	ctl enqueue-news - >"$TEST_TMP/n.out" 2>/dev/null
check "enqueue-news stays" grep -qE '^[0-9a-f]{64} news:[0-9a-f]{64}:0$' "$TEST_TMP/n.out"

printf '{"identity":{"n":1},"payload":{"big":1.00000000000000001}}\n' >"$TEST_TMP/num.jsonl"
before=$(rows)
rc=0
ctl enqueue --type order --destination news "$TEST_TMP/num.jsonl" 2>"$TEST_TMP/num.err" || rc=$?
check "a line with a number a double cannot hold: exit 1, named, nothing written" test \
	"$rc $(grep -c 'num.jsonl:1: number 1.00000000000000001 in a job identity does not survive' "$TEST_TMP/num.err") $(rows)" = "1 1 $before"
finish
