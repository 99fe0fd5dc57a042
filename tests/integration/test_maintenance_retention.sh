#!/bin/bash
# Retention (docs/maintenance.md): outboxctl prune --dry-run counts exactly
# what prune then deletes; rows older than their retention are gone, younger
# rows and every non-terminal job (and its current event) stay; a repeated
# enqueue inside the horizon is still a no-op, one after its job was pruned
# is a new job; the daemon's pruner deletes too and records its run;
# --check-config refuses a retention shorter than the deduplication horizon.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_maintenance_lib.sh"
require_pg
require_aws

setup_db "maint_retention_$$"
make_queues "mret-$$" 10 2
retention() { # SUCCEEDED DEAD EVENTS DLQ
	printf '[retention]\ninterval_seconds = 1\nsucceeded_jobs_seconds = %s\ndead_jobs_seconds = %s\nevents_seconds = %s\ndlq_messages_seconds = %s\n' "$@"
}
# Horizon: 60 s queue + 60 s DLQ = 120 s.
m_ini "$TEST_TMP/ctl.ini" "$DB" "$(retention 3600 7200 3600 3600)" \
	"news $QURL $DLQURL message_retention_seconds = 60|dlq_message_retention_seconds = 60"
CTL() { "$OUTBOXCTL" -c "$TEST_TMP/ctl.ini" "$@"; }

for i in 1 2 3 4 5 6 7 8; do
	eval "N$i=$(enqueue_job "$DB" news "$i")"
done
sql() { psql_q "$DB" "$1" >/dev/null; }
# Every event published, then each job put where the case needs it.
sql "UPDATE outbox.outbox_events SET status = 'PUBLISHED', published_at = now() - interval '2 hours'"
finish_job() { # JOB STATUS AGE
	sql "UPDATE outbox.jobs SET status = '$2', finished_at = now() - interval '$3',
		dead_reason = CASE WHEN '$2' = 'DEAD' THEN 'PERMANENT' END WHERE job_id = '$1'"
}
finish_job "$N1" SUCCEEDED '2 hours'      # gone, with its event
finish_job "$N2" SUCCEEDED '10 minutes'   # stays, with its event
sql "UPDATE outbox.outbox_events SET published_at = now() - interval '11 minutes' WHERE job_id = '$N2'"
finish_job "$N3" DEAD '3 hours'           # gone
finish_job "$N4" DEAD '90 minutes'        # stays; its 90-minute-old event goes
sql "UPDATE outbox.outbox_events SET published_at = now() - interval '90 minutes' WHERE job_id = '$N4'"
sql "UPDATE outbox.jobs SET created_at = now() - interval '5 hours', next_attempt_at = now() - interval '5 hours'
	WHERE job_id = '$N5'"                 # PENDING for hours: stays
sql "UPDATE outbox.jobs SET status = 'CLAIMED', claimed_by = 'gone:1/news/0', attempt_count = 1,
	lease_until = now() - interval '5 hours' WHERE job_id = '$N6'"   # expired lease: stays
finish_job "$N7" DEAD '3 hours'
CTL redrive "$N7" >/dev/null                # PENDING at generation 1; the generation-0 event goes
finish_job "$N8" SUCCEEDED '2 hours'      # gone
sql "INSERT INTO outbox.dlq_messages (destination, sqs_message_id, body, outcome, received_at) VALUES
	('news', 'm1', 'x', 'unparseable', now() - interval '2 hours'),
	('news', 'm2', 'x', 'unparseable', now() - interval '2 hours'),
	('news', 'm3', 'x', 'unparseable', now() - interval '5 minutes')"

