# tests/integration/test_webhook_lib.sh: shared setup of the webhook plugin's
# tests (sourced after tests/harness/testlib.sh; it sources
# test_pipeline_lib.sh for outboxd_start, q and the
# clean-up at exit).  Receivers are real servers on 127.0.0.1:
# tests/harness/webhook-receiver.mjs (checks every signature with the npm
# `standardwebhooks` package) and tests/harness/webhook-receiver.py (Python's
# standard library only).
#
#   wh_require                       exit 77 without PostgreSQL, fauxqs, node,
#                                    python3 or webhook.so; installs
#                                    standardwebhooks; sets WH_SECRET
#   receiver_start node|python       starts one; sets RECV_URL and RECV_LOG
#                                    (JSON lines, one per request)
#   wh_setup NAME DEST...            fresh database, relay.ini in $INI with one
#                                    [destination:D] per DEST "D|PATH[|LINES]"
#                                    (plugin.url = $RECV_URL/PATH; LINES are
#                                    extra lines, '\n'-separated), migrate,
#                                    create-queues, --check-config; sets DB, INI
#   enqueue_jobs DEST N [TAG]        N jobs of type "order" for DEST; prints ids
#   recv_count JQ-FILTER             log lines matching a jq select() filter
#
# env overrides for the ini: RETRY_BASE, RETRY_MAX, LEASE, VIS, WORKERS,
# GRACE, HANDLER_TIMEOUT.

. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"

wh_fifos=()
wh_recv_pids=()

pl_extra_cleanup() {
	local p
	for p in "${wh_recv_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ "${checks_failed:-0}" != 0 ]; then
		for p in "$TEST_TMP"/receiver-*.log; do
			[ -f "$p" ] || continue
			echo "# --- last lines of $(basename "$p") ---"
			tail -n 10 "$p" | sed 's/^/# /'
		done
	fi
}

wh_require() {
	require_pg
	require_aws
	local tool
	for tool in node python3 jq; do
		if ! command -v "$tool" >/dev/null; then
			echo "SKIP: $tool is not installed"
			exit 77
		fi
	done
	export OUTBOX_PLUGIN_DIR=${OUTBOX_PLUGIN_DIR:-$OUTBOX_BUILDDIR/.libs}
	if [ ! -f "$OUTBOX_PLUGIN_DIR/webhook.so" ]; then
		echo "SKIP: plugin webhook.so is not built"
		exit 77
	fi
	. "$OUTBOX_SRCDIR/tests/harness/services.sh"
	standardwebhooks_install || { echo "FAIL: could not install standardwebhooks from npm"; exit 1; }
	export OUTBOX_TOOLS_DIR
	# A fresh Standard Webhooks secret: whsec_ + 32 random bytes in base64.
	WH_SECRET="whsec_$(head -c 32 /dev/urandom | base64 -w0)"
	export WH_TEST_SECRET=$WH_SECRET
}

# Each receiver reads a FIFO whose write end this shell holds: when the test
# dies, however it dies, the receiver sees EOF and exits.
receiver_start() {
	local kind=$1 n=${#wh_recv_pids[@]} out fifo
	out="$TEST_TMP/receiver-$kind-$n.out" fifo="$TEST_TMP/receiver-$kind-$n.stdin"
	RECV_LOG="$TEST_TMP/receiver-$kind-$n.log"
	: >"$RECV_LOG"
	mkfifo "$fifo"
	if [ "$kind" = node ]; then
		node "$OUTBOX_SRCDIR/tests/harness/webhook-receiver.mjs" --port 0 --secret "$WH_SECRET" \
			--log "$RECV_LOG" --exit-on-stdin-eof <"$fifo" >"$out" 2>&1 &
	else
		python3 "$OUTBOX_SRCDIR/tests/harness/webhook-receiver.py" --port 0 --secret "$WH_SECRET" \
			--log "$RECV_LOG" <"$fifo" >"$out" 2>&1 &
	fi
	wh_recv_pids+=("$!")
	local fd
	exec {fd}>"$fifo"
	wh_fifos+=("$fd")
	for _ in $(seq 1 200); do
		if grep -q '^listening ' "$out"; then
			RECV_URL="http://127.0.0.1:$(sed -n 's/^listening //p' "$out")"
			return 0
		fi
		sleep 0.05 # waiting for start-up
	done
	echo "webhook receiver ($kind) did not start:" >&2
	cat "$out" >&2
	return 1
}

# wh_dest_section NAME PATH LINES QN: one [destination:NAME] through webhook.
wh_dest_section() {
	local ep=$OUTBOX_TEST_AWS_ENDPOINT
	printf '[destination:%s]\nqueue_url = %s/000000000000/%s-%s\ndlq_url = %s/000000000000/%s-%s-dlq\n' \
		"$1" "$ep" "$4" "$1" "$ep" "$4" "$1"
	printf 'max_receive_count = 20\nhandler_timeout_seconds = %s\nplugin = webhook\n' \
		"${HANDLER_TIMEOUT:-60}"
	printf 'plugin.url = %s/%s\nplugin.secret_env = WH_TEST_SECRET\n' "$RECV_URL" "$2"
	[ -z "$3" ] || printf '%b\n' "$3"
	echo
}

wh_setup() {
	local name=$1 qn="wh-$1-$$" spec d p lines
	shift
	DB=$(newdb "webhook_${name}_$$")
	INI="$TEST_TMP/relay.ini"
	WORKERS=${WORKERS:-4} pl_ini_head "$DB" "$OUTBOX_TEST_AWS_ENDPOINT" >"$INI"
	echo >>"$INI"
	for spec in "$@"; do
		IFS='|' read -r d p lines <<<"$spec"
		wh_dest_section "$d" "$p" "${lines:-}" "$qn" >>"$INI"
	done
	pl_prepare
}

enqueue_jobs() {
	local dest=$1 n=$2 tag=${3:-$1} i
	for i in $(seq 1 "$n"); do
		jq -cn --arg d "$dest" --arg t "$tag" --argjson i "$i" \
			'{job_type: "order", destination: $d, identity: {order: ($t + "-" + ($i|tostring))},
			  payload: {order: ($t + "-" + ($i|tostring)), amount_cents: (100 * $i), note: "caf\u00e9 \"quoted\""},
			  traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}'
	done >"$TEST_TMP/enqueue-$tag.jsonl"
	"$OUTBOXCTL" -c "$INI" --json enqueue "$TEST_TMP/enqueue-$tag.jsonl" 2>>"$TEST_TMP/enqueue.err" |
		jq -r '.jobs[].job_id'
}

recv_count() {
	jq -c "select($1)" "$RECV_LOG" | wc -l
}

