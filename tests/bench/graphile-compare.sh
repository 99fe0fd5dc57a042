#!/bin/bash
# tests/bench/graphile-compare.sh: a benchmark, not a test (docs/
# performance.md, "Comparing with graphile-worker").  On one throwaway
# durable PostgreSQL (tests/harness/durable-pg.sh) it drains N no-op jobs
# with graphile-worker, a PostgreSQL-only queue, in two configurations, and
# optionally with outboxd, and prints for each: the drain rate, the whole
# machine's CPU per job over the drain, and what the worker costs two
# producers that commit one job per transaction.
#
#   sudo tests/bench/graphile-compare.sh [--jobs 20000] [--workers 4]
#       [--classic-concurrency 10] [--batched-concurrency 24]
#       [--local-queue 500] [--producer-jobs 2000] [--variants classic,batched]
#       [--outboxd] [--json] [--deadline 600]
#
# Variants (a fresh database each):
#   classic  W worker processes, concurrentJobs C (10), everything else
#            graphile-worker's defaults: one fetch and one completion
#            statement per job
#   batched  W processes, concurrentJobs C (24), maxPoolSize C+1,
#            localQueue.size L (500), completeJobBatchDelay 0,
#            failJobBatchDelay 0: the configuration of graphile-worker's own
#            performance page
#   outboxd  (--outboxd) outboxd --role all from the build directory, three
#            destinations x W workers of bench_noop, on fauxqs; plus
#            outbox-bench --drain --jobs N --json in another database, whose
#            own drain and producer figures are added to the row
# Per graphile variant: (1) the producers alone (2 connections, each
# --producer-jobs add_job calls in autocommit); (2) the W workers started
# and idle, N jobs added with add_job in one statement, timed from its
# commit until no job is left (a poller on one connection, every 10 ms,
# bounded by --deadline), CPU = the whole machine's user + nice + system +
# irq + softirq over that time (/proc/stat) / the jobs left at the start;
# (3) a backlog of N jobs added again and the producers started as it
# commits, while the workers drain it.  outboxd's own drain is timed the
# same way: the daemon running, N jobs enqueued in one statement.  So no
# row counts a worker's start-up, which would weigh more at a small N.
#
# Run as root (the cluster belongs to the postgres user).  graphile-worker
# is installed with npm into OUTBOX_TOOLS_DIR/graphile-worker-0.17.3 on
# first use.  Whole-machine CPU counts everything else on the machine too:
# run it on a quiet one.
set -eu

JOBS=20000 WORKERS=4 CLASSIC_C=10 BATCHED_C=24 LOCAL_QUEUE=500 PRODUCER_JOBS=2000
VARIANTS=classic,batched WITH_OUTBOXD=0 JSON=0 DEADLINE=600 PRODUCERS=2
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) JOBS=$2; shift 2 ;;
	--workers) WORKERS=$2; shift 2 ;;
	--classic-concurrency) CLASSIC_C=$2; shift 2 ;;
	--batched-concurrency) BATCHED_C=$2; shift 2 ;;
	--local-queue) LOCAL_QUEUE=$2; shift 2 ;;
	--producer-jobs) PRODUCER_JOBS=$2; shift 2 ;;
	--variants) VARIANTS=$2; shift 2 ;;
	--deadline) DEADLINE=$2; shift 2 ;;
	--outboxd) WITH_OUTBOXD=1; shift ;;
	--json) JSON=1; shift ;;
	*) echo "graphile-compare.sh: unknown argument \"$1\"" >&2; exit 64 ;;
	esac
done
for v in "$JOBS" "$WORKERS" "$CLASSIC_C" "$BATCHED_C" "$LOCAL_QUEUE" "$PRODUCER_JOBS" "$DEADLINE"; do
	case $v in
	'' | *[!0-9]* | 0) echo "graphile-compare.sh: invalid number \"$v\" (a positive integer is needed)" >&2; exit 64 ;;
	esac
