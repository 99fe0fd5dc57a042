#!/bin/bash
# outbox-faultbench's pg_crash scenario against a PRIVATE cluster (it is
# killed with pg_ctl -m immediate three times while producers, the relay
# and the consumer are busy): every job a producer saw committed ends
# SUCCEEDED with exactly one business effect.  Without the restart command
# the scenario is reported as skipped and the seed output keeps its rows.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg

private_pg_start || { echo "ERROR: could not start a private PostgreSQL"; exit 99; }
trap 'private_pg_stop; rm -rf "$TEST_TMP"' EXIT
write_ini "$TEST_TMP/fb.ini" "$PRIV_PG_CONNINFO"
FB="$OUTBOX_BUILDDIR/outbox-faultbench"
restart="runuser -u postgres -- $OUTBOX_PG_BIN/pg_ctl -D $PRIV_PG_DATA"
restart="$restart -l $(dirname "$PRIV_PG_DATA")/server.log -m immediate -w restart >/dev/null"

run_fb() { # OUT ARGS...: JSON on OUT, the log beside it
	local out=$1
	shift
	"$FB" -c "$TEST_TMP/fb.ini" --repetitions 1 --json "$@" >"$out" 2>"$out.log"
}

expect() { # FILE JQ_EXPR VALUE
	[ "$(jq -r "$2" "$1")" = "$3" ] || { echo "  $2 = $(jq -r "$2" "$1"), want $3"; return 1; }
}

out="$TEST_TMP/crash.json"
start=$(date +%s)
check "outbox-faultbench runs with --pg-restart-command" \
	run_fb "$out" --pg-restart-command "$restart"
echo "# $(jq -c '{pg_crash_committed_jobs, pg_crash_lost_jobs, pg_crash_duplicate_business_effects, pg_crash_restarts, pg_crash_resent_events}' "$out") in $(( $(date +%s) - start )) s"
check "the server was killed at least once" expect "$out" '.pg_crash_restarts >= 1' true
check "jobs were committed under the crashes" expect "$out" '.pg_crash_committed_jobs > 0' true
check "no committed job is lost" expect "$out" .pg_crash_lost_jobs 0
check "no committed job row is missing" expect "$out" .scenarios.pg_crash.missing_job_rows 0
check "no business effect is duplicated" expect "$out" .pg_crash_duplicate_business_effects 0
check "one business effect per committed job" \
	expect "$out" '.scenarios.pg_crash | .business_effects == .committed_jobs' true
check "the relay ran with asynchronous marks (the default)" \
	expect "$out" .scenarios.pg_crash.relay_synchronous_commit false
check "every child still died at its fault point" expect "$out" .children_ended_otherwise 0

# Without the command: skipped, with the reason; the text output has only the seed's rows.
check "without the command it runs" run_fb "$TEST_TMP/skip.json"
check "the crash counters are null" expect "$TEST_TMP/skip.json" \
	'[.pg_crash_committed_jobs, .pg_crash_lost_jobs, .pg_crash_restarts] | map(. == null) | all' true
check "the reason is given" expect "$TEST_TMP/skip.json" \
	'.scenarios.pg_crash.skipped | test("pg-restart-command")' true
check "text output: no pg_crash row" \
	bash -c '! "$0" -c "$1" --repetitions 1 2>/dev/null | grep -q pg_crash' "$FB" "$TEST_TMP/fb.ini"
finish
