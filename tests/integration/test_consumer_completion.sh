#!/bin/bash
# The success completion (consumer/complete.c) begins a transaction only
# when a commit() writes:
#  (a) bench_noop's commit() writes nothing: each job's completion is its
#      success CAS alone, no BEGIN, no lock, no COMMIT (counted by
#      pg_stat_statements);
#  (b) the recorder's commit() writes: in the worker's first completion
#      BEGIN comes with its first statement, and no lock statement
#      precedes it; the worker's next completion locks its claims first
#      (the locking way, as for every plugin whose commit() wrote last);
#  (c) a claim lost while the recorder's commit() had written (another
#      process took the job between the write and the success CAS): the
#      write is rolled back, the completion done again with the claims
#      locked finds the claim lost, and nothing of the attempt commits;
#  (d) a commit() whose first statement is COMMIT, before any transaction
#      began: tx_exec refuses it, the job fails permanently, and the
#      worker's session is still usable (the failure is recorded on it).
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws
stop_daemons_at_exit

setup_db "consumer_completion_$$"
if ! psql_q "$DB" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null 2>&1; then
	echo "SKIP: pg_stat_statements is not loaded (shared_preload_libraries)"
	exit 77
fi
make_queues "ccompl-$$" 10 5
LOCK='%ORDER BY j.job_id FOR UPDATE OF j'
CAS='UPDATE outbox.jobs j SET status = %SUCCEEDED%RETURNING j.job_id%'
N=4

# (a) Once the maintenance thread's first runs are over (as in
# test_consumer_statements.sh), N jobs, their messages sent at once.
ini_head "$TEST_TMP/a.ini" "$DB"
cat >>"$TEST_TMP/a.ini" <<INI
$(WORKERS=1 consumer_section)

[sweeper]
interval_seconds = 86400

[retention]
interval_seconds = 86400

[destination:news]
queue_url = $QURL
dlq_url = $DLQURL
plugin = bench_noop
INI
start_consumer "$TEST_TMP/a.ini" "$TEST_TMP/a.log"
check "(a) the maintenance tasks ran their first run" \
	wait_sql "$DB" "SELECT count(*) FROM outbox.maintenance_runs" 2 20
