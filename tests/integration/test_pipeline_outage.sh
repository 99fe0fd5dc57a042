#!/bin/bash
# test_pipeline_outage.sh: services going away under a running outboxd
# --role all (news_llm + the stub LLM), end to end:
#   (a) PostgreSQL restarted with -m immediate while jobs are flowing (a
#       PRIVATE cluster started here; the shared one is never restarted):
#       outboxd keeps running, reconnects, and every job ends SUCCEEDED with
#       exactly one extraction row;
#   (b) the SQS endpoint goes away (a fauxqs started here is killed while
#       events are NEW, then started again on the same port, empty, and the
#       queues are created again): nothing is lost, every event is published
#       and every job processed once.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
pl_require
. "$OUTBOX_SRCDIR/tests/harness/services.sh"

priv_data="" own_fq_pid=""
pl_extra_cleanup() {
	if [ -n "$own_fq_pid" ]; then
		kill "$own_fq_pid" 2>/dev/null
		wait "$own_fq_pid" 2>/dev/null
	fi
	if [ -n "$priv_data" ]; then
		runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$priv_data" -m immediate stop >/dev/null 2>&1
		rm -rf "$(dirname "$priv_data")"
	fi
}

# items FROM TO: synthetic news items FROM..TO as JSON lines
items() { for n in $(seq "$1" "$2"); do news_line "$n"; done; }

stub_start

# =========================== (a) PostgreSQL restart =========================
shared_data=${OUTBOX_TEST_PG_DATA:-} shared_conninfo=$OUTBOX_TEST_PG_CONNINFO shared_port=$OUTBOX_TEST_PG_PORT
pg_start || { echo "ERROR: could not start a private PostgreSQL"; exit 99; }
priv_data=$OUTBOX_TEST_PG_DATA priv_port=$OUTBOX_TEST_PG_PORT
export OUTBOX_TEST_PG_DATA=$shared_data OUTBOX_TEST_PG_CONNINFO=$shared_conninfo OUTBOX_TEST_PG_PORT=$shared_port
psql_q "postgresql://postgres@127.0.0.1:$priv_port/postgres" "CREATE DATABASE outage" >/dev/null

PL_DB="postgresql://postgres@127.0.0.1:$priv_port/outage" pl_setup outage_pg
# every LLM answer takes 100 ms, so jobs are still flowing at the restart
stub_script "$(for _ in $(seq 1 200); do echo 'sleep 100'; done)"
outboxd_start "$TEST_TMP/outboxd-a.log"
items 1 20 >"$TEST_TMP/a1.jsonl"
enqueue_news "$TEST_TMP/a1.jsonl" >/dev/null
check "(a) jobs are flowing before the restart" wait_sql "$DB" \
	"SELECT count(*) >= 3 FROM outbox.jobs WHERE status = 'SUCCEEDED'" t 20
items 21 40 >"$TEST_TMP/a2.jsonl"
enqueue_news "$TEST_TMP/a2.jsonl" >/dev/null
in_flight=$(q "SELECT count(*) FROM outbox.jobs WHERE status <> 'SUCCEEDED'")
runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$priv_data" -l "$(dirname "$priv_data")/server.log" \
	-m immediate -w restart >/dev/null
echo "# restarted PostgreSQL with $in_flight jobs not yet done"
check "(a) jobs were still in flight at the restart" test "$in_flight" -gt 0
items 41 60 >"$TEST_TMP/a3.jsonl"
enqueue_news "$TEST_TMP/a3.jsonl" >/dev/null
check "(a) all 60 jobs end SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) FILTER (WHERE status = 'SUCCEEDED') || '/' || count(*) FROM outbox.jobs" 60/60 40
check "(a) exactly one extraction per job" \
	test "$(q "SELECT count(*) || '/' || count(DISTINCT e.job_id) || '/' || count(j.job_id) FROM news_llm.extractions e LEFT JOIN outbox.jobs j USING (job_id)")" = 60/60/60
check "(a) every event PUBLISHED" \
	test "$(q "SELECT count(*) FILTER (WHERE status = 'PUBLISHED') || '/' || count(*) FROM outbox.outbox_events")" = 60/60
