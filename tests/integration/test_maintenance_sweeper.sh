#!/bin/bash
# The sweeper (docs/maintenance.md): (a) jobs published, their queue
# purged, outboxd running: every job SUCCEEDED within the horizon plus a
# few seconds, each run once (one business-effect row per job); (b) a job
# in retry backoff, a long handler holding its lease and a succeeded job
# are never re-armed: no event of theirs is touched and the emulator holds
# no extra message.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_maintenance_lib.sh"
require_pg
require_aws

HORIZON=3
setup_db "maint_sweeper_$$"
make_queues "msw-$$-news" 10 2
NEWS_Q=$QURL NEWS_DLQ=$DLQURL
make_queues "msw-$$-slow" 10 2
SLOW_Q=$QURL SLOW_DLQ=$DLQURL
make_queues "msw-$$-retry" 10 2
RETRY_Q=$QURL RETRY_DLQ=$DLQURL
m_ini "$TEST_TMP/m.ini" "$DB" "[sweeper]
horizon_seconds = $HORIZON
interval_seconds = 1" \
	"news $NEWS_Q $NEWS_DLQ" \
	"slow $SLOW_Q $SLOW_DLQ plugin.sleep_ms = 30000" \
	"retry $RETRY_Q $RETRY_DLQ plugin.verdict = retry"
cp "$TEST_TMP/m.ini" "$TEST_TMP/ctl.ini"

published() { [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'")" = "$1" ]; }
succeeded() { [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE destination = 'news' AND status = 'SUCCEEDED'")" = "$1" ]; }

# (a) Publish five jobs with the relay alone, purge the queue, then run everything.
m_start "$TEST_TMP/m.ini" "$TEST_TMP/outboxd-relay.log" relay
for i in 1 2 3 4 5; do enqueue_job "$DB" news "$i" >>"$TEST_TMP/news.ids"; done
check "five events published" wait_for 20 published 5
m_stop "$MPID"
check "five messages at the queue" wait_for 10 depth_is "$NEWS_Q" 5
m_purge "$NEWS_Q"
check "the queue is purged" wait_for 10 depth_is "$NEWS_Q" 0
check "the jobs are PENDING, nothing can wake them" \
	[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'PENDING'")" = 5 ]
t0=$(date +%s)
m_start "$TEST_TMP/m.ini" "$TEST_TMP/outboxd.log"
check "every job SUCCEEDED within the horizon plus a few seconds" wait_for $((HORIZON + 10)) succeeded 5
echo "# woken and done in $(( $(date +%s) - t0 )) s (horizon $HORIZON s)"
one_each=$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs j WHERE destination = 'news'
	AND (SELECT count(*) FROM public.recorder_runs r WHERE r.job_id = j.job_id) = 1")
check "exactly one business-effect row per job" [ "$one_each" = 5 ]
# The five crossed the horizon as they were published: one or more sweeps
# (a slow delivery may be re-armed once more; the claim absorbs it).
rearmed_logged() {
	sed -n 's/.*WARNING: sweeper re-armed \([0-9]*\) outbox events .* dest=news$/\1/p' \
		"$TEST_TMP/outboxd.log" | awk '{ n += $1 } END { print n + 0 }'
}
check "the sweeper logged warnings counting the five" [ "$(rearmed_logged)" -ge 5 ]
check "its run is recorded" [ "$(m_run sweeper "ok")" = t ]

# (b) A retry in backoff (next try in 60 s), a 30 s handler under a 5 s
# lease, a succeeded job: for many sweeps past the horizon nothing is re-armed.
J_OK=$(enqueue_job "$DB" news 100)
J_SLOW=$(enqueue_job "$DB" slow 101)
J_RETRY=$(enqueue_job "$DB" retry 102)
check "the news job succeeds" wait_for 20 status_is "$DB" "$J_OK" SUCCEEDED
check "the slow job is running under its lease" wait_for 20 status_is "$DB" "$J_SLOW" CLAIMED
in_backoff() {
	[ "$(psql_q "$DB" "SELECT status || attempt_count || (next_attempt_at > now() + interval '30 s')
		FROM outbox.jobs WHERE job_id = '$J_RETRY'")" = PENDING1true ]
}
check "the retry job is back in backoff" wait_for 20 in_backoff
# The retry job's event is left out of the snapshot: the consumer may give
# a RETRY's message back by re-arming the event NEW for its due time
# (docs/consumer.md); what must not happen is a publish before then.
snapshot() {
	psql_q "$DB" "SELECT string_agg(event_id || '/' || status || '/' || coalesce(sqs_message_id, '-')
		|| '/' || coalesce(published_at::text, '-'), ' ' ORDER BY event_id)
		FROM outbox.outbox_events WHERE job_id IN ('$J_OK', '$J_SLOW')"
}
retry_published() {
	psql_q "$DB" "SELECT coalesce(published_at::text, '-') FROM outbox.outbox_events WHERE job_id = '$J_RETRY'"
}
before=$(snapshot)
retry_before=$(retry_published)
runs0=$(m_run sweeper runs)
# Past the horizon several times over while the handler still runs.
swept() { [ "$(m_run sweeper runs)" -ge $((runs0 + 3 * HORIZON)) ]; }
check "the sweeper ran many times meanwhile" wait_for 30 swept
check "the slow handler still holds its lease" status_is "$DB" "$J_SLOW" CLAIMED
check "no event of the succeeded and the running job was re-armed" [ "$(snapshot)" = "$before" ]
retry_not_republished() { r=$(retry_published); [ "$r" = "$retry_before" ] || [ "$r" = - ]; }
check "the retry job's event was not published again" retry_not_republished
check "no event carries the sweeper's mark" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.outbox_events
	WHERE job_id IN ('$J_OK', '$J_SLOW', '$J_RETRY') AND last_error LIKE 're-armed by the sweeper%'")" = 0 ]
check "the emulator holds no message for the succeeded job" depth_is "$NEWS_Q" 0
check "only the running job's message for the slow queue" depth_is "$SLOW_Q" 1
check "at most the backoff's own message for the retry queue" [ "$(queue_depth "$RETRY_Q")" -le 1 ]
check "each of the three ran once" [ "$(executions "$J_OK"):$(executions "$J_SLOW"):$(executions "$J_RETRY")" = 1:1:1 ]
m_stop "$MPID"
[ "$checks_failed" -eq 0 ] || tail -n 30 "$TEST_TMP/outboxd.log"
finish