BODIES=()
for i in $(seq "$N"); do BODIES+=("$(event_body "$DB" "$(enqueue_job "$DB" news "a$i")")"); done
statements_reset "$DB"
for b in "${BODIES[@]}"; do send_body "$QURL" "$b"; done
all_succeeded() {
	[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'")" = "$N" ]
}
check "(a) the $N jobs succeed" wait_for 20 all_succeeded
check "(a) their messages are deleted" wait_for 10 depth_is "$QURL" 0
# less this test's own count of the jobs succeeded
calls=$(($(consumer_statements "$DB") - $(statement_calls "$DB" 'SELECT count(*) FROM outbox.jobs WHERE status = $1')))
cas=$(statement_calls "$DB" "$CAS")
echo "# (a) $calls statements for $N jobs, $cas success CAS"
psql_q "$DB" "SELECT s.calls, left(regexp_replace(s.query, '\s+', ' ', 'g'), 100)
	FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
	WHERE d.datname = current_database() ORDER BY s.calls DESC" | sed 's/^/# /'
check "(a) no lock statement" [ "$(statement_calls "$DB" "$LOCK")" = 0 ]
check "(a) a success CAS per claim at most ($cas)" [ "$cas" -ge 1 -a "$cas" -le "$N" ]
check "(a) no BEGIN or COMMIT beyond the maintenance scans: claims and CAS only ($calls)" \
	[ "$calls" -le $((2 * cas)) ]
check "(a) outboxd exits 0" stop_consumer
CPID=

# (b) The recorder writes in commit().
WORKERS=1 consumer_ini "$TEST_TMP/b.ini" "$DB" news "$QURL" "$DLQURL"
start_consumer "$TEST_TMP/b.ini" "$TEST_TMP/b.log"
J=$(enqueue_job "$DB" news b1)
statements_reset "$DB"
send_body "$QURL" "$(event_body "$DB" "$J")"
check "(b) the job succeeds" wait_for 20 status_is "$DB" "$J" SUCCEEDED
check "(b) its effect is written once" [ "$(recorder_rows "$DB" "$J")" = 1 ]
check "(b) no lock statement" [ "$(statement_calls "$DB" "$LOCK")" = 0 ]
check "(b) one success CAS" [ "$(statement_calls "$DB" "$CAS")" = 1 ]
J2=$(enqueue_job "$DB" news b2)
send_body "$QURL" "$(event_body "$DB" "$J2")"
check "(b) the next job succeeds" wait_for 20 status_is "$DB" "$J2" SUCCEEDED
check "(b) its effect is written once" [ "$(recorder_rows "$DB" "$J2")" = 1 ]
check "(b) its completion locked its claim first" [ "$(statement_calls "$DB" "$LOCK")" = 1 ]
check "(b) with one more success CAS" [ "$(statement_calls "$DB" "$CAS")" = 2 ]
check "(b) outboxd exits 0" stop_consumer
CPID=

# (c) A fresh worker's first completion: commit() inserts its row, then
# waits 15 s before its next statement; the test gives the claim to
# another process in that gap.
WORKERS=1 LEASE=60 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL" \
	"$(printf 'plugin.commit_sleep_ms = 15000\nplugin.commit_sql = SELECT 1')"
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/c.log"
J=$(enqueue_job "$DB" news c1)
send_body "$QURL" "$(event_body "$DB" "$J")"
in_commit() {
	[ -n "$(psql_q "$DB" "SELECT pid FROM pg_stat_activity WHERE datname = current_database()
		AND application_name = 'outboxd consumer' AND state = 'idle in transaction'
		AND query LIKE 'INSERT INTO public.recorder_runs%'")" ]
}
check "(c) commit() holds its transaction open after its write" wait_for 30 in_commit
# Not blocked: the job's row is not locked while commit() runs.
check "(c) another process takes the claim at once" \
	[ "$(psql_q "$DB" "SET lock_timeout = '2s'; UPDATE outbox.jobs SET claimed_by = 'someone-else'
		WHERE job_id = '$J' AND status = 'CLAIMED' RETURNING 1")" = 1 ]
lost() { grep -q "lost the claim; the handler's result is discarded job_id=$J" "$TEST_TMP/c.log"; }
check "(c) the claim is found lost" wait_for 30 lost
check "(c) the completion was done again with the claims locked" \
	grep -q "completing it again with the claims locked" "$TEST_TMP/c.log"
check "(c) the write was rolled back" [ "$(recorder_rows "$DB" "$J")" = 0 ]
check "(c) the job stays the other process's" \
	[ "$(psql_q "$DB" "SELECT status || ' ' || claimed_by FROM outbox.jobs WHERE job_id = '$J'")" = "CLAIMED someone-else" ]
check "(c) outboxd exits 0" stop_consumer
CPID=

# (d) A fresh worker, so its completion is the lazy way; (c)'s message
# (its job the other process's) goes first.
sqs PurgeQueue "{\"QueueUrl\":\"$QURL\"}" >/dev/null
check "(d) the queue is empty" wait_for 10 depth_is "$QURL" 0
WORKERS=1 consumer_ini "$TEST_TMP/d.ini" "$DB" news "$QURL" "$DLQURL" \
	"$(printf 'plugin.commit_sql = COMMIT\nplugin.commit_sql_first = true')"
start_consumer "$TEST_TMP/d.ini" "$TEST_TMP/d.log"
J=$(enqueue_job "$DB" news d1)
send_body "$QURL" "$(event_body "$DB" "$J")"
check "(d) the job fails permanently" wait_for 20 status_is "$DB" "$J" DEAD
check "(d) naming the refused COMMIT" [ "$(psql_q "$DB" "SELECT dead_reason || ': ' || last_error
	FROM outbox.jobs WHERE job_id = '$J'")" = "PERMANENT: the plugin tried to end the transaction: tx_exec refuses COMMIT" ]
check "(d) nothing of it was written" [ "$(recorder_rows "$DB" "$J")" = 0 ]
check "(d) its message is deleted" wait_for 10 depth_is "$QURL" 0
check "(d) outboxd exits 0" stop_consumer
CPID=
[ "$checks_failed" = 0 ] || sed "s/^/# /" "$TEST_TMP"/*.log
finish
