# tests/integration/test_maintenance_lib.sh: helpers for the sweeper and
# pruner tests (sourced after testlib.sh and test_consumer_lib.sh).
#
#   m_ini FILE CONNINFO EXTRA "DEST QURL DLQURL [PLUGIN_LINES]"...
#       a relay.ini for outboxd --role all: fast relay polling, short
#       consumer timeouts, EXTRA (sections such as [sweeper]) verbatim, one
#       recorder destination per argument (PLUGIN_LINES separated by "|")
#   m_start INI LOG [ROLE]   starts outboxd; sets MPID (killed at exit)
#   m_stop PID               SIGTERM, wait
#   m_run TASK FIELD         a field of the task's outbox.maintenance_runs row
#   m_purge QURL             PurgeQueue at the emulator
#   m_role_create ROLE INI OUT   a login role with every right on the
#                            outbox schema but owning nothing, and OUT: INI
#                            connecting as it
#   m_role_drop ROLE         revokes those rights and drops the role

m_pids=()
m_cleanup() {
	local p
	for p in "${m_pids[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$TEST_TMP"
}
trap m_cleanup EXIT

m_ini() {
	local file=$1 db=$2 extra=$3 spec name qurl dlq lines
	shift 3
	cat >"$file" <<INI
[database]
conninfo = $db

[aws]
region = us-east-1
endpoint_url = $EP

[relay]
poll_interval_ms = 50
retry_base_seconds = 60
retry_max_seconds = 120

[consumer]
workers = 2
wait_time_seconds = 1
visibility_timeout_seconds = 2
lease_seconds = 5
shutdown_grace_seconds = 2

$extra
INI
	for spec in "$@"; do
		read -r name qurl dlq lines <<<"$spec"
		cat >>"$file" <<INI

[destination:$name]
queue_url = $qurl
dlq_url = $dlq
plugin = recorder
plugin.log_file = $TEST_TMP/executions.log
${lines//|/$'\n'}
INI
	done
}

m_start() {
	"$OUTBOXD" -c "$1" --role "${3:-all}" >>"$2" 2>&1 &
	MPID=$!
	m_pids+=("$MPID")
}

m_stop() {
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

m_run() {
	psql_q "$DB" "SELECT $2 FROM outbox.maintenance_runs WHERE task = '$1'"
}

m_purge() {
	sqs PurgeQueue "{\"QueueUrl\":\"$1\"}" >/dev/null
}

m_role_create() {
	local role=$1
	PGOPTIONS="-c client_min_messages=warning" psql_q "$DB" "DROP ROLE IF EXISTS $role" >/dev/null
	psql_q "$DB" "CREATE ROLE $role LOGIN" >/dev/null
	psql_q "$DB" "GRANT USAGE ON SCHEMA outbox TO $role;
		GRANT ALL ON ALL TABLES IN SCHEMA outbox TO $role;
		GRANT ALL ON ALL SEQUENCES IN SCHEMA outbox TO $role;
		GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA outbox TO $role" >/dev/null
	sed "s|postgres@|$role@|" "$2" >"$3"
}

m_role_drop() {
	psql_q "$DB" "REVOKE ALL ON ALL TABLES IN SCHEMA outbox FROM $1;
		REVOKE ALL ON ALL SEQUENCES IN SCHEMA outbox FROM $1;
		REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA outbox FROM $1;
		REVOKE USAGE ON SCHEMA outbox FROM $1" >/dev/null
	psql_q "$DB" "DROP ROLE $1" >/dev/null
}
