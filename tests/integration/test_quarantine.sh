#!/bin/bash
# Poison-job quarantine (docs/outboxd.md, "Quarantine"): a handler that
# calls abort() for one job kills outboxd each time it runs that job.  The
# test restarts outboxd as systemd would (Restart=on-failure) until the job
# is DEAD 'CRASHED' after quarantine_after_crashes (3) process deaths; every
# other job of both destinations SUCCEEDED with one committed run.  A job
# claimed in the same batch as the poison job counts the first crash (the
# batch claim records every run as started, at no extra statement), but
# from then on it is a suspect whose runs are recorded one by one, so it
# never counts the poison job's later crashes: with one worker per
# destination no other job of that destination counts more than one.  A
# job of the other destination may count a crash it ran beside, but
# suspects run one at a time in a process, so none reaches the limit
# (test_quarantine_bystander.sh makes that case certain).
# outboxctl redrive brings the job back.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
require_pg
require_aws

export WORKERS=1
ops_setup quarantine alpha beta
P=$(ops_enqueue alpha 0)
others=()
for i in 1 2 3 4 5; do others+=("$(ops_enqueue alpha "$i")"); done
for i in 1 2 3 4; do others+=("$(ops_enqueue beta "$i")"); done
ops_ini "$INI" "$DB"
ops_dest "$INI" alpha "plugin.abort_job = $P"
ops_dest "$INI" beta "plugin.abort_job = $P"
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
port=$(free_port)
printf '\n[metrics]\nlisten = 127.0.0.1:%s\n' "$port" >>"$INI"

dead_crashed() { [ "$(psql_q "$DB" "SELECT status || ':' || coalesce(dead_reason, '-') FROM outbox.jobs WHERE job_id = '$P'")" = "DEAD:CRASHED" ]; }

ops_until_dead "$INI" "$TEST_TMP/outboxd.log" "$P"
check "three process deaths, all SIGABRT" [ "$deaths" = 3 ]
check "the poison job is DEAD CRASHED" dead_crashed
check "its crash count is 3" [ "$(psql_q "$DB" "SELECT crash_count FROM outbox.jobs WHERE job_id = '$P'")" = 3 ]
check "it ran three times, never committed" [ "$(executions "$P"):$(recorder_rows "$DB" "$P")" = 3:0 ]
check "the last error says why" [ "$(psql_q "$DB" "SELECT last_error FROM outbox.jobs WHERE job_id = '$P'")" = "quarantined: 3 handler run(s) ended with their process" ]
check "the quarantine is logged" grep -q "job quarantined: its handler ended the process 3 time(s); marked DEAD CRASHED.*job_id=$P" "$TEST_TMP/outboxd.log"
check "the instance that quarantined it is still running" kill -0 "$OPID"
curl -fsS "http://127.0.0.1:$port/metrics" >"$TEST_TMP/metrics.txt" || true
check "a scrape counts the quarantine: reason=\"CRASHED\"" \
	grep -q '^outboxd_jobs_dead_total{destination="alpha",reason="CRASHED"} 1$' "$TEST_TMP/metrics.txt"
check "no other destination counts one" \
	grep -q '^outboxd_jobs_dead_total{destination="beta",reason="CRASHED"} 0$' "$TEST_TMP/metrics.txt"
check "the process_* series are served" \
	test "$(grep -cE '^process_(cpu_seconds_total|resident_memory_bytes|start_time_seconds|open_fds) ' "$TEST_TMP/metrics.txt")" = 4
all_others_done() {
	[ "$(count_jobs "status = 'SUCCEEDED'")" = "${#others[@]}" ]
}
check "every other job of both destinations SUCCEEDED" wait_for 60 all_others_done
ok=1
for j in "${others[@]}"; do
	[ "$(recorder_rows "$DB" "$j")" = 1 ] || { echo "job $j: $(recorder_rows "$DB" "$j") committed runs"; ok=0; }
done
check "each of them committed exactly once" [ "$ok" = 1 ]
check "no other job of its destination counts more than the first crash" [ "$(count_jobs "destination = 'alpha' AND job_id <> '$P' AND crash_count > 1")" = 0 ]
check "no other job came near the limit" [ "$(count_jobs "job_id <> '$P' AND crash_count >= 3")" = 0 ]
check "nothing else is dead" [ "$(count_jobs "status = 'DEAD'")" = 1 ]
check "outboxctl dead lists it with reason CRASHED" sh -c "'$OUTBOXCTL' -c '$INI' dead --json | jq -e --arg j '$P' '[.. | objects | select(.job_id? == \$j)][0].dead_reason == \"CRASHED\"' >/dev/null"
check "outboxd stops cleanly" ops_stop "$OPID"

# redrive: a deliberate second chance, with the crash count reset
ops_ini "$INI" "$DB"
ops_dest "$INI" alpha
ops_dest "$INI" beta
check "redrive of the quarantined job" "$OUTBOXCTL" -c "$INI" redrive "$P"
check "redrive reset its crash count" [ "$(psql_q "$DB" "SELECT status || ':' || crash_count FROM outbox.jobs WHERE job_id = '$P'")" = "PENDING:0" ]
ops_start "$INI" "$TEST_TMP/outboxd2.log"
check "without the abort it now succeeds" wait_for 60 status_is "$DB" "$P" SUCCEEDED
check "one committed run" [ "$(recorder_rows "$DB" "$P")" = 1 ]
check "outboxd stops cleanly again" ops_stop "$OPID"
finish