done
for v in ${VARIANTS//,/ }; do
	case $v in
	classic | batched) ;;
	*) echo "graphile-compare.sh: unknown variant \"$v\" (classic, batched)" >&2; exit 64 ;;
	esac
done

GW_VERSION=0.17.3
. "$(dirname "$0")/bench_lib.sh"
bench_init graphile-compare
[ "$WITH_OUTBOXD" = 0 ] || bench_require_build
GW_DIR=$OUTBOX_TOOLS_DIR/graphile-worker-$GW_VERSION
GW_JS="$OUTBOX_SRCDIR/tests/bench/graphile-worker.js"
CLK_TCK=$(getconf CLK_TCK)

# graphile-worker pulls pg in as its dependency, which the helper uses too.
gw_install() {
	if [ -f "$GW_DIR/node_modules/graphile-worker/package.json" ] &&
	   grep -q "\"version\": \"$GW_VERSION\"" "$GW_DIR/node_modules/graphile-worker/package.json"; then
		return 0
	fi
	mkdir -p "$GW_DIR"
	# a package of its own: else npm installs into the nearest directory
	# above that has a package.json (the tests' OUTBOX_TOOLS_DIR)
	[ -f "$GW_DIR/package.json" ] || echo '{"private": true}' >"$GW_DIR/package.json"
	echo "graphile-compare: installing graphile-worker@$GW_VERSION into $GW_DIR" >&2
	OUTBOX_TOOLS_DIR=$GW_DIR npm_install_or_explain "graphile-worker@$GW_VERSION" "the queue compared with"
}
gw_install
export NODE_PATH=$GW_DIR/node_modules
# in the background: a signal to the script then stops it at once (bash
# runs a trap only once its foreground child has ended)
gw() {
	node "$GW_JS" "$@" &
	bench_track "$!"
	wait "$!"
}
sql() { psql -X -q -v ON_ERROR_STOP=1 -At -d "$1" -c "$2"; }

bench_pg_start
[ "$WITH_OUTBOXD" = 0 ] || bench_fauxqs_start

newdb() { # NAME: prints the conninfo of a fresh database
	sql "$BENCH_CONNINFO" "CREATE DATABASE $1" >/dev/null
	echo "${BENCH_CONNINFO%/postgres}/$1"
}