expected='{"succeeded_jobs":2,"dead_jobs":1,"events":5,"dlq_messages":2}'
counts() { jq -c "$1 | {succeeded_jobs, dead_jobs, events, dlq_messages}" "$2"; }
rows() { psql_q "$DB" "SELECT (SELECT count(*) FROM outbox.jobs) || '/' ||
	(SELECT count(*) FROM outbox.outbox_events) || '/' || (SELECT count(*) FROM outbox.dlq_messages)"; }
before=$(rows)
check "prune --dry-run --json" sh -c "\"$OUTBOXCTL\" -c \"$TEST_TMP/ctl.ini\" --json prune --dry-run >\"$TEST_TMP/dry.json\""
check "the dry run counts exactly the old rows" [ "$(counts .would_delete "$TEST_TMP/dry.json")" = "$expected" ]
check "the dry run deletes nothing" [ "$(rows)" = "$before" ]
check "prune --json" sh -c "\"$OUTBOXCTL\" -c \"$TEST_TMP/ctl.ini\" --json prune >\"$TEST_TMP/prune.json\""
check "prune deleted what the dry run counted" [ "$(counts .deleted "$TEST_TMP/prune.json")" = "$expected" ]
check "it reports the horizon" jq -e '.dedup_horizon_seconds == 120' "$TEST_TMP/prune.json"

jobs_left() { psql_q "$DB" "SELECT string_agg(job_id, ' ' ORDER BY job_id) FROM outbox.jobs"; }
check "the old terminal jobs are gone, the young and every non-terminal one stay" \
	[ "$(jobs_left)" = "$(printf '%s\n' "$N2" "$N4" "$N5" "$N6" "$N7" | sort | tr '\n' ' ' | sed 's/ $//')" ]
events_of() { psql_q "$DB" "SELECT coalesce(string_agg(status || redrive_generation, ',' ORDER BY redrive_generation), '-')
	FROM outbox.outbox_events WHERE job_id = '$1'"; }
check "events: young job keeps its event" [ "$(events_of "$N2")" = PUBLISHED0 ]
check "events: an old event of a young dead job goes" [ "$(events_of "$N4")" = - ]
check "events: a pending job keeps its old event" [ "$(events_of "$N5")" = PUBLISHED0 ]
check "events: an expired lease keeps its old event" [ "$(events_of "$N6")" = PUBLISHED0 ]
check "events: a redriven job keeps only its new generation" [ "$(events_of "$N7")" = NEW1 ]
check "the young dead-letter evidence stays" [ "$(psql_q "$DB" "SELECT string_agg(sqs_message_id, ',') FROM outbox.dlq_messages")" = m3 ]
check "a second prune finds nothing" sh -c "\"$OUTBOXCTL\" -c \"$TEST_TMP/ctl.ini\" prune | grep -q 'deleted: 0 succeeded jobs, 0 dead jobs, 0 outbox events, 0 dead-letter messages'"
check "status shows the pruner's run" sh -c "\"$OUTBOXCTL\" -c \"$TEST_TMP/ctl.ini\" --json status | jq -e '.maintenance.pruner.ok and .maintenance.pruner.runs == 2 and .maintenance.sweeper == null and .totals.jobs.PENDING == 2'"

before=$(rows)
check "a repeat enqueue inside the horizon is a no-op" [ "$(enqueue_job "$DB" news 2)" = "$N2" ]
check "no row added by it" [ "$(rows)" = "$before" ]
check "the job is still SUCCEEDED" status_is "$DB" "$N2" SUCCEEDED
check "a repeat enqueue after its job was pruned is a new job" [ "$(enqueue_job "$DB" news 1)" = "$N1" ]
check "... PENDING again, with a new event" [ "$(job_status "$DB" "$N1"):$(events_of "$N1")" = PENDING:NEW0 ]

# The daemon's pruner: N2 ages past its retention and disappears on its own.
finish_job "$N2" SUCCEEDED '2 hours'
cp "$TEST_TMP/ctl.ini" "$TEST_TMP/m.ini"
m_start "$TEST_TMP/m.ini" "$TEST_TMP/outboxd.log" relay
gone() { [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE job_id = '$N2'")" = 0 ]; }
check "the daemon's pruner deletes it" wait_for 15 gone
pruned_one() { [ "$(m_run pruner "counts->>'succeeded_jobs'")" = 1 ] && [ "$(m_run pruner "instance_id")" = "$(hostname):$MPID" ]; }
check "its run is recorded with its counts" wait_for 5 pruned_one
check "every non-terminal job is still there" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status IN ('PENDING', 'CLAIMED')")" = 4 ]
m_stop "$MPID"

# A retention shorter than the horizon (120 s) is refused, with its line.
m_ini "$TEST_TMP/short.ini" "$DB" "$(retention 119 0 3600 3600)" \
	"news $QURL $DLQURL message_retention_seconds = 60|dlq_message_retention_seconds = 60"
rc=0
"$OUTBOXD" -c "$TEST_TMP/short.ini" --check-config >"$TEST_TMP/short.out" 2>&1 || rc=$?
check "--check-config exits 78" [ "$rc" = 78 ]
check "... naming the key, the value and the horizon" grep -q \
	'short.ini:[0-9]*: \[retention\] succeeded_jobs_seconds: value 119 is shorter than the deduplication horizon of 120 seconds (message_retention_seconds + dlq_message_retention_seconds of \[destination:news\])' \
	"$TEST_TMP/short.out"
check "0 (keep for ever) is accepted" grep -q "test is successful" <("$OUTBOXD" -c "$TEST_TMP/ctl.ini" --check-config 2>&1)
[ "$checks_failed" -eq 0 ] || { cat "$TEST_TMP/short.out"; tail -n 20 "$TEST_TMP/outboxd.log"; }
finish