check "(a) outboxd is still running" kill -0 "$OPID"
check "(a) it logged the reconnect" grep -q "reconnected to the database" "$TEST_TMP/outboxd-a.log"
echo "# (a) attempts per job: $(q "SELECT string_agg(a || ' x' || n, ', ') FROM (SELECT attempt_count a, count(*) n FROM outbox.jobs GROUP BY 1 ORDER BY 1) s"); LLM requests: $(stub_requests)"
check "(a) outboxd stops cleanly (exit 0)" outboxd_stop "$OPID"
runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$priv_data" -m immediate stop >/dev/null 2>&1
rm -rf "$(dirname "$priv_data")"
priv_data=""
stub_script ""

# ============================ (b) SQS goes away =============================
# own_fauxqs PORT: a fauxqs of this test only, as services.sh starts it
own_fauxqs() {
	(cd "$OUTBOX_TOOLS_DIR" && exec node --input-type=module -e "
		import {buildApp} from 'fauxqs';
		import {SqsStore} from '$OUTBOX_TOOLS_DIR/node_modules/fauxqs/dist/sqs/sqsStore.js';
		const sqsStore = new SqsStore(); sqsStore.host = '';
		await buildApp({logger:false, stores:{sqsStore}}).listen({port:$1, host:'127.0.0.1'})" \
		>>"$TEST_TMP/fauxqs.log" 2>&1) &
	own_fq_pid=$!
	for _ in $(seq 1 100); do
		curl -fsS "http://127.0.0.1:$1/health" >/dev/null 2>&1 && return 0
		sleep 0.1 # waiting for start-up
	done
	echo "own fauxqs did not start on port $1" >&2
	return 1
}
own_fauxqs_kill() {
	kill "$own_fq_pid" 2>/dev/null || true
	wait "$own_fq_pid" 2>/dev/null || true
	own_fq_pid=""
}

fq_port=$(free_port)
own_fauxqs "$fq_port"
r0=$(stub_requests)
AWS_EP="http://127.0.0.1:$fq_port" pl_setup outage_sqs
outboxd_start "$TEST_TMP/outboxd-b.log"
items 101 110 >"$TEST_TMP/b1.jsonl"
enqueue_news "$TEST_TMP/b1.jsonl" >/dev/null
check "(b) before the outage: 10 jobs SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" 10 20
check "(b) before the outage: nothing left in flight" wait_idle 10

own_fauxqs_kill
items 111 130 >"$TEST_TMP/b2.jsonl"
enqueue_news "$TEST_TMP/b2.jsonl" >/dev/null
check "(b) while SQS is away the 20 new events stay NEW and the relay retries them" wait_sql "$DB" \
	"SELECT count(*) FILTER (WHERE status = 'NEW') || ':' || coalesce(max(attempts) FILTER (WHERE status = 'NEW') >= 2, false)
	   FROM outbox.outbox_events" 20:true 20
check "(b) no event went DEAD" test "$(q "SELECT count(*) FROM outbox.outbox_events WHERE status = 'DEAD'")" = 0
check "(b) outboxd is still running while SQS is away" kill -0 "$OPID"

own_fauxqs "$fq_port"
"$OUTBOXCTL" -c "$INI" create-queues >>"$TEST_TMP/create-queues.log" 2>&1
check "(b) after SQS is back: all 30 jobs SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) FILTER (WHERE status = 'SUCCEEDED') || '/' || count(*) FROM outbox.jobs" 30/30 40
check "(b) every event PUBLISHED" \
	test "$(q "SELECT count(*) FILTER (WHERE status = 'PUBLISHED') || '/' || count(*) FROM outbox.outbox_events")" = 30/30
check "(b) exactly one extraction per job" \
	test "$(q "SELECT count(*) || '/' || count(DISTINCT e.job_id) || '/' || count(j.job_id) FROM news_llm.extractions e LEFT JOIN outbox.jobs j USING (job_id)")" = 30/30/30
check "(b) every job ran once (attempt_count 1, one LLM request each)" \
	test "$(q "SELECT count(*) FROM outbox.jobs WHERE attempt_count <> 1")/$(( $(stub_requests) - r0 ))" = 0/30
check "(b) the relay logged that sends work again" grep -q "sends to the queue work again" "$TEST_TMP/outboxd-b.log"
check "(b) outboxd is still running" kill -0 "$OPID"
check "(b) outboxd stops cleanly (exit 0)" outboxd_stop "$OPID"
finish
