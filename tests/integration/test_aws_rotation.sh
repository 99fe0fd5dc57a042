#!/bin/bash
# test_aws_rotation.sh: temporary credentials rotate under load.  The stub
# STS hands out keys that live 3 s; the verifying stub in front of fauxqs
# accepts only the newest key (plus 1 s of overlap) and a revoked key is
# refused with ExpiredToken.  1,000 jobs run end to end through outboxd
# --role all (web identity) across many rotations and three revocations
# (each just before a wave of jobs is enqueued):
# 0 lost, 0 dead, 0 duplicates, one refresher for the whole process (no
# request is ever signed with a superseded key, the number of STS calls
# follows the key lifetime, not the number of threads), and no log line
# holds a secret or session token.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_aws_creds_lib.sh"
ac_require
WORKERS=4 ac_setup awsrot

JOBS=1000
LIFETIME=3
ARN=arn:aws:iam::000000000000:role/outbox-relay
printf 'web-identity-token\n' >"$TEST_TMP/web-token"
ac_stub_start --accept sts --lifetime "$LIFETIME" --overlap 1
ac_ini
OUTBOXD_ARGS="--log-level debug" ac_outboxd "$TEST_TMP/outboxd.log" all \
	AWS_WEB_IDENTITY_TOKEN_FILE="$TEST_TMP/web-token" AWS_ROLE_ARN="$ARN" AWS_ENDPOINT_URL_STS="$STUB_URL"
start=$SECONDS

# Ten waves of 100 jobs; the next wave starts once this one is done and the
# key has rotated since it started, so the jobs provably span the rotations.
# Waves 3, 6 and 9 start with the key in use revoked: the relay's first
# batches are refused with ExpiredToken.
revokes=0
waves_ok=0
for wave in $(seq 1 10); do
	m0=$(ac_stats '.minted.sts // 0')
	if [ $((wave % 3)) = 0 ]; then
		curl -fsS -X POST "$STUB_URL/_stub/revoke" >/dev/null && revokes=$((revokes + 1))
	fi
	ac_enqueue $(( (wave - 1) * JOBS / 10 + 1 )) $(( wave * JOBS / 10 ))
	wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" $(( wave * JOBS / 10 )) 60 &&
		wait_for 15 stats_ge '.minted.sts // 0' $((m0 + 1)) && waves_ok=$((waves_ok + 1))
done
check "all $JOBS jobs SUCCEEDED" \
	wait_sql "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" "$JOBS" 120
elapsed=$((SECONDS - start))
minted=$(ac_stats '.minted.sts')
echo "# $JOBS jobs in ${elapsed} s; stub: $(ac_stats -c .)"
check "every wave of jobs ran across a key rotation" test "$waves_ok" = 10
check "three revocations happened during the run" test "$revokes" = 3
check "0 dead jobs, 0 dead or unpublished events" \
	test "$(ac_count "SELECT (SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD') || '/' ||
	                         (SELECT count(*) FROM outbox.outbox_events WHERE status <> 'PUBLISHED')")" = 0/0
check "0 duplicates: one committed run per job" \
	test "$(ac_count "SELECT count(*) || '/' || count(DISTINCT job_id) FROM public.recorder_runs")" = "$JOBS/$JOBS"
check "0 duplicates: one execution per job" test "$(wc -l <"$TEST_TMP/executions.log")" = "$JOBS"
queues_empty() {
	[ "$(queue_depth "$QURL")/$(queue_depth "$DLQURL")" = 0/0 ]
}
check "the queue and its DLQ end empty" wait_for 20 queues_empty
check "several rotations: $minted keys minted in ${elapsed} s" test "$minted" -ge 10
check "one refresher: $minted STS calls is about one per half lifetime (no thundering herd)" \
	test "$minted" -le $(( elapsed * 2 / LIFETIME + 2 * revokes + 5 ))
check "revoked keys were refused with ExpiredToken and the requests signed again" \
	test "$(ac_stats '.rejected.ExpiredToken // 0')" -ge 1
check "the refusals were retried with new keys" grep -q "signing again with new credentials" "$TEST_TMP/outboxd.log"
check "no request was signed with a superseded key" test "$(ac_stats '.rejected.InvalidClientTokenId // 0')" = 0
check "outboxd exits 0" ac_outboxd_stop
curl -fsS "$STUB_URL/_stub/secrets" >"$TEST_TMP/secrets"
cat "$TEST_TMP/web-token" >>"$TEST_TMP/secrets"
check "the stub handed out $(wc -l <"$TEST_TMP/secrets") secrets and tokens" test "$(wc -l <"$TEST_TMP/secrets")" -ge 10
check "no log line contains a secret or a token" sh -c "! grep -qF -f '$TEST_TMP/secrets' '$TEST_TMP/outboxd.log'"
finish
