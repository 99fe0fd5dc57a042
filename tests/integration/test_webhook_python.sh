#!/bin/bash
# test_webhook_python.sh: the webhook plugin against a receiver written with
# Python's standard library alone (http.server + hmac), which verifies each
# signature exactly as the Standard Webhooks specification describes:
# 20 jobs SUCCEEDED, one delivery row each, every signature valid.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_webhook_lib.sh"
wh_require

receiver_start python
wh_setup python "orders|hooks/outboxd"
outboxd_start "$TEST_TMP/outboxd.log"

enqueue_jobs orders 20 >"$TEST_TMP/orders.ids"
check "20 jobs enqueued" test "$(sort -u "$TEST_TMP/orders.ids" | wc -l)" = 20
check "all 20 end SUCCEEDED" wait_sql "$DB" \
	"SELECT count(*) FROM outbox.jobs WHERE status = 'SUCCEEDED'" 20 30
check "one delivery row per job (20 rows, 20 jobs, all HTTP 200)" \
	test "$(q "SELECT count(*) || '/' || count(DISTINCT job_id) || '/' || bool_and(status_code = 200)
	          FROM webhook.deliveries")" = 20/20/true
check "20 requests, every signature valid by the specification's HMAC" \
	test "$(recv_count '.valid')/$(recv_count 'true')" = 20/20
check "webhook-id is JOB_ID:0, once per job" test "$(jq -r '.id' "$RECV_LOG" | sort | tr '\n' ' ')" = \
	"$(sed 's/$/:0/' "$TEST_TMP/orders.ids" | sort | tr '\n' ' ')"
check "each body's job_id and attempt match its webhook-id" \
	test "$(recv_count '.id == (.job_id + ":0") and .attempt == 1')" = 20
outboxd_stop "$OPID"
check "outboxd stopped cleanly" test $? = 0
finish
