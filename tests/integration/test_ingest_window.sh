# test_ingest_window.sh: outboxctl ingest-window against a real PostgreSQL
# and fauxqs's S3 (its own database and bucket).
#
# fauxqs 1.9.2 ignores If-None-Match (it overwrites and answers 200), so the
# create-only guarantee (412 -> compare -> already present / conflict) is
# verified against AWS semantics by tests/integration/test_s3.c with the
# HTTP stub, not here; here a repeated PUT simply reports "created" again.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg
require_aws

ep=$OUTBOX_TEST_AWS_ENDPOINT
bucket="outbox-test-ingest-$$"
db=$(newdb outbox_test_ingest)
ini="$TEST_TMP/relay.ini"
write_ini "$ini" "$db"
sed -i "s/^bucket = outbox-test\$/bucket = $bucket/" "$ini"
curl -fsS -X PUT "$ep/$bucket" >/dev/null
"$OUTBOXCTL" -c "$ini" migrate >/dev/null 2>&1
bars="$OUTBOX_SRCDIR/conf/sample/bars"

s3_status() { curl -s -o /dev/null -w '%{http_code}' "$ep/$bucket/$1"; }
s3_sha() { curl -fsS "$ep/$bucket/$1" | sha256sum | cut -d' ' -f1; }
ingest() { "$OUTBOXCTL" -c "$ini" "$@"; }
counts() { psql_q "$db" "SELECT (SELECT count(*) FROM outbox.jobs) || '/' || (SELECT count(*) FROM outbox.outbox_events)"; }

# --- a new window: S3 object, then window + job + event -----------------
ingest --json ingest-window --symbol NVDA --window-start 2026-11-27T14:30:00Z \
	--bars "$bars/NVDA-1430.json" >"$TEST_TMP/i1.json"
key1=$(jq -r .artifact_key "$TEST_TMP/i1.json")
sha1=$(jq -r .artifact_sha256 "$TEST_TMP/i1.json")
check "key is content-addressed under the prefix" test "$key1" = "prices/NVDA/2026-11-27T14:30:00Z/$sha1.json"
check "the S3 object exists" test "$(s3_status "$key1")" = 200
check "the S3 object's SHA-256 is the recorded one" test "$(s3_sha "$key1")" = "$sha1"
check "the artifact is the canonical JSON" test "$(curl -fsS "$ep/$bucket/$key1" | jq -c '[.symbol, .window_start, (.bars | length), .bars[0].t]')" = '["NVDA","2026-11-27T14:30:00Z",5,"2026-11-27T14:30:00Z"]'
check "generation 1, not a correction, job created" test "$(jq -c '[.generation, .corrected, .job_created, .backfill]' "$TEST_TMP/i1.json")" = '[1,false,true,false]'
check "window row names the artifact" test "$(psql_q "$db" "SELECT generation || ' ' || artifact_key || ' ' || artifact_sha256 || ' ' || backfill FROM outbox.price_windows WHERE symbol = 'NVDA'")" = "1 $key1 $sha1 false"
check "one job, one event" test "$(counts)" = "1/1"
job1=$(jq -r .job_id "$TEST_TMP/i1.json")
check "printed job is the stored price job" test "$(psql_q "$db" "SELECT job_type || ' ' || destination || ' ' || (payload->>'artifact_key') || ' ' || (identity->>'generation') FROM outbox.jobs WHERE job_id = '$job1'")" = "price price $key1 1"
check "printed event id is the stored one" test "$(psql_q "$db" "SELECT event_id FROM outbox.outbox_events WHERE job_id = '$job1'")" = "$(jq -r .event_id "$TEST_TMP/i1.json")"

# --- the same bars again: nothing changes --------------------------------
ingest ingest-window --symbol NVDA --window-start 2026-11-27T14:30:00Z \
	--bars "$bars/NVDA-1430.json" >"$TEST_TMP/i2.txt"
check "same bars: generation stays 1" grep -q "^window: NVDA 2026-11-27T14:30:00Z generation 1\$" "$TEST_TMP/i2.txt"
check "same bars: job already enqueued" grep -q "^job: $job1 event: price:$job1:0 (already enqueued)\$" "$TEST_TMP/i2.txt"
check "same bars: still one job, one event" test "$(counts)" = "1/1"
check "same bars: window not corrected" test "$(psql_q "$db" "SELECT generation || ' ' || (corrected_at IS NULL) FROM outbox.price_windows WHERE symbol = 'NVDA'")" = "1 true"

# --- the same bars written differently: still the same artifact ----------
jq '[.[] | {v, c, l, h, o, t}]' "$bars/NVDA-1430.json" >"$TEST_TMP/reordered.json"
ingest --json ingest-window --symbol NVDA --window-start "2026-11-27 23:30+09:00" \
	--bars "$TEST_TMP/reordered.json" >"$TEST_TMP/i3.json"
check "reordered members and an offset start: same key" test "$(jq -r .artifact_key "$TEST_TMP/i3.json")" = "$key1"
check "reordered: no new job" test "$(counts)" = "1/1"

