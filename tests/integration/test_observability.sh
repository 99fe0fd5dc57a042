#!/bin/bash
# test_observability.sh: what an operator watches, on a real run of
# outboxd --role all (news_llm + the stub LLM) against its own PostgreSQL
# cluster (stopped and started again here) and fauxqs:
#   - /metrics during the run: the counters agree with the database (jobs
#     succeeded = SUCCEEDED rows, events published = PUBLISHED rows, ...),
#     and promtool accepts the exposition;
#   - /readyz is 503 within a few seconds of PostgreSQL stopping, 200 again
#     once it is back, while /healthz stays 200;
#   - sd_notify: READY=1 after every lane and worker connected, STOPPING=1
#     on SIGTERM, WATCHDOG=1 with WATCHDOG_USEC, read from a local
#     NOTIFY_SOCKET (an abstract name, then a path);
#   - logs: with JOURNAL_STREAM naming stderr every line starts with its
#     syslog priority and has no timestamp; --log-format json gives one
#     valid object per line (every line parsed); no secret in any.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
pl_require
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
if ! command -v promtool >/dev/null; then
	echo "SKIP: promtool is not installed (Debian package prometheus)"
	exit 77
fi

priv_data="" listener_pid=""
pl_extra_cleanup() {
	if [ -n "$listener_pid" ]; then
		kill "$listener_pid" 2>/dev/null
		wait "$listener_pid" 2>/dev/null
	fi
	if [ -n "$priv_data" ]; then
		runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$priv_data" -m immediate stop >/dev/null 2>&1
		rm -rf "$(dirname "$priv_data")"
	fi
}

# A private cluster: this test stops it.
shared_data=${OUTBOX_TEST_PG_DATA:-} shared_conninfo=$OUTBOX_TEST_PG_CONNINFO shared_port=$OUTBOX_TEST_PG_PORT
pg_start || { echo "ERROR: could not start a private PostgreSQL"; exit 99; }
priv_data=$OUTBOX_TEST_PG_DATA priv_port=$OUTBOX_TEST_PG_PORT
export OUTBOX_TEST_PG_DATA=$shared_data OUTBOX_TEST_PG_CONNINFO=$shared_conninfo OUTBOX_TEST_PG_PORT=$shared_port
psql_q "postgresql://postgres@127.0.0.1:$priv_port/postgres" "CREATE DATABASE observe" >/dev/null
pg_ctl_priv() {
	runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$priv_data" \
		-l "$(dirname "$priv_data")/server.log" -w "$@" >/dev/null
}

stub_start
PL_DB="postgresql://postgres@127.0.0.1:$priv_port/observe" pl_setup observe
port=$(free_port)
printf '\n[metrics]\nlisten = 127.0.0.1:%s\n' "$port" >>"$INI"
URL="http://127.0.0.1:$port"

# status CODE PATH: the answer's HTTP status is CODE
status() { test "$(curl -s -o /dev/null -w '%{http_code}' "$URL$2")" = "$1"; }
# until_status CODE PATH SECONDS
until_status() { wait_for "$3" status "$1" "$2"; }
# metric NAME: the sum of every series of NAME in $TEST_TMP/metrics.txt
metric() {
	awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $NF } END { printf "%d\n", s }' \
		"$TEST_TMP/metrics.txt"
}
# notified LINE SECONDS: the listener printed LINE
notified() { wait_for "$2" grep -qx "$1" "$TEST_TMP/notify.out"; }
start_listener() {
	: >"$TEST_TMP/notify.out"
	"$OUTBOX_BUILDDIR/tests/integration/notify_listen" "$1" >"$TEST_TMP/notify.out" 2>&1 &
	listener_pid=$!
	notified listening 5
}
stop_listener() {
	kill "$listener_pid" 2>/dev/null; wait "$listener_pid" 2>/dev/null || true
	listener_pid=""
}

# ---------------- run 1: JSON logs, abstract notify socket ----------------
start_listener "@outbox-test-notify-$$"
outboxd_start_json() {
	env NOTIFY_SOCKET="@outbox-test-notify-$$" "$OUTBOXD" -c "$INI" --role all \
		--log-format json >>"$TEST_TMP/outboxd-json.log" 2>&1 &
	OPID=$!
	pl_pids+=("$OPID")
}
outboxd_start_json
check "READY=1 once every lane and worker is connected" notified READY=1 20
check "/readyz is 200 when ready" until_status 200 /readyz 10
check "/healthz is 200" status 200 /healthz
check "an unknown path is 404" status 404 /nope

