#!/bin/bash
# test_pipeline_price.sh: the price path end to end through the real
# binaries (outboxctl ingest-window, outboxd --role all with news_llm,
# price_trigger and explanation, the stub LLM, PostgreSQL, fauxqs SQS + S3).
#
# After the sample news is extracted, the sample session
# (conf/sample/bars/manifest.tsv) is ingested window by window, as a
# collector would:
#   - the sharp move (NVDA 14:35) ends as one trigger and one explanation
#     that cites the 14:33 headline's extraction;
#   - every flat window is evaluated, fires nothing and enqueues nothing;
#   - a correction of a window whose job is still queued: the old
#     generation's job ends DEAD/STALE without running, the new one runs once;
#   - corrections racing a running consumer: generation 2 always runs once,
#     generation 1 either ran first or ends STALE without evaluations;
#   - a backfill (even of a sharp move) creates no job, no outbox event and
#     never an explanation.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
pl_require

bars="$OUTBOX_SRCDIR/conf/sample/bars"
stub_start
pl_setup price
outboxd_start "$TEST_TMP/outboxd.log"

ingest() {
	"$OUTBOXCTL" -c "$INI" --json ingest-window --symbol "$1" --window-start "$2" --bars "$3" "${@:4}" \
		2>>"$TEST_TMP/ingest.err"
}
hhmm() { echo "2026-11-27T${1:0:2}:${1:2:2}:00Z"; }

# --- the sample news first ------------------------------------------------
enqueue_news "$OUTBOX_SRCDIR/conf/sample/news.jsonl" >"$TEST_TMP/news.ids"
check "34 news jobs enqueued" test "$(sort -u "$TEST_TMP/news.ids" | wc -l)" = 34
check "the sample news is extracted" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs j JOIN news_llm.extractions e USING (job_id) WHERE j.status = 'SUCCEEDED'" 34 30
J1433=$(q "SELECT job_id FROM news_llm.extractions WHERE published_at = '2026-11-27T14:33:00Z'")
check "the 14:33 headline has its extraction" test -n "$J1433"

# --- the session, window by window (TSLA 14:55 is kept for the correction) --
windows=$(grep -v '^#' "$bars/manifest.tsv" | cut -f2 | sort -u)
for w in $windows; do
	while IFS=$'\t' read -r sym start file; do
		[ "$start" = "$w" ] || continue
		[ "$sym $start" = "TSLA 2026-11-27T14:55:00Z" ] && continue
		ingest "$sym" "$start" "$bars/$file" >/dev/null
	done < <(grep -v '^#' "$bars/manifest.tsv")
	wait_idle 20 || echo "# window $w did not settle" >&2
done
check "23 price jobs, all SUCCEEDED" test "$(q "SELECT count(*) || '/' || count(*) FILTER (WHERE status = 'SUCCEEDED') FROM outbox.jobs WHERE job_type = 'price'")" = 23/23
check "every price job has its evaluations (3 rules each)" \
	test "$(q "SELECT count(DISTINCT job_id) || '/' || count(*) FROM price_trigger.evaluations")" = 23/69

# the sharp move: one trigger, one explanation citing the 14:33 extraction
JN=$(q "SELECT job_id FROM outbox.jobs WHERE job_type = 'price' AND window_symbol = 'NVDA' AND window_start = '$(hhmm 1435)'")
check "fired rows belong to exactly one job: NVDA 14:35" \
	test "$(q "SELECT string_agg(DISTINCT job_id, ',') FROM price_trigger.evaluations WHERE fired")" = "$JN"
check "NVDA 14:35 fired all three rules" \
	test "$(q "SELECT string_agg(rule, ',' ORDER BY rule) FROM price_trigger.evaluations WHERE job_id = '$JN' AND fired")" = prev_close_move,volume_spike,window_move
check "one explanation job, SUCCEEDED, for NVDA 14:35 generation 1" wait_sql "$DB" \
	"SELECT string_agg(status || ' ' || (identity->>'symbol') || ' ' || (identity->>'window_start') || ' ' || (identity->>'generation'), ',')
	   FROM outbox.jobs WHERE job_type = 'explanation'" "SUCCEEDED NVDA 2026-11-27T14:35:00Z 1" 20
JE=$(q "SELECT job_id FROM outbox.jobs WHERE job_type = 'explanation'")
check "its event is PUBLISHED" test "$(q "SELECT string_agg(status, ',') FROM outbox.outbox_events WHERE job_id = '$JE'")" = PUBLISHED
check "exactly one explanation row, keyed by that job" \
	test "$(q "SELECT count(*) || ' ' || string_agg(job_id, ',') FROM explanation.explanations")" = "1 $JE"
check "the explanation is for NVDA 14:35, a rise, by stub-llm" \
	test "$(q "SELECT symbol || ' ' || (window_start = '$(hhmm 1435)') || ' ' || (move_pct > 3) || ' ' || model FROM explanation.explanations")" = "NVDA true true stub-llm"
check "it cites the 14:33 headline's extraction" \
	test "$(q "SELECT '$J1433' = ANY (cited_job_ids) FROM explanation.explanations")" = t