# --- different bars: a correction, generation 2, a second job -----------
jq '.[4].v += 1000' "$bars/NVDA-1430.json" >"$TEST_TMP/corrected.json"
ingest --json ingest-window --symbol NVDA --window-start 2026-11-27T14:30:00Z \
	--bars "$TEST_TMP/corrected.json" >"$TEST_TMP/i4.json"
key2=$(jq -r .artifact_key "$TEST_TMP/i4.json")
check "correction: a new key" test "$key2" != "$key1"
check "correction: generation 2, corrected, new job" test "$(jq -c '[.generation, .corrected, .job_created]' "$TEST_TMP/i4.json")" = '[2,true,true]'
check "correction: two jobs, two events" test "$(counts)" = "2/2"
check "correction: the window points at the new artifact" test "$(psql_q "$db" "SELECT generation || ' ' || artifact_key || ' ' || (corrected_at IS NOT NULL) FROM outbox.price_windows WHERE symbol = 'NVDA'")" = "2 $key2 true"
check "correction: the second job is generation 2" test "$(psql_q "$db" "SELECT string_agg(window_generation::text, ',' ORDER BY window_generation) FROM outbox.jobs WHERE window_symbol = 'NVDA'")" = "1,2"
check "correction: both artifacts exist (reconcile removes the old one)" test "$(s3_status "$key1") $(s3_status "$key2")" = "200 200"
ingest ingest-window --symbol NVDA --window-start 2026-11-27T14:35:00Z \
	--bars "$bars/NVDA-1435.json" >/dev/null
ingest ingest-window --symbol NVDA --window-start 2026-11-27T14:35:00Z \
	--bars "$TEST_TMP/corrected.json" --window-seconds 600 >"$TEST_TMP/i5.txt" 2>&1 && rc=0 || rc=$?
check "bars of another window are refused (exit 1)" test "$rc" -eq 1

# --- backfill: window + artifact, no job, no event -----------------------
ingest ingest-window --symbol AAPL --window-start 2026-11-27T14:30:00Z \
	--bars "$bars/AAPL-1430.json" --backfill >"$TEST_TMP/b1.txt"
check "backfill says so" grep -q "^backfill: no job\$" "$TEST_TMP/b1.txt"
check "backfill: window row marked backfill" test "$(psql_q "$db" "SELECT generation || ' ' || backfill FROM outbox.price_windows WHERE symbol = 'AAPL'")" = "1 true"
check "backfill: no job and no event" test "$(psql_q "$db" "SELECT count(*) FROM outbox.jobs WHERE window_symbol = 'AAPL'")/$(counts)" = "0/3/3"
bkey=$(psql_q "$db" "SELECT artifact_key FROM outbox.price_windows WHERE symbol = 'AAPL'")
check "backfill: the artifact exists" test "$(s3_status "$bkey")" = 200
ingest --json ingest-window --symbol AAPL --window-start 2026-11-27T14:30:00Z \
	--bars "$bars/AAPL-1430.json" --backfill >"$TEST_TMP/b2.json"
check "backfill --json: job_id null" test "$(jq -c '[.backfill, .job_id, .event_id, .job_created]' "$TEST_TMP/b2.json")" = '[true,null,null,false]'

# --- bad bars: exit 1, message names the bar, nothing written -----------
jq '.[2].l = 999' "$bars/TSLA-1430.json" >"$TEST_TMP/bad.json"
rc=0
ingest ingest-window --symbol TSLA --window-start 2026-11-27T14:30:00Z \
	--bars "$TEST_TMP/bad.json" >/dev/null 2>"$TEST_TMP/bad.err" || rc=$?
check "bad bars: exit 1" test "$rc" -eq 1
check "bad bars: message names bar 2" grep -q 'bad bars in ".*bad.json": bar 2: low 999 is above high' "$TEST_TMP/bad.err"
check "bad bars: no window" test "$(psql_q "$db" "SELECT count(*) FROM outbox.price_windows WHERE symbol = 'TSLA'")" = 0
check "bad bars: no S3 object" test "$(curl -fsS "$ep/$bucket?list-type=2&prefix=prices/TSLA/" | grep -c '<Key>' || true)" = 0

# --- usage errors: 64 ----------------------------------------------------
usage_rc() { local rc=0; ingest "$@" >/dev/null 2>&1 || rc=$?; echo "$rc"; }
check "missing --bars: 64" test "$(usage_rc ingest-window --symbol NVDA --window-start 2026-11-27T14:30:00Z)" = 64
check "unknown option: 64" test "$(usage_rc ingest-window --symbol NVDA --window-start 2026-11-27T14:30:00Z --bars x --frobnicate)" = 64
check "bad --window-seconds: 64" test "$(usage_rc ingest-window --symbol NVDA --window-start 2026-11-27T14:30:00Z --bars x --window-seconds 90)" = 64
check "unknown destination: 64" test "$(usage_rc ingest-window --symbol NVDA --window-start 2026-11-27T14:30:00Z --bars "$bars/NVDA-1430.json" --destination nowhere)" = 64
rc=0
ingest ingest-window --symbol "NV DA" --window-start 2026-11-27T14:30:00Z --bars "$bars/NVDA-1430.json" >/dev/null 2>"$TEST_TMP/sym.err" || rc=$?
check "bad symbol: exit 1 and says why" test "$rc" = 1 -a -n "$(grep 'invalid symbol "NV DA"' "$TEST_TMP/sym.err")"