# Two LLM failures that retry, one that kills its job: every outcome counts.
stub_script $'500\n500\nmalformed'
for n in $(seq 1 12); do news_line "$n"; done >"$TEST_TMP/items.jsonl"
enqueue_news "$TEST_TMP/items.jsonl" >/dev/null
check "11 jobs end SUCCEEDED, 1 DEAD" wait_sql "$DB" \
	"SELECT count(*) FILTER (WHERE status = 'SUCCEEDED') || '/' || count(*) FILTER (WHERE status = 'DEAD')
	   FROM outbox.jobs" 11/1 60

curl -fsS "$URL/metrics" >"$TEST_TMP/metrics.txt"
check "promtool check metrics accepts the exposition" \
	sh -c "promtool check metrics <'$TEST_TMP/metrics.txt' >'$TEST_TMP/promtool.out' 2>&1"
cat "$TEST_TMP/promtool.out" | sed 's/^/# promtool: /'
check "the content type is Prometheus text 0.0.4" sh -c \
	"curl -fsS -o /dev/null -w '%{content_type}' '$URL/metrics' | grep -q 'version=0.0.4'"
succeeded=$(q "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'")
published=$(q "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'")
dead_jobs=$(q "SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD'")
attempts=$(q "SELECT sum(attempt_count) FROM outbox.jobs")
echo "# database: succeeded=$succeeded published=$published dead=$dead_jobs attempts=$attempts"
echo "# metrics: succeeded=$(metric outboxd_jobs_succeeded_total) published=$(metric outboxd_events_published_total) claimed=$(metric outboxd_jobs_claimed_total)"
check "jobs succeeded = SUCCEEDED rows" test "$(metric outboxd_jobs_succeeded_total)" = "$succeeded"
# A RETRY re-arms the job's event and the relay sends it again when it is
# due (docs/consumer.md, "Retries and the receive budget"), unless the retry
# kept its message; so every PUBLISHED row was sent once, and each of the
# two retries may have added one more send.
sent=$(metric outboxd_events_published_total)
check "events published = PUBLISHED rows plus the retries' re-sends ($published..$((published + 2)))" \
	test "$sent" -ge "$published" -a "$sent" -le "$((published + 2))"
check "jobs dead = DEAD rows" test "$(metric outboxd_jobs_dead_total)" = "$dead_jobs"
retries=$(q "SELECT sum(attempt_count) - count(*) FROM outbox.jobs")
check "jobs claimed = the attempts recorded" test "$(metric outboxd_jobs_claimed_total)" = "$attempts"
check "jobs retried = attempts that were not the last ($retries)" \
	test "$(metric outboxd_jobs_retried_total)" = "$retries"
check "two retries happened" test "$retries" = 2
check "the dead job is counted under its reason" \
	grep -q '^outboxd_jobs_dead_total{destination="news",reason="PERMANENT"} 1$' "$TEST_TMP/metrics.txt"
check "claims = successes + retries + deaths" \
	test "$(metric outboxd_jobs_claimed_total)" = "$(( succeeded + retries + dead_jobs ))"
check "handler executions counted once per claim" \
	test "$(metric outboxd_handler_execute_duration_seconds_count)" = "$attempts"
check "commit-to-start latency observed once per claim" \
	test "$(metric outboxd_commit_to_handler_start_seconds_count)" = "$attempts"
check "publish batch sizes add up to the published events" \
	test "$(awk '/^outboxd_publish_batch_size_sum/ { s += $NF } END { printf "%d", s }' "$TEST_TMP/metrics.txt")" = "$sent"
check "SendMessageBatch requests = batches observed" \
	test "$(grep '^outboxd_sqs_requests_total{action="SendMessageBatch"}' "$TEST_TMP/metrics.txt" | awk '{print $NF}')" = \
	     "$(metric outboxd_publish_batch_size_count)"
check "every lane is up" test "$(grep -c '^outboxd_relay_lanes_up{.*} 1$' "$TEST_TMP/metrics.txt")" = 3
check "every worker and DLQ reader is up (3 x (2 + 1))" test "$(metric outboxd_consumer_workers_up)" = 9
check "the oldest NEW event age is 0 when none waits" \
	grep -q '^outboxd_oldest_new_event_age_seconds{destination="news"} 0.000$' "$TEST_TMP/metrics.txt"
dashboard_series_exist() {
	local m
	for m in $(jq -r '.panels[].targets[].expr' "$OUTBOX_SRCDIR/conf/grafana-outboxd.json" |
	           grep -o 'outboxd_[a-z_]*' | sort -u); do
		grep -q "^$m[{ ]" "$TEST_TMP/metrics.txt" || { echo "# dashboard uses $m, not served" >&2; return 1; }
	done
}
check "every series the Grafana dashboard queries is served" dashboard_series_exist
check "no per-job label" sh -c "! grep -q 'job_id' '$TEST_TMP/metrics.txt'"

