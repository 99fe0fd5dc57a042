#!/bin/bash
# Periodic jobs ([schedule:NAME], docs/configuration.md) with two outboxd
# instances on one database and the recorder plugin:
#   for 30 s with every = 2: one job per slot, no slot twice, none skipped,
#   and only one instance enqueues;
#   SIGKILL of that instance: the other takes over within its lock retry
#   (a second) and no slot is skipped (catch_up = all);
#   every instance stopped for 10 s, then one restarted: catch_up = last
#   enqueues exactly the latest missed slot, none enqueues no missed slot,
#   all enqueues each of them;
#   outboxctl schedules lists each schedule's last and next slots.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
require_pg
require_aws

ops_setup sched alpha
cat >>"$INI" <<'INI'

[schedule:tick]
every = 2
job_type = tick
destination = alpha
payload = {"from": "tick"}
catch_up = all

[schedule:tick-last]
every = 2
job_type = tick_last
destination = alpha

[schedule:tick-none]
every = 2
job_type = tick_none
destination = alpha
catch_up = none

[schedule:nightly]
cron = 0 3 * * *
timezone = Europe/Berlin
job_type = report
destination = alpha
INI
cp "$INI" "$TEST_TMP/ctl.ini"
ctl() { "$OUTBOXCTL" -c "$INI" "$@"; }
q() { psql_q "$DB" "$1"; }
# slots S: the slot times (epoch seconds) of schedule S, one per line, in order
slots() {
	q "SELECT extract(epoch FROM (identity->>'slot')::timestamptz)::bigint FROM outbox.jobs
	   WHERE identity->>'schedule' = '$1' ORDER BY 1"
}
n_slots() { q "SELECT count(*) FROM outbox.jobs WHERE identity->>'schedule' = '$1'"; }
# consecutive S: the slots of S are every 2 s from the first to the last
consecutive() {
	[ "$(q "SELECT count(*) = (max(s) - min(s)) / 2 + 1 AND count(DISTINCT s) = count(*)
	        FROM (SELECT extract(epoch FROM (identity->>'slot')::timestamptz)::bigint AS s
	              FROM outbox.jobs WHERE identity->>'schedule' = '$1') x")" = t ]
}
leader_log() {
	grep -l 'this instance runs schedule "tick"' "$TEST_TMP/a.log" "$TEST_TMP/b.log" 2>/dev/null
}

check "--check-config accepts the schedules" "$OUTBOXD" -c "$INI" --check-config
ops_start "$INI" "$TEST_TMP/a.log"; A=$OPID
ops_start "$INI" "$TEST_TMP/b.log"; B=$OPID
t0=$(q "SELECT extract(epoch FROM now())::bigint")
check "the first slot is enqueued" wait_for 20 sh -c "[ \$(psql -X -At -d '$DB' -c \"SELECT count(*) FROM outbox.jobs WHERE identity->>'schedule' = 'tick'\") -ge 1 ]"
enough() { [ "$(q "SELECT extract(epoch FROM now())::bigint")" -ge $((t0 + 30)) ]; }
check "(30 s go by)" wait_for 45 enough
n=$(n_slots tick)
echo "# $n slots of \"tick\" in 30 s"
check "a slot every 2 s: at least 14 in 30 s" [ "$n" -ge 14 ]
check "no slot twice, none skipped" consecutive tick
check "each slot's job has the identity {schedule, slot} and the payload" \
	[ "$(q "SELECT count(*) FILTER (WHERE
	          job_id = outbox.job_id(json_build_object('schedule', 'tick', 'slot', identity->>'slot'))
	          AND job_type = 'tick' AND payload = '{\"from\": \"tick\"}') = count(*)
	        FROM outbox.jobs WHERE identity->>'schedule' = 'tick'")" = t ]
check "exactly one instance runs the schedules" [ "$(leader_log | wc -l)" = 1 ]
check "every slot job runs" wait_for 30 sh -c "[ \$(psql -X -At -d '$DB' -c \"SELECT count(*) FROM outbox.jobs WHERE identity->>'schedule' = 'tick' AND status <> 'SUCCEEDED' AND created_at < now() - interval '5 seconds'\") = 0 ]"
check "the slots run on time (each job created within 2 s of its slot)" \
	[ "$(q "SELECT count(*) FROM outbox.jobs WHERE identity->>'schedule' = 'tick'
	        AND created_at > (identity->>'slot')::timestamptz + interval '2 seconds'")" = 0 ]

