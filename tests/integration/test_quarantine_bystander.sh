#!/bin/bash
# A job that only ran beside a poison job is not quarantined with it
# (docs/outboxd.md, "Quarantine").  Destination alpha holds the poison job
# P (its handler calls abort() 0.5 s into its run), destination beta one
# slow job X (1.5 s a run) of the same process.  The first crash counts
# for both: X was running.  Their messages then reappear together after each restart and
# both are suspects; were they run side by side, X would be running at
# every one of P's crashes and reach the limit with it.  Suspects run one
# at a time in a process, so X counts no crash after the first and
# succeeds, while P is quarantined after its three.  Destination gamma
# holds a slow price job Y, claimed on a path of its own (under its
# window's lock): as a suspect its run is not recorded by that claim
# either, so waiting for the turn beside P's crash counts nothing.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
require_pg
require_aws

export WORKERS=1
ops_setup quarantine_bystander alpha beta gamma
P=$(ops_enqueue alpha 0)
X=$(ops_enqueue beta 0)
# A price job of window (SYM, 2026-01-01 00:00Z), generation 1: enqueued
# by hand, its message sent to gamma's queue by the test, not the relay.
psql_q "$DB" "INSERT INTO outbox.price_windows (symbol, window_start, artifact_key, artifact_sha256)
	VALUES ('SYM', '2026-01-01T00:00:00Z', 'k', repeat('a', 64))" >/dev/null
Y=$(printf 'price-%s' "$$" | sha256sum | cut -c1-64)
psql_q "$DB" "INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload,
	window_symbol, window_start, window_generation)
	VALUES ('$Y', 'price', 'gamma', '{}', '{}', 'SYM', '2026-01-01T00:00:00Z', 1)" >/dev/null
send_body "$EP/000000000000/ops-$$-gamma" \
	"{\"event_id\":\"price:$Y:0\",\"job_id\":\"$Y\",\"job_type\":\"price\",\"destination\":\"gamma\",\"redrive_generation\":0,\"window_generation\":1}"
ops_ini "$INI" "$DB"
ops_dest "$INI" alpha "plugin.abort_job = $P
plugin.abort_delay_ms = 500"
ops_dest "$INI" beta "plugin.sleep_ms = 1500"
ops_dest "$INI" gamma "plugin.sleep_ms = 1500"

crashes() { psql_q "$DB" "SELECT crash_count FROM outbox.jobs WHERE job_id = '$1'"; }
round_note() { echo "; crash counts P $(crashes "$P"), X $(crashes "$X"), Y $(crashes "$Y")"; }

ops_until_dead "$INI" "$TEST_TMP/outboxd.log" "$P"
check "three process deaths, all SIGABRT" [ "$deaths" = 3 ]
check "the poison job is DEAD CRASHED after 3 crashes" \
	[ "$(psql_q "$DB" "SELECT status || ':' || coalesce(dead_reason, '-') || ':' || crash_count FROM outbox.jobs WHERE job_id = '$P'")" = DEAD:CRASHED:3 ]
check "the bystander SUCCEEDED" wait_for 30 status_is "$DB" "$X" SUCCEEDED
check "the bystander committed once" [ "$(recorder_rows "$DB" "$X")" = 1 ]
check "the bystander counts at most the first crash" [ "$(crashes "$X")" -le 1 ]
check "the price job SUCCEEDED" wait_for 30 status_is "$DB" "$Y" SUCCEEDED
check "the price job committed once" [ "$(recorder_rows "$DB" "$Y")" = 1 ]
check "the price job counts at most the first crash" [ "$(crashes "$Y")" -le 1 ]
check "nothing else is dead" [ "$(count_jobs "status = 'DEAD'")" = 1 ]
check "outboxd stops cleanly" ops_stop "$OPID"
[ "$checks_failed" -eq 0 ] || log_tails 40
finish
