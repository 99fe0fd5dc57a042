#!/bin/bash
# [destination:X] max_attempts (docs/configuration.md) with the recorder
# plugin answering RETRY on every attempt: with max_attempts = 3 the job
# runs exactly 3 times and ends DEAD 'MAX_ATTEMPTS' (in the metrics and in
# outboxctl dead); a destination without the key (0, the default) keeps
# retrying past that; redrive gives the job its attempts again.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
require_pg
require_aws

DB=$(newdb "max_attempts_$$")
INI="$TEST_TMP/relay.ini"
ops_ini "$INI" "$DB"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '\n[metrics]\nlisten = 127.0.0.1:%s\n' "$PORT" >>"$INI"
ops_dest "$INI" limited "max_attempts = 3
plugin.retry_until_attempt = 1000"
ops_dest "$INI" unlimited "plugin.retry_until_attempt = 1000"
cp "$INI" "$TEST_TMP/ctl.ini"
ctl() { "$OUTBOXCTL" -c "$INI" "$@"; }
ctl migrate >/dev/null 2>&1
ctl create-queues >/dev/null
psql_q "$DB" "CREATE TABLE public.recorder_runs (job_id text NOT NULL,
	attempt integer NOT NULL, generation integer NOT NULL)" >/dev/null
q() { psql_q "$DB" "$1"; }

ops_start "$INI" "$TEST_TMP/outboxd.log"
L=$(ops_enqueue limited 1)
U=$(ops_enqueue unlimited 1)
check "max_attempts = 3: DEAD MAX_ATTEMPTS" wait_for 60 status_is "$DB" "$L" DEAD
check "after exactly 3 attempts, each run once" \
	[ "$(q "SELECT dead_reason || ' ' || attempt_count FROM outbox.jobs WHERE job_id = '$L'") $(executions "$L")" = "MAX_ATTEMPTS 3 3" ]
check "last_error says so" \
	sh -c "psql -X -At -d '$DB' -c \"SELECT last_error FROM outbox.jobs WHERE job_id = '$L'\" | grep -q '^attempt 3 of at most 3 asked to retry: '"
past_three() { [ "$(q "SELECT attempt_count > 3 AND status <> 'DEAD' FROM outbox.jobs WHERE job_id = '$U'")" = t ]; }
check "no max_attempts: still retrying after a 4th attempt" wait_for 60 past_three
check "outboxctl dead lists it with its reason" \
	[ "$(ctl --json dead | jq -r --arg j "$L" '.jobs[] | select(.job_id == $j) | .dead_reason')" = MAX_ATTEMPTS ]
check "the metric counts it" \
	sh -c "curl -fsS http://127.0.0.1:$PORT/metrics | grep -q 'outboxd_jobs_dead_total{destination=\"limited\",reason=\"MAX_ATTEMPTS\"} 1'"
ctl redrive "$L" >/dev/null
redriven() { [ "$(q "SELECT status || ' ' || dead_reason || ' ' || attempt_count || ' ' || redrive_generation FROM outbox.jobs WHERE job_id = '$L'")" = "DEAD MAX_ATTEMPTS 3 1" ]; }
check "redrive: three attempts again, then DEAD MAX_ATTEMPTS" wait_for 60 redriven
check "(six runs in all)" [ "$(executions "$L")" = 6 ]
ops_stop "$OPID" || true
finish
