# tests/integration/test_aws_creds_lib.sh: shared setup of the credential
# tests (sourced after testlib.sh and test_consumer_lib.sh).  outboxd talks
# to tests/harness/aws-creds-stub.mjs, which hands out credentials like the
# AWS endpoints do and verifies every SQS request's signature before it
# forwards it to fauxqs.
#
#   ac_require                    exit 77 without PostgreSQL, fauxqs, node or recorder.so
#   ac_stub_start ARGS...         starts the stub (--upstream is fauxqs); sets STUB_URL
#   ac_stub_stop                  stops it
#   ac_stats JQ                   a value of the stub's /_stub/stats
#   stats_ge JQ N                 that value is at least N
#   ac_setup NAME                 fresh database, queues, $INI pointing at the stub
#   ac_outboxd LOG ROLE [ENV=VALUE...]
#                                 outboxd with no credential source of the test
#                                 services' environment, plus ENV; sets OPID
#                                 (under $OUTBOXD_WRAP when set, e.g. valgrind)
#   ac_outboxd_stop               SIGTERM, wait; returns its exit code
#   ac_clean_env                  the env(1) arguments that remove every source
#   ac_enqueue FIRST LAST         enqueues items FIRST..LAST in one call
#   ac_count SQL                  one value from $DB

STUB_PID=""
OPID=""

ac_cleanup() {
	set +e
	if [ -n "$OPID" ]; then
		kill -TERM "$OPID" 2>/dev/null
		wait "$OPID" 2>/dev/null
	fi
	ac_stub_stop
	[ "${checks_failed:-0}" = 0 ] || log_tails 30
	rm -rf "$TEST_TMP"
}
trap ac_cleanup EXIT

ac_require() {
	require_pg
	require_aws
	if ! command -v node >/dev/null; then
		echo "SKIP: node is not installed"
		exit 77
	fi
	if [ ! -f "${OUTBOX_PLUGIN_DIR:-$OUTBOX_BUILDDIR/.libs}/recorder.so" ]; then
		echo "SKIP: plugin recorder.so is not built"
		exit 77
	fi
	export OUTBOX_PLUGIN_DIR=${OUTBOX_PLUGIN_DIR:-$OUTBOX_BUILDDIR/.libs}
}

# The stub reads a FIFO whose write end this shell holds (fd 8): however the
# test ends, the stub sees EOF and exits.
ac_stub_start() {
	local out="$TEST_TMP/stub.out" fifo="$TEST_TMP/stub.stdin"
	ac_stub_stop
	rm -f "$fifo" "$out"
	mkfifo "$fifo"
	node "$OUTBOX_SRCDIR/tests/harness/aws-creds-stub.mjs" --upstream "$OUTBOX_TEST_AWS_ENDPOINT" \
		--exit-on-stdin-eof "$@" <"$fifo" >"$out" 2>>"$TEST_TMP/stub.err" &
	STUB_PID=$!
	exec 8>"$fifo"
	for _ in $(seq 1 200); do
		if grep -q '^listening ' "$out"; then
			STUB_URL="http://127.0.0.1:$(sed -n 's/^listening //p' "$out")"
			return 0
		fi
		sleep 0.05 # waiting for start-up
	done
	echo "credential stub did not start:" >&2
	cat "$TEST_TMP/stub.err" >&2
	return 1
}

ac_stub_stop() {
	if [ -n "$STUB_PID" ]; then
		{ exec 8>&-; } 2>/dev/null
		# Closing its stdin ends the stub: bash may have reaped it before
		# this kill, which then fails and must not end the test (set -e).
		kill "$STUB_PID" 2>/dev/null || true
		wait "$STUB_PID" 2>/dev/null || true
		STUB_PID=""
	fi
	return 0
}

ac_stats() {
	curl -fsS "$STUB_URL/_stub/stats" | jq -r "$1"
}

# stats_ge JQ N: the stub's counter JQ is at least N (for wait_for).
stats_ge() {
	[ "$(ac_stats "$1")" -ge "$2" ]
}

ac_setup() {
	setup_db "$1_$$"
	make_queues "$1-$$" 5 30
	cat >"$TEST_TMP/relay.ini.in" <<INI
[database]
conninfo = $DB

[aws]
region = us-east-1
endpoint_url = @STUB@

[relay]
poll_interval_ms = 100
retry_base_seconds = 1
retry_max_seconds = 2

[consumer]
workers = ${WORKERS:-2}
wait_time_seconds = 1
visibility_timeout_seconds = 30
lease_seconds = 30

[destination:news]
queue_url = $QURL
dlq_url = $DLQURL
plugin = recorder
plugin.log_file = $TEST_TMP/executions.log
INI
	INI="$TEST_TMP/relay.ini"
}

# The ini for the stub that runs now.
ac_ini() {
	sed "s|@STUB@|$STUB_URL|" "$TEST_TMP/relay.ini.in" >"$INI"
}

ac_clean_env() {
	printf '%s\n' -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE \
		-u AWS_WEB_IDENTITY_TOKEN_FILE -u AWS_ROLE_ARN -u AWS_CONTAINER_CREDENTIALS_RELATIVE_URI \
		-u AWS_CONTAINER_CREDENTIALS_FULL_URI -u AWS_CONTAINER_AUTHORIZATION_TOKEN \
		-u AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE -u AWS_ENDPOINT_URL -u AWS_ENDPOINT_URL_STS \
		"AWS_SHARED_CREDENTIALS_FILE=$TEST_TMP/no-credentials" "AWS_CONFIG_FILE=$TEST_TMP/no-config" \
		AWS_EC2_METADATA_DISABLED=true
}

ac_outboxd() {
	local log=$1 role=$2
	shift 2
	local clean
	mapfile -t clean < <(ac_clean_env)
	# OUTBOXD_WRAP: e.g. "$OUTBOX_BUILDDIR/libtool --mode=execute valgrind ..."
	env "${clean[@]}" "$@" ${OUTBOXD_WRAP:-} "$OUTBOXD" -c "$INI" --role "$role" ${OUTBOXD_ARGS:-} >>"$log" 2>&1 &
	OPID=$!
}

ac_outboxd_stop() {
	local rc=0
	kill -TERM "$OPID" 2>/dev/null || true
	wait "$OPID" || rc=$?
	OPID=""
	return $rc
}

ac_enqueue() {
	local i
	for i in $(seq "$1" "$2"); do
		printf '{"source":"t","url":"https://example.com/ac/%s","published_at":"2026-01-01T00:00:00Z","title":"t","body":"b"}\n' "$i"
	done | "$OUTBOXCTL" -c "$TEST_TMP/ctl.ini" --json enqueue-news --destination news - >/dev/null
}

ac_count() {
	psql_q "$DB" "$1"
}

