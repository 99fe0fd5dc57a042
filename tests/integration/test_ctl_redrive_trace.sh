#!/bin/bash
# test_ctl_redrive_trace.sh: outboxctl redrive keeps the producer's trace:
# the new generation's event carries the traceparent of the job's earlier
# event; a job enqueued without one is redriven without one.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg

db=$(newdb "outbox_test_redrive_trace_$$")
ini="$TEST_TMP/relay.ini"
write_ini "$ini" "$db"
"$OUTBOXCTL" -c "$ini" migrate >/dev/null 2>&1
ctl() { "$OUTBOXCTL" -c "$ini" "$@"; }

tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
traced=$(ctl enqueue --type t --destination news --identity '{"trace":1}' --payload '{}' \
	--traceparent "$tp" | cut -d' ' -f1)
plain=$(ctl enqueue --type t --destination news --identity '{"trace":0}' --payload '{}' | cut -d' ' -f1)
# Both failed for good, as the consumer would leave them.
psql_q "$db" "UPDATE outbox.jobs SET status = 'DEAD', dead_reason = 'FAILED', finished_at = now()" >/dev/null
check "redrive of both jobs exits 0" ctl redrive "$traced" "$plain"
check "the traced job's new event keeps the traceparent" test \
	"$(psql_q "$db" "SELECT traceparent FROM outbox.outbox_events WHERE job_id = '$traced' AND redrive_generation = 1")" = "$tp"
check "the first event keeps it too" test \
	"$(psql_q "$db" "SELECT traceparent FROM outbox.outbox_events WHERE job_id = '$traced' AND redrive_generation = 0")" = "$tp"
check "a job without a trace is redriven without one" test \
	"$(psql_q "$db" "SELECT count(*) FROM outbox.outbox_events WHERE job_id = '$plain' AND redrive_generation = 1 AND traceparent IS NULL")" = 1
# A second redrive, from generation 1, still finds it.
psql_q "$db" "UPDATE outbox.jobs SET status = 'DEAD', dead_reason = 'FAILED', finished_at = now() WHERE job_id = '$traced'" >/dev/null
check "a second redrive exits 0" ctl redrive "$traced"
check "generation 2 keeps the traceparent" test \
	"$(psql_q "$db" "SELECT traceparent FROM outbox.outbox_events WHERE job_id = '$traced' AND redrive_generation = 2")" = "$tp"
finish
