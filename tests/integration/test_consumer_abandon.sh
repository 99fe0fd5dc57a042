#!/bin/bash
# A handler that does not return (docs/consumer.md, "Time limits"): the
# real relay and consumer, one worker, handler_timeout_seconds = 1; the
# recorder plugin sleeps on a job's first attempt:
# (a) the hung job (18 s) is recorded RETRY at the limit; at the limit plus
#     the abandon grace (10 s) its worker is abandoned and replaced: the
#     job's second attempt SUCCEEDED (two attempts, one committed row), an
#     ordinary job enqueued after the hang SUCCEEDED too (the destination
#     kept its worker), the metric counts the abandoned worker; when the
#     hung call returns after all, its thread discards the result and
#     exits, and a SIGTERM stops the process with status 0;
# (b) three hung jobs in a row (600 s each): the third abandoned worker
#     stops the process, exit status 1, with an error naming the
#     destination and the job; nothing is lost: every job is PENDING (none
#     DEAD or CLAIMED) and a restarted consumer runs each to SUCCEEDED;
# (c) with a plugin that is not OUTBOX_PLUGIN_CONCURRENT (recorder_serial),
#     whose replacement would only wait for the hung call, the first
#     abandoned worker stops the process (exit 1); the job is PENDING and
#     SUCCEEDED after a restart.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
require_pg
require_aws

setup_db "consumer_abandon_$$"
make_queues "cabandon-$$" 5 2
stop_daemons_at_exit
export WORKERS=1

# abandon_ini FILE EXTRA_PLUGIN_LINES
abandon_ini() {
	consumer_ini "$1" "$DB" news "$QURL" "$DLQURL" "handler_timeout_seconds = 1
$2"
	sed -i -e 's/^retry_base_seconds = .*/retry_base_seconds = 1\npoll_interval_ms = 100/' \
		-e 's/^retry_max_seconds = .*/retry_max_seconds = 1/' "$1"
}
abandon_ini "$TEST_TMP/relay.ini" ""
"$OUTBOXD" -c "$TEST_TMP/relay.ini" --role relay >>"$TEST_TMP/relay.log" 2>&1 &
RPID=$!
attempts() { psql_q "$DB" "SELECT attempt_count FROM outbox.jobs WHERE job_id = '$1'"; }
# exited PID: the process is gone (reaped or a zombie).  The shell may reap
# it between kill -0 and ps, so that ps finds nothing: gone too.
exited() {
	! kill -0 "$1" 2>/dev/null || case $(ps -o stat= -p "$1" | cut -c1) in Z | '') true ;; *) false ;; esac
}
# reap: $CPID's exit status in RC, killed first when it is still running
reap() {
	RC=0
	# (under set -e, a kill that finds the process gone must not end the script)
	exited "$CPID" || kill -KILL "$CPID" 2>/dev/null || true
	wait "$CPID" || RC=$?
	CPID=
}
# stops_by_itself PHASE SECONDS WHAT: $CPID exits within SECONDS, status 1
stops_by_itself() {
	check "$1 the process stops by itself after $3" wait_for "$2" exited "$CPID"
	reap
	check "$1 exit status 1 (got $RC)" [ "$RC" = 1 ]
}

# (a) one hung job
H1=$(enqueue_job "$DB" news 1)
port=$(free_port)
abandon_ini "$TEST_TMP/a.ini" "plugin.sleep_ms = 18000
plugin.sleep_until_attempt = 1
plugin.sleep_job = $H1"
printf '\n[metrics]\nlisten = 127.0.0.1:%s\n' "$port" >>"$TEST_TMP/a.ini"
start_consumer "$TEST_TMP/a.ini" "$TEST_TMP/consumer-a.log"
check "(a) given up on at the limit" \
	wait_for 20 grep -q "handler exceeded its time limit of 1 s; the job is retried .* job_id=$H1" "$TEST_TMP/consumer-a.log"
check "(a) its worker is abandoned and replaced after the grace" \
	wait_for 30 grep -q "handler still running 11 s after it started (time limit 1 s); its worker is abandoned and replaced (1 of 3 before outboxd stops) dest=news job_id=$H1" "$TEST_TMP/consumer-a.log"
J2=$(enqueue_job "$DB" news 2)
check "(a) the hung job's second attempt SUCCEEDED" wait_for 30 status_is "$DB" "$H1" SUCCEEDED
check "(a) retried once: two attempts, two executions, one committed row" \
	[ "$(attempts "$H1"):$(executions "$H1"):$(recorder_rows "$DB" "$H1")" = 2:2:1 ]
check "(a) a job enqueued after the hang SUCCEEDED (the worker was replaced)" \
	wait_for 30 status_is "$DB" "$J2" SUCCEEDED
