#!/bin/bash
# outbox-bench in a small configuration (300 jobs, 3 destinations): every
# phase completes (the bench fails if a job does not reach SUCCEEDED) and
# prints every figure of docs/performance.md.  Counters and completeness, not
# speed: the figures themselves are in docs/performance.md.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg
require_aws

DB=$(newdb "bench_$$")
write_ini "$TEST_TMP/bench.ini" "$DB"
printf '\n[consumer]\nwait_time_seconds = 1\n' >>"$TEST_TMP/bench.ini"
BENCH="$OUTBOX_BUILDDIR/outbox-bench"
OUT="$TEST_TMP/bench.json"

bench() { # OUT ARGS...
	local out=$1
	shift
	"$BENCH" -c "$TEST_TMP/bench.ini" --jobs 300 --json "$@" >"$out" 2>>"$TEST_TMP/bench.log"
}

check "outbox-bench runs against PostgreSQL and the emulator" \
	bench "$OUT" --offered-rate 200 --outboxd "$OUTBOX_BUILDDIR/outboxd"
for key in enqueue_rate relay_publish_rate end_to_end_rate sqs_requests_per_job \
	latency_p50_ms latency_p99_ms outboxd_peak_rss_mib; do
	check "$key is a positive number" jq -e ".$key > 0" "$OUT" >/dev/null
done
check "every latency job was matched to its handler start" \
	jq -e '.latency_jobs == 300' "$OUT" >/dev/null
check "p50 <= p99" jq -e '.latency_p50_ms <= .latency_p99_ms' "$OUT" >/dev/null
check "every e2e job SUCCEEDED exactly once" \
	[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE identity->>'phase' = 'e2e'
		AND status = 'SUCCEEDED' AND attempt_count = 1")" = 300 ]
check "the null publisher relays too" bench "$TEST_TMP/null.json" --publisher null
check "null: relay rate, no end-to-end figures" \
	jq -e '.relay_publish_rate > 0 and .end_to_end_rate == null' "$TEST_TMP/null.json" >/dev/null
[ "$checks_failed" -eq 0 ] || cat "$TEST_TMP/bench.log"
finish
