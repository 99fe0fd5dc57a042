#!/bin/bash
# test_relay_statement_errors.sh: statement-level database errors on a live
# connection (here a trigger that raises, as a constraint, a permission or
# a timeout would) are logged once per distinct failure, not once per pass
# and not only the first one, and the recovery is logged (issue 11, item 4).
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_relay_lib.sh"
require_pg
require_aws

cleanup() {
	[ -n "${RELAY_PID:-}" ] && kill "$RELAY_PID" 2>/dev/null && wait "$RELAY_PID" 2>/dev/null
	PGOPTIONS="-c client_min_messages=warning" psql_q "$OUTBOX_TEST_PG_CONNINFO" \
		"DROP DATABASE IF EXISTS \"relay_stmterr_$$\" WITH (FORCE)" >/dev/null 2>&1
	rm -rf "$TEST_TMP"
}
trap cleanup EXIT

relay_setup stmterr stmtdest poll_interval_ms=20 claim_lease_seconds=5
log="$TEST_TMP/relay.log"

# fail TEXT: every claim statement from now on raises TEXT, and counts
# itself in a sequence (nextval survives the rollback).
fail() {
	psql_q "$ci" "CREATE OR REPLACE FUNCTION public.probe_fail() RETURNS trigger
	  LANGUAGE plpgsql AS \$\$ BEGIN PERFORM nextval('public.probe_calls');
	  RAISE EXCEPTION '$1'; END \$\$" >/dev/null
}
calls() { psql_q "$ci" "SELECT last_value FROM public.probe_calls"; }
# wait_calls N: the claim failed N more times (bounded: 30 s).
calls_ge() { [ "$(calls)" -ge "$1" ]; }
wait_calls() { wait_for 30 calls_ge $(($(calls) + $1)); }
wait_log() { wait_for 20 grep -qF -- "$1" "$log"; }
lines() { grep -cF -- "$1" "$log" || true; }
lines_ge() { [ "$(lines "$1")" -ge "$2" ]; }
wait_until_lines() { wait_for 20 lines_ge "$1" "$2"; }

psql_q "$ci" "CREATE SEQUENCE public.probe_calls" >/dev/null
fail "probe: first failure"
psql_q "$ci" "CREATE TRIGGER probe_fail BEFORE UPDATE ON outbox.outbox_events
  FOR EACH STATEMENT EXECUTE FUNCTION public.probe_fail()" >/dev/null
insert_events "$ci" stmterr stmtdest 5

relay_run "$log" "$ini"
check "the first failure is logged" wait_log "probe: first failure"
# The lane backs off (250 ms doubling to 10 s) between failed passes.
check "the claim keeps failing (4 more passes)" wait_calls 4
check "the same failure is logged once, not once per pass" test "$(lines "could not claim outbox events: probe: first failure")" -eq 1

fail "probe: second failure"
check "a new failure is logged too" wait_log "probe: second failure"
check "the claim keeps failing (2 more passes)" wait_calls 2
check "the second failure is logged once" test "$(lines "could not claim outbox events: probe: second failure")" -eq 1
check "it says how many failures went unlogged" \
	grep -qE "probe: second failure.* dest=stmtdest \(a new failure; [0-9]+ failures not logged" "$log"
check "nothing is published while the claim fails" \
	test "$(psql_q "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'")" = 0

psql_q "$ci" "DROP TRIGGER probe_fail ON outbox.outbox_events" >/dev/null
check "the recovery is logged" wait_log "database statements succeed again dest=stmtdest after"
check "then every event is published" \
	wait_sql "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'" 5 20
check "the recovery is logged once" test "$(lines "database statements succeed again")" -eq 1
check "the connection was never lost" test "$(lines "reconnected to the database")" -eq 0

# The same failure after a recovery is a new run: logged again.
fail "probe: first failure"
psql_q "$ci" "CREATE TRIGGER probe_fail BEFORE UPDATE ON outbox.outbox_events
  FOR EACH STATEMENT EXECUTE FUNCTION public.probe_fail()" >/dev/null
check "a failure after the recovery is logged again" \
	wait_until_lines "could not claim outbox events: probe: first failure" 2
psql_q "$ci" "DROP TRIGGER probe_fail ON outbox.outbox_events" >/dev/null
check "and its recovery too" wait_until_lines "database statements succeed again" 2

# Recording the results fails while the claim works: a successful claim in
# between is not a recovery; only a recorded result is.
psql_q "$ci" "CREATE OR REPLACE FUNCTION public.probe_mark() RETURNS trigger
  LANGUAGE plpgsql AS \$\$ BEGIN IF NEW.status = 'PUBLISHED' THEN
  PERFORM nextval('public.probe_calls'); RAISE EXCEPTION 'probe: mark failure'; END IF;
  RETURN NEW; END \$\$" >/dev/null
psql_q "$ci" "CREATE TRIGGER probe_mark BEFORE UPDATE ON outbox.outbox_events
  FOR EACH ROW EXECUTE FUNCTION public.probe_mark()" >/dev/null
insert_events "$ci" stmterr2 stmtdest 1
check "the record failure is logged" wait_log "could not record the results of sent events (they are sent again once their claim expires): probe: mark failure"
# The claim lease is 5 s: the event is claimed, sent and not recorded again.
check "recording fails again after the lease" wait_calls 1
check "no recovery while recording fails" test "$(lines "database statements succeed again")" -eq 2
check "the record failure is logged once" test "$(lines "probe: mark failure")" -eq 1
psql_q "$ci" "DROP TRIGGER probe_mark ON outbox.outbox_events" >/dev/null
check "recording works again: logged" wait_until_lines "database statements succeed again" 3
check "the event is published" \
	wait_sql "$ci" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED'" 6 20
kill "$RELAY_PID"
rc=0
wait "$RELAY_PID" || rc=$?
RELAY_PID=
check "the relay stops cleanly" test "$rc" -eq 0
finish
