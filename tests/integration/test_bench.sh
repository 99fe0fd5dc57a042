#!/bin/bash
# outbox-bench in a small configuration (300 jobs, 3 destinations): every
# phase completes (the bench fails if a job does not reach SUCCEEDED) and
# prints every figure of docs/performance.md.  Counters and completeness, not
# speed: the figures themselves are in docs/performance.md.  The harness's
# cluster runs fsync off, so every run says --allow-non-durable, and the
# refusal without it is checked too.  A small --soak reports its
# soak_tenths with every relation of the outbox schema.
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
	"$BENCH" -c "$TEST_TMP/bench.ini" --jobs 300 --json --allow-non-durable "$@" \
		>"$out" 2>>"$TEST_TMP/bench.log"
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
check "the harness's cluster is reported as not durable" \
	jq -e '.durable == false and (.durability | test("fsync=off"))' "$OUT" >/dev/null
check "without --drain the drain figures are null" jq -e '.drain_rate == null' "$OUT" >/dev/null
for key in producer_rate_solo producer_rate_with_outboxd producer_commit_p99_ms_solo \
	producer_commit_p99_ms_with_outboxd producer_rate_ratio; do
	check "$key is a positive number" jq -e ".$key > 0" "$OUT" >/dev/null
done
# Where the producers' time went: read from this machine's schedstat (the
# harness's cluster is local), each part a number, the backends' CPU some
# but not all of the mean transaction.
for key in producer_ms_per_job_solo producer_ms_per_job_with_outboxd; do
	check "$key splits the mean transaction" jq -e ".$key"' |
		([.mean, .backend_cpu, .backend_run_queue, .client_cpu, .client_run_queue, .rest]
		 | all(type == "number")) and .backend_cpu > 0 and .backend_run_queue >= 0
		and .client_cpu > 0 and .mean > .backend_cpu' "$OUT" >/dev/null
done
# What the pipeline cost end to end, the producers' own CPU left out: the
# daemon's sessions cost PostgreSQL something, and the whole machine more
# (outboxd and the emulator besides).
check "the pipeline's CPU per job end to end is measured" jq -e '
	.e2e_pipeline_postgres_cpu_ms_per_job > 0 and
	.e2e_pipeline_machine_cpu_ms_per_job > .e2e_pipeline_postgres_cpu_ms_per_job' "$OUT" >/dev/null

# The drain, with a baseline from the shipped round-2 settings: every new
# key a number, at the top level and under "baseline"; each phase's jobs
# SUCCEEDED exactly once, so the two runs did not share or lose jobs.  FILE
# sets two keys the fragment sets too: appended instead of merged, they
# would be a fatal duplicate for outboxd (and for the bench's own check).
DRAIN="$TEST_TMP/drain.json"
write_ini "$TEST_TMP/drain.ini" "$DB"
printf '\n[consumer]\nwait_time_seconds = 1\nlinger_max_ms = 5\n\n[relay]\nclaim_max = 50\n' \
	>>"$TEST_TMP/drain.ini"
drain() {
	"$BENCH" -c "$TEST_TMP/drain.ini" --jobs 200 --offered-rate 200 --json --allow-non-durable \
		--drain --baseline-settings "$OUTBOX_SRCDIR/conf/bench-round2.ini" \
		--outboxd "$OUTBOX_BUILDDIR/outboxd" >"$DRAIN" 2>>"$TEST_TMP/bench.log"
}
check "--drain --jobs 200 with --baseline-settings runs" drain
for key in drain_rate drain_outboxd_cpu_ms_per_job drain_sqs_requests_per_job \
	producer_rate_solo producer_rate_with_outboxd producer_commit_p99_ms_solo \
	producer_commit_p99_ms_with_outboxd producer_rate_ratio end_to_end_rate latency_p99_ms; do
	check "$key is a positive number" jq -e ".$key > 0" "$DRAIN" >/dev/null
	check "baseline.$key is a positive number" jq -e ".baseline.$key > 0" "$DRAIN" >/dev/null
done
# The database's work per job: both phases write WAL and row versions, the
# daemon's round trips carry its statements; every job update of today's
# schema touches an indexed status column (no HOT share above 1).
for phase in drain e2e; do
	for key in wal_bytes_per_job row_versions_per_job statements_per_job round_trips_per_job; do
		check "${phase}_$key is a positive number" jq -e ".${phase}_$key > 0" "$DRAIN" >/dev/null
	done
	check "${phase}_jobs_hot_update_share is a share" \
		jq -e '.'"${phase}"'_jobs_hot_update_share | . >= 0 and . <= 1' "$DRAIN" >/dev/null
done
check "end to end writes more row versions per job than the drain (the enqueue's inserts)" \
	jq -e '.e2e_row_versions_per_job >= .drain_row_versions_per_job + 2' "$DRAIN" >/dev/null
