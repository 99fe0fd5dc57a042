#!/bin/bash
# test_aws_refusals.sh: what outboxd does with credentials that do not work.
# - A refreshing source (web identity through STS) whose keys the service
#   refuses every time (the stub accepts static keys only, as SQS refuses a
#   role's keys without the permission): outboxd fetches new keys after the
#   refusals, spaced out, not once a second: at most 10 STS calls in 20 s.
# - No credential source at all and an instance metadata endpoint that
#   accepts connections but never answers (a host that is not on EC2, where
#   169.254.169.254 is silently dropped): --check-config and a daemon start
#   exit 78 within 2.5 s, not after three one-second IMDS timeouts.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_aws_creds_lib.sh"
ac_require
ac_setup awsref

ARN=arn:aws:iam::000000000000:role/outbox-relay
printf 'web-identity-token\n' >"$TEST_TMP/web-token"

# --- refused keys from STS: the refetches back off --------------------------
ac_stub_start --accept static
ac_ini
ac_outboxd "$TEST_TMP/outboxd-refused.log" all \
	AWS_WEB_IDENTITY_TOKEN_FILE="$TEST_TMP/web-token" AWS_ROLE_ARN="$ARN" AWS_ENDPOINT_URL_STS="$STUB_URL"
ac_enqueue 1 3
check "refused: the stub refuses STS's keys" \
	wait_for 30 stats_ge '.rejected.InvalidClientTokenId // 0' 1
m0=$(ac_stats '.minted.sts // 0')
r0=$(ac_stats '.rejected.InvalidClientTokenId // 0')
# The measurement itself is a window of 20 s: what is counted is how often
# outboxd asks STS in that time, so the test must let the time pass.
sleep 20
m1=$(ac_stats '.minted.sts // 0')
r1=$(ac_stats '.rejected.InvalidClientTokenId // 0')
echo "# STS calls in 20 s: $((m1 - m0)), refusals: $((r1 - r0))"
check "refused: the requests kept being refused (the window saw the loop)" test $((r1 - r0)) -ge 3
check "refused: at most 10 STS calls in 20 s" test $((m1 - m0)) -le 10
check "refused: outboxd is still running" kill -0 "$OPID"
check "refused: the events stay NEW, nothing lost" \
	test "$(ac_count "SELECT count(*) FROM outbox.outbox_events WHERE status = 'NEW'")" = 3
check "refused: outboxd exits 0" ac_outboxd_stop
ac_stub_stop

# --- no credentials, IMDS silent: exit 78 promptly --------------------------
node -e "const s = require('net').createServer(() => {});
	s.listen(0, '127.0.0.1', () => console.log(s.address().port));" >"$TEST_TMP/blackhole.port" 2>&1 &
BH_PID=$!
port_known() { grep -qE '^[0-9]+$' "$TEST_TMP/blackhole.port"; }
check "a silent endpoint listens" wait_for 10 port_known
BH="http://127.0.0.1:$(cat "$TEST_TMP/blackhole.port")"
mapfile -t clean < <(ac_clean_env)

# elapsed_ms CMD...: runs CMD, sets RC and MS (its exit code and duration).
elapsed_ms() {
	local t0 t1
	t0=$(date +%s%N)
	RC=0
	"$@" || RC=$?
	t1=$(date +%s%N)
	MS=$(( (t1 - t0) / 1000000 ))
}
elapsed_ms env "${clean[@]}" AWS_EC2_METADATA_DISABLED=false AWS_EC2_METADATA_SERVICE_ENDPOINT="$BH" \
	"$OUTBOXD" -c "$INI" --check-config >"$TEST_TMP/cc.out" 2>"$TEST_TMP/cc.err"
echo "# --check-config without credentials: exit $RC after $MS ms"
check "no credentials: --check-config exits 78" test "$RC" = 78
check "no credentials: --check-config names the silent IMDS" grep -qF "instance metadata" "$TEST_TMP/cc.err"
# One IMDS timeout is 1 s; three were 3 s.  2.5 s leaves room for start-up
# on a loaded machine and still tells the two apart.
check "no credentials: --check-config ends within 2.5 s" test "$MS" -lt 2500
elapsed_ms env "${clean[@]}" AWS_EC2_METADATA_DISABLED=false AWS_EC2_METADATA_SERVICE_ENDPOINT="$BH" \
	"$OUTBOXD" -c "$INI" --role relay >"$TEST_TMP/start.log" 2>&1
echo "# outboxd --role relay without credentials: exit $RC after $MS ms"
check "no credentials: outboxd exits 78" test "$RC" = 78
check "no credentials: the start names every source tried" \
	grep -qF "no AWS credentials found; tried environment:" "$TEST_TMP/start.log"
check "no credentials: outboxd ends within 2.5 s" test "$MS" -lt 2500
kill "$BH_PID" 2>/dev/null || true
wait "$BH_PID" 2>/dev/null || true
finish
