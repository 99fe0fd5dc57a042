# tests/integration/test_ops_lib.sh: helpers for the operations tests
# (quarantine, pause, reload), sourced after tests/harness/testlib.sh and
# tests/integration/test_consumer_lib.sh.  outboxd runs --role all with the
# recorder plugin on every destination.
#
#   ops_ini FILE CONNINFO          [database], [aws], [relay], [consumer]
#                                  (env: WORKERS LEASE VIS GRACE CRASHES)
#   ops_dest FILE NAME [LINES]     appends [destination:NAME] with queues
#                                  ops-PID-NAME(-dlq) and the recorder
#   ops_setup NAME DEST...         fresh database, $INI with DEST..., migrate,
#                                  create-queues; sets DB, INI
#   ops_start INI LOG              outboxd --role all; sets OPID (killed at exit)
#   ops_stop PID                   SIGTERM, wait; returns its exit code
#   ops_enqueue DEST N             enqueues item N for DEST; prints its job_id
#   count_jobs SQL_WHERE           jobs matching the condition
#   ops_until_dead INI LOG JOB     starts outboxd again after each death (as
#                                  systemd's Restart=on-failure would) until
#                                  JOB is DEAD, 6 rounds at most; sets deaths
#                                  (those by SIGABRT); round_note, if
#                                  defined, adds to each death's line

ops_pids=()
ops_cleanup() {
	local p
	set +e
	for p in "${ops_pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$TEST_TMP"
}
trap ops_cleanup EXIT

ops_ini() {
	ini_head "$1" "$2"
	cat >>"$1" <<INI
[relay]
poll_interval_ms = 100
retry_base_seconds = 1
retry_max_seconds = 4
claim_lease_seconds = 5

$(consumer_section)
quarantine_after_crashes = ${CRASHES:-3}
INI
}

ops_dest() {
	cat >>"$1" <<INI

[destination:$2]
queue_url = $EP/000000000000/ops-$$-$2
dlq_url = $EP/000000000000/ops-$$-$2-dlq
max_receive_count = 50
plugin = recorder
plugin.log_file = $TEST_TMP/executions.log
${3:-}
INI
}

ops_setup() {
	local name=$1 d
	shift
	DB=$(newdb "ops_${name}_$$")
	INI="$TEST_TMP/relay.ini"
	ops_ini "$INI" "$DB"
	for d in "$@"; do ops_dest "$INI" "$d"; done
	cp "$INI" "$TEST_TMP/ctl.ini"
	"$OUTBOXCTL" -c "$INI" migrate >/dev/null 2>&1
	"$OUTBOXCTL" -c "$INI" create-queues >/dev/null
	psql_q "$DB" "CREATE TABLE public.recorder_runs (job_id text NOT NULL,
		attempt integer NOT NULL, generation integer NOT NULL)" >/dev/null
}

ops_start() {
	"$OUTBOXD" -c "$1" --role all >>"$2" 2>&1 &
	OPID=$!
	ops_pids+=("$OPID")
}

ops_stop() {
	local rc=0
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" || rc=$?
	return $rc
}

ops_enqueue() {
	enqueue_job "$DB" "$1" "$1-$2"
}

count_jobs() {
	psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE $1"
}

ops_until_dead() {
	local round rc
	deaths=0
	for round in 1 2 3 4 5 6; do
		ops_start "$1" "$2"
		# until this instance dies or the job is DEAD
		wait_for 60 sh -c "! kill -0 $OPID 2>/dev/null || [ \"\$(psql -X -At -d '$DB' -c \"SELECT status FROM outbox.jobs WHERE job_id = '$3'\")\" = DEAD ]" || true
		if kill -0 "$OPID" 2>/dev/null; then
			echo "round $round: the job was quarantined"
			return 0
		fi
		rc=0
		wait "$OPID" || rc=$?
		echo "round $round: outboxd died with status $rc$(if declare -F round_note >/dev/null; then round_note; fi)"
		[ "$rc" = 134 ] && deaths=$((deaths + 1))
	done
}
