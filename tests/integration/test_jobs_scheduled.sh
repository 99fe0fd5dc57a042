#!/bin/bash
# Jobs scheduled for later (docs/producers.md, "run_at"), with outboxd
# running and the recorder plugin:
#   a job due in 5 s whose message arrives at once is claimed no earlier
#   than run_at (times from the database: a trigger records each claim);
#   a job due in 2 days stays NEW (its event never sent) and PENDING while
#   the relay keeps passing, and status does not count it as waiting;
#   enqueueing it again is a no-op that does not move its time;
#   outboxctl enqueue --run-at (options and JSON lines), and its errors.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
require_pg
require_aws

ops_setup sched alpha
Q=$EP/000000000000/ops-$$-alpha
ctl() { "$OUTBOXCTL" -c "$INI" "$@"; }
q() { psql_q "$DB" "$1"; }
q "CREATE TABLE public.claims (job_id text NOT NULL, at timestamptz NOT NULL);
   CREATE FUNCTION public.record_claim() RETURNS trigger LANGUAGE plpgsql AS \$\$
   BEGIN INSERT INTO public.claims VALUES (NEW.job_id, clock_timestamp()); RETURN NULL; END \$\$;
   CREATE TRIGGER record_claim AFTER UPDATE ON outbox.jobs FOR EACH ROW
     WHEN (NEW.status = 'CLAIMED' AND OLD.status IS DISTINCT FROM 'CLAIMED')
     EXECUTE FUNCTION public.record_claim()" >/dev/null
enq() {
	q "SELECT job_id FROM outbox.enqueue('t', 'alpha', json_build_object('k', '$1'), '{}', run_at => $2)"
}

ops_start "$INI" "$TEST_TMP/outboxd.log"
W=$(ops_enqueue alpha warmup)
check "outboxd serves (a job without run_at succeeds)" wait_for 30 status_is "$DB" "$W" SUCCEEDED

FAR=$(enq far "now() + interval '2 days'")
SOON=$(enq soon "now() + interval '5 seconds'")
check "the scheduled job's next_attempt_at is its run_at, and so is its event's" \
	[ "$(q "SELECT j.next_attempt_at = j.run_at AND e.next_attempt_at = j.run_at
		FROM outbox.jobs j JOIN outbox.outbox_events e USING (job_id) WHERE job_id = '$SOON'")" = t ]
# A delivery before the time (a copy sent early): the consumer must not claim.
send_body "$Q" "$(event_body "$DB" "$SOON")"
check "the job due in 5 s succeeds" wait_for 40 status_is "$DB" "$SOON" SUCCEEDED
check "it was claimed once" [ "$(q "SELECT count(*) FROM public.claims WHERE job_id = '$SOON'")" = 1 ]
check "not before its run_at (database clock)" \
	[ "$(q "SELECT c.at >= j.run_at FROM public.claims c JOIN outbox.jobs j USING (job_id) WHERE job_id = '$SOON'")" = t ]
check "the relay did not send its event before run_at" \
	[ "$(q "SELECT published_at >= (SELECT run_at FROM outbox.jobs WHERE job_id = '$SOON') FROM outbox.outbox_events WHERE job_id = '$SOON'")" = t ]
echo "# claimed $(q "SELECT round(extract(epoch FROM c.at - j.run_at)::numeric, 3) FROM public.claims c JOIN outbox.jobs j USING (job_id) WHERE job_id = '$SOON'") s after run_at"

# The relay has passed over the far job's event for more than 5 s by now.
W2=$(ops_enqueue alpha after)
check "(later jobs still flow)" wait_for 30 status_is "$DB" "$W2" SUCCEEDED
check "the job due in 2 days stays PENDING, never claimed" \
	[ "$(q "SELECT status || ' ' || attempt_count FROM outbox.jobs WHERE job_id = '$FAR'")" = "PENDING 0" ]
check "its event stays NEW, never sent" \
	[ "$(q "SELECT status || ' ' || attempts || ' ' || (sqs_message_id IS NULL) FROM outbox.outbox_events WHERE job_id = '$FAR'")" = "NEW 0 true" ]
check "status: a held event is not a waiting one" \
	[ "$(ctl --json status 2>/dev/null | jq -c '[.destinations.alpha.outbox.NEW, .destinations.alpha.oldest_new_age_seconds, .destinations.alpha.oldest_due_pending_age_seconds]')" = "[1,null,null]" ]
before=$(q "SELECT run_at || ' ' || next_attempt_at FROM outbox.jobs WHERE job_id = '$FAR'")
check "enqueueing it again (run_at now) is a no-op" \
	[ "$(q "SELECT created FROM outbox.enqueue('t', 'alpha', json_build_object('k', 'far'), '{}', run_at => now())")" = f ]
check "and does not move its time" [ "$(q "SELECT run_at || ' ' || next_attempt_at FROM outbox.jobs WHERE job_id = '$FAR'")" = "$before" ]
check "a run_at in the past means now (not ahead of waiting events)" \
	[ "$(q "SELECT j.next_attempt_at >= j.created_at FROM outbox.jobs j WHERE job_id = '$(enq past "now() - interval '1 day'")'")" = t ]
rc=0; q "SELECT outbox.enqueue('t', 'alpha', '{\"k\":\"inf\"}', '{}', run_at => 'infinity')" 2>"$TEST_TMP/err" >/dev/null || rc=$?
check "run_at infinity is refused, named" sh -c "[ $rc != 0 ] && grep -q 'run_at must be a finite time' '$TEST_TMP/err'"

out=$(ctl --json enqueue --type t --destination alpha --identity '{"k":"cli"}' --payload '{}' \
	--run-at 2030-01-01T09:00:00+09:00)
CLI=$(jq -r .job_id <<<"$out")
check "enqueue --run-at: the offset is honoured" \
	[ "$(q "SELECT to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') FROM outbox.jobs WHERE job_id = '$CLI'")" = "2030-01-01 00:00:00" ]
printf '%s\n' '{"job_type":"t","destination":"alpha","identity":{"k":"line"},"payload":{},"run_at":"2031-02-03T04:05:06Z"}' \
	'{"job_type":"t","destination":"alpha","identity":{"k":"line2"},"payload":{}}' >"$TEST_TMP/lines"
ctl enqueue --run-at 2032-01-01T00:00:00Z "$TEST_TMP/lines" >/dev/null
check "enqueue lines: a line's run_at" \
	[ "$(q "SELECT to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') FROM outbox.jobs WHERE identity = '{\"k\":\"line\"}'")" = "2031-02-03 04:05:06" ]
check "enqueue lines: else --run-at" \
	[ "$(q "SELECT to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM outbox.jobs WHERE identity = '{\"k\":\"line2\"}'")" = "2032-01-01" ]
rc=0; ctl enqueue --type t --destination alpha --identity '{}' --payload '{}' --run-at tomorrow 2>"$TEST_TMP/err" || rc=$?
check "enqueue --run-at tomorrow: usage error, named" sh -c "[ $rc = 64 ] && grep -q 'invalid --run-at \"tomorrow\"' '$TEST_TMP/err'"
rc=0; ctl enqueue --type t --destination alpha --identity '{}' --payload '{}' --run-at 2026-02-30T00:00:00Z 2>/dev/null || rc=$?
check "enqueue --run-at of an impossible date: usage error" [ "$rc" = 64 ]
check "the refused commands enqueued nothing" [ "$(count_jobs "identity = '{}'")" = 0 ]
ops_stop "$OPID"
finish
