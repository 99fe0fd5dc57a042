# tests/integration/test_pipeline_lib.sh: shared setup of the end-to-end
# pipeline tests (sourced after tests/harness/testlib.sh).  They run the real
# binaries (outboxctl, outboxd --role all) with the three shipped plugins
# (news_llm, price_trigger, explanation) against PostgreSQL, fauxqs (SQS +
# S3) and the stub LLM (tests/harness/llm-stub.mjs).
#
#   pl_require                     exit 77 without PostgreSQL, fauxqs or node
#   stub_start                     starts the stub LLM; sets STUB_URL, STUB_PID
#   stub_script LINES              replaces the stub's fault script
#   stub_requests                  chat requests the stub has answered so far
#   pl_ini FILE CONNINFO NAME [EXTRA_NEWS_LINES]
#                                  relay.ini with news, price and explanation
#                                  destinations (queues pl-NAME-PID-*, bucket
#                                  pl-NAME-PID); env overrides: RETRY_BASE,
#                                  RETRY_MAX, LEASE, VIS, WORKERS, GRACE, AWS_EP
#   pl_setup NAME [EXTRA_NEWS_LINES]
#                                  fresh database pipeline_NAME_PID, relay.ini
#                                  in $INI, migrate, create-queues; sets DB, INI
#                                  (PL_DB=CONNINFO: use that database instead)
#   pl_ini_head CONNINFO AWS_EP    prints [database], [aws], [relay], [consumer]
#   pl_prepare                     migrate $DB, create-queues, --check-config $INI
#   outboxd_start LOG [ENV=VALUE...]  outboxd --role all -c $INI; sets OPID and
#                                  adds it to the list killed at exit
#   outboxd_stop PID               SIGTERM, wait; returns its exit code
#   q SQL                          one value from $DB
#   wait_idle TIMEOUT              until no job is PENDING/CLAIMED and no event NEW
#   news_line N [TITLE]            a synthetic news item (JSON line) number N
#   enqueue_news FILE|-            enqueue-news --json; prints the job ids
#
# Every server is bound to 127.0.0.1.  Everything started here is stopped by
# pl_cleanup (trap EXIT), which also removes $TEST_TMP (unless PL_KEEP_TMP is
# set: then the logs stay there); after a failed check it prints the end of
# every outboxd log.

pl_pids=()
STUB_PID=""

pl_cleanup() {
	local p
	set +e
	for p in "${pl_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${pl_pids[@]}"; do
		# bounded: SIGKILL whatever is still there after 10 s
		for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -n "$STUB_PID" ]; then
		kill "$STUB_PID" 2>/dev/null
		wait "$STUB_PID" 2>/dev/null
	fi
	{ exec 9>&-; } 2>/dev/null
	if declare -F pl_extra_cleanup >/dev/null; then
		pl_extra_cleanup
	fi
	# keep the database of a failed run for a post-mortem
	# (only databases newdb made on the shared cluster)
	if [ -n "${DB:-}" ] && [ "$DB" = "postgresql://postgres@127.0.0.1:${OUTBOX_TEST_PG_PORT:-}/${DB##*/}" ] &&
	   [ "${DB##*/}" != postgres ] && [ "${checks_failed:-0}" = 0 ]; then
		psql_q "$OUTBOX_TEST_PG_CONNINFO" "DROP DATABASE IF EXISTS \"${DB##*/}\" WITH (FORCE)" >/dev/null 2>&1
	fi
	if [ "${checks_failed:-0}" != 0 ]; then
		for p in "$TEST_TMP"/outboxd*.log; do
			[ -f "$p" ] || continue
			echo "# --- last lines of $(basename "$p") ---"
			tail -n 40 "$p" | sed 's/^/# /'
		done
	fi
	if [ -n "${PL_KEEP_TMP:-}" ]; then
		echo "# PL_KEEP_TMP: logs kept in $TEST_TMP"
	else
		rm -rf "$TEST_TMP"
	fi
}
trap pl_cleanup EXIT

pl_require() {
	require_pg
	require_aws
	if ! command -v node >/dev/null; then
		echo "SKIP: node is not installed"
		exit 77
	fi
	local p
	for p in news_llm price_trigger explanation; do
		if [ ! -f "${OUTBOX_PLUGIN_DIR:-$OUTBOX_BUILDDIR/.libs}/$p.so" ]; then
			echo "SKIP: plugin $p.so is not built"
			exit 77
		fi
	done
	export OUTBOX_PLUGIN_DIR=${OUTBOX_PLUGIN_DIR:-$OUTBOX_BUILDDIR/.libs}
}

# The stub reads a FIFO whose write end this shell holds (fd 9): when the
# test dies, however it dies, the stub sees EOF and exits.
stub_start() {
	local out="$TEST_TMP/stub.out" fifo="$TEST_TMP/stub.stdin"
	mkfifo "$fifo"
	# STUB_DELAY_MS: every answer waits that long (a slow model).
	node "$OUTBOX_SRCDIR/tests/harness/llm-stub.mjs" --port 0 --exit-on-stdin-eof \
		--delay "${STUB_DELAY_MS:-0}" <"$fifo" >"$out" 2>&1 &
	STUB_PID=$!
	exec 9>"$fifo"
	for _ in $(seq 1 200); do
		if grep -q '^listening ' "$out"; then
			STUB_URL="http://127.0.0.1:$(sed -n 's/^listening //p' "$out")"
			export OPENAI_API_KEY=stub-key-not-a-secret
			return 0
		fi
		sleep 0.05 # waiting for start-up
	done
	echo "stub LLM did not start:" >&2
	cat "$out" >&2
	return 1
}

