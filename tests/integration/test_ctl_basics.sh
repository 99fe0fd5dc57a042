# test_ctl_basics.sh: outboxctl migrate, enqueue-news and status on a real
# PostgreSQL.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg

db=$(newdb outbox_test_ctl)
ini="$TEST_TMP/relay.ini"
write_ini "$ini" "$db"

# --- migrate: applies, then is a no-op, then refuses an edited file -------
cp -r "$OUTBOX_SRCDIR/migrations" "$TEST_TMP/migrations"
export OUTBOX_MIGRATIONS_DIR="$TEST_TMP/migrations"
"$OUTBOXCTL" -c "$ini" migrate >"$TEST_TMP/m1.out" 2>&1
n_core=$(ls "$TEST_TMP/migrations"/V*__*.sql | wc -l)
check "first migrate applies every core file" grep -q "applied $n_core migrations" "$TEST_TMP/m1.out"
check "every core file is recorded" test "$(psql_q "$db" "SELECT count(*) FROM outbox.schema_migrations WHERE component = 'core'")" -eq "$n_core"
before=$(psql_q "$db" "SELECT count(*) || ':' || max(applied_at) FROM outbox.schema_migrations")
"$OUTBOXCTL" -c "$ini" migrate >"$TEST_TMP/m2.out" 2>&1
after=$(psql_q "$db" "SELECT count(*) || ':' || max(applied_at) FROM outbox.schema_migrations")
check "second migrate is a no-op" grep -q "up to date" "$TEST_TMP/m2.out"
check "second migrate recorded nothing" test "$before" = "$after"

echo "-- edited after it was applied" >>"$TEST_TMP/migrations/V1__core_schema.sql"
rc=0
"$OUTBOXCTL" -c "$ini" migrate >"$TEST_TMP/m3.out" 2>&1 || rc=$?
check "edited migration: exit 78" test "$rc" -eq 78
check "edited migration: message names the file" grep -q 'migration ".*V1__core_schema.sql" has changed' "$TEST_TMP/m3.out"

# --- migrate: a file numbered below an applied one, a file that commits ---
db2=$(newdb outbox_test_ctl_order)
write_ini "$TEST_TMP/order.ini" "$db2"
mkdir "$TEST_TMP/order"
echo "CREATE TABLE order_a (id int);" >"$TEST_TMP/order/V1__a.sql"
echo "CREATE TABLE order_c (id int);" >"$TEST_TMP/order/V3__c.sql"
"$OUTBOXCTL" -c "$TEST_TMP/order.ini" migrate --dir "$TEST_TMP/order" >/dev/null 2>&1
echo "CREATE TABLE order_b (id int);" >"$TEST_TMP/order/V2__b.sql"
rc=0
"$OUTBOXCTL" -c "$TEST_TMP/order.ini" migrate --dir "$TEST_TMP/order" >"$TEST_TMP/o1.out" 2>&1 || rc=$?
check "out-of-order migration: exit 78" test "$rc" -eq 78
check "out-of-order migration: named" grep -q 'V2__b.sql" is numbered below "V3__c.sql"' "$TEST_TMP/o1.out"
check "out-of-order migration: not applied" test "$(psql_q "$db2" "SELECT count(*) FROM pg_tables WHERE tablename = 'order_b'")" -eq 0
rm "$TEST_TMP/order/V2__b.sql"
printf 'CREATE TABLE order_d (id int);\nCOMMIT;\n' >"$TEST_TMP/order/V4__commits.sql"
rc=0
"$OUTBOXCTL" -c "$TEST_TMP/order.ini" migrate --dir "$TEST_TMP/order" >"$TEST_TMP/o2.out" 2>&1 || rc=$?
check "self-committing migration: refused" test "$rc" -eq 1
check "self-committing migration: says why" grep -q 'V4__commits.sql" ended the transaction itself' "$TEST_TMP/o2.out"
check "self-committing migration: not recorded" test "$(psql_q "$db2" "SELECT count(*) FROM outbox.schema_migrations WHERE version = 4")" -eq 0
export OUTBOX_MIGRATIONS_DIR="$OUTBOX_SRCDIR/migrations"

