# test_create_queues.sh: outboxctl create-queues against fauxqs.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg
require_aws

ep=$OUTBOX_TEST_AWS_ENDPOINT
sfx=$$
ini="$TEST_TMP/relay.ini"
cat >"$ini" <<INI
[database]
conninfo = postgresql://postgres@127.0.0.1:$OUTBOX_TEST_PG_PORT/postgres
[aws]
region = us-east-1
endpoint_url = $ep
[s3]
bucket = cq-bucket-$sfx
endpoint_url = $ep
[consumer]
visibility_timeout_seconds = 45
[destination:news]
queue_url = $ep/000000000000/cq-news-$sfx
dlq_url = $ep/000000000000/cq-news-$sfx-dlq
max_receive_count = 3
plugin = example
[destination:price]
queue_url = $ep/000000000000/cq-price-$sfx
plugin = example
INI

sqs() { # ACTION JSON
	curl -sS -X POST "$ep/" -H 'Content-Type: application/x-amz-json-1.0' \
		-H "X-Amz-Target: AmazonSQS.$1" -d "$2"
}
attrs() {
	sqs GetQueueAttributes "{\"QueueUrl\":\"$ep/000000000000/$1\",\"AttributeNames\":[\"All\"]}"
}

"$OUTBOXCTL" -c "$ini" create-queues --json >"$TEST_TMP/c1.json"
check "create-queues reports both destinations" test "$(jq -r '[.queues[].destination] | join(",")' "$TEST_TMP/c1.json")" = "news,price"
check "create-queues reports the bucket" test "$(jq -r '.bucket' "$TEST_TMP/c1.json")" = "cq-bucket-$sfx"
check "the bucket exists" curl -fsS -o /dev/null "$ep/cq-bucket-$sfx?list-type=2"
policy=$(attrs "cq-news-$sfx" | jq -r '.Attributes.RedrivePolicy')
check "news queue has the redrive policy" test "$(echo "$policy" | jq -r '.maxReceiveCount')" = 3
check "redrive target is the DLQ" test "$(echo "$policy" | jq -r '.deadLetterTargetArn')" = "arn:aws:sqs:us-east-1:000000000000:cq-news-$sfx-dlq"
check "visibility timeout from [consumer]" test "$(attrs "cq-news-$sfx" | jq -r '.Attributes.VisibilityTimeout')" = 45
check "DLQ keeps messages 14 days" test "$(attrs "cq-news-$sfx-dlq" | jq -r '.Attributes.MessageRetentionPeriod')" = 1209600
check "price queue has no redrive policy" test "$(attrs "cq-price-$sfx" | jq -r '.Attributes.RedrivePolicy // "none"')" = none

rc=0
"$OUTBOXCTL" -c "$ini" create-queues >"$TEST_TMP/c2.out" 2>&1 || rc=$?
check "running it again succeeds" test "$rc" -eq 0
check "running it again keeps the policy" test "$(attrs "cq-news-$sfx" | jq -r '.Attributes.RedrivePolicy' | jq -r .maxReceiveCount)" = 3

rc=0
env -u AWS_ACCESS_KEY_ID "$OUTBOXCTL" -c "$ini" create-queues >"$TEST_TMP/c3.out" 2>&1 || rc=$?
check "missing credentials: exit 78" test "$rc" -eq 78
check "missing credentials: named" grep -q "AWS_ACCESS_KEY_ID" "$TEST_TMP/c3.out"

sed -i "s|^endpoint_url = .*|endpoint_url = http://127.0.0.1:9|" "$ini"
rc=0
"$OUTBOXCTL" -c "$ini" create-queues >"$TEST_TMP/c4.out" 2>&1 || rc=$?
check "unreachable endpoint: exit 69" test "$rc" -eq 69
finish
