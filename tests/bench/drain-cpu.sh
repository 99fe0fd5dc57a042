#!/bin/bash
# tests/bench/drain-cpu.sh: a benchmark, not a test (docs/performance.md,
# "Round 4, claims in place").  PostgreSQL's own CPU per drained job, which
# the whole machine's figure (graphile-compare.sh) and outbox-bench's
# (two decimals, 20,000 jobs) blur.
#
#   sudo tests/bench/drain-cpu.sh [--jobs 60000] [--workers 4]
#       [--migrations DIR] [--outboxd PATH] [--sql STATEMENTS] [--perf FILE]
#       [--callgrind FILE]
#
# On a throwaway durable cluster (tests/harness/durable-pg.sh) and fauxqs:
# a database migrated from DIR (default: the source tree's migrations),
# STATEMENTS run after the migrations (to try a storage setting, say), N
# jobs over three destinations of bench_noop enqueued in one statement
# while outboxd is stopped, VACUUM ANALYZE and CHECKPOINT; then outboxd
# --role all is started and timed until no job is unfinished.  Prints the
# drain rate, the whole machine's CPU per job (/proc/stat: user + nice +
# system + irq + softirq), PostgreSQL's (the postmaster and its children,
# live and reaped, from /proc) and outboxd's, and the updates and HOT
# updates of both tables.  --perf FILE records the whole machine (perf
# record -a -g) over the first five seconds of the drain.  --callgrind
# FILE runs outboxd under valgrind's callgrind and dumps its profile to
# FILE.1 when the drain ends: instructions are counted, not sampled, so two
# builds compare within a fraction of a per cent where their CPU times
# differ by more from run to run (the times of such a run are valgrind's).
# One poller, one session (a coprocess), every 20 ms, so that polling costs
# next to nothing.
#
# Run as root on a quiet machine.
set -eu

JOBS=60000 WORKERS=4 MIGRATIONS="" OUTBOXD_BIN="" PRE_SQL="" PERF_FILE="" CALLGRIND_FILE=""
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) JOBS=$2; shift 2 ;;
	--workers) WORKERS=$2; shift 2 ;;
	--migrations) MIGRATIONS=$2; shift 2 ;;
	--outboxd) OUTBOXD_BIN=$2; shift 2 ;;
	--sql) PRE_SQL=$2; shift 2 ;;
	--perf) PERF_FILE=$2; shift 2 ;;
	--callgrind) CALLGRIND_FILE=$2; shift 2 ;;
	*) echo "drain-cpu.sh: unknown argument \"$1\"" >&2; exit 64 ;;
	esac
done

. "$(dirname "$0")/bench_lib.sh"
bench_init drain-cpu
bench_require_build
bench_pg_start
bench_fauxqs_start
OUTBOXD_BIN=${OUTBOXD_BIN:-$OUTBOX_BUILDDIR/outboxd}
export OUTBOX_MIGRATIONS_DIR=${MIGRATIONS:-$OUTBOX_SRCDIR/migrations}
export OUTBOX_PLUGIN_DIR=$OUTBOX_BUILDDIR/.libs

psql -X -q -d "$BENCH_CONNINFO" -c "CREATE DATABASE drain" >/dev/null
db="${BENCH_CONNINFO%/postgres}/drain"
ini=$BENCH_WORK/drain.ini
printf '[database]\nconninfo = %s\n\n[aws]\nregion = us-east-1\nendpoint_url = %s\n\n' \
	"$db" "$OUTBOX_TEST_AWS_ENDPOINT" >"$ini"
printf '[consumer]\nworkers = %s\n\n' "$WORKERS" >>"$ini"
for d in 1 2 3; do
	printf '[destination:d%s]\nqueue_url = %s/000000000000/drain-d%s\nplugin = bench_noop\n\n' \
		"$d" "$OUTBOX_TEST_AWS_ENDPOINT" "$d" >>"$ini"
done
"$OUTBOX_BUILDDIR/outboxctl" -c "$ini" migrate >/dev/null
"$OUTBOX_BUILDDIR/outboxctl" -c "$ini" create-queues >/dev/null
[ -z "$PRE_SQL" ] || psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "$PRE_SQL" >/dev/null
psql -X -q -At -d "$db" -c "SELECT count(*) FROM generate_series(1, $JOBS) g,
	LATERAL outbox.enqueue('bench', 'd' || (g % 3 + 1), json_build_object('n', g),
	                       jsonb_build_object('n', g))" >/dev/null