check "it cites the three positive items (14:33, 14:34, 14:36) and nothing else" \
	test "$(q "SELECT string_agg(to_char(n.published_at AT TIME ZONE 'UTC', 'HH24:MI'), ',' ORDER BY n.published_at)
	             FROM explanation.explanations e JOIN news_llm.extractions n ON n.job_id = ANY (e.cited_job_ids)")/$(q "SELECT cardinality(cited_job_ids) FROM explanation.explanations")" = "14:33,14:34,14:36/3"

# the flat windows: evaluated, nothing fired, nothing enqueued
check "22 flat windows evaluated, none fired" \
	test "$(q "SELECT count(*) FROM (SELECT job_id FROM price_trigger.evaluations GROUP BY job_id HAVING NOT bool_or(fired)) f")" = 22
check "flat window AAPL 14:40: three evaluations, none fired" \
	test "$(q "SELECT count(*) || '/' || count(*) FILTER (WHERE fired) FROM price_trigger.evaluations WHERE symbol = 'AAPL' AND window_start = '$(hhmm 1440)'")" = 3/0
check "no explanation job for any flat window" \
	test "$(q "SELECT count(*) FROM outbox.jobs WHERE job_type = 'explanation' AND NOT (identity->>'symbol' = 'NVDA' AND identity->>'window_start' = '2026-11-27T14:35:00Z')")" = 0

# --- a correction while the first generation's job is still queued --------
check "outboxd stops cleanly (exit 0)" outboxd_stop "$OPID"
t=$(hhmm 1455)
ingest TSLA "$t" "$bars/TSLA-1455.json" >"$TEST_TMP/g1.json"
jq '.[4].v += 1000' "$bars/TSLA-1455.json" >"$TEST_TMP/TSLA-1455-corrected.json"
ingest TSLA "$t" "$TEST_TMP/TSLA-1455-corrected.json" >"$TEST_TMP/g2.json"
G1=$(jq -r .job_id "$TEST_TMP/g1.json")
G2=$(jq -r .job_id "$TEST_TMP/g2.json")
check "ingest: generation 1, then a correction to generation 2 with its own job" \
	test "$(jq -c '[.generation, .job_created]' "$TEST_TMP/g1.json")$(jq -c '[.generation, .corrected, .job_created]' "$TEST_TMP/g2.json")" = "[1,true][2,true,true]"
check "both generations' jobs are PENDING with NEW events" \
	test "$(q "SELECT string_agg(j.status || '/' || e.status, ',' ORDER BY j.window_generation) FROM outbox.jobs j JOIN outbox.outbox_events e USING (job_id) WHERE j.job_id IN ('$G1', '$G2')")" = "PENDING/NEW,PENDING/NEW"
outboxd_start "$TEST_TMP/outboxd2.log"
check "the new generation's job SUCCEEDED" wait_sql "$DB" "SELECT status FROM outbox.jobs WHERE job_id = '$G2'" SUCCEEDED 20
check "the old generation's job is DEAD with dead_reason STALE" wait_sql "$DB" \
	"SELECT status || ':' || dead_reason FROM outbox.jobs WHERE job_id = '$G1'" DEAD:STALE 20
check "the old generation never ran (attempt_count 0)" test "$(q "SELECT attempt_count FROM outbox.jobs WHERE job_id = '$G1'")" = 0
check "one evaluations set for the new generation, none for the old" \
	test "$(q "SELECT coalesce(string_agg(generation || ':' || (job_id = '$G2'), ',' ORDER BY rule), '-') FROM price_trigger.evaluations WHERE symbol = 'TSLA' AND window_start = '$t'")" = "2:true,2:true,2:true"
check "the new generation ran once (attempt_count 1)" test "$(q "SELECT attempt_count FROM outbox.jobs WHERE job_id = '$G2'")" = 1
check "the corrected flat window fires nothing" \
	test "$(q "SELECT count(*) FILTER (WHERE fired) FROM price_trigger.evaluations WHERE job_id = '$G2'")" = 0
check "outboxctl dead lists the stale job" \
	bash -c "'$OUTBOXCTL' -c '$INI' --json dead | jq -e '.jobs[] | select(.job_id == \"$G1\" and .dead_reason == \"STALE\")' >/dev/null"

# --- corrections racing the consumer (outboxd running) --------------------
# Six windows of a symbol RACE, each ingested and at once corrected.  Whether
# generation 1 runs before its correction is up to timing; what must hold
# either way: generation 2 runs once; generation 1 is SUCCEEDED (it ran first)
# or DEAD/STALE, and a stale job never leaves evaluations behind.
# (The two ingests of a window run concurrently; whichever commits first is
# generation 1.)
for m in 1430 1435 1440 1445 1450 1455; do
	jq '.[4].v += 777' "$bars/TSLA-$m.json" >"$TEST_TMP/race-$m.json"