# --- enqueue-news: a bad line is reported and writes nothing -------------
cat >"$TEST_TMP/news.jsonl" <<'JSONL'
{"source":"reuters","url":"https://example.com/1","published_at":"2026-11-30T09:00:00Z","title":"one","body":"b"}
{"source":"reuters","url":"https://example.com/2", "title": broken
{"source":"reuters","url":"https://example.com/3","published_at":"2026-11-30T09:00:00Z","title":"three","body":"b"}

{"source":"reuters","published_at":"2026-11-30T09:00:00Z","title":"no url","body":"b"}
JSONL
rc=0
"$OUTBOXCTL" -c "$ini" enqueue-news "$TEST_TMP/news.jsonl" >"$TEST_TMP/e1.out" 2>"$TEST_TMP/e1.err" || rc=$?
check "enqueue-news with bad lines exits 1" test "$rc" -eq 1
check "malformed JSON is reported with its line" grep -q "news.jsonl:2: invalid JSON" "$TEST_TMP/e1.err"
check "invalid item is reported with its line" grep -q 'news.jsonl:5: news item needs a non-empty string "url"' "$TEST_TMP/e1.err"
check "two good lines printed" test "$(grep -cE '^[0-9a-f]{64} news:[0-9a-f]{64}:0$' "$TEST_TMP/e1.out")" -eq 2
check "two jobs, two events" test "$(psql_q "$db" "SELECT count(*) || '/' || (SELECT count(*) FROM outbox.outbox_events) FROM outbox.jobs")" = "2/2"
check "printed ids are the stored ids" test "$(cut -d' ' -f1 "$TEST_TMP/e1.out" | sort | tr '\n' ' ')" = "$(psql_q "$db" "SELECT string_agg(job_id, ' ' ORDER BY job_id) || ' ' FROM outbox.jobs")"

rc=0
"$OUTBOXCTL" -c "$ini" enqueue-news - <"$TEST_TMP/news.jsonl" >"$TEST_TMP/e2.out" 2>"$TEST_TMP/e2.err" || rc=$?
check "re-enqueue from stdin reports existing jobs" test "$(grep -c 'already enqueued' "$TEST_TMP/e2.out")" -eq 2
check "re-enqueue leaves exactly one of each" test "$(psql_q "$db" "SELECT count(*) || '/' || (SELECT count(*) FROM outbox.outbox_events) FROM outbox.jobs")" = "2/2"

rc=0
"$OUTBOXCTL" -c "$ini" enqueue-news --destination nowhere "$TEST_TMP/news.jsonl" >/dev/null 2>"$TEST_TMP/e3.err" || rc=$?
check "unknown destination is a usage error" test "$rc" -eq 64
check "unknown destination is named" grep -q 'destination "nowhere" is not configured' "$TEST_TMP/e3.err"

# --- status --------------------------------------------------------------
"$OUTBOXCTL" -c "$ini" status --json >"$TEST_TMP/s.json"
check "status --json: news counts" test "$(jq -r '.destinations.news.jobs.PENDING, .destinations.news.outbox.NEW' "$TEST_TMP/s.json" | tr '\n' ' ')" = "2 2 "
check "status --json: every state present with zeros" test "$(jq -c '.destinations.price | del(.queue_depth, .dlq_depth)' "$TEST_TMP/s.json")" = '{"jobs":{"PENDING":0,"CLAIMED":0,"SUCCEEDED":0,"DEAD":0},"outbox":{"NEW":0,"PUBLISHED":0,"DEAD":0},"oldest_new_age_seconds":null,"oldest_due_pending_age_seconds":null,"paused":false}'
check "status --json: queue and DLQ depth keys per destination" test "$(jq -c '.destinations.news | has("queue_depth"), has("dlq_depth")' "$TEST_TMP/s.json" | tr '\n' ' ')" = "true true "
check "status --json: instances is an array (none registered) and errors are listed" test "$(jq -c '[(.instances | type), (.errors | type)]' "$TEST_TMP/s.json")" = '["array","array"]'
check "status --json: totals" test "$(jq -c '.totals' "$TEST_TMP/s.json")" = '{"jobs":{"PENDING":2,"CLAIMED":0,"SUCCEEDED":0,"DEAD":0},"outbox":{"NEW":2,"PUBLISHED":0,"DEAD":0}}'
check "status --json: oldest NEW age is a number" test "$(jq -r '.destinations.news.oldest_new_age_seconds | type' "$TEST_TMP/s.json")" = number
"$OUTBOXCTL" -c "$ini" status >"$TEST_TMP/s.txt"
check "status text lists the destinations" grep -qE '^news +2 +0 +0 +0 +2 +0 +0' "$TEST_TMP/s.txt"

# --- enqueue-news: size limit and published_at (issue 11, item 7) --------
big=$(head -c 300000 /dev/zero | tr '\0' x)
{
	printf '{"source":"s","url":"https://example.com/big","published_at":"2026-11-30T09:00:00Z","title":"big","body":"%s"}\n' "$big"
	echo '{"source":"s","url":"https://example.com/when","published_at":"yesterday","title":"t","body":"b"}'
	echo '{"source":"s","url":"https://example.com/feb","published_at":"2026-02-30T09:00:00Z","title":"t","body":"b"}'
	echo '{"source":"s","url":"https://example.com/nozone","published_at":"2026-11-30T09:00:00","title":"t","body":"b"}'
	echo '{"source":"s","url":"https://example.com/frac","published_at":"2026-11-30T18:00:00.250+09:00","title":"t","body":"b"}'
} >"$TEST_TMP/limits.jsonl"
before=$(psql_q "$db" "SELECT count(*) FROM outbox.jobs")
rc=0
"$OUTBOXCTL" -c "$ini" --json enqueue-news "$TEST_TMP/limits.jsonl" >"$TEST_TMP/l.json" 2>"$TEST_TMP/l.err" || rc=$?
check "enqueue-news with refused items exits 1" test "$rc" -eq 1
check "an item over the limit is refused, naming its line" grep -q 'limits.jsonl:1: news item is too large (more than 262144 bytes on one line)' "$TEST_TMP/l.err"
check "an unparseable published_at is refused, naming its line" grep -q 'limits.jsonl:2: news item has an unparseable "published_at"' "$TEST_TMP/l.err"
check "an impossible date is refused" grep -q 'limits.jsonl:3: news item has an unparseable "published_at"' "$TEST_TMP/l.err"
check "a time without a zone is refused" grep -q 'limits.jsonl:4: news item has an unparseable "published_at"' "$TEST_TMP/l.err"
check "--json: the four rejected lines" test "$(jq -c '[.rejected[].line]' "$TEST_TMP/l.json")" = '[1,2,3,4]'
check "a fractional second with an offset is accepted" test "$(jq -c '[.jobs[].line, .enqueued]' "$TEST_TMP/l.json")" = '[5,1]'
check "only the good item was written" test "$(psql_q "$db" "SELECT count(*) FROM outbox.jobs")" -eq $((before + 1))

# --- dead --evidence: the DLQ evidence of each dead job (issue 11, item 7) --
mkjob() { # ID DEST: a job row, PENDING
	psql_q "$db" "INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload)
	              VALUES ('$1', 'news', '$2', '{\"k\":\"$1\"}', '{}')" >/dev/null
}
dj=$(printf 'd%.0s' $(seq 64)); nj=$(printf 'e%.0s' $(seq 64)); lj=$(printf 'f%.0s' $(seq 64))
mkjob "$dj" news; mkjob "$nj" news; mkjob "$lj" news
psql_q "$db" "UPDATE outbox.jobs SET status = 'DEAD', dead_reason = 'DLQ', finished_at = now()
              WHERE job_id IN ('$dj', '$nj')" >/dev/null
psql_q "$db" "INSERT INTO outbox.dlq_messages (destination, sqs_message_id, job_id, event_id, body,
                attributes, receive_count, outcome, received_at) VALUES
  ('news', 'm-1', '$dj', 'news:$dj:0', E'first\\x1b[31mred', '{\"ApproximateReceiveCount\": \"5\"}', 5,
   'marked_dead', '2026-11-30T09:00:00Z'),
  ('news', 'm-2', '$dj', 'news:$dj:0', 'second', '{}', 6, 'already_terminal', '2026-11-30T09:01:00Z'),
  ('news', 'm-3', '$lj', 'news:$lj:0', 'live job', '{}', 1, 'wrong_destination', now())" >/dev/null
