# tests/integration/test_consumer_lib.sh: helpers for the consumer tests
# (sourced after tests/harness/testlib.sh).  SQS calls go straight to
# fauxqs with curl (JSON protocol; fauxqs does not check signatures).
#
#   sqs ACTION JSON                 one SQS call; prints the answer
#   make_queues NAME MAXRECV VIS    creates NAME-dlq and NAME; sets QURL, DLQURL
#   send_body QURL BODY             SendMessage
#   queue_depth QURL                visible + in-flight messages
#   ini_head FILE CONNINFO          the [database] and [aws] sections
#   consumer_ini FILE CONNINFO OPTS extra [consumer]/plugin lines via OPTS
#   start_consumer INI LOG [ENV...] starts outboxd --role consumer; sets CPID
#   stop_consumer                   SIGTERM, waits; returns its exit code
#   stop_daemons_at_exit            at exit, stop $RPID and $CPID (when set)
#                                   and remove $TEST_TMP; the status is kept
#   event_body CONNINFO JOB_ID [GEN] the outbox body of a job's event
#   publish_event CONNINFO QURL JOB_ID [GEN]
#                                   what the relay does: mark the event
#                                   PUBLISHED, send its body
#   republish_when_due CONNINFO QURL JOB_ID GEN SECONDS
#                                   once the event is NEW and due again (a
#                                   retry re-armed it), publish_event
#   consumer_statements CONNINFO    statements pg_stat_statements counted,
#                                   less those of every idle instance
#   statement_calls CONNINFO LIKE   calls of the statements LIKE matches
#   statements_reset CONNINFO       pg_stat_statements_reset() of that
#                                   database alone (tests run side by side)

# Empty without the services: the tests that source this call require_aws
# right after, and set -u must not stop them before that.
EP=${OUTBOX_TEST_AWS_ENDPOINT:-}

sqs() {
	curl -fsS -X POST "$EP/" -H 'Content-Type: application/x-amz-json-1.0' \
		-H "X-Amz-Target: AmazonSQS.$1" -d "$2"
}

make_queues() {
	local name=$1 maxrecv=$2 vis=$3 arn policy
	DLQURL=$(sqs CreateQueue "{\"QueueName\":\"$name-dlq\"}" | jq -r .QueueUrl)
	arn=$(sqs GetQueueAttributes "{\"QueueUrl\":\"$DLQURL\",\"AttributeNames\":[\"QueueArn\"]}" |
		jq -r .Attributes.QueueArn)
	policy=$(jq -cn --arg arn "$arn" --argjson n "$maxrecv" \
		'{deadLetterTargetArn:$arn,maxReceiveCount:$n}|tostring')
	QURL=$(sqs CreateQueue "{\"QueueName\":\"$name\",\"Attributes\":{\"VisibilityTimeout\":\"$vis\",\"RedrivePolicy\":$policy}}" |
		jq -r .QueueUrl)
}

send_body() {
	sqs SendMessage "$(jq -cn --arg q "$1" --arg b "$2" '{QueueUrl:$q,MessageBody:$b}')" >/dev/null
}

queue_depth() {
	sqs GetQueueAttributes "{\"QueueUrl\":\"$1\",\"AttributeNames\":[\"All\"]}" |
		jq -r '(.Attributes.ApproximateNumberOfMessages|tonumber) +
		       (.Attributes.ApproximateNumberOfMessagesNotVisible|tonumber)'
}

# ini_head FILE CONNINFO: the [database] and [aws] sections of a test ini
ini_head() {
	cat >"$1" <<INI
[database]
conninfo = $2

[aws]
region = us-east-1
endpoint_url = $EP

INI
}

# consumer_section: the [consumer] section; env overrides WORKERS VIS LEASE GRACE
consumer_section() {
	cat <<INI
[consumer]
workers = ${WORKERS:-2}
wait_time_seconds = 1
visibility_timeout_seconds = ${VIS:-2}
lease_seconds = ${LEASE:-5}
shutdown_grace_seconds = ${GRACE:-5}
INI
}

# recorder_destination DEST QURL DLQURL: a [destination:DEST] section of the
# recorder plugin, logging to $TEST_TMP/executions.log
recorder_destination() {
	cat <<INI

[destination:$1]
queue_url = $2
dlq_url = $3
plugin = recorder
plugin.log_file = $TEST_TMP/executions.log
INI
}

# consumer_ini FILE CONNINFO DEST QURL DLQURL [EXTRA_PLUGIN_LINES] ; env overrides:
# LEASE VIS WORKERS GRACE
consumer_ini() {
	ini_head "$1" "$2"
	cat >>"$1" <<INI
[relay]
retry_base_seconds = 2
retry_max_seconds = 8

$(consumer_section)
$(recorder_destination "$3" "$4" "$5")
${6:-}
INI
}

