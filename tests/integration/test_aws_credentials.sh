#!/bin/bash
# test_aws_credentials.sh: outboxd finds its credentials the way the AWS SDKs
# do.  For each source (environment, a profile's static keys, a
# credential_process, role_arn + source_profile, web identity through STS,
# the container endpoint, IMDSv2; a 1,200-character session token in the
# credentials file) outboxd publishes and consumes jobs
# through tests/harness/aws-creds-stub.mjs, which verifies every signature
# and accepts only keys of that source.  Also: a key of another source is
# refused and nothing is lost; a clock 20 minutes off is corrected from the
# Date header without losing the batch; --check-config names the source, and
# with none exits 78 naming every source tried.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_aws_creds_lib.sh"
ac_require
ac_setup awscreds

ARN=arn:aws:iam::000000000000:role/outbox-relay
printf 'web-identity-token\n' >"$TEST_TMP/web-token"
printf 'container-auth-token\n' >"$TEST_TMP/container-token"
total=0

# case LABEL ACCEPT LOGLINE ENV...: 5 more jobs end SUCCEEDED through the
# stub, which saw only keys of ACCEPT; the log names the source.
case_source() {
	local label=$1 accept=$2 logline=$3
	shift 3
	ac_ini
	ac_outboxd "$TEST_TMP/outboxd-$label.log" all "$@"
	ac_enqueue $((total + 1)) $((total + 5))
	total=$((total + 5))
	check "$label: 5 more jobs SUCCEEDED through the verifying stub" \
		wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" "$total" 60
	check "$label: every request signed with a $accept key, none refused" \
		test "$(ac_stats "[(.accepted_by_source | keys | join(\",\")), (.rejected | length)] | join(\"/\")")" = "$accept/0"
	check "$label: the log names the source" grep -qF "AWS credentials from $logline" "$TEST_TMP/outboxd-$label.log"
	check "$label: outboxd exits 0" ac_outboxd_stop
}

# --- environment -------------------------------------------------------------
ac_stub_start --static-key AKIDENVCASE:env-case-secret-0001 --accept static
case_source env static "environment" AWS_ACCESS_KEY_ID=AKIDENVCASE AWS_SECRET_ACCESS_KEY=env-case-secret-0001

# --- a key the server does not accept: refused, retried, nothing lost --------
ac_stub_start --accept sts
ac_ini
ac_outboxd "$TEST_TMP/outboxd-wrong.log" all AWS_ACCESS_KEY_ID=AKIDENVCASE AWS_SECRET_ACCESS_KEY=env-case-secret-0001
ac_enqueue $((total + 1)) $((total + 2))
check "wrong key: the stub refuses it with InvalidClientTokenId" \
	wait_for 60 stats_ge '.rejected.InvalidClientTokenId // 0' 2
check "wrong key: the events stay NEW (not dead) with the error recorded" \
	wait_sql "$DB" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'NEW' AND last_error LIKE 'InvalidClientTokenId%'" 2 60
check "wrong key: nothing was forwarded" test "$(ac_stats .proxied)" = 0
check "wrong key: outboxd exits 0" ac_outboxd_stop
ac_stub_start --static-key AKIDENVCASE:env-case-secret-0001 --accept static
ac_ini
ac_outboxd "$TEST_TMP/outboxd-wrong2.log" all AWS_ACCESS_KEY_ID=AKIDENVCASE AWS_SECRET_ACCESS_KEY=env-case-secret-0001
total=$((total + 2))
check "wrong key: with the right key the held events go through" \
	wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" "$total" 60
check "wrong key: outboxd exits 0 again" ac_outboxd_stop

# --- shared credentials file, static keys, AWS_PROFILE -----------------------
cat >"$TEST_TMP/credentials" <<'INI'
[default]
aws_access_key_id = AKIDWRONGDEFAULT
aws_secret_access_key = not-this-one

[ci]
aws_access_key_id = AKIDPROFILE
aws_secret_access_key = profile-secret-0002
INI
ac_stub_start --static-key AKIDPROFILE:profile-secret-0002 --accept static
case_source profile static 'profile "ci" (static keys)' \
	AWS_SHARED_CREDENTIALS_FILE="$TEST_TMP/credentials" AWS_PROFILE=ci

# --- a session token of 1,200 characters in the credentials file ------------
# (STS tokens are hundreds to over a thousand characters: more than inih's
# 200-byte line, which refused or cut such a line)
long_token=$(head -c 900 /dev/urandom | base64 -w0 | tr -d '=' | head -c 1200)
cat >"$TEST_TMP/credentials-long" <<INI
[long]
aws_access_key_id = ASIALONGTOKEN
aws_secret_access_key = long-token-secret-0005
aws_session_token = $long_token
INI
ac_stub_start --static-key "ASIALONGTOKEN:long-token-secret-0005:$long_token" --accept static
case_source long-token static 'profile "long" (static keys)' \
	AWS_SHARED_CREDENTIALS_FILE="$TEST_TMP/credentials-long" AWS_PROFILE=long
check "long-token: the token was 1,200 characters" test "${#long_token}" = 1200

# --- config file: credential_process -----------------------------------------
printf '{"Version": 1, "AccessKeyId": "AKIDPROCESS", "SecretAccessKey": "process-secret-0003"}\n' >"$TEST_TMP/process.json"
cat >"$TEST_TMP/config" <<INI
[profile proc]
credential_process = cat $TEST_TMP/process.json

[profile base]
aws_access_key_id = AKIDBASE
aws_secret_access_key = base-secret-0004

[profile assume]
role_arn = $ARN
source_profile = base
role_session_name = outbox-test
INI
ac_stub_start --static-key AKIDPROCESS:process-secret-0003 --accept static
case_source process static 'profile "proc" (credential_process)' \
	AWS_CONFIG_FILE="$TEST_TMP/config" AWS_PROFILE=proc

# --- role_arn + source_profile: AssumeRole signed with the base keys ---------
ac_stub_start --static-key AKIDBASE:base-secret-0004 --accept sts
case_source assume-role sts "profile \"assume\" (role \"$ARN\")" \
	AWS_CONFIG_FILE="$TEST_TMP/config" AWS_PROFILE=assume AWS_ENDPOINT_URL_STS="$STUB_URL"
check "assume-role: STS minted the key" test "$(ac_stats '.minted.sts')" -ge 1

# --- web identity (EKS): AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN ----------
ac_stub_start --accept sts
case_source web-identity sts "web identity (role \"$ARN\"" \
	AWS_WEB_IDENTITY_TOKEN_FILE="$TEST_TMP/web-token" AWS_ROLE_ARN="$ARN" AWS_ENDPOINT_URL_STS="$STUB_URL"

# --- container endpoint (ECS, EKS Pod Identity) -------------------------------
ac_stub_start --accept container
case_source container container "container endpoint \"$STUB_URL/container/creds\"" \
	AWS_CONTAINER_CREDENTIALS_FULL_URI="$STUB_URL/container/creds" \
	AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE="$TEST_TMP/container-token"

# --- IMDSv2 -------------------------------------------------------------------
ac_stub_start --accept imds
case_source imds imds "instance metadata (IMDSv2 at \"$STUB_URL\")" \
	AWS_EC2_METADATA_DISABLED=false AWS_EC2_METADATA_SERVICE_ENDPOINT="$STUB_URL"
check "imds: a session token was asked for, no request came without one" \
	test "$(ac_stats '[(.imds_token_requests > 0), (.rejected["imds:no-token"] // 0)] | map(tostring) | join("/")')" = true/0

# --- --check-config ----------------------------------------------------------
mapfile -t clean < <(ac_clean_env)
rc=0
env "${clean[@]}" AWS_WEB_IDENTITY_TOKEN_FILE="$TEST_TMP/web-token" AWS_ROLE_ARN="$ARN" \
	AWS_ENDPOINT_URL_STS="$STUB_URL" "$OUTBOXD" -c "$INI" --check-config >"$TEST_TMP/cc1.out" 2>"$TEST_TMP/cc1.err" || rc=$?
check "check-config: exit 0 with web identity" test "$rc" = 0
check "check-config: names the source" grep -qF "AWS credentials: web identity (role \"$ARN\"" "$TEST_TMP/cc1.out"
rc=0
env "${clean[@]}" AWS_EC2_METADATA_DISABLED=false AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:9 \
	"$OUTBOXD" -c "$INI" --check-config >"$TEST_TMP/cc2.out" 2>"$TEST_TMP/cc2.err" || rc=$?
check "check-config: no source is exit 78" test "$rc" = 78
for src in "environment: AWS_ACCESS_KEY_ID is not set" "shared files: profile \"default\" not found" \
	"web identity: AWS_WEB_IDENTITY_TOKEN_FILE is not set" \
	"container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are not set" \
	"instance metadata: could not reach \"http://127.0.0.1:9/latest/api/token\""; do
	check "check-config: lists \"$src\"" grep -qF "$src" "$TEST_TMP/cc2.err"
done
check "check-config: prints no success line" test ! -s "$TEST_TMP/cc2.out"
rc=0
env "${clean[@]}" AWS_ACCESS_KEY_ID=AKIDENVCASE AWS_SECRET_ACCESS_KEY=env-case-secret-0001 \
	"$OUTBOXD" -c "$INI" --check-config >"$TEST_TMP/cc3.out" 2>&1 || rc=$?
check "check-config: environment keys, exit 0" test "$rc" = 0
check "check-config: never prints the secret" sh -c "! grep -q env-case-secret-0001 '$TEST_TMP/cc3.out'"

# --- clock skew: the stub is 20 minutes ahead and refuses the first batch ----
ac_stub_start --static-key AKIDENVCASE:env-case-secret-0001 --accept static --skew 1200
ac_ini
failed_before=$(ac_count "SELECT count(*) FROM outbox.outbox_events WHERE attempts > 0")
ac_outboxd "$TEST_TMP/outboxd-skew-relay.log" relay AWS_ACCESS_KEY_ID=AKIDENVCASE AWS_SECRET_ACCESS_KEY=env-case-secret-0001
ac_enqueue $((total + 1)) $((total + 10))
total=$((total + 10))
check "skew: the batch is PUBLISHED" \
	wait_sql "$DB" "SELECT count(*) FROM outbox.outbox_events WHERE status <> 'PUBLISHED'" 0 60
check "skew: the first request was refused as skewed, once" \
	test "$(ac_stats '.rejected.RequestTimeTooSkewed')" = 1
check "skew: the relay corrected its clock from the Date header" \
	grep -qE "local clock is 1(199|200|201) s behind" "$TEST_TMP/outboxd-skew-relay.log"
check "skew: every published event was sent once (first request retried in place)" \
	test "$(ac_count "SELECT count(*) FROM outbox.outbox_events WHERE attempts > 0")" = "$failed_before"
check "skew: relay exits 0" ac_outboxd_stop
ac_outboxd "$TEST_TMP/outboxd-skew-consumer.log" consumer AWS_ACCESS_KEY_ID=AKIDENVCASE AWS_SECRET_ACCESS_KEY=env-case-secret-0001
check "skew: the consumer (its own clock offset) runs every job" \
	wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" "$total" 60
check "skew: consumer exits 0" ac_outboxd_stop

# --- over all cases -----------------------------------------------------------
check "no job is DEAD or left behind" \
	test "$(ac_count "SELECT count(*) FROM outbox.jobs WHERE status <> 'SUCCEEDED'")" = 0
check "every job ran once" \
	test "$(ac_count "SELECT count(*) || '/' || count(DISTINCT job_id) FROM public.recorder_runs")" = "$total/$total"
check "the queues are empty" wait_for 20 depth_is "$QURL" 0
finish