"$OUTBOXCTL" -c "$ini" --json dead --evidence >"$TEST_TMP/d.json"
ev() { jq -c --arg j "$1" ".jobs[] | select(.job_id == \$j) | $2" "$TEST_TMP/d.json"; }
check "dead --evidence --json: both rows of the dead job, oldest first" \
	test "$(ev "$dj" '[.evidence[] | [.sqs_message_id, .outcome, .receive_count, .received_at]]')" = \
	'[["m-1","marked_dead",5,"2026-11-30T09:00:00.000Z"],["m-2","already_terminal",6,"2026-11-30T09:01:00.000Z"]]'
check "dead --evidence --json: body, event and attributes" \
	test "$(ev "$dj" '.evidence[0] | [.body, .event_id, .attributes.ApproximateReceiveCount, .destination]')" = \
	"[\"first\\u001b[31mred\",\"news:$dj:0\",\"5\",\"news\"]"
check "dead --evidence --json: a dead job without evidence has an empty list" test "$(ev "$nj" '.evidence')" = '[]'
check "dead --evidence --json: a live job is not listed" test "$(ev "$lj" '.job_id')" = ''
"$OUTBOXCTL" -c "$ini" --json dead >"$TEST_TMP/d0.json"
check "dead without --evidence: no evidence key" test "$(jq -c '[.jobs[] | has("evidence")] | any' "$TEST_TMP/d0.json")" = false
"$OUTBOXCTL" -c "$ini" dead --evidence >"$TEST_TMP/d.txt"
check "dead --evidence text: counts each job's messages" test "$(grep -c 'evidence: 2 dead-letter messages' "$TEST_TMP/d.txt")/$(grep -c 'evidence: 0 dead-letter messages' "$TEST_TMP/d.txt")" = 1/1
check "dead --evidence text: one line per message" grep -q "2026-11-30T09:00:00.000Z  outcome=marked_dead queue_message=m-1 receive_count=5 event_id=news:$dj:0" "$TEST_TMP/d.txt"
check "dead --evidence text: control bytes of a body are escaped" grep -qF 'body: first\x1b[31mred' "$TEST_TMP/d.txt"
check "dead --evidence text: no raw escape byte" sh -c "! grep -q \"\$(printf '\\033')\" '$TEST_TMP/d.txt'"

# --- a database that is not there: exit 69 --------------------------------
write_ini "$TEST_TMP/down.ini" "postgresql://postgres@127.0.0.1:9/none"
rc=0
"$OUTBOXCTL" -c "$TEST_TMP/down.ini" status >/dev/null 2>"$TEST_TMP/down.err" || rc=$?
check "unreachable database: exit 69" test "$rc" -eq 69
check "unreachable database: says so" grep -q "could not connect to the database" "$TEST_TMP/down.err"
"$OUTBOXCTL" -c "$TEST_TMP/down.ini" --json status >"$TEST_TMP/down.json" 2>/dev/null || true
check "unreachable database: --json still prints, counts null, the failure named" \
	test "$(jq -c '[.destinations.news.jobs, .totals.outbox, (.errors[0] | startswith("could not connect to the database"))]' "$TEST_TMP/down.json")" = '[null,null,true]'

finish
