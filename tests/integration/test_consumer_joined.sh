#!/bin/bash
# Joined receives (issue 13): with a backlog in the queue, one worker joins
# several full receives into one claim statement and one completion
# transaction, up to [consumer] claim_max.  Every row a statement changes
# gets that transaction's now(), so jobs that share finished_at were
# completed by one transaction.  With claim_max = 10 (one receive per
# batch) no completion may hold more than ten; with claim_max = 100 some
# must, and still every job runs exactly once.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

N=60

all_succeeded() {
	[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'")" = "$N" ]
}

# run_backlog TAG CLAIM_MAX: N jobs waiting in a fresh queue, then a
# one-worker consumer drains them; sets DB
run_backlog() {
	setup_db "consumer_joined_$1_$$"
	make_queues "cjoined-$1-$$" 5 30
	seq 1 "$N" | sed 's|.*|{"source":"t","url":"https://example.com/&","published_at":"2026-01-01T00:00:00Z","title":"t","body":"b"}|' |
		"$OUTBOXCTL" -c "$TEST_TMP/ctl.ini" enqueue-news --destination news - >/dev/null
	psql_q "$DB" "UPDATE outbox.outbox_events SET status = 'PUBLISHED', published_at = now()" >/dev/null
	psql_q "$DB" "SELECT body FROM outbox.outbox_events" | while IFS= read -r body; do
		send_body "$QURL" "$body"
	done
	WORKERS=1 VIS=30 LEASE=30 consumer_ini "$TEST_TMP/$1.ini" "$DB" news "$QURL" "$DLQURL"
	sed -i "s/^\[consumer\]$/[consumer]\nclaim_max = $2\nlinger_max_ms = 500/" "$TEST_TMP/$1.ini"
	rm -f "$TEST_TMP/executions.log"
	start_consumer "$TEST_TMP/$1.ini" "$TEST_TMP/$1.log"
	check "$1: all $N jobs succeed" wait_for 60 all_succeeded
	check "$1: consumer exits 0" stop_consumer
	check "$1: every job committed once" [ "$(psql_q "$DB" "SELECT count(*) FROM public.recorder_runs")" = "$N" ]
	check "$1: every job ran once" [ "$(cut -d" " -f1 "$TEST_TMP/executions.log" | sort -u | wc -l):$(wc -l <"$TEST_TMP/executions.log")" = "$N:$N" ]
	check "$1: queue empty" wait_for 10 depth_is "$QURL" 0
}

largest_completion() {
	psql_q "$DB" "SELECT max(c) FROM (SELECT count(*) c FROM outbox.jobs GROUP BY finished_at) t"
}

run_backlog single 10
check "claim_max 10: no completion holds more than one receive" [ "$(largest_completion)" -le 10 ]

run_backlog joined 100
check "claim_max 100: receives joined into a completion of more than ten" [ "$(largest_completion)" -gt 10 ]

finish
