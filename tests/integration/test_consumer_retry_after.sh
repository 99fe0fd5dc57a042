#!/bin/bash
# A plugin's RETRY with retry_after_ms (plugin ABI 1.1, e.g. an HTTP
# Retry-After): the job's next attempt is not before now + retry_after_ms,
# capped at [relay] retry_max_seconds; without it, the usual backoff.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_retry_after_$$"
make_queues "cretryafter-$$" 5 2
stop_daemons_at_exit

# delay_of JOB: seconds between the retry and the next attempt, rounded
delay_of() {
	psql_q "$DB" "SELECT round(extract(epoch FROM next_attempt_at - updated_at))
		FROM outbox.jobs WHERE job_id = '$1'"
}

pending_after_one() {
	[ "$(psql_q "$DB" "SELECT status || attempt_count FROM outbox.jobs WHERE job_id='$1'")" = PENDING1 ]
}

# retry_base_seconds = 2, retry_max_seconds = 8 (consumer_ini)
run_case() {
	local after=$1 want=$2 n=$3 job
	consumer_ini "$TEST_TMP/c$n.ini" "$DB" news "$QURL" "$DLQURL" \
		"plugin.retry_until_attempt = 1
plugin.retry_after_ms = $after"
	start_consumer "$TEST_TMP/c$n.ini" "$TEST_TMP/consumer$n.log"
	job=$(enqueue_job "$DB" news "$n")
	publish_event "$DB" "$QURL" "$job"
	check "retry_after_ms=$after: PENDING after the first attempt" wait_for 15 pending_after_one "$job"
	check "retry_after_ms=$after: next attempt $want s later (got $(delay_of "$job"))" \
		[ "$(delay_of "$job")" = "$want" ]
	check "retry_after_ms=$after: the event re-armed due at the job's next attempt" \
		[ "$(psql_q "$DB" "SELECT e.status || ':' || (e.next_attempt_at = j.next_attempt_at) FROM outbox.outbox_events e JOIN outbox.jobs j USING (job_id) WHERE e.job_id='$job'")" = NEW:true ]
	check "retry_after_ms=$after: consumer exits 0" stop_consumer
}

run_case 3000 3 1    # the plugin's 3 s, not the 2 s backoff
run_case 60000 8 2   # capped at retry_max_seconds
run_case 0 2 3       # not asked: the backoff
finish
