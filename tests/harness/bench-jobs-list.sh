#!/bin/bash
# tests/harness/bench-jobs-list.sh: what `outboxctl jobs` costs on a large
# jobs table, and what its index (jobs_created, migration V9) costs the
# producers (docs/performance.md, "Listing jobs").  A benchmark: it prints
# figures and asserts nothing.
#
#   bench-jobs-list.sh BUILDDIR CONNINFO [JOBS]
#
# CONNINFO names a maintenance database of a durable cluster
# (tests/harness/durable-pg.sh); the script creates the database
# "jobs_list_bench" there (dropping an old one), migrates it, fills
# outbox.jobs with JOBS rows (default 1000000: 4 destinations, 97 %
# SUCCEEDED, 2 % DEAD, 1 % PENDING, created over 30 days), then times:
#   - each listing (the whole outboxctl process: start, connect, query,
#     print), 21 runs, median and slowest, beside "outboxctl --version" (the
#     cost of starting the process alone); the programs are copied out of
#     BUILDDIR/.libs, so libtool's wrapper script is not timed and a
#     rebuild meanwhile does not disturb the run;
#   - enqueue throughput with pgbench (4 clients, 15 s, one outbox.enqueue()
#     per transaction) with and without the index.
set -eu
BUILDDIR=${1:?usage: bench-jobs-list.sh BUILDDIR CONNINFO [JOBS]}
ADMIN=${2:?usage: bench-jobs-list.sh BUILDDIR CONNINFO [JOBS]}
JOBS=${3:-1000000}
SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
: "${OUTBOX_PG_BIN:=/usr/lib/postgresql/15/bin}"
export OUTBOX_MIGRATIONS_DIR="$SRCDIR/migrations"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/lib"
cp "$BUILDDIR/.libs/outboxctl" "$TMP/outboxctl"
cp -P "$BUILDDIR"/.libs/liboutbox.so* "$TMP/lib/"
ctl() { LD_LIBRARY_PATH="$TMP/lib" "$TMP/outboxctl" -c "$TMP/relay.ini" "$@"; }

psql -X -q -d "$ADMIN" -c "DROP DATABASE IF EXISTS jobs_list_bench" -c "CREATE DATABASE jobs_list_bench"
DB=$(psql -X -At -d "$ADMIN" -c "SELECT 'postgresql://' || current_user || '@127.0.0.1:' || current_setting('port') || '/jobs_list_bench'")
cat >"$TMP/relay.ini" <<INI
[database]
conninfo = $DB

[aws]
region = us-east-1
endpoint_url = http://127.0.0.1:9

[destination:news]
queue_url = http://127.0.0.1:9/000000000000/news
plugin = example
INI
ctl migrate >/dev/null 2>&1
q() { psql -X -q -At -d "$DB" -c "$1"; }

t0=$(date +%s)
q "INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload, status,
                            attempt_count, dead_reason, finished_at, created_at, updated_at)
   SELECT encode(sha256(convert_to(i::text, 'UTF8')), 'hex'),
          (ARRAY['news', 'price', 'mail', 'webhook'])[1 + i % 4],
          (ARRAY['news', 'news', 'mail', 'webhook'])[1 + i % 4],
          jsonb_build_object('i', i), jsonb_build_object('i', i, 'text', 'some payload'),
          CASE WHEN i % 100 = 0 THEN 'PENDING' WHEN i % 50 = 1 THEN 'DEAD' ELSE 'SUCCEEDED' END,
          1, CASE WHEN i % 50 = 1 THEN 'PERMANENT' END,
          CASE WHEN i % 100 <> 0 THEN t END, t, t
     FROM generate_series(1, $JOBS) AS i,
          LATERAL (SELECT now() - interval '30 days' * (1 - i::float8 / $JOBS) AS t) AS x"