# A NEW event that the relay cannot send (the lane's queue gone) ages.
check "outboxd stops cleanly (exit 0)" outboxd_stop "$OPID"
check "STOPPING=1 on SIGTERM" notified STOPPING=1 5
stop_listener
check "every JSON log line parses" sh -c "jq -e . '$TEST_TMP/outboxd-json.log' >/dev/null"
check "every JSON line has time, level, message" sh -c \
	"jq -e 'select((.time and .level and .message) | not)' '$TEST_TMP/outboxd-json.log' | grep -q . && exit 1 || exit 0"
check "context keys become fields (dest, job_id)" sh -c \
	"jq -e 'select(.message == \"job succeeded\" and .dest == \"news\" and (.job_id | length) == 64)' '$TEST_TMP/outboxd-json.log' | grep -q ."
echo "# $(wc -l <"$TEST_TMP/outboxd-json.log") JSON log lines"

# ---------------- run 2: journald lines, path notify socket, outage ----------------
start_listener "$TEST_TMP/notify.sock"
log="$TEST_TMP/outboxd-journal.log"
: >"$log"
journal=$(stat -c '%d:%i' "$log")
env NOTIFY_SOCKET="$TEST_TMP/notify.sock" WATCHDOG_USEC=1000000 JOURNAL_STREAM="$journal" "$OUTBOXD" -c "$INI" --role all >>"$log" 2>&1 &
OPID=$!
pl_pids+=("$OPID")
check "READY=1 through a socket path" notified READY=1 20
check "WATCHDOG=1 while alive, with WATCHDOG_USEC set" notified WATCHDOG=1 5
check "/readyz is 200 before the outage" until_status 200 /readyz 10
t0=$SECONDS
pg_ctl_priv -m fast stop
check "/readyz turns 503 within 5 s of PostgreSQL stopping" until_status 503 /readyz 5
echo "# /readyz 503 after $(( SECONDS - t0 )) s: $(curl -s "$URL/readyz")"
readyz_says_db() { curl -s "$URL/readyz" | grep -q '^database unreachable: '; }
check "/readyz says the database is unreachable" wait_for 5 readyz_says_db
check "/healthz stays 200 during the outage" status 200 /healthz
curl -sS "$URL/metrics" >"$TEST_TMP/metrics-outage.txt" 2>&1 || true
check "/metrics still answers during the outage, database_up 0" \
	grep -q '^outboxd_database_up 0$' "$TEST_TMP/metrics-outage.txt"
pg_ctl_priv start
check "/readyz is 200 again once PostgreSQL is back" until_status 200 /readyz 30
check "/healthz is 200 after the outage" status 200 /healthz
check "outboxd stops cleanly after the outage (exit 0)" outboxd_stop "$OPID"
check "STOPPING=1 through a socket path" notified STOPPING=1 5
stop_listener
check "every journald line starts with <N> and a level" sh -c \
	"! grep -v -E '^<[3467]>(ERROR|WARNING|LOG|DEBUG): ' '$log' | grep -q ."
check "journald lines have no timestamp of their own" sh -c "! grep -q -E '^<[0-9]>[0-9]{4}-' '$log'"
check "the outage is logged at warning priority" grep -q '^<4>WARNING: ' "$log"
check "informational lines have priority 6" grep -q '^<6>LOG: outboxd started' "$log"

# ---------------- run 3: consumer only, a backlog the database reports ----------------
# Without a relay the new job's event stays NEW and the job PENDING and due:
# both ages come from the database and grow.
news_line 100 >"$TEST_TMP/late.jsonl"
enqueue_news "$TEST_TMP/late.jsonl" >/dev/null
"$OUTBOXD" -c "$INI" --role consumer >>"$TEST_TMP/outboxd-consumer.log" 2>&1 &
OPID=$!
pl_pids+=("$OPID")
check "/readyz is 200 for a consumer-only instance (no lanes expected)" until_status 200 /readyz 20
aged() {
	curl -fsS "$URL/metrics" >"$TEST_TMP/metrics.txt" || return 1
	awk '$1 == "outboxd_oldest_new_event_age_seconds{destination=\"news\"}" && $2 > 0 { a = 1 }
	     $1 == "outboxd_oldest_due_pending_job_age_seconds{destination=\"news\"}" && $2 > 0 { b = 1 }
	     END { exit !(a && b) }' "$TEST_TMP/metrics.txt"
}
check "the oldest NEW event and the oldest due PENDING job have an age" wait_for 10 aged
check "a consumer-only instance reports no lane up" \
	test "$(metric outboxd_relay_lanes_up)" = 0
check "the consumer-only outboxd stops cleanly (exit 0)" outboxd_stop "$OPID"

for f in "$TEST_TMP/outboxd-json.log" "$log"; do
	check "no secret in $(basename "$f")" sh -c \
		"! grep -q -F -e '$AWS_SECRET_ACCESS_KEY' -e '$OPENAI_API_KEY' '$f'"
done
finish