check "(a) it ran once" [ "$(attempts "$J2"):$(executions "$J2")" = 1:1 ]
abandoned_metric() {
	curl -fsS "http://127.0.0.1:$port/metrics" |
		grep -q '^outboxd_handler_threads_abandoned_total{destination="news"} 1$'
}
check "(a) outboxd_handler_threads_abandoned_total counts it" wait_for 5 abandoned_metric
check "(a) the abandoned handler returns at 18 s: its result is discarded" \
	wait_for 20 grep -q "handler returned after its worker was abandoned; result discarded job_id=$H1" "$TEST_TMP/consumer-a.log"
check "(a) and its thread exits" \
	wait_for 5 grep -q "an abandoned worker's handler returned; its thread exits worker=.*/news/0" "$TEST_TMP/consumer-a.log"
check "(a) still one committed row for the hung job" [ "$(recorder_rows "$DB" "$H1")" = 1 ]
J3=$(enqueue_job "$DB" news 7)
check "(a) the replacement still works" wait_for 30 status_is "$DB" "$J3" SUCCEEDED
check "(a) SIGTERM: exit 0, every thread joined or gone" stop_consumer
CPID=

# (b) three hung jobs in a row stop the process
H2=$(enqueue_job "$DB" news 3)
H3=$(enqueue_job "$DB" news 4)
H4=$(enqueue_job "$DB" news 5)
abandon_ini "$TEST_TMP/b.ini" "plugin.sleep_ms = 600000
plugin.sleep_until_attempt = 1"
start_consumer "$TEST_TMP/b.ini" "$TEST_TMP/consumer-b.log"
stops_by_itself "(b)" 120 "three abandoned workers"
check "(b) the error names the destination and the job" \
	grep -Eq "3 workers of this process are abandoned, so outboxd stops to be restarted dest=news job_id=($H2|$H3|$H4)" "$TEST_TMP/consumer-b.log"
check "(b) two were replaced first" [ "$(grep -c 'its worker is abandoned and replaced' "$TEST_TMP/consumer-b.log")" = 2 ]
check "(b) nothing lost: the three jobs are PENDING" \
	[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE job_id IN ('$H2', '$H3', '$H4') AND status = 'PENDING'")" = 3 ]
check "(b) none DEAD" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD'")" = 0 ]
abandon_ini "$TEST_TMP/c.ini" ""
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer-c.log"
all_done() {
	[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE job_id IN ('$H2', '$H3', '$H4') AND status = 'SUCCEEDED'")" = 3 ]
}
check "(b) after a restart every job SUCCEEDED" wait_for 60 all_done
check "(b) each on its second attempt, one committed row each" \
	[ "$(attempts "$H2")$(attempts "$H3")$(attempts "$H4"):$(recorder_rows "$DB" "$H2")$(recorder_rows "$DB" "$H3")$(recorder_rows "$DB" "$H4")" = 222:111 ]
check "(b) the restarted consumer exits 0" stop_consumer
CPID=

# (c) a plugin without OUTBOX_PLUGIN_CONCURRENT: a replacement would wait
# for the hung call, so the first abandoned worker stops the process
H5=$(enqueue_job "$DB" news 6)
WORKERS=2 abandon_ini "$TEST_TMP/s.ini" "plugin.sleep_ms = 600000
plugin.sleep_until_attempt = 1
plugin.sleep_job = $H5"
sed -i 's/^plugin = recorder$/plugin = recorder_serial/' "$TEST_TMP/s.ini"
start_consumer "$TEST_TMP/s.ini" "$TEST_TMP/consumer-s.log"
stops_by_itself "(c)" 60 "one abandoned worker"
check "(c) the error says why, naming the destination and the job" \
	grep -q "its worker is abandoned and, since the plugin runs one execute() at a time, outboxd stops to be restarted dest=news job_id=$H5" "$TEST_TMP/consumer-s.log"
check "(c) not replaced" [ "$(grep -c 'abandoned and replaced' "$TEST_TMP/consumer-s.log")" = 0 ]
check "(c) nothing lost: the job is PENDING" status_is "$DB" "$H5" PENDING
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer-c2.log"
check "(c) after a restart it SUCCEEDED" wait_for 30 status_is "$DB" "$H5" SUCCEEDED
# The other worker's attempt, waiting for the serialised instance, may
# have timed out too (a RETRY of its own): two or three attempts.
ran_serial() { [[ "$(attempts "$H5"):$(recorder_rows "$DB" "$H5")" =~ ^[23]:1$ ]]; }
check "(c) one committed row, at most three attempts" ran_serial
check "(c) the restarted consumer exits 0" stop_consumer
CPID=
check "never DEAD" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD'")" = 0 ]
finish
