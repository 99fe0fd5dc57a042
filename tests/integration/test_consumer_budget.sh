#!/bin/bash
# Transient failures never spend the dead-letter budget (docs/consumer.md,
# "Retries and the receive budget"): the real outboxd relay and consumer,
# queues made by outboxctl create-queues with the default maxReceiveCount
# (5), a 2 s visibility timeout.
# (a) a handler answering RETRY 20 times (four times maxReceiveCount; a
#     1 s backoff stands for minutes of outage) and then OK: SUCCEEDED,
#     never DEAD, nothing on the DLQ;
# (b) the database refusing every claim (a read-only session after a
#     "failover") for 15 s, longer than maxReceiveCount x visibility
#     timeout (10 s), then restored: every job SUCCEEDED, the consumer
#     stopped receiving meanwhile, nothing on the DLQ.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_budget_$$"
DBNAME=${DB##*/}
QURL="$EP/000000000000/cbud-$$"
DLQURL="$EP/000000000000/cbud-$$-dlq"
VIS=2 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL" "plugin.retry_until_attempt = 20"
# a 1 s backoff and a quick relay: 20 retries in about 30 s
sed -i -e 's/^retry_base_seconds = .*/retry_base_seconds = 1\npoll_interval_ms = 100/' \
	-e 's/^retry_max_seconds = .*/retry_max_seconds = 1/' "$TEST_TMP/c.ini"
"$OUTBOXCTL" -c "$TEST_TMP/c.ini" create-queues >"$TEST_TMP/cq.log" 2>&1 || { cat "$TEST_TMP/cq.log"; exit 99; }
check "create-queues set the default maxReceiveCount" \
	sh -c "'$OUTBOXCTL' -c '$TEST_TMP/c.ini' create-queues --json | jq -e '.queues[0].max_receive_count == 5'"

# Only the consumer's sessions ever become read-only (b): the relay, outboxctl
# and this script write throughout.
export PGOPTIONS="-c default_transaction_read_only=off"
stop_daemons_at_exit
"$OUTBOXD" -c "$TEST_TMP/c.ini" --role relay >>"$TEST_TMP/relay.log" 2>&1 &
RPID=$!
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log" PGOPTIONS=

dlq_rows() { psql_q "$DB" "SELECT count(*) FROM outbox.dlq_messages"; }
dead_jobs() { psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD'"; }

# (a)
JA=$(enqueue_job "$DB" news 1)
check "(a) SUCCEEDED after 20 retries" wait_for 120 status_is "$DB" "$JA" SUCCEEDED
check "(a) 21 attempts" [ "$(psql_q "$DB" "SELECT attempt_count FROM outbox.jobs WHERE job_id = '$JA'")" = 21 ]
check "(a) 21 executions" [ "$(executions "$JA")" = 21 ]
check "(a) one committed row" [ "$(recorder_rows "$DB" "$JA")" = 1 ]
check "(a) never DEAD, nothing recorded from the DLQ" [ "$(dead_jobs):$(dlq_rows)" = 0:0 ]
check "(a) the DLQ is empty" depth_is "$DLQURL" 0
check "(a) the retries were re-armed events, not kept messages" \
	grep -q "re-armed: the consumer finished the message of a retry" \
	<(psql_q "$DB" "SELECT last_error FROM outbox.outbox_events WHERE job_id = '$JA'")

check "(a) consumer exits 0" stop_consumer
CPID=
sed -i 's/^plugin.retry_until_attempt = .*/plugin.retry_until_attempt = 0/' "$TEST_TMP/c.ini"
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log" PGOPTIONS=

# (b) the consumer's sessions break and come back read-only, as after a
# failover to a standby; the relay's sessions keep writing
psql_q "$DB" "ALTER DATABASE \"$DBNAME\" SET default_transaction_read_only = on" >/dev/null
psql_q "$DB" "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
	WHERE datname = '$DBNAME' AND application_name LIKE 'outboxd consumer%'" >/dev/null
ids=()
for n in 2 3 4 5 6; do
	ids+=("$(enqueue_job "$DB" news "$n")")
done
published_all() { [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'PUBLISHED' AND job_id IN ($(printf "'%s'," "${ids[@]}" | sed 's/,$//'))")" = 5 ]; }
check "(b) the relay published the five jobs" wait_for 20 published_all
check "(b) the consumer saw the refusal and stopped receiving" \
	wait_for 20 grep -q "the database refuses the consumer's statements; not receiving" "$TEST_TMP/consumer.log"
# The outage itself: 15 s > maxReceiveCount (5) x visibility timeout (2 s).
sleep 15
check "(b) nothing ran during the outage" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE attempt_count > 0 AND job_id IN ($(printf "'%s'," "${ids[@]}" | sed 's/,$//'))")" = 0 ]
psql_q "$DB" "ALTER DATABASE \"$DBNAME\" RESET default_transaction_read_only" >/dev/null
# Refused probes come at most 5 s apart however long the outage was (30 s
# apart before: a restore could wait that long for the next probe).
check "(b) receiving resumed within 15 s of the restore" \
	wait_for 15 grep -q "receiving resumes" "$TEST_TMP/consumer.log"
succeeded_all() { [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED' AND job_id IN ($(printf "'%s'," "${ids[@]}" | sed 's/,$//'))")" = 5 ]; }
check "(b) all five SUCCEEDED after the restore" wait_for 90 succeeded_all
echo "# (b) jobs by status, attempts: $(psql_q "$DB" "SELECT string_agg(status || ' ' || attempt_count
	|| ' x' || n, ', ') FROM (SELECT status, attempt_count, count(*) AS n FROM outbox.jobs
	WHERE job_id IN ($(printf "'%s'," "${ids[@]}" | sed 's/,$//')) GROUP BY 1, 2) s")"
echo "# (b) their events: $(psql_q "$DB" "SELECT string_agg(status || ' ' || attempts || ' x' || n, ', ')
	FROM (SELECT status, attempts, count(*) AS n FROM outbox.outbox_events
	WHERE job_id IN ($(printf "'%s'," "${ids[@]}" | sed 's/,$//')) GROUP BY 1, 2) s")"
check "(b) never DEAD, nothing recorded from the DLQ" [ "$(dead_jobs):$(dlq_rows)" = 0:0 ]
check "(b) the DLQ is empty" depth_is "$DLQURL" 0
# Every worker's first claim after the restore is on a session opened after
# it: one opened during the outage stays read-only, and its refused claim
# would stop all receiving again, for as long as that worker's wait had
# grown (up to 30 s).
check "(b) no claim refused once receiving resumed" \
	[ "$(sed -n '/receiving resumes/,$p' "$TEST_TMP/consumer.log" | grep -c 'could not claim')" = 0 ]
check "(b) each ran once" [ "$(for j in "${ids[@]}"; do executions "$j"; done | sort -u)" = 1 ]
check "consumer exits 0" stop_consumer
CPID=
finish