# SIGKILL of the instance that enqueues
if [ "$(leader_log)" = "$TEST_TMP/a.log" ]; then L=$A S=$B SLOG=$TEST_TMP/b.log; else L=$B S=$A SLOG=$TEST_TMP/a.log; fi
kill -KILL "$L"; wait "$L" 2>/dev/null || true
k0=$(date +%s%N)
check "the other instance takes over within 3 s" wait_for 3 grep -q 'this instance runs schedule "tick"' "$SLOG"
echo "# took over $(( ($(date +%s%N) - k0) / 1000000 )) ms after the SIGKILL"
before=$(n_slots tick)
more() { [ "$(n_slots tick)" -ge $((before + 3)) ]; }
check "it goes on enqueueing" wait_for 20 more
check "no slot skipped or doubled across the takeover" consecutive tick

# every instance down for 10 s, then one back
ops_stop "$S" || true
last=$(q "SELECT max(extract(epoch FROM (identity->>'slot')::timestamptz))::bigint FROM outbox.jobs WHERE identity->>'schedule' = 'tick-last'")
lastn=$(q "SELECT max(extract(epoch FROM (identity->>'slot')::timestamptz))::bigint FROM outbox.jobs WHERE identity->>'schedule' = 'tick-none'")
lasta=$(q "SELECT max(extract(epoch FROM (identity->>'slot')::timestamptz))::bigint FROM outbox.jobs WHERE identity->>'schedule' = 'tick'")
down() { [ "$(q "SELECT floor(extract(epoch FROM now()))::bigint")" -ge $((last + 10)) ]; }
check "(10 s down)" wait_for 20 down
ops_start "$INI" "$TEST_TMP/c.log"
back() { [ "$(q "SELECT count(*) FROM outbox.jobs WHERE identity->>'schedule' = 'tick-last' AND (identity->>'slot')::timestamptz > to_timestamp($last)")" -ge 1 ]; }
check "after the restart tick-last enqueues again" wait_for 20 back
# s1: the first tick-last slot after the restart; r: when it was enqueued,
# which is when the restarted instance took over (catch-up comes first)
s1=$(q "SELECT min(extract(epoch FROM (identity->>'slot')::timestamptz))::bigint FROM outbox.jobs WHERE identity->>'schedule' = 'tick-last' AND (identity->>'slot')::timestamptz > to_timestamp($last)")
r=$(q "SELECT floor(extract(epoch FROM created_at))::bigint FROM outbox.jobs WHERE identity->>'schedule' = 'tick-last' AND (identity->>'slot')::timestamptz = to_timestamp($s1)")
echo "# down from slot $last, took over at $r; tick-last then enqueued slot $s1"
check "catch_up = last: the missed slots before it were not enqueued (at least 4 of them)" \
	[ $((s1 - last)) -ge 10 ]
check "catch_up = last: it is the latest slot that had passed (the next one had not)" \
	[ $((s1 + 2)) -ge "$r" ]
check "catch_up = none: none of the slots missed before the restart" \
	[ "$(q "SELECT count(*) FROM outbox.jobs WHERE identity->>'schedule' = 'tick-none'
	         AND (identity->>'slot')::timestamptz > to_timestamp($lastn)
	         AND (identity->>'slot')::timestamptz < to_timestamp($r - 1)")" = 0 ]
check "catch_up = all: each missed slot" \
	[ "$(q "SELECT count(*) FROM outbox.jobs WHERE identity->>'schedule' = 'tick'
	         AND (identity->>'slot')::timestamptz > to_timestamp($lasta)
	         AND (identity->>'slot')::timestamptz <= to_timestamp($r - 2)")" = "$(( ((r - 2) / 2 * 2 - lasta) / 2 ))" ]
check "and tick goes on without a gap" consecutive tick

sj=$(ctl --json schedules)
check "schedules --json: the four schedules" [ "$(jq -r '[.[].name] | join(",")' <<<"$sj")" = "tick,tick-last,tick-none,nightly" ]
check "schedules --json: tick's last slot is its latest job's, next is 2 s after" \
	[ "$(jq -r '.[0] | [.every, (.next_slot | fromdateiso8601) - (.last_slot | fromdateiso8601) <= 4] | @tsv' <<<"$sj")" = "$(printf '2\ttrue')" ]
nightly_ok() { jq -e '.[3].last_slot == null and (.[3].next_slot | test("T0[12]:00:00Z$"))' <<<"$sj" >/dev/null; }
check "schedules --json: nightly never ran, its next slot is 03:00 in Berlin" nightly_ok
check "schedules text" sh -c "'$OUTBOXCTL' -c '$INI' schedules | grep -q '^nightly .*cron \"0 3 \\* \\* \\*\" Europe/Berlin'"
ops_stop "$OPID" || true
finish
