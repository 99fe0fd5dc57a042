#!/bin/bash
# test_consumer_pg_restart.sh: PostgreSQL restarted (-m immediate) three
# times while handlers run is not a handler crash (docs/outboxd.md,
# "Quarantine"): the process that ran them is alive and holds its liveness
# lock again once reconnected, so no run counts a crash, nothing is
# quarantined, and every job ends SUCCEEDED with one extraction.  Uses a
# private cluster (the shared one is never restarted).
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
pl_require
private_pg_start || { echo "ERROR: could not start a private PostgreSQL"; exit 99; }
pl_extra_cleanup() { private_pg_stop; }
psql_q "$PRIV_PG_CONNINFO" "CREATE DATABASE pgrestart" >/dev/null
export PL_DB="postgresql://postgres@127.0.0.1:$PRIV_PG_PORT/pgrestart"

export WORKERS=2 VIS=10 LEASE=10
STUB_DELAY_MS=2000 stub_start
pl_setup pgrestart
outboxd_start "$TEST_TMP/outboxd.log"
A=$OPID
check "outboxd is connected" wait_sql "$DB" \
	"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
	    AND application_name = 'outboxd relay listener'" 1 30
for i in $(seq 1 12); do news_line "$i"; done >"$TEST_TMP/items.jsonl"
enqueue_news "$TEST_TMP/items.jsonl" >/dev/null

stats() { curl -fsS "$STUB_URL/_stub/stats"; }
# A call that started after the last restart is running now.
call_running() {
	local s
	s=$(stats)
	[ "$(jq -r .in_flight <<<"$s")" -ge 1 ] && [ "$(jq -r .requests <<<"$s")" -gt "$seen" ]
}
seen=0
for round in 1 2 3; do
	check "restart $round: a handler is running" wait_for 60 call_running
	seen=$(stats | jq -r .requests)
	check "restart $round: PostgreSQL restarted (immediate)" private_pg_ctl -m immediate -w restart
done
check "outboxd survived the restarts" kill -0 "$A"
check "every job ends SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" 12 180
check "no run counted a crash" test "$(q "SELECT coalesce(sum(crash_count), 0) FROM outbox.jobs")" = 0
check "nothing DEAD (nothing quarantined)" test "$(q "SELECT count(*) FROM outbox.jobs WHERE status = 'DEAD'")" = 0
check "one extraction per job" test "$(q "SELECT count(*) || '/' || count(DISTINCT job_id) FROM news_llm.extractions")" = 12/12
check "outboxd stops cleanly" outboxd_stop "$A"
finish