# --- services unavailable: 69, nothing committed ------------------------
sed "s|^endpoint_url = .*|endpoint_url = http://127.0.0.1:9|" "$ini" >"$TEST_TMP/s3down.ini"
rc=0
"$OUTBOXCTL" -c "$TEST_TMP/s3down.ini" ingest-window --symbol MSFT --window-start 2026-11-27T14:30:00Z \
	--bars "$bars/MSFT-1430.json" >/dev/null 2>"$TEST_TMP/s3down.err" || rc=$?
check "S3 unreachable: exit 69" test "$rc" -eq 69
check "S3 unreachable: says so" grep -q 'could not write artifact' "$TEST_TMP/s3down.err"
check "S3 unreachable: no window" test "$(psql_q "$db" "SELECT count(*) FROM outbox.price_windows WHERE symbol = 'MSFT'")" = 0
write_ini "$TEST_TMP/dbdown.ini" "postgresql://postgres@127.0.0.1:9/none"
sed -i "s/^bucket = outbox-test\$/bucket = $bucket/" "$TEST_TMP/dbdown.ini"
rc=0
"$OUTBOXCTL" -c "$TEST_TMP/dbdown.ini" ingest-window --symbol MSFT --window-start 2026-11-27T14:30:00Z \
	--bars "$bars/MSFT-1430.json" >/dev/null 2>"$TEST_TMP/dbdown.err" || rc=$?
check "database unreachable: exit 69" test "$rc" -eq 69
check "database unreachable: no S3 object written" test "$(curl -fsS "$ep/$bucket?list-type=2&prefix=prices/MSFT/" | grep -c '<Key>' || true)" = 0

# --- killed between the S3 write and the commit --------------------------
rc=0
OUTBOX_FAULT_POINT=ingest.after_put ingest ingest-window --symbol MSFT \
	--window-start 2026-11-27T14:30:00Z --bars "$bars/MSFT-1430.json" >/dev/null 2>&1 || rc=$?
check "fault point ingest.after_put: exit 137" test "$rc" -eq 137
check "after the crash: the S3 object exists" test "$(curl -fsS "$ep/$bucket?list-type=2&prefix=prices/MSFT/" | grep -c '<Key>')" = 1
check "after the crash: no window, job or event" test "$(psql_q "$db" "SELECT count(*) FROM outbox.price_windows WHERE symbol = 'MSFT'")/$(counts)" = "0/3/3"
ingest ingest-window --symbol MSFT --window-start 2026-11-27T14:30:00Z --bars "$bars/MSFT-1430.json" >/dev/null
check "a retried ingest completes the window" test "$(psql_q "$db" "SELECT count(*) FROM outbox.jobs WHERE window_symbol = 'MSFT'")" = 1


# --- years outside 1000..9999 parse but cannot be formatted: refused first -
# (a time that did not format made the key "prices/SYM//SHA.json" and the
# ingest failed after the upload, leaving an object nobody could clean).
for ws in 0999-12-31T23:55:00Z 9999-12-31T23:55:00-01:00; do
	printf '[{"t": "%s", "o": 1, "h": 1, "l": 1, "c": 1, "v": 1}]\n' "$ws" >"$TEST_TMP/years.json"
	rc=0
	ingest ingest-window --symbol YEARS --window-start "$ws" --bars "$TEST_TMP/years.json" \
		>/dev/null 2>"$TEST_TMP/years.err" || rc=$?
	check "window start $ws: exit 1" test "$rc" -eq 1
	check "window start $ws: says why" grep -qF "invalid window start \"$ws\": the year (in UTC) must be from 1000 to 9999" "$TEST_TMP/years.err"
done
check "out-of-range years: nothing uploaded" test "$(curl -fsS "$ep/$bucket?list-type=2&prefix=prices/YEARS/" | grep -c '<Key>' || true)" = 0
check "out-of-range years: no window" test "$(psql_q "$db" "SELECT count(*) FROM outbox.price_windows WHERE symbol = 'YEARS'")" = 0
printf '[{"t": "1000-01-01T00:00:00Z", "o": 1, "h": 1, "l": 1, "c": 1, "v": 1}]\n' >"$TEST_TMP/y1000.json"
ingest --json ingest-window --symbol YEARS --window-start 1000-01-01T00:00:00Z --bars "$TEST_TMP/y1000.json" >"$TEST_TMP/y1000.out"
check "the year 1000 is accepted" test "$(jq -r .artifact_key "$TEST_TMP/y1000.out")" = "prices/YEARS/1000-01-01T00:00:00Z/$(jq -r .artifact_sha256 "$TEST_TMP/y1000.out").json"

finish