psql -X -q -d "$db" -c "VACUUM ANALYZE outbox.jobs" -c "VACUUM ANALYZE outbox.outbox_events" \
	-c "CHECKPOINT" >/dev/null

machine_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
# The postmaster's own and reaped children's ticks, plus its live children's.
postgres_ticks() {
	local pm t c
	pm=$(head -1 "$BENCH_WORK/pg/data/postmaster.pid")
	t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
	for c in $(cat /proc/"$pm"/task/*/children); do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}

coproc POLL { psql -X -q -At -d "$db"; }
unfinished() {
	echo "SELECT EXISTS (SELECT 1 FROM outbox.jobs WHERE finished_at IS NULL);" >&"${POLL[1]}"
	local v
	read -r v <&"${POLL[0]}"
	[ "$v" = t ]
}
unfinished || { echo "drain-cpu.sh: no job to drain" >&2; exit 1; }

# outboxd's own ticks (user + system of all its threads); a libtool
# wrapper (an uninstalled build) execs the binary, so the pid stays.
outboxd_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

launch=("$OUTBOXD_BIN")
if [ -n "$CALLGRIND_FILE" ]; then
	# An uninstalled build's outboxd is a libtool wrapper: profile the
	# binary it wraps, with the libraries beside it.
	wrapped=$(dirname "$OUTBOXD_BIN")/.libs/$(basename "$OUTBOXD_BIN")
	if [ -x "$wrapped" ]; then
		LD_LIBRARY_PATH=$(dirname "$wrapped")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		export LD_LIBRARY_PATH
		launch=("$wrapped")
	fi
	rm -f "$CALLGRIND_FILE" "$CALLGRIND_FILE".[0-9]*
	launch=(valgrind --tool=callgrind --callgrind-out-file="$CALLGRIND_FILE" "${launch[@]}")
fi

m0=$(machine_ticks) p0=$(postgres_ticks) t0=$(date +%s.%N)
"${launch[@]}" -c "$ini" --role all >"$BENCH_WORK/outboxd.log" 2>&1 &
outboxd_pid=$!
bench_track $outboxd_pid
perf_pid=""
if [ -n "$PERF_FILE" ]; then
	perf record -a -g -F 499 -o "$PERF_FILE" -- sleep 5 >/dev/null 2>&1 &
	perf_pid=$!
fi
while unfinished; do sleep 0.02; done
t1=$(date +%s.%N) m1=$(machine_ticks) p1=$(postgres_ticks) o1=$(outboxd_ticks $outboxd_pid)
hz=$(getconf CLK_TCK)
awk -v n="$JOBS" -v s="$(echo "$t1 - $t0" | bc -l)" -v m=$((m1 - m0)) -v p=$((p1 - p0)) -v o="$o1" \
	-v hz="$hz" \
	'BEGIN { printf "drain %d jobs in %.2f s: %.0f jobs/s; CPU per job: machine %.4f ms, PostgreSQL %.4f ms, outboxd %.4f ms\n",
	         n, s, n / s, m / hz * 1000 / n, p / hz * 1000 / n, o / hz * 1000 / n }'
psql -X -q -At -F ' ' -d "$db" -c "SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
	WHERE schemaname = 'outbox' AND relname IN ('jobs', 'outbox_events') ORDER BY relname" |
	while read -r rel upd hot; do echo "$rel: $upd updates, $hot HOT (counted so far)"; done
[ -z "$perf_pid" ] || wait "$perf_pid"
if [ -n "$CALLGRIND_FILE" ]; then
	# The daemon is stopped at exit, too slowly under valgrind to write its
	# own profile: dump what the drain counted now (callgrind_control waits
	# for the dump).
	callgrind_control -d "$outboxd_pid" >/dev/null 2>&1 ||
		{ echo "drain-cpu.sh: callgrind_control could not dump outboxd (pid $outboxd_pid)" >&2; exit 1; }
	for f in "$CALLGRIND_FILE".[0-9]*; do echo "callgrind profile of outboxd: $f"; done
fi
