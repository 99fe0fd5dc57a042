#!/bin/bash
# test_aws_hostile.sh: credential sources under hostile or broken settings
# (docs/aws.md).
#
# (1) AWS_CONTAINER_CREDENTIALS_FULL_URI sends the authorization token over
# plain HTTP only to a loopback address or the ECS/EKS container host.  A name that merely starts with "127." (127.attacker.example), an
# unresolvable name, and numeric addresses elsewhere (10.0.0.1, the IMDS
# address, [::2], a v4-mapped 10.0.0.1) are refused by --check-config
# without any request: the credential stub counts none.  localhost (a name
# whose every address is loopback) and 127.0.0.1 work.  A URI's
# user:password and query string appear in no output line, whether the
# endpoint answers, answers 404, cannot be reached or is refused.
# (2) A credential_process that sleeps 300 s is killed at its timeout
# (OUTBOX_CREDENTIAL_PROCESS_TIMEOUT), with the child it started, and
# --check-config says so; a bad timeout value is named.
# (3) A FIFO in the credentials file's place is refused at once.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_aws_creds_lib.sh"
ac_require
ac_setup awscontainer
printf 'container-auth-token\n' >"$TEST_TMP/container-token"
ac_stub_start --accept container
ac_ini
PORT=${STUB_URL##*:}
mapfile -t clean < <(ac_clean_env)

# check_config NAME URI: runs --check-config with that FULL_URI; sets rc
check_config() {
	rc=0
	env "${clean[@]}" AWS_CONTAINER_CREDENTIALS_FULL_URI="$2" \
		AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE="$TEST_TMP/container-token" \
		timeout 30 "$OUTBOXD" -c "$INI" --check-config >"$TEST_TMP/$1.out" 2>&1 || rc=$?
}
minted() { ac_stats '(.minted.container // 0) + (.rejected["container:auth"] // 0)'; }

for uri in "http://127.attacker.example:$PORT/container/creds" \
	"http://no-such-host.invalid:$PORT/container/creds" \
	"http://10.0.0.1:$PORT/container/creds" "http://169.254.169.254/container/creds" \
	"http://[::2]:$PORT/container/creds" "http://[::ffff:10.0.0.1]:$PORT/container/creds" \
	"http://0.0.0.0:$PORT/container/creds"; do
	check_config refused "$uri"
	check "$uri: --check-config exits 78" test "$rc" = 78
	check "$uri: the reason names plain HTTP" grep -qE "plain HTTP to .* is refused" "$TEST_TMP/refused.out"
	check "$uri: no request reached the stub" test "$(minted)" = 0
	grep -F container "$TEST_TMP/refused.out" | sed 's/^/# /'
done

check_config localhost "http://localhost:$PORT/container/creds"
check "localhost (every address loopback): exit 0" test "$rc" = 0
check "localhost: the stub handed out credentials once" test "$(minted)" = 1
check_config numeric "http://127.0.0.1:$PORT/container/creds"
check "127.0.0.1: exit 0" test "$rc" = 0
check "127.0.0.1: the stub handed out credentials again" test "$(minted)" = 2

# --- secrets in the URI --------------------------------------------------------
secret_uri() { # HOSTPORT PATH
	printf 'http://tokenuser:s3cret-pass@%s%s?X-Amz-Signature=q5ecret-query' "$1" "$2"
}
check_config secret-ok "$(secret_uri "127.0.0.1:$PORT" /container/creds)"
check "user:password and a query: exit 0" test "$rc" = 0
check "the source is named without them" \
	grep -qF "container endpoint \"http://(redacted)@127.0.0.1:$PORT/container/creds?(redacted)\"" "$TEST_TMP/secret-ok.out"
check_config secret-404 "$(secret_uri "127.0.0.1:$PORT" /elsewhere)"
check "an endpoint that answers 404: exit 78" test "$rc" = 78
check_config secret-down "$(secret_uri 127.0.0.1:9 /container/creds)"
check "an endpoint that cannot be reached: exit 78" test "$rc" = 78
check_config secret-refused "$(secret_uri "10.0.0.1:$PORT" /container/creds)"
check "a refused host: exit 78" test "$rc" = 78
check_config secret-scheme "$(printf 'ftp://tokenuser:s3cret-pass@127.0.0.1/x?q5ecret-query')"
check "a scheme other than http and https: exit 78" test "$rc" = 78
for f in secret-ok secret-404 secret-down secret-refused secret-scheme; do
	sed 's/^/# /' "$TEST_TMP/$f.out" | grep -F container || true
	check "$f: no line holds the password, the user or the query" \
		sh -c "! grep -qE 's3cret-pass|tokenuser|q5ecret-query' '$TEST_TMP/$f.out'"
done

# --- (2) credential_process bounded in time ----------------------------------
cat >"$TEST_TMP/slow.sh" <<SH
echo \$\$ >"$TEST_TMP/slow.pid"
sleep 300 &
echo \$! >"$TEST_TMP/child.pid"
wait
SH
printf '[profile slow]\ncredential_process = /bin/sh %s/slow.sh\n' "$TEST_TMP" >"$TEST_TMP/config"
slow_config() { # EXTRA_ENV...: --check-config with the slow profile; sets rc, elapsed
	local start=$SECONDS
	rc=0
	env "${clean[@]}" AWS_CONFIG_FILE="$TEST_TMP/config" AWS_PROFILE=slow "$@" \
		timeout 120 "$OUTBOXD" -c "$INI" --check-config >"$TEST_TMP/slow.out" 2>&1 || rc=$?
	elapsed=$((SECONDS - start))
}
slow_config OUTBOX_CREDENTIAL_PROCESS_TIMEOUT=2
sed 's/^/# /' "$TEST_TMP/slow.out"
check "a credential_process of 300 s: --check-config exits 78" test "$rc" = 78
check "it ended at its 2 s timeout (took ${elapsed} s)" test "$elapsed" -lt 15
check "the source says it was killed at the timeout" \
	grep -qF "credential_process did not finish within 2 s and was killed" "$TEST_TMP/slow.out"
gone() { ! kill -0 "$(cat "$1")" 2>/dev/null; }
check "the process is gone (killed and reaped)" wait_for 5 gone "$TEST_TMP/slow.pid"
check "so is the child it started" wait_for 5 gone "$TEST_TMP/child.pid"
slow_config OUTBOX_CREDENTIAL_PROCESS_TIMEOUT=soon
check "a bad timeout is named" \
	grep -qF 'invalid OUTBOX_CREDENTIAL_PROCESS_TIMEOUT "soon": must be 1 to 3600 seconds' "$TEST_TMP/slow.out"

# --- (3) a FIFO instead of the credentials file -------------------------------
mkfifo "$TEST_TMP/fifo-credentials"
start=$SECONDS
rc=0
env "${clean[@]}" AWS_SHARED_CREDENTIALS_FILE="$TEST_TMP/fifo-credentials" \
	timeout 60 "$OUTBOXD" -c "$INI" --check-config >"$TEST_TMP/fifo.out" 2>&1 || rc=$?
check "a FIFO as the credentials file: refused (exit 78), not waited on" test "$rc" = 78
check "at once ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt 10
check "the reason names the FIFO" grep -qF "it is a FIFO, not a regular file" "$TEST_TMP/fifo.out"
finish