# producers DB SQL OUT [BEFORE_SQL]: the producers connect, BEFORE_SQL runs
# (a backlog for the workers), then they start together, one job per commit;
# OUT gets one JSON line per producer.
producers() {
	local db=$1 q=$2 out=$3 before=${4:-} go="$3.go" i p=()
	rm -f "$go" "$go".connected.*
	: >"$out"
	for i in $(seq 1 "$PRODUCERS"); do
		node "$GW_JS" produce "$db" "$PRODUCER_JOBS" "$go" "$q" >>"$out" &
		p+=("$!")
		bench_track "$!"
	done
	for _ in $(seq 1 3000); do
		[ "$(find "$BENCH_WORK" -name "${go##*/}.connected.*" | wc -l)" -lt "$PRODUCERS" ] || break
		sleep 0.01
	done
	[ -z "$before" ] || sql "$db" "$before" >/dev/null
	: >"$go"
	for i in "${p[@]}"; do wait "$i"; done
}

# producer_rate OUT: all producers' jobs / the slowest one's seconds
producer_rate() {
	jq -s '(map(.jobs) | add) / (map(.seconds) | max) | . * 10 | round / 10' "$1"
}

# gw_variant NAME SETTINGS_JSON: one graphile-worker row, as JSON
gw_variant() {
	local name=$1 settings=$2 db i wpids=() ready t
	local jobs_sql="SELECT 1 FROM graphile_worker._private_jobs"
	local add_sql="SELECT count(graphile_worker.add_job('noop', '{}'::json)) FROM generate_series(1, $JOBS)"
	db=$(newdb "gw_$name")
	gw migrate "$db"

	producers "$db" "SELECT graphile_worker.add_job('noop', '{}'::json)" "$BENCH_WORK/$name.solo"
	sql "$db" "DELETE FROM graphile_worker._private_jobs" >/dev/null
	sql "$db" "VACUUM ANALYZE graphile_worker._private_jobs" >/dev/null

	t=$(date +%s%N)
	for i in $(seq 1 "$WORKERS"); do
		(cd "$BENCH_WORK" && exec node "$GW_JS" worker "$db" "$settings") >"$BENCH_WORK/$name.w$i.log" 2>&1 &
		wpids+=("$!")
		bench_track "$!"
	done
	for _ in $(seq 1 3000); do
		ready=$(cat "$BENCH_WORK/$name".w*.log | grep -c '^ready$' || true)
		[ "$ready" -lt "$WORKERS" ] || break
		sleep 0.02
	done
	if [ "$ready" -lt "$WORKERS" ]; then
		echo "graphile-compare: $ready of $WORKERS workers ran within 60 s" >&2
		tail -n 5 "$BENCH_WORK/$name".w*.log >&2
		exit 1
	fi
	local startup_s
	startup_s=$(awk -v ns=$(( $(date +%s%N) - t )) 'BEGIN {printf "%.2f", ns / 1e9}')
	sql "$db" "CHECKPOINT" >/dev/null
	gw drain "$db" "$jobs_sql" "$DEADLINE" "$add_sql" >"$BENCH_WORK/$name.drain"

	producers "$db" "SELECT graphile_worker.add_job('noop', '{}'::json)" "$BENCH_WORK/$name.with" "$add_sql"
	local left
	left=$(sql "$db" "SELECT count(*) FROM graphile_worker._private_jobs")
	for i in "${wpids[@]}"; do kill -TERM "$i" 2>/dev/null || true; done
	for i in "${wpids[@]}"; do wait "$i" 2>/dev/null || true; done

	jq -n --arg v "$name" --argjson jobs "$JOBS" --argjson d "$(cat "$BENCH_WORK/$name.drain")" \
		--argjson tck "$CLK_TCK" --argjson solo "$(producer_rate "$BENCH_WORK/$name.solo")" \
		--argjson with "$(producer_rate "$BENCH_WORK/$name.with")" \
		--argjson p99solo "$(jq -s 'map(.p99_ms) | max' "$BENCH_WORK/$name.solo")" \
		--argjson p99with "$(jq -s 'map(.p99_ms) | max' "$BENCH_WORK/$name.with")" \
		--argjson left "$left" --argjson startup "$startup_s" \
		--arg ver "$GW_VERSION" --argjson w "$WORKERS" --argjson settings "$settings" '{
		variant: $v, jobs: $jobs,
		drain_jobs_timed: $d.remaining_at_start,
		drain_seconds: ($d.seconds * 1000 | round / 1000),
		drain_rate: (if $d.remaining_at_start > 0 then $d.remaining_at_start / $d.seconds | round else null end),
		machine_cpu_ms_per_job: (if $d.remaining_at_start > 0
			then $d.ticks / $tck * 1000 / $d.remaining_at_start * 1000 | round / 1000 else null end),
		producer_rate_solo: $solo, producer_rate_with_worker: $with,
		producer_rate_ratio: (if $solo > 0 then $with / $solo * 100 | round / 100 else null end),
		producer_commit_p99_ms_solo: ($p99solo * 100 | round / 100),
		producer_commit_p99_ms_with_worker: ($p99with * 100 | round / 100),
		backlog_left_after_producers: $left, worker_startup_seconds: $startup,
		worker: ("graphile-worker " + $ver), processes: $w, settings: $settings}'
}

# outboxd_variant: outboxd's drain measured as above, plus outbox-bench's row
outboxd_variant() {
	local db ini="$BENCH_WORK/outboxd.ini" d opid bdb bini="$BENCH_WORK/bench.ini"
	export OUTBOX_MIGRATIONS_DIR="$OUTBOX_SRCDIR/migrations" OUTBOX_PLUGIN_DIR="$OUTBOX_BUILDDIR/.libs"
	db=$(newdb outboxd_drain)
	printf '[database]\nconninfo = %s\n\n[aws]\nregion = us-east-1\nendpoint_url = %s\n\n' \
		"$db" "$OUTBOX_TEST_AWS_ENDPOINT" >"$ini"
	printf '[consumer]\nworkers = %s\n\n' "$WORKERS" >>"$ini"
	for d in 1 2 3; do
		printf '[destination:d%s]\nqueue_url = %s/000000000000/gwcmp-d%s\nplugin = bench_noop\n\n' \
			"$d" "$OUTBOX_TEST_AWS_ENDPOINT" "$d" >>"$ini"
	done
	"$OUTBOX_BUILDDIR/outboxctl" -c "$ini" migrate >"$BENCH_WORK/migrate.log" 2>&1 ||
		{ cat "$BENCH_WORK/migrate.log" >&2; exit 1; }
	"$OUTBOX_BUILDDIR/outboxctl" -c "$ini" create-queues >"$BENCH_WORK/queues.log" 2>&1 ||
		{ cat "$BENCH_WORK/queues.log" >&2; exit 1; }
	"$OUTBOX_BUILDDIR/outboxd" -c "$ini" --role all >"$BENCH_WORK/outboxd.log" 2>&1 &
	opid=$!
	bench_track "$opid"
	for _ in $(seq 1 3000); do
		[ "$(sql "$db" "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
		      AND application_name = 'outboxd relay listener'")" = 0 ] || break
		kill -0 "$opid" 2>/dev/null || { tail "$BENCH_WORK/outboxd.log" >&2; exit 1; }
		sleep 0.02
	done
	sql "$db" "CHECKPOINT" >/dev/null
	gw drain "$db" "SELECT 1 FROM outbox.jobs WHERE finished_at IS NULL" "$DEADLINE" \
		"SELECT count(*) FROM generate_series(1, $JOBS) g,
		 LATERAL outbox.enqueue('bench', 'd' || (g % 3 + 1), json_build_object('n', g),
		                        jsonb_build_object('n', g))" >"$BENCH_WORK/outboxd.drain"
	kill -TERM "$opid"
	wait "$opid" || true

	bdb=$(newdb outboxd_bench)
	# the file needs a destination; the bench makes its own
	printf '[database]\nconninfo = %s\n\n[aws]\nregion = us-east-1\nendpoint_url = %s\n\n[consumer]\nworkers = %s\n\n' \
		"$bdb" "$OUTBOX_TEST_AWS_ENDPOINT" "$WORKERS" >"$bini"
	printf '[destination:unused]\nqueue_url = %s/000000000000/gwcmp-unused\nplugin = bench_noop\n' \
		"$OUTBOX_TEST_AWS_ENDPOINT" >>"$bini"
	"$OUTBOX_BUILDDIR/outbox-bench" -c "$bini" --drain --jobs "$JOBS" --json \
		--producers "$PRODUCERS" --outboxd "$OUTBOX_BUILDDIR/outboxd" \
		>"$BENCH_WORK/outbox-bench.json" 2>"$BENCH_WORK/outbox-bench.log" ||
		{ tail "$BENCH_WORK/outbox-bench.log" >&2; exit 1; }

	jq -n --argjson jobs "$JOBS" --argjson d "$(cat "$BENCH_WORK/outboxd.drain")" --argjson tck "$CLK_TCK" \
		--argjson w "$WORKERS" --slurpfile b "$BENCH_WORK/outbox-bench.json" '$b[0] as $b | {
		variant: "outboxd", jobs: $jobs,
		drain_jobs_timed: $d.remaining_at_start,
		drain_seconds: ($d.seconds * 1000 | round / 1000),
		drain_rate: (if $d.remaining_at_start > 0 then $d.remaining_at_start / $d.seconds | round else null end),
		machine_cpu_ms_per_job: (if $d.remaining_at_start > 0
			then $d.ticks / $tck * 1000 / $d.remaining_at_start * 1000 | round / 1000 else null end),
		producer_rate_solo: $b.producer_rate_solo, producer_rate_with_worker: $b.producer_rate_with_outboxd,
		producer_rate_ratio: $b.producer_rate_ratio,
		producer_commit_p99_ms_solo: $b.producer_commit_p99_ms_solo,
		producer_commit_p99_ms_with_worker: $b.producer_commit_p99_ms_with_outboxd,
		producer_ms_per_job_solo: $b.producer_ms_per_job_solo,
		producer_ms_per_job_with_worker: $b.producer_ms_per_job_with_outboxd,
		worker: "outboxd", processes: 1,
		settings: {destinations: 3, workers_per_destination: $w, plugin: "bench_noop"},
		outbox_bench: {drain_rate: $b.drain_rate, drain_outboxd_cpu_ms_per_job: $b.drain_outboxd_cpu_ms_per_job,
		               drain_postgres_cpu_ms_per_job: $b.drain_postgres_cpu_ms_per_job,
		               drain_sqs_requests_per_job: $b.drain_sqs_requests_per_job}}'
}

