#!/bin/bash
# tests/bench/crash-kill.sh: the crash run (docs/performance.md, "Kills"):
# two outboxd instances share a durable PostgreSQL (tests/harness/
# durable-pg.sh) and fauxqs, news jobs run through news_llm against the stub
# LLM (300 ms a call), visibility and lease 5 s; instance A is SIGKILLed
# every 3 s for 60 s and started again at once while B runs throughout.
# It prints figures and asserts nothing: jobs SUCCEEDED and DEAD, effect
# rows (news_llm.extractions) and distinct jobs among them, execute() calls
# (the stub's requests), re-executions (calls beyond one per job), the jobs
# whose run had started in A at each kill (summed), crashes counted, DLQ
# rows by outcome.
#
#   cd _build && sudo ../tests/bench/crash-kill.sh [--jobs 500] [--delay-ms 300]
#       [--seconds 60] [--every 3] [--workers 2]
#
# Run as root (the durable cluster belongs to the postgres user).  On a
# shared machine the figures are noisy: say so with them.
set -eu

JOBS=500 DELAY=300 SECONDS_KILLING=60 EVERY=3 WORKERS=2
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) JOBS=$2; shift 2 ;;
	--delay-ms) DELAY=$2; shift 2 ;;
	--seconds) SECONDS_KILLING=$2; shift 2 ;;
	--every) EVERY=$2; shift 2 ;;
	--workers) WORKERS=$2; shift 2 ;;
	*) echo "crash-kill.sh: unknown argument \"$1\"" >&2; exit 64 ;;
	esac
done

. "$(dirname "$0")/bench_lib.sh"
bench_init crash-kill
bench_require_build
bench_pg_start
bench_fauxqs_start
bench_pipeline

export WORKERS VIS=5 LEASE=5
STUB_DELAY_MS=$DELAY stub_start
pl_setup crashkill
outboxd_start "$TEST_TMP/outboxd-b.log"
outboxd_start "$TEST_TMP/outboxd-a.log"
A=$OPID
wait_sql "$DB" "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
    AND application_name = 'outboxd relay listener'" 2 60 >/dev/null
stub_script ''

for i in $(seq 1 "$JOBS"); do news_line "$i"; done >"$TEST_TMP/items.jsonl"
enqueue_news "$TEST_TMP/items.jsonl" >/dev/null
kills=0 running=0
end=$(( $(date +%s) + SECONDS_KILLING ))
while [ "$(date +%s)" -lt "$end" ]; do
	sleep "$EVERY" # the kill schedule itself, not a wait for a condition
	# The runs of A that had started and not completed (its claims with a
	# started run): what a kill now can cost.
	n=$(q "SELECT count(*) FROM outbox.jobs WHERE status = 'CLAIMED' AND started_by IS NOT NULL
	        AND split_part(claimed_by, '/', 1) LIKE '%:$A'")
	kill -KILL "$A" 2>/dev/null || true
	wait "$A" 2>/dev/null || true
	kills=$((kills + 1))
	running=$((running + n))
	outboxd_start "$TEST_TMP/outboxd-a.log"
	A=$OPID
done
wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE status IN ('SUCCEEDED', 'DEAD')" "$JOBS" 600 >/dev/null ||
	echo "crash-kill.sh: the jobs did not all finish within 600 s after the kills" >&2

calls=$(stub_requests)
echo "crash-kill: $JOBS jobs, model $DELAY ms, 2 instances x $WORKERS worker(s), visibility and lease 5 s," \
	"A SIGKILLed every $EVERY s for $SECONDS_KILLING s (durable PostgreSQL, shared machine: noisy)"
q "SELECT format('succeeded / dead        %s / %s', count(*) FILTER (WHERE status = 'SUCCEEDED'),
        count(*) FILTER (WHERE status = 'DEAD')) FROM outbox.jobs"
q "SELECT format('effect rows / jobs      %s / %s', count(*), count(DISTINCT job_id)) FROM news_llm.extractions"
echo "kills                   $kills"
echo "execute() calls         $calls (re-executions: $((calls - JOBS)))"
echo "runs started at kills   $running"
q "SELECT format('crashes counted         %s (jobs: %s)', coalesce(sum(crash_count), 0),
        count(*) FILTER (WHERE crash_count > 0)) FROM outbox.jobs"
q "SELECT format('DLQ rows                %s %s', count(*), coalesce(string_agg(DISTINCT outcome, ','), ''))
     FROM outbox.dlq_messages"