done
race_pids=()
for m in 1430 1435 1440 1445 1450 1455; do
	ingest RACE "$(hhmm $m)" "$bars/TSLA-$m.json" >/dev/null &
	race_pids+=($!)
	ingest RACE "$(hhmm $m)" "$TEST_TMP/race-$m.json" >/dev/null &
	race_pids+=($!)
done
race_rc=0
for p in "${race_pids[@]}"; do wait "$p" || race_rc=1; done
check "race: all twelve ingests succeeded" test "$race_rc" = 0
check "race: every RACE window is at generation 2" \
	test "$(q "SELECT count(*) FROM outbox.price_windows WHERE symbol = 'RACE' AND generation = 2")" = 6
check "race: every RACE job ends terminal" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE window_symbol = 'RACE' AND status IN ('SUCCEEDED', 'DEAD')" 12 30
check "race: every generation-2 job SUCCEEDED once" \
	test "$(q "SELECT count(*) FILTER (WHERE status = 'SUCCEEDED' AND attempt_count = 1) FROM outbox.jobs WHERE window_symbol = 'RACE' AND window_generation = 2")" = 6
check "race: generation-1 jobs are SUCCEEDED or DEAD/STALE" \
	test "$(q "SELECT count(*) FROM outbox.jobs WHERE window_symbol = 'RACE' AND window_generation = 1
	            AND status || ':' || coalesce(dead_reason, '') NOT IN ('SUCCEEDED:', 'DEAD:STALE')")" = 0
check "race: evaluations exist exactly for the SUCCEEDED jobs, three each" \
	test "$(q "SELECT count(*) FROM outbox.jobs j WHERE window_symbol = 'RACE' AND
	            (SELECT count(*) FROM price_trigger.evaluations e WHERE e.job_id = j.job_id) <> CASE WHEN j.status = 'SUCCEEDED' THEN 3 ELSE 0 END")" = 0
echo "# race: generation-1 outcomes: $(q "SELECT string_agg(status || ' x' || n, ', ') FROM (SELECT status, count(*) n FROM outbox.jobs WHERE window_symbol = 'RACE' AND window_generation = 1 GROUP BY 1) s")"

# --- a backfill, even of a sharp move: no job, no event, no explanation ----
ingest NVDX "$(hhmm 1430)" "$bars/NVDA-1430.json" --backfill >"$TEST_TMP/b1.json"
ingest NVDX "$(hhmm 1435)" "$bars/NVDA-1435.json" --backfill >"$TEST_TMP/b2.json"
check "backfill: both ingests say backfill, no job id" \
	test "$(jq -c '[.backfill, .job_id, .event_id]' "$TEST_TMP/b1.json" "$TEST_TMP/b2.json" | tr -d '\n')" = "[true,null,null][true,null,null]"
check "backfill: the windows are confirmed as backfill" \
	test "$(q "SELECT count(*) FILTER (WHERE backfill) FROM outbox.price_windows WHERE symbol = 'NVDX'")" = 2
check "backfill: no job and no outbox event" \
	test "$(q "SELECT count(*) FROM outbox.jobs WHERE window_symbol = 'NVDX' OR identity::text LIKE '%NVDX%'")/$(q "SELECT count(*) FROM outbox.outbox_events WHERE body LIKE '%NVDX%'")" = 0/0
# a marker job after the backfill: once it is done, the relay and consumer
# have had every chance to act on the backfill
news_line 1 "Marker item after the backfill" >"$TEST_TMP/marker.jsonl"
M=$(enqueue_news "$TEST_TMP/marker.jsonl")
check "a later job still runs" wait_sql "$DB" "SELECT status FROM outbox.jobs WHERE job_id = '$M'" SUCCEEDED 20
check "everything settles" wait_idle 20
check "backfill: still no job or event, no evaluations, no explanation" \
	test "$(q "SELECT (SELECT count(*) FROM outbox.jobs WHERE identity::text LIKE '%NVDX%')
	            + (SELECT count(*) FROM outbox.outbox_events WHERE body LIKE '%NVDX%')
	            + (SELECT count(*) FROM price_trigger.evaluations WHERE symbol = 'NVDX')
	            + (SELECT count(*) FROM explanation.explanations WHERE symbol = 'NVDX')")" = 0
check "still exactly one explanation in total" test "$(q "SELECT count(*) FROM explanation.explanations")" = 1
check "no job DEAD except the stale ones" \
	test "$(q "SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD' AND NOT (dead_reason = 'STALE' AND (job_id = '$G1' OR window_symbol = 'RACE'))")" = 0
"$OUTBOXCTL" -c "$INI" --json status >"$TEST_TMP/status.json"
check "outboxctl status agrees with the tables" \
	test "$(jq -c '[.totals.jobs.PENDING, .totals.jobs.CLAIMED, .totals.jobs.SUCCEEDED + .totals.jobs.DEAD, .totals.outbox.NEW, .totals.outbox.DEAD, .destinations.explanation.jobs.SUCCEEDED]' "$TEST_TMP/status.json")" = \
	     "[0,0,$(q "SELECT count(*) FROM outbox.jobs"),0,0,1]"
check "outboxd stops cleanly again (exit 0)" outboxd_stop "$OPID"
finish