rows="$BENCH_WORK/rows.jsonl"
: >"$rows"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for v in ${VARIANTS//,/ }; do
	case $v in
	classic) gw_variant classic "{\"concurrentJobs\": $CLASSIC_C}" >>"$rows" ;;
	batched) gw_variant batched "{\"concurrentJobs\": $BATCHED_C, \"maxPoolSize\": $((BATCHED_C + 1)),
		\"localQueue\": {\"size\": $LOCAL_QUEUE}, \"completeJobBatchDelay\": 0, \"failJobBatchDelay\": 0}" >>"$rows" ;;
	esac
done
[ "$WITH_OUTBOXD" = 0 ] || outboxd_variant >>"$rows"

if [ "$JSON" = 1 ]; then
	jq -s --arg load0 "$load0" --arg load1 "$(cut -d' ' -f1-3 /proc/loadavg)" --argjson cpus "$(nproc)" \
		--arg ver "$GW_VERSION" --argjson pj "$PRODUCER_JOBS" --argjson p "$PRODUCERS" '{
		graphile_worker_version: $ver, cpus: $cpus, durability: "fsync=on synchronous_commit=on",
		producers: $p, producer_jobs_each: $pj, load_average_start: $load0, load_average_end: $load1,
		variants: .}' "$rows"
	exit 0