# PostgreSQL is on this machine: its CPU is measured, never null (>= 0: a
# drain of 200 jobs may take less than one clock tick of the server).
check "drain_postgres_cpu_ms_per_job is a number" \
	jq -e '(.drain_postgres_cpu_ms_per_job | type) == "number"
		and (.baseline.drain_postgres_cpu_ms_per_job | type) == "number"' "$DRAIN" >/dev/null
check "the baseline names its settings" \
	jq -e '.baseline.settings | endswith("bench-round2.ini")' "$DRAIN" >/dev/null
for phase in drain e2e baseline-drain baseline-e2e; do
	check "every $phase job SUCCEEDED exactly once" \
		[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE identity->>'phase' = '$phase'
			AND status = 'SUCCEEDED' AND attempt_count = 1
			AND identity->>'run' = (SELECT identity->>'run' FROM outbox.jobs
				WHERE identity->>'phase' = 'baseline-drain' LIMIT 1)")" = 200 ]
done

# Refusals: a non-durable server without --allow-non-durable (exit 78,
# the setting named); baseline fragments it must not merge.
rc=0
"$BENCH" -c "$TEST_TMP/bench.ini" --jobs 10 --json >/dev/null 2>"$TEST_TMP/refuse.err" || rc=$?
check "a non-durable server is refused with exit 78" [ "$rc" -eq 78 ]
check "the refusal names the setting" grep -q '"fsync"' "$TEST_TMP/refuse.err"
# refused NAME TEXT MESSAGE: a fragment holding TEXT given as the baseline
# settings ends the bench with exit 78 before any phase, and stderr has
# MESSAGE (a grep pattern).
refused() {
	local name=$1 text=$2 message=$3 rc=0
	printf "$text" >"$TEST_TMP/$name.ini"
	"$BENCH" -c "$TEST_TMP/bench.ini" --jobs 10 --allow-non-durable \
		--baseline-settings "$TEST_TMP/$name.ini" >/dev/null 2>"$TEST_TMP/$name.err" || rc=$?
	[ "$rc" -eq 78 ] && grep -q "$message" "$TEST_TMP/$name.err"
}
check "a section other than [relay]/[consumer] is refused, with file and line" \
	refused bad '[relay]\nclaim_max = 10\n[database]\nconninfo = x\n' 'bad.ini:3: section "database"'
check "a key given twice in the fragment is refused" \
	refused twice '[consumer]\nclaim_max = 10\nclaim_max = 20\n' \
	'twice.ini:3: key "claim_max" is set twice in \[consumer\]'
check "consumer.workers is refused (--workers sets it)" \
	refused workers '[consumer]\nworkers = 2\n' 'workers.ini:2: key "workers" is set by --workers'
check "an out-of-range value fails before any phase, naming the key" \
	refused range '[relay]\nclaim_max = 0\n' 'claim_max: value "0" is out of range'
check "the null publisher relays too" bench "$TEST_TMP/null.json" --publisher null
check "null: relay rate, no end-to-end figures" \
	jq -e '.relay_publish_rate > 0 and .end_to_end_rate == null' "$TEST_TMP/null.json" >/dev/null

# The soak, small: ten tenths, and per tenth the sizes of every table and
# index of the outbox schema (the names the catalog has).
SOAK="$TEST_TMP/soak.json"
soak() {
	"$BENCH" -c "$TEST_TMP/bench.ini" --soak 100 --soak-retention 60 --json \
		--allow-non-durable --outboxd "$OUTBOX_BUILDDIR/outboxd" >"$SOAK" 2>>"$TEST_TMP/bench.log"
}
check "--soak 100 runs" soak
check "soak_tenths has ten tenths, jobs_done counting up to 100" \
	jq -e '[.soak_tenths[].jobs_done] == [10,20,30,40,50,60,70,80,90,100]' "$SOAK" >/dev/null
check "every tenth has a rate and a claim p50" \
	jq -e '[.soak_tenths[] | (.rate > 0) and (.claim_p50_ms >= 0)] | all' "$SOAK" >/dev/null
want=$(psql_q "$DB" "SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_class c
	JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'outbox' AND c.relkind IN ('r', 'i')")
check "every tenth names every table and index of the outbox schema" \
	jq -e --arg want "$want" '[.soak_tenths[] | (.relations | keys | join(",")) == $want] | all' \
	"$SOAK" >/dev/null
check "each relation has bytes, live rows and their ratio" \
	jq -e '[.soak_tenths[].relations[] | (.bytes > 0) and (.live_rows >= 0)
		and (if .live_rows > 0 then (.bytes_per_live_row - .bytes / .live_rows | fabs) < 0.01
		     else .bytes_per_live_row == 0 end)] | all' "$SOAK" >/dev/null
check "a table's live rows are its count" \
	jq -e '.soak_tenths[9].relations.jobs.live_rows == .soak_tenths[9].relations.jobs_pkey.live_rows' \
	"$SOAK" >/dev/null
[ "$checks_failed" -eq 0 ] || cat "$TEST_TMP/bench.log" "$TEST_TMP"/*.err
finish