start_consumer() {
	local ini=$1 log=$2
	shift 2
	env "$@" "$OUTBOXD" -c "$ini" --role consumer >>"$log" 2>&1 &
	CPID=$!
}

stop_consumer() {
	local rc=0
	kill -TERM "$CPID" 2>/dev/null || true
	wait "$CPID" || rc=$?
	return $rc
}

daemons_exit() {
	local rc=$? p
	for p in "${RPID:-}" "${CPID:-}"; do
		[ -n "$p" ] && kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	[ "$rc" = 0 ] || log_tails 60
	rm -rf "$TEST_TMP"
	exit "$rc"
}

stop_daemons_at_exit() {
	trap daemons_exit EXIT
}

event_body() {
	psql_q "$1" "SELECT body FROM outbox.outbox_events WHERE job_id = '$2'
		AND redrive_generation = ${3:-0}"
}

publish_event() {
	# marked first: the consumer may re-arm the event as soon as it is sent
	psql_q "$1" "UPDATE outbox.outbox_events SET status = 'PUBLISHED', published_at = now()
		WHERE job_id = '$3' AND redrive_generation = ${4:-0}" >/dev/null
	send_body "$2" "$(event_body "$1" "$3" "${4:-0}")"
}

event_due() {
	[ "$(psql_q "$1" "SELECT status = 'NEW' AND next_attempt_at <= now() FROM outbox.outbox_events
		WHERE job_id = '$2' AND redrive_generation = $3")" = t ]
}

republish_when_due() {
	wait_for "$5" event_due "$1" "$3" "$4" && publish_event "$1" "$2" "$3" "$4"
}

# enqueue_job CONNINFO DEST N: enqueues news item N; prints the job_id
enqueue_job() {
	printf '{"source":"t","url":"https://example.com/%s","published_at":"2026-01-01T00:00:00Z","title":"t","body":"b"}\n' "$3" |
		"$OUTBOXCTL" -c "$TEST_TMP/ctl.ini" --json enqueue-news --destination "$2" - |
		jq -r '.jobs[0].job_id'
}

job_status() {
	psql_q "$1" "SELECT status FROM outbox.jobs WHERE job_id = '$2'"
}

status_is() {
	[ "$(job_status "$1" "$2")" = "$3" ]
}

executions() {
	if [ -f "$TEST_TMP/executions.log" ]; then
		grep -c "^$1 " "$TEST_TMP/executions.log" || true
	else
		echo 0
	fi
}

recorder_rows() {
	psql_q "$1" "SELECT count(*) FROM public.recorder_runs WHERE job_id = '$2'"
}

depth_is() {
	[ "$(queue_depth "$1")" = "$2" ]
}

# setup_db NAME: fresh migrated database with the recorder table; sets DB
setup_db() {
	DB=$(newdb "$1")
	write_ini "$TEST_TMP/ctl.ini" "$DB"
	"$OUTBOXCTL" -c "$TEST_TMP/ctl.ini" migrate >/dev/null
	psql_q "$DB" "CREATE TABLE public.recorder_runs (job_id text NOT NULL,
		attempt integer NOT NULL, generation integer NOT NULL)" >/dev/null
}

# What pg_stat_statements counted in CONNINFO's database since its reset,
# without the statements every idle worker runs anyway (the pause read),
# the test's own, and the maintenance thread's scan of jobs_unfinished_due,
# which every instance runs once a second whatever it receives
# (maintenance/pending_scan.c: BEGIN, three SET LOCAL enable_*, the scan,
# COMMIT; a BEGIN or COMMIT beyond one per scan still counts).
consumer_statements() {
	psql_q "$1" "WITH s AS (
		  SELECT s.query, s.calls FROM pg_stat_statements s
		  JOIN pg_database d ON d.oid = s.dbid
		  WHERE d.datname = current_database()
		    AND s.query NOT LIKE '%paused_destinations%'
		    AND s.query NOT LIKE '%pg_stat_statements%'),
		scan AS (SELECT '%FROM unnest(\$1::text[]) AS d(name)%' AS text),
		scans AS (SELECT coalesce(sum(calls), 0) AS n FROM s, scan WHERE query LIKE scan.text)
		SELECT coalesce(sum(CASE
		    WHEN query LIKE 'SET LOCAL enable_%' OR query LIKE (SELECT text FROM scan) THEN 0
		    WHEN query IN ('BEGIN', 'COMMIT') THEN greatest(calls - (SELECT n FROM scans), 0)
		    ELSE calls END), 0) FROM s"
}

statement_calls() {
	psql_q "$1" "SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s
		JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = current_database() AND s.query LIKE '$2'"
}

statements_reset() {
	psql_q "$1" "SELECT pg_stat_statements_reset(0, d.oid, 0)
		FROM pg_database d WHERE d.datname = current_database()" >/dev/null
}