fi
echo "# graphile-worker $GW_VERSION; $(nproc) CPUs; durable PostgreSQL (fsync, synchronous_commit on);" \
	"$PRODUCERS producers x $PRODUCER_JOBS jobs; load average $load0 at the start," \
	"$(cut -d' ' -f1-3 /proc/loadavg) at the end"
printf '%-8s %6s %10s %12s %12s %12s %7s %s\n' variant jobs drain_rate cpu_ms/job \
	prod_solo prod_with ratio settings
jq -r '[.variant, .jobs, .drain_rate, .machine_cpu_ms_per_job, .producer_rate_solo,
	.producer_rate_with_worker, .producer_rate_ratio, "\(.processes) x \(.settings | tojson)"] | @tsv' "$rows" |
	while IFS=$'\t' read -r v j r c s w ra set; do
		printf '%-8s %6s %10s %12s %12s %12s %7s %s\n' "$v" "$j" "$r" "$c" "$s" "$w" "$ra" "$set"
	done
jq -r 'select(.outbox_bench) | .outbox_bench |
	"# outboxd in outbox-bench --drain (its own database): drain_rate \(.drain_rate) jobs/s, CPU outboxd " +
	"\(.drain_outboxd_cpu_ms_per_job) + PostgreSQL \(.drain_postgres_cpu_ms_per_job) ms/job, " +
	"SQS requests per job \(.drain_sqs_requests_per_job); its producer figures are in the row above"' "$rows"