stub_script() {
	curl -fsS -d "$1" "$STUB_URL/_stub/script" >/dev/null
}

stub_requests() {
	curl -fsS "$STUB_URL/_stub/stats" | jq -r .requests
}

# The most chat requests the stub answered at once since the last
# stub_script.
stub_max_in_flight() {
	curl -fsS "$STUB_URL/_stub/stats" | jq -r .max_in_flight
}

# pl_ini_head CONNINFO AWS_EP: [database], [aws], [relay] and [consumer] of
# every pipeline-style test (the env overrides above).
pl_ini_head() {
	cat <<INI
[database]
conninfo = $1

[aws]
region = us-east-1
endpoint_url = $2

[relay]
poll_interval_ms = 100
retry_base_seconds = ${RETRY_BASE:-1}
retry_max_seconds = ${RETRY_MAX:-4}
claim_lease_seconds = 5

[consumer]
workers = ${WORKERS:-2}
wait_time_seconds = 1
visibility_timeout_seconds = ${VIS:-5}
lease_seconds = ${LEASE:-5}
shutdown_grace_seconds = ${GRACE:-5}
INI
}

pl_ini() {
	local file=$1 conninfo=$2 name=$3 extra=${4:-}
	local ep=${AWS_EP:-$OUTBOX_TEST_AWS_ENDPOINT} qn="pl-$3-$$"
	pl_ini_head "$conninfo" "$ep" >"$file"
	cat >>"$file" <<INI

[s3]
bucket = $(echo "$qn" | tr '_A-Z' '-a-z')
prefix = prices/
endpoint_url = $ep

[destination:news]
queue_url = $ep/000000000000/$qn-news
dlq_url = $ep/000000000000/$qn-news-dlq
max_receive_count = 20
plugin = news_llm
plugin.endpoint = $STUB_URL/v1
plugin.model = stub-llm
plugin.api_key_env = OPENAI_API_KEY
$extra

[destination:price]
queue_url = $ep/000000000000/$qn-price
dlq_url = $ep/000000000000/$qn-price-dlq
max_receive_count = 20
plugin = price_trigger

[destination:explanation]
queue_url = $ep/000000000000/$qn-explanation
dlq_url = $ep/000000000000/$qn-explanation-dlq
max_receive_count = 20
plugin = explanation
plugin.endpoint = $STUB_URL/v1
plugin.model = stub-llm
plugin.api_key_env = OPENAI_API_KEY
INI
}

pl_setup() {
	if [ -n "${PL_DB:-}" ]; then
		DB=$PL_DB
	else
		DB=$(newdb "pipeline_$1_$$")
	fi
	INI="$TEST_TMP/relay.ini"
	pl_ini "$INI" "$DB" "$1" "${2:-}"
	pl_prepare
}

# pl_prepare: migrate $DB, create the queues and --check-config $INI.
pl_prepare() {
	"$OUTBOXCTL" -c "$INI" migrate >"$TEST_TMP/migrate.log" 2>&1 || {
		cat "$TEST_TMP/migrate.log" >&2; return 1; }
	"$OUTBOXCTL" -c "$INI" create-queues >"$TEST_TMP/create-queues.log" 2>&1 || {
		cat "$TEST_TMP/create-queues.log" >&2; return 1; }
	"$OUTBOXD" -c "$INI" --check-config >"$TEST_TMP/check-config.log" 2>&1 || {
		cat "$TEST_TMP/check-config.log" >&2; return 1; }
}

outboxd_start() {
	local log=$1
	shift
	env "$@" "$OUTBOXD" -c "${OUTBOXD_INI:-$INI}" --role all >>"$log" 2>&1 &
	OPID=$!
	pl_pids+=("$OPID")
}

outboxd_stop() {
	local rc=0
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" || rc=$?
	return $rc
}

q() {
	psql_q "$DB" "$1"
}

wait_idle() {
	wait_sql "$DB" "SELECT (SELECT count(*) FROM outbox.jobs WHERE status IN ('PENDING', 'CLAIMED'))
	               + (SELECT count(*) FROM outbox.outbox_events WHERE status = 'NEW')" 0 "$1"
}

news_line() {
	jq -cn --arg n "$1" --arg t "${2:-Routine note number $1}" \
		'{source: "e2e", url: ("https://e2e.example.com/item/" + $n),
		  published_at: "2026-11-27T10:00:00Z", title: $t,
		  body: ("Routine item " + $n + " about nothing in particular."), symbols: ["AAPL"]}'
}

enqueue_news() {
	"$OUTBOXCTL" -c "$INI" --json enqueue-news "$1" 2>>"$TEST_TMP/enqueue.err" |
		jq -r '.jobs[].job_id'
}
