#!/bin/bash
# outbox-faultbench in a small configuration (5 repetitions): the seed
# scenarios print the seed scenarios' figures (docs/reliability.md) scaled to N, the added ones
# lose nothing and duplicate no business effect; with the fake publisher
# and, when fauxqs is there, against it.  Counters, not speed.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg
require_aws

N=5
DB=$(newdb "faultbench_$$")
write_ini "$TEST_TMP/fb.ini" "$DB"
FB="$OUTBOX_BUILDDIR/outbox-faultbench"

run_fb() { # PUBLISHER OUT
	"$FB" -c "$TEST_TMP/fb.ini" --repetitions "$N" --scenarios all --publisher "$1" --json \
		>"$2" 2>"$2.log"
}

expect() { # FILE JQ_EXPR VALUE
	[ "$(jq -r "$2" "$1")" = "$3" ] || { echo "  $2 = $(jq -r "$2" "$1"), want $3"; return 1; }
}

for pub in fake sqs; do
	out="$TEST_TMP/$pub.json"
	check "$pub: outbox-faultbench runs" run_fb "$pub" "$out"
	check "$pub: missing_publish_intents = N" expect "$out" .missing_publish_intents "$N"
	check "$pub: partial_commits = 0" expect "$out" .partial_commits 0
	check "$pub: missing_messages = 0" expect "$out" .missing_messages 0
	check "$pub: relay drained in one batch, then an idle pass" \
		expect "$out" '[.relay_batches, .relay_idle_pass_claimed] | join(",")' "1,0"
	check "$pub: duplicate_business_effects = 0" expect "$out" .duplicate_business_effects 0
	check "$pub: duplicate_terminal_skips = N" expect "$out" .duplicate_terminal_skips "$N"
	check "$pub: message_deletes = 2N" expect "$out" .message_deletes $((2 * N))
	check "$pub: N handler runs for 2N deliveries" \
		expect "$out" .scenarios.delivered_twice.handler_runs "$N"
	check "$pub: every child died at its fault point" expect "$out" .children_ended_otherwise 0
	check "$pub: added scenarios lose no job" expect "$out" .extra_lost_jobs 0
	check "$pub: added scenarios duplicate no effect" \
		expect "$out" .extra_duplicate_business_effects 0
	check "$pub: relay killed after send sent every event again" \
		expect "$out" ".scenarios.relay_after_send.duplicates_sent >= $N" true
	check "$pub: killed in commit: the effect was rolled back, rerun once" \
		expect "$out" '.scenarios.consumer_in_commit | "\(.handler_runs),\(.business_effects)"' \
		"$((2 * N)),$N"
	check "$pub: a late old-generation message never runs" \
		expect "$out" .scenarios.redrive_race.old_generation_runs 0
	check "$pub: old price jobs are STALE or succeeded, never both" \
		expect "$out" '.scenarios.correction_race | "\(.stale_and_effect),\(.old_jobs_stale + .old_jobs_succeeded)"' \
		"0,$N"
done
finish