q "VACUUM ANALYZE outbox.jobs"
echo "filled outbox.jobs with $JOBS jobs in $(( $(date +%s) - t0 )) s; table $(q "SELECT pg_size_pretty(pg_table_size('outbox.jobs'))"), jobs_created $(q "SELECT pg_size_pretty(pg_relation_size('outbox.jobs_created'))")"

# time_cmd NAME ARGS...: 21 runs of outboxctl ARGS, in ms
time_cmd() {
	local name=$1 i t s=()
	shift
	ctl "$@" >/dev/null # warm
	for i in $(seq 21); do
		t=$(date +%s%N)
		ctl "$@" >/dev/null
		s+=($(( ($(date +%s%N) - t) / 1000 )))
	done
	printf '%s\n' "${s[@]}" | sort -n | awk -v n="$name" '{ a[NR] = $1 }
		END { printf "%-44s median %6.1f ms   slowest %6.1f ms\n", n, a[11] / 1000, a[21] / 1000 }'
}
cursor=$(ctl --json jobs --limit 50 | jq -r '.[49].cursor')
deep=$(ctl --json jobs --limit 1000 --since 20d --before "$cursor" | jq -r '.[999].cursor')
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "outboxctl jobs, first page of 50 unless said (whole process):"
time_cmd "--version (no query: the process alone)" --version
time_cmd "jobs" jobs
time_cmd "jobs --limit 1000" jobs --limit 1000
time_cmd "jobs --destination mail" jobs --destination mail
time_cmd "jobs --type price" jobs --type price
time_cmd "jobs --status DEAD" jobs --status DEAD
time_cmd "jobs --status PENDING" jobs --status PENDING
time_cmd "jobs --destination webhook --status DEAD" jobs --destination webhook --status DEAD
time_cmd "jobs --since 1h" jobs --since 1h
time_cmd "jobs --before CURSOR (page 2)" jobs --before "$cursor"
time_cmd "jobs --before CURSOR (after 1,050 jobs)" jobs --before "$deep"
time_cmd "jobs --destination nowhere (no match)" jobs --destination nowhere
# The page's statement on a warm session (as the console, which keeps its
# connection, runs it): the WHERE clause the planner is left with once the
# NULL filters have folded away (core/ops/jobs.c).
echo "the statement alone, warm session (planning + execution, second run):"
ts=${cursor%_*} id=${cursor##*_}
for w in "true" "destination = 'mail'" "status = 'DEAD'" "status = 'PENDING'" \
	"destination = 'webhook' AND status = 'DEAD'" "job_type = 'price'" \
	"created_at >= now() - interval '1 hour'" "(created_at, job_id) < ('$ts', '$id')" \
	"destination = 'nowhere'"; do
	sql="EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) SELECT * FROM outbox.jobs
	     WHERE $w ORDER BY created_at DESC, job_id DESC LIMIT 50"
	psql -X -q -At -d "$DB" -c "$sql" -c "$sql" | tail -2 | tr '\n' ' ' |
		awk -v w="$w" '{ printf "  %-52s planning %6.2f ms, execution %7.2f ms\n", substr(w, 1, 52), $3, $7 }'
done

cat >"$TMP/enqueue.sql" <<'SQL'
\set k random(1, 2000000000)
SELECT * FROM outbox.enqueue('bench', 'news', json_build_object('k', :k, 'c', :client_id), '{"x":1}');
SQL
bench() {
	"$OUTBOX_PG_BIN/pgbench" -n -c 4 -j 2 -T 15 -f "$TMP/enqueue.sql" "$DB" 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}
echo "enqueue (pgbench, 4 clients, 15 s, one outbox.enqueue() per transaction):"
with=$(bench)
q "DROP INDEX outbox.jobs_created"
without=$(bench)
q "CREATE INDEX jobs_created ON outbox.jobs (created_at, job_id)"
with2=$(bench)
echo "  with jobs_created:    $with tps, again $with2 tps"
echo "  without jobs_created: $without tps"
psql -X -q -d "$ADMIN" -c "DROP DATABASE jobs_list_bench"
