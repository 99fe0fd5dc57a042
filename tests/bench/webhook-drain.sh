#!/bin/bash
# tests/bench/webhook-drain.sh: a benchmark, not a test.  How fast outboxd
# drains N jobs committed before it starts when its destinations are served
# by the webhook plugin (to a minimal keep-alive receiver on 127.0.0.1),
# against the same drain through the no-op handler bench_noop, in one run on
# one durable cluster (tests/harness/durable-pg.sh).  outbox-bench always
# routes to bench_noop, so this script builds the same drain itself: N jobs
# committed with outbox.enqueue() in one transaction, then outboxd --role
# all started and timed from its start to the last SUCCEEDED.
#
#   tests/bench/webhook-drain.sh [JOBS [ROUNDS]]   (as root, from anywhere)
#
# JOBS defaults to 20000, ROUNDS (noop then webhook, repeated) to 1.
# Environment: OUTBOX_BUILDDIR (default: the current directory if it holds
# outboxd, else SRC/_build), DESTINATIONS (3),
# WORKERS (the [consumer] workers per destination, 4).  Prints one line per
# drain and a summary: jobs/s of each, the ratio, and the receiver's
# requests per job.
set -eu

jobs=${1:-20000}
rounds=${2:-1}
dests=${DESTINATIONS:-3}
workers=${WORKERS:-4}
. "$(dirname "$0")/bench_lib.sh"
bench_init webhook-drain
bench_require_build
src=$OUTBOX_SRCDIR build=$OUTBOX_BUILDDIR work=$BENCH_WORK
export OUTBOX_MIGRATIONS_DIR="$src/migrations" OUTBOX_PLUGIN_DIR="$build/.libs"
bench_pg_start
conninfo=$BENCH_CONNINFO
bench_fauxqs_start
export BENCH_WEBHOOK_SECRET="whsec_$(head -c 32 /dev/urandom | base64 -w0)"

# The receiver: answers 200 at once, keeps connections alive, counts requests.
node -e '
	const http = require("http");
	let n = 0;
	const s = http.createServer((req, res) => {
		if (req.method === "GET") { res.end(String(n)); return; }
		req.resume();
		req.on("end", () => { n++; res.end("ok"); });
	});
	s.keepAliveTimeout = 60000;
	s.listen(0, "127.0.0.1", () => console.log("listening " + s.address().port));
' >"$work/receiver.out" 2>&1 &
bench_track "$!"
for _ in $(seq 1 100); do grep -q '^listening ' "$work/receiver.out" && break; sleep 0.05; done
recv="http://127.0.0.1:$(sed -n 's/^listening //p' "$work/receiver.out")"

psql_db() { psql -X -q -v ON_ERROR_STOP=1 -At -d "$1" -c "$2"; }

# drain VARIANT TAG: one fresh database, N jobs, one timed outboxd run.
drain() {
	local variant=$1 tag=$2 db ini="$work/$2.ini" d t0 t1 before after
	psql_db "$conninfo" "CREATE DATABASE bench_$tag" >/dev/null
	db="${conninfo%/postgres}/bench_$tag"
	printf '[database]\nconninfo = %s\n\n[aws]\nregion = us-east-1\nendpoint_url = %s\n\n' \
		"$db" "$OUTBOX_TEST_AWS_ENDPOINT" >"$ini"
	printf '[consumer]\nworkers = %s\n\n' "$workers" >>"$ini"
	for d in $(seq 1 "$dests"); do
		printf '[destination:d%s]\nqueue_url = %s/000000000000/%s-d%s\n' \
			"$d" "$OUTBOX_TEST_AWS_ENDPOINT" "$tag" "$d" >>"$ini"
		if [ "$variant" = webhook ]; then
			printf 'plugin = webhook\nplugin.url = %s/jobs\nplugin.secret_env = BENCH_WEBHOOK_SECRET\n\n' \
				"$recv" >>"$ini"
		else
			printf 'plugin = bench_noop\n\n' >>"$ini"
		fi
	done
	"$build/outboxctl" -c "$ini" migrate >"$work/$tag.migrate.log" 2>&1
	"$build/outboxctl" -c "$ini" create-queues >"$work/$tag.queues.log" 2>&1
	psql_db "$db" "SELECT count(*) FROM generate_series(1, $jobs) g,
		LATERAL outbox.enqueue('bench', 'd' || (g % $dests + 1), json_build_object('n', g),
		                       jsonb_build_object('n', g, 'variant', '$variant'))" >/dev/null
	before=$(curl -fsS "$recv/count")
	t0=$(date +%s%N)
	"$build/outboxd" -c "$ini" --role all >"$work/$tag.outboxd.log" 2>&1 &
	local opid=$!
	bench_track "$opid"
	until [ "$(psql_db "$db" "SELECT count(*) FROM outbox.jobs WHERE status <> 'SUCCEEDED'")" = 0 ]; do
		kill -0 "$opid" 2>/dev/null || { tail "$work/$tag.outboxd.log" >&2; return 1; }
		sleep 0.05
	done
	t1=$(date +%s%N)
	after=$(curl -fsS "$recv/count")
	local cpu
	cpu=$(awk '{print ($14 + $15) / 100}' "/proc/$opid/stat")
	kill -TERM "$opid"
	wait "$opid" || true
	local rate
	rate=$(awk -v n="$jobs" -v ns=$((t1 - t0)) 'BEGIN {printf "%.0f", n / (ns / 1e9)}')
	echo "$variant $tag: $jobs jobs in $(awk -v ns=$((t1 - t0)) 'BEGIN {printf "%.2f", ns / 1e9}') s = $rate jobs/s;" \
		"outboxd CPU $(awk -v c="$cpu" -v n="$jobs" 'BEGIN {printf "%.3f", c * 1000 / n}') ms/job;" \
		"receiver requests per job $(awk -v a="$after" -v b="$before" -v n="$jobs" 'BEGIN {printf "%.3f", (a - b) / n}')"
	echo "$rate" >>"$work/rates.$variant"
}

echo "# $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start;" \
	"PostgreSQL durable (fsync, synchronous_commit on), $dests destinations x $workers workers"
for r in $(seq 1 "$rounds"); do
	drain noop "noop$r"
	drain webhook "webhook$r"
done
noop=$(awk '{s += $1} END {print s / NR}' "$work/rates.noop")
hook=$(awk '{s += $1} END {print s / NR}' "$work/rates.webhook")
echo "# mean over $rounds round(s): bench_noop $noop jobs/s, webhook $hook jobs/s," \
	"webhook/noop = $(awk -v a="$hook" -v b="$noop" 'BEGIN {printf "%.2f", a / b}');" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
