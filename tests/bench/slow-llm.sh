#!/bin/bash
# tests/bench/slow-llm.sh: the slow-LLM run (docs/performance.md, "A slow
# model"): news jobs through the real outboxd and news_llm against the
# stub LLM answering after a delay, on a durable PostgreSQL
# (tests/harness/durable-pg.sh) and fauxqs.  It prints figures and asserts
# nothing: drain time (first enqueue to last SUCCEEDED), the ideal (jobs x
# delay / all workers), job latency p50 / p99 (created_at to the
# SUCCEEDED updated_at), the LLM calls the stub answered and the most at
# once, jobs that ran more than once, DEAD jobs and DLQ rows.
#
#   cd _build && sudo ../tests/bench/slow-llm.sh [--jobs 400] [--delay-ms 2000]
#       [--instances 2] [--workers 4] [--max-in-flight 0] [--visibility 30]
#
# Run as root (the durable cluster belongs to the postgres user).  Takes
# about jobs x delay / (instances x workers) plus start-up: ~2 min with the
# defaults.  On a shared machine the figures are noisy: say so with them.
set -eu

JOBS=400 DELAY=2000 INSTANCES=2 WORKERS=4 MAX_IN_FLIGHT=0 VIS=30
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) JOBS=$2; shift 2 ;;
	--delay-ms) DELAY=$2; shift 2 ;;
	--instances) INSTANCES=$2; shift 2 ;;
	--workers) WORKERS=$2; shift 2 ;;
	--max-in-flight) MAX_IN_FLIGHT=$2; shift 2 ;;
	--visibility) VIS=$2; shift 2 ;;
	*) echo "slow-llm.sh: unknown argument \"$1\"" >&2; exit 64 ;;
	esac
done

. "$(dirname "$0")/bench_lib.sh"
bench_init slow-llm
bench_require_build
bench_pg_start
bench_fauxqs_start
bench_pipeline

export WORKERS VIS LEASE=$VIS
STUB_DELAY_MS=$DELAY stub_start
extra=""
[ "$MAX_IN_FLIGHT" = 0 ] || extra="max_in_flight = $MAX_IN_FLIGHT"
pl_setup slowllm "$extra"
for i in $(seq 1 "$INSTANCES"); do
	outboxd_start "$TEST_TMP/outboxd-$i.log"
done
wait_sql "$DB" "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
    AND application_name = 'outboxd relay listener'" "$INSTANCES" 60 >/dev/null
stub_script ''

for i in $(seq 1 "$JOBS"); do news_line "$i"; done >"$TEST_TMP/items.jsonl"
start=$(date +%s.%N)
enqueue_news "$TEST_TMP/items.jsonl" >/dev/null
timeout_s=$(( JOBS * DELAY / 1000 + 600 ))
if ! wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE status IN ('SUCCEEDED', 'DEAD')" \
	"$JOBS" "$timeout_s" >/dev/null; then
	echo "slow-llm.sh: the jobs did not finish within $timeout_s s" >&2
fi
end=$(date +%s.%N)

ideal=$(awk -v j="$JOBS" -v d="$DELAY" -v n=$((INSTANCES * WORKERS)) -v m="$MAX_IN_FLIGHT" \
	'BEGIN { c = n; if (m > 0 && m * '"$INSTANCES"' < n) c = m * '"$INSTANCES"'; printf "%.1f", j * d / 1000 / c }')
echo "slow-llm: $JOBS jobs, model delay $DELAY ms, $INSTANCES instance(s) x $WORKERS worker(s)," \
	"max_in_flight $MAX_IN_FLIGHT, visibility and lease $VIS s (durable PostgreSQL, shared machine: noisy)"
printf 'drain                %.1f s (ideal %s s)\n' "$(echo "$end - $start" | bc)" "$ideal"
q "SELECT format('job latency p50/p99  %s s / %s s',
        round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM updated_at - created_at))::numeric, 1),
        round(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM updated_at - created_at))::numeric, 1))
     FROM outbox.jobs WHERE status = 'SUCCEEDED'"
echo "LLM calls            $(stub_requests) (most at once: $(stub_max_in_flight))"
q "SELECT format('succeeded / dead     %s / %s', count(*) FILTER (WHERE status = 'SUCCEEDED'),
        count(*) FILTER (WHERE status = 'DEAD')) FROM outbox.jobs"
q "SELECT format('ran more than once   %s', count(*)) FROM outbox.jobs WHERE attempt_count > 1"
q "SELECT format('DLQ rows             %s', count(*)) FROM outbox.dlq_messages"
