#!/bin/bash
# tests/harness/console-bench.sh: the console's figures (docs/console.md,
# "Performance").  A program that prints figures, never a test.
#
#   console-bench.sh latency CONNINFO N   fill a fresh database with N jobs (and
#                                         their events) by SQL, then time each
#                                         page 30 times: median and p95, ms
#   console-bench.sh load CONNINFO JOBS   outboxd drains JOBS jobs twice, once
#                                         plain and once while a loop of 500
#                                         console requests runs; prints both
#                                         rates and the slowdown
#
# CONNINFO is a maintenance database of a durable cluster
# (tests/harness/durable-pg.sh); the emulator's address comes from
# OUTBOX_TEST_AWS_ENDPOINT (tests/harness/services.sh).  Run from a build
# directory.
set -eu

: "${OUTBOX_TEST_AWS_ENDPOINT:?start the emulator: . tests/harness/services.sh && fauxqs_start}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/services.sh"
export OUTBOX_MIGRATIONS_DIR="$here/../../migrations"
EP=$OUTBOX_TEST_AWS_ENDPOINT
: "${OUTBOX_PLUGIN_DIR:=$PWD/.libs}"
export OUTBOX_PLUGIN_DIR
TMP=$(mktemp -d /tmp/console-bench.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

newdb() { # MAINT_CONNINFO NAME: prints the new database's conninfo
	PGOPTIONS="-c client_min_messages=warning" psql -X -q -At -d "$1" \
		-c "DROP DATABASE IF EXISTS \"$2\" WITH (FORCE)" -c "CREATE DATABASE \"$2\"" >/dev/null
	echo "${1%/*}/$2"
}

ini() { # FILE CONNINFO CONSOLE_PORT
	cat >"$1" <<INI
[database]
conninfo = $2

[aws]
region = us-east-1
endpoint_url = $EP

[s3]
bucket = outbox-bench
endpoint_url = $EP

[consumer]
wait_time_seconds = 1

[console]
listen = 127.0.0.1:$3
token_env = OUTBOX_BENCH_CONSOLE_TOKEN

[destination:news]
queue_url = $EP/000000000000/cb-$$-news
plugin = bench_noop

[destination:price]
queue_url = $EP/000000000000/cb-$$-price
plugin = bench_noop

[destination:explanation]
queue_url = $EP/000000000000/cb-$$-explanation
plugin = bench_noop
INI
}

# A fresh, migrated database and its relay.ini; prints its conninfo.
setup() { # MAINT NAME PORT INI
	local db
	db=$(newdb "$1" "$2")
	ini "$4" "$db" "$3"
	./outboxctl -c "$4" migrate >/dev/null 2>&1
	./outboxctl -c "$4" create-queues >/dev/null 2>&1
	echo "$db"
}

export OUTBOX_BENCH_CONSOLE_TOKEN="bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
AUTH="Authorization: Bearer $OUTBOX_BENCH_CONSOLE_TOKEN"
PACE=${CONSOLE_BENCH_PACE:-0}

# N jobs: 94 % SUCCEEDED (the last hour's spread over it), 3 % PENDING,
# 2 % DEAD, 1 % CLAIMED, over three destinations; one event each.
fill() { # CONNINFO N
	psql -X -q -v ON_ERROR_STOP=1 -d "$1" -v n="$2" <<'SQL'
BEGIN;
INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload, status,
                         attempt_count, claimed_by, lease_until, next_attempt_at, last_error,
                         dead_reason, created_at, updated_at, finished_at)
SELECT md5(i::text) || md5('x' || i), d, d, jsonb_build_object('i', i),
       jsonb_build_object('i', i, 'note', repeat('x', 100)),
       s, CASE WHEN s = 'PENDING' THEN 0 ELSE 1 END,
       CASE WHEN s = 'CLAIMED' THEN 'bench' END,
       CASE WHEN s = 'CLAIMED' THEN now() + interval '1 hour' END,
       t, CASE WHEN s = 'DEAD' THEN 'handler said no' END,
       CASE WHEN s = 'DEAD' THEN 'PERMANENT' END, t, t,
       CASE WHEN s IN ('SUCCEEDED', 'DEAD') THEN t END
  FROM (SELECT i, (ARRAY['news', 'price', 'explanation'])[1 + i % 3] AS d,
               CASE WHEN i % 100 < 94 THEN 'SUCCEEDED' WHEN i % 100 < 97 THEN 'PENDING'
                    WHEN i % 100 < 99 THEN 'DEAD' ELSE 'CLAIMED' END AS s,
               now() - (:n - i) * interval '3.6 ms' AS t
          FROM generate_series(1, :n) AS i) g;
INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination, redrive_generation,
                                  body, status, published_at, created_at)
SELECT destination || ':' || job_id || ':0', destination, job_id, destination, 0, '{}',
       CASE WHEN status = 'PENDING' AND attempt_count = 0 AND right(job_id, 1) = 'a' THEN 'NEW'
            ELSE 'PUBLISHED' END,
       CASE WHEN status = 'PENDING' AND attempt_count = 0 AND right(job_id, 1) = 'a' THEN NULL
            ELSE created_at END, created_at
  FROM outbox.jobs;
