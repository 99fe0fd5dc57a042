# tests/integration/test_relay_lib.sh: helpers for the relay's shell tests.
# Source it after tests/harness/testlib.sh.
#   relay_ini FILE CONNINFO DEST QUEUE_URL [KEY=VALUE...]   one-destination relay.ini;
#                                                 KEY=VALUE lines go to [relay]
#   relay_run LOG INI [ENV=VALUE...]              starts the relay (outboxd --role
#                                                 relay, or the test driver) in the
#                                                 background; its pid is in RELAY_PID
#   create_queue NAME                             prints the queue URL (fauxqs)
#   receive_bodies URL WANT                       prints every message body received
#                                                 until WANT arrived and the queue is quiet
#   insert_events CONNINFO TAG DEST N             N jobs + NEW events (SQL)
#   relay_setup NAME DEST [KEY=VALUE...]          fresh database relay_NAME_PID, queue
#                                                 relay-NAME-PID and a migrated relay.ini
#                                                 for DEST; sets ci, queue and ini

RELAY_DRIVER="$OUTBOX_BUILDDIR/tests/integration/test_relay_driver"

relay_ini() {
	local file=$1 conninfo=$2 dest=$3 url=$4
	shift 4
	{
		printf '[database]\nconninfo = %s\n\n' "$conninfo"
		printf '[aws]\nregion = us-east-1\nendpoint_url = %s\n\n' "$OUTBOX_TEST_AWS_ENDPOINT"
		printf '[relay]\n'
		for kv in "$@"; do printf '%s = %s\n' "${kv%%=*}" "${kv#*=}"; done
		printf '\n[destination:%s]\nqueue_url = %s\nplugin = example\n' "$dest" "$url"
	} >"$file"
}

relay_run() {
	local log=$1 ini=$2
	shift 2
	if [ -x "$OUTBOXD" ]; then
		env "$@" "$OUTBOXD" -c "$ini" --role relay >>"$log" 2>&1 &
	else
		env "$@" "$RELAY_DRIVER" -c "$ini" >>"$log" 2>&1 &
	fi
	RELAY_PID=$!
}

sqs_call() {
	curl -fsS -X POST -H "X-Amz-Target: AmazonSQS.$1" \
		-H 'Content-Type: application/x-amz-json-1.0' -d "$2" "$OUTBOX_TEST_AWS_ENDPOINT/"
}

create_queue() {
	sqs_call CreateQueue "{\"QueueName\":\"$1\"}" | jq -r .QueueUrl
}

receive_bodies() {
	local url=$1 want=$2 got=0 n deadline=$((SECONDS + 20))
	while [ $SECONDS -lt $deadline ]; do
		local out
		out=$(sqs_call ReceiveMessage "{\"QueueUrl\":\"$url\",\"MaxNumberOfMessages\":10,\"WaitTimeSeconds\":1,\"VisibilityTimeout\":300}")
		n=$(printf '%s' "$out" | jq '.Messages // [] | length')
		printf '%s' "$out" | jq -r '.Messages // [] | .[].Body'
		got=$((got + n))
		if [ "$got" -ge "$want" ] && [ "$n" -eq 0 ]; then
			return 0
		fi
	done
}

insert_events() {
	psql_q "$1" "WITH j AS (INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload)
	  SELECT encode(sha256(convert_to('$2-' || g, 'UTF8')), 'hex'), 'news', '$3', '{}', '{}'
	  FROM generate_series(1, $4) g RETURNING job_id)
	INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination, redrive_generation, body)
	SELECT 'news:' || job_id || ':0', 'news', job_id, '$3', 0,
	       json_build_object('event_id', 'news:' || job_id || ':0')::text FROM j" >/dev/null
}

relay_setup() {
	local name=$1 dest=$2
	shift 2
	ci=$(newdb "relay_${name}_$$")
	queue=$(create_queue "relay-$name-$$")
	ini="$TEST_TMP/relay.ini"
	relay_ini "$ini" "$ci" "$dest" "$queue" "$@"
	"$OUTBOXCTL" -c "$ini" migrate >/dev/null
}