COMMIT;
VACUUM ANALYZE outbox.jobs;
VACUUM ANALYZE outbox.outbox_events;
SQL
}

# median and p95 (ms) of 30 GETs of PATH
timeit() { # PORT PATH
	local i
	for i in $(seq 1 30); do
		curl -sS -o /dev/null -w '%{time_total}\n' -H "$AUTH" "http://127.0.0.1:$1$2"
	done | sort -n | awk '{ t[NR] = $1 * 1000 } END { printf "%8.1f %8.1f", t[int(NR / 2) + 1], t[int(NR * 0.95)] }'
}

latency() { # MAINT N
	local db port pid cursor
	port=$(free_port)
	db=$(setup "$1" "console_bench_latency" "$port" "$TMP/relay.ini")
	echo "filling $2 jobs..." >&2
	fill "$db" "$2"
	./outboxd -c "$TMP/relay.ini" --role relay >"$TMP/outboxd.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/login" && break; sleep 0.1; done
	cursor=$(psql -X -At -d "$db" -c "SELECT to_char(created_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') || '_' || job_id FROM outbox.jobs
		ORDER BY created_at, job_id OFFSET $(($2 / 2)) LIMIT 1")
	printf '%-52s %8s %8s\n' "page ($2 jobs)" "p50 ms" "p95 ms"
	for p in / /jobs "/jobs?status=DEAD" "/jobs?destination=news&status=PENDING" \
		"/jobs?before=$cursor" /dead "/dead?destination=price&reason=PERMANENT"; do
		printf '%-52s %s\n' "${p:0:52}" "$(timeit "$port" "$p")"
	done
	kill -TERM "$pid"; wait "$pid" || true
}

# 500 requests over the pages and one idempotent action, back to back
# (CONSOLE_BENCH_PACE seconds apart, default 0); prints how many succeeded.
hammer() { # PORT
	local csrf i ok=0
	csrf=$(curl -sS -o /dev/null -D - -H "$AUTH" "http://127.0.0.1:$1/" | tr -d '\r' |
		sed -n 's/^X-CSRF-Token: //p')
	for i in $(seq 1 100); do
		for p in / /jobs /dead "/jobs?status=SUCCEEDED"; do
			curl -fsS -o /dev/null -H "$AUTH" "http://127.0.0.1:$1$p" 2>/dev/null && ok=$((ok + 1))
			sleep "$PACE"
		done
		curl -fsS -o /dev/null -H "$AUTH" -H "X-CSRF-Token: $csrf" -X POST \
			"http://127.0.0.1:$1/destinations/news/resume" 2>/dev/null && ok=$((ok + 1))
		sleep "$PACE"
	done
	echo "$ok"
}

# outboxd --role all drains JOBS jobs (enqueued by SQL, 500 a transaction,
# over three destinations, bench_noop); prints jobs per second from the
# first enqueue to the last SUCCEEDED.  With load, the 500 console requests
# run meanwhile.
bench_once() { # MAINT JOBS NAME WITH_CONSOLE_LOAD
	local db port pid hpid= t0 t1 done=0
	port=$(free_port)
	db=$(setup "$1" "console_bench_$3" "$port" "$TMP/$3.ini")
	./outboxd -c "$TMP/$3.ini" --role all >"$TMP/$3.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 1 100); do
		curl -fsS -o /dev/null "http://127.0.0.1:$port/login" 2>/dev/null && break
		sleep 0.1
	done
	if [ "$4" = yes ]; then
		( start=$(date +%s%N); n=$(hammer "$port")
		  echo "$n of 500 console requests answered in $(( ($(date +%s%N) - start) / 1000000 )) ms" >&2 ) &
		hpid=$!
	fi
	t0=$(date +%s%N)
	for b in $(seq 0 500 $(($2 - 1))); do
		psql -X -q -At -d "$db" -c "SELECT count(*) FROM generate_series($b, $b + 499) AS i,
			LATERAL outbox.enqueue('bench', (ARRAY['news', 'price', 'explanation'])[1 + i % 3],
			                       json_build_object('run', '$3', 'i', i), '{}'::jsonb)" >/dev/null
	done
	for _ in $(seq 1 6000); do
		done=$(psql -X -At -d "$db" -c "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'")
		[ "$done" -ge "$2" ] && break
		sleep 0.1
	done
	t1=$(date +%s%N)
	[ -z "$hpid" ] || wait "$hpid"
	kill -TERM "$pid"; wait "$pid" || true
	awk -v n="$done" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", n / (ns / 1e9) }'
}

load() { # MAINT JOBS
	local plain loaded
	plain=$(bench_once "$1" "$2" plain no)
	loaded=$(bench_once "$1" "$2" loaded yes)
	echo "$2 jobs enqueued and drained by outboxd --role all: $plain jobs/s without console requests, $loaded jobs/s with 500"
	awk -v a="$plain" -v b="$loaded" 'BEGIN { printf "slowdown: %.1f %%\n", (a - b) / a * 100 }'
}

case ${1:-} in
latency) [ $# -eq 3 ] || exit 64; latency "$2" "$3" ;;
load) [ $# -eq 3 ] || exit 64; load "$2" "$3" ;;
*) echo "usage: console-bench.sh latency|load CONNINFO N" >&2; exit 64 ;;
esac
