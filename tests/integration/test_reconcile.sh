# test_reconcile.sh: outboxctl reconcile-artifacts, and the artifact lock
# that keeps it and ingest-window from undercutting each other, against a
# real PostgreSQL and fauxqs's S3 (its own database and bucket).
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg
require_aws

ep=$OUTBOX_TEST_AWS_ENDPOINT
bucket="outbox-test-reconcile-$$"
db=$(newdb outbox_test_reconcile)
ini="$TEST_TMP/relay.ini"
write_ini "$ini" "$db"
sed -i "s/^bucket = outbox-test\$/bucket = $bucket/" "$ini"
curl -fsS -X PUT "$ep/$bucket" >/dev/null
"$OUTBOXCTL" -c "$ini" migrate >/dev/null 2>&1
bars="$OUTBOX_SRCDIR/conf/sample/bars"

s3_status() { curl -s -o /dev/null -w '%{http_code}' "$ep/$bucket/$1"; }
s3_keys() { curl -fsS "$ep/$bucket?list-type=2&prefix=$1" | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g'; }
ingest() { "$OUTBOXCTL" -c "$ini" ingest-window --window-start 2026-11-27T14:30:00Z "$@"; }
reconcile() { "$OUTBOXCTL" -c "$ini" --json reconcile-artifacts "$@"; }
crash_ingest() { # SYMBOL: leaves an orphan; prints its key
	local rc=0
	OUTBOX_FAULT_POINT=ingest.after_put ingest --symbol "$1" --bars "$bars/$1-1430.json" \
		>/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 137 ] || { echo "crash ingest of $1 exited $rc" >&2; return 1; }
	s3_keys "prices/$1/"
}
all_referenced_exist() {
	local k
	for k in $(psql_q "$db" "SELECT artifact_key FROM outbox.price_windows"); do
		[ "$(s3_status "$k")" = 200 ] || return 1
	done
}
# A psql session holding the artifact lock of a key (as a session lock).
lock_hold() {
	mkfifo "$TEST_TMP/lock.fifo"
	psql -X -q -At -d "$db" <"$TEST_TMP/lock.fifo" >"$TEST_TMP/lock.out" 2>&1 &
	lock_pid=$!
	exec 3>"$TEST_TMP/lock.fifo"
	echo "SELECT pg_advisory_lock(hashtextextended('$1', 0)); SELECT 'locked';" >&3
	wait_for 10 grep -q '^locked$' "$TEST_TMP/lock.out"
}
lock_release() {
	echo "SELECT pg_advisory_unlock(hashtextextended('$1', 0));" >&3
	exec 3>&-
	wait "$lock_pid"
	rm -f "$TEST_TMP/lock.fifo"
}
# Someone in this database waits for an advisory lock.
lock_waiter() {
	test "$(psql_q "$db" "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
	                       WHERE d.datname = current_database() AND l.locktype = 'advisory'
	                         AND NOT l.granted")" = 1
}

# --- three referenced artifacts, one foreign object, one orphan ----------
ingest --symbol NVDA --bars "$bars/NVDA-1430.json" >/dev/null
ingest --symbol AAPL --bars "$bars/AAPL-1430.json" >/dev/null
ingest --symbol MSFT --bars "$bars/MSFT-1430.json" --backfill >/dev/null
echo hello | curl -fsS -X PUT -H "Content-Type: application/octet-stream" --data-binary @- "$ep/$bucket/prices/README.txt" >/dev/null
echo '{}' | curl -fsS -X PUT -H "Content-Type: application/octet-stream" --data-binary @- "$ep/$bucket/elsewhere/x.json" >/dev/null
orphan=$(crash_ingest TSLA)
check "the crashed ingest left exactly one orphan" test -n "$orphan" -a "$(echo "$orphan" | wc -l)" = 1
check "the orphan is referenced by no window" test "$(psql_q "$db" "SELECT count(*) FROM outbox.price_windows WHERE artifact_key = '$orphan'")" = 0

# --- --dry-run reports it and deletes nothing -----------------------------
reconcile --grace 0 --dry-run >"$TEST_TMP/r1.json"
check "dry run: counts" test "$(jq -c '[.listed, .referenced, .orphans, .too_recent, .ignored, .deleted]' "$TEST_TMP/r1.json")" = '[5,3,1,0,1,0]'
check "dry run: names the orphan" test "$(jq -r '.would_delete | join(",")' "$TEST_TMP/r1.json")" = "$orphan"
check "dry run: the orphan still exists" test "$(s3_status "$orphan")" = 200
"$OUTBOXCTL" -c "$ini" reconcile-artifacts --grace 0 --dry-run >"$TEST_TMP/r1.txt"
check "dry run text: would delete KEY" grep -qx "would delete $orphan" "$TEST_TMP/r1.txt"

# --- a large grace keeps it: too recent -----------------------------------
reconcile --grace 86400 >"$TEST_TMP/r2.json"
check "large grace: too recent, nothing deleted" test "$(jq -c '[.orphans, .too_recent, .deleted, .too_recent_keys[0]]' "$TEST_TMP/r2.json")" = "[1,1,0,\"$orphan\"]"
check "large grace: the orphan still exists" test "$(s3_status "$orphan")" = 200

# --- the default grace (3600 s) also keeps a fresh orphan ----------------
reconcile >"$TEST_TMP/r3.json"
check "default grace: too recent" test "$(jq -c '[.grace_seconds, .too_recent, .deleted]' "$TEST_TMP/r3.json")" = '[3600,1,0]'

# --- --grace 0 with pages of 2 objects: finds and removes it --------------
OUTBOX_S3_LIST_PAGE_SIZE=2 reconcile --grace 0 >"$TEST_TMP/r4.json"
check "paged listing: every object listed over 3 pages" test "$(jq -c '[.listed, .pages]' "$TEST_TMP/r4.json")" = '[5,3]'
check "grace 0: the orphan deleted" test "$(jq -c '[.orphans, .deleted, .deleted_keys[0]]' "$TEST_TMP/r4.json")" = "[1,1,\"$orphan\"]"
check "grace 0: the orphan is gone from S3" test "$(s3_status "$orphan")" = 404
check "referenced artifacts are all still there" all_referenced_exist
check "the foreign object under the prefix is untouched" test "$(s3_status prices/README.txt)" = 200
check "the object outside the prefix is untouched" test "$(s3_status elsewhere/x.json)" = 200
reconcile --grace 0 >"$TEST_TMP/r5.json"
check "a second run finds nothing" test "$(jq -c '[.listed, .orphans, .deleted]' "$TEST_TMP/r5.json")" = '[4,0,0]'

# --- a correction's superseded artifact is removed, the new one kept ------
old=$(psql_q "$db" "SELECT artifact_key FROM outbox.price_windows WHERE symbol = 'NVDA'")
jq '.[0].v += 7' "$bars/NVDA-1430.json" >"$TEST_TMP/nvda2.json"
ingest --symbol NVDA --bars "$TEST_TMP/nvda2.json" >/dev/null
new=$(psql_q "$db" "SELECT artifact_key FROM outbox.price_windows WHERE symbol = 'NVDA'")
reconcile --grace 0 >"$TEST_TMP/r6.json"
check "superseded artifact deleted" test "$(jq -r '.deleted_keys | join(",")' "$TEST_TMP/r6.json")" = "$old"
check "current artifact kept" test "$(s3_status "$new")" = 200
check "referenced artifacts are all still there (2)" all_referenced_exist

# --- reconcile re-checks under the lock: a commit in flight wins ----------
orphan2=$(crash_ingest TSLA)
lock_hold "$orphan2"
reconcile --grace 0 >"$TEST_TMP/r7.json" 2>"$TEST_TMP/r7.err" &
rec_pid=$!
check "reconcile waits for the artifact lock" wait_for 10 lock_waiter
# While reconcile waits, a window that references the orphan commits.
sha2=$(basename "$orphan2" .json)
psql_q "$db" "INSERT INTO outbox.price_windows (symbol, window_start, artifact_key, artifact_sha256)
              VALUES ('TSLA', '2026-11-27T14:30:00Z', '$orphan2', '$sha2')" >/dev/null
lock_release "$orphan2"
rc=0
wait "$rec_pid" || rc=$?
check "reconcile after the wait: exit 0" test "$rc" -eq 0
check "reconcile kept the now-referenced artifact" test "$(jq -c '[.orphans, .kept_referenced, .deleted]' "$TEST_TMP/r7.json")" = '[1,1,0]'
check "the artifact is still in S3" test "$(s3_status "$orphan2")" = 200

# --- ingest re-checks under the lock: a removed object is written again ---
# Re-ingest AAPL's window while a reconcile "holds" its artifact lock and
# deletes the object (as it may: at its check no commit was visible).
orphan3=$(psql_q "$db" "SELECT artifact_key FROM outbox.price_windows WHERE symbol = 'AAPL'")
lock_hold "$orphan3"
"$OUTBOXCTL" -c "$ini" --json ingest-window --symbol AAPL --window-start 2026-11-27T14:30:00Z \
	--bars "$bars/AAPL-1430.json" >"$TEST_TMP/i1.json" 2>"$TEST_TMP/i1.err" &
ing_pid=$!
check "ingest waits for the artifact lock" wait_for 10 lock_waiter
# What a reconcile holding the lock would do: delete the unreferenced object.
curl -fsS -X DELETE "$ep/$bucket/$orphan3" >/dev/null
check "the object is gone while ingest waits" test "$(s3_status "$orphan3")" = 404
lock_release "$orphan3"
rc=0
wait "$ing_pid" || rc=$?
check "ingest after the wait: exit 0" test "$rc" -eq 0
check "ingest noticed and wrote the object again" test "$(jq -c '[.artifact_key, .reuploaded]' "$TEST_TMP/i1.json")" = "[\"$orphan3\",true]"
check "the committed window's artifact exists" test "$(s3_status "$orphan3")" = 200
check "referenced artifacts are all still there (3)" all_referenced_exist

# --- keys in our namespace that do not parse are reported, never deleted --
# "prices/ODD//SHA.json" is what an ingest of a year-999 window used to
# upload before failing; the others are shaped wrong in other ways.
sha=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
odd="prices/ODD//$sha.json prices/ODD/0999-12-31T23:55:00Z/$sha.json prices/ODD/2026-11-27T14:30:00Z/NOTHEX.json"
for k in $odd; do
	echo '{}' | curl -fsS -X PUT -H "Content-Type: application/json" --data-binary @- "$ep/$bucket/$k" >/dev/null
done
reconcile --grace 0 >"$TEST_TMP/u1.json" 2>"$TEST_TMP/u1.err"
check "unparseable keys: counted" test "$(jq -c '[.unparseable, .deleted]' "$TEST_TMP/u1.json")" = '[3,0]'
check "unparseable keys: each named with its problem" test "$(jq -r '[.unparseable_keys[] | .key + " " + .problem] | join("|")' "$TEST_TMP/u1.json")" = \
	"prices/ODD//$sha.json the window start is not of the form YYYY-MM-DDTHH:MM:SSZ|prices/ODD/0999-12-31T23:55:00Z/$sha.json the window start's year is not from 1000 to 9999|prices/ODD/2026-11-27T14:30:00Z/NOTHEX.json the file name is not the artifact's SHA-256 in lower-case hex"
check "unparseable keys: a warning each on stderr" test "$(grep -c 'warning: cannot parse artifact key' "$TEST_TMP/u1.err")" = 3
check "the README is still only ignored" test "$(jq -c '.ignored' "$TEST_TMP/u1.json")" = 1
for k in $odd; do
	check "unparseable $k: kept" test "$(s3_status "$k")" = 200
done
"$OUTBOXCTL" -c "$ini" reconcile-artifacts --grace 0 --dry-run >"$TEST_TMP/u2.txt" 2>/dev/null
check "text form: an unparseable line per key" test "$(grep -c '^unparseable prices/ODD/' "$TEST_TMP/u2.txt")" = 3
check "text form: counted in the summary" grep -q ', 3 unparseable;' "$TEST_TMP/u2.txt"

# --- errors ----------------------------------------------------------------
rc=0
OUTBOX_S3_LIST_PAGE_SIZE=0 reconcile --grace 0 >/dev/null 2>"$TEST_TMP/e1.err" || rc=$?
check "bad OUTBOX_S3_LIST_PAGE_SIZE: exit 78" test "$rc" -eq 78
rc=0
reconcile --grace -5 >/dev/null 2>&1 || rc=$?
check "negative --grace: exit 64" test "$rc" -eq 64
sed "s|^endpoint_url = .*|endpoint_url = http://127.0.0.1:9|" "$ini" >"$TEST_TMP/s3down.ini"
rc=0
"$OUTBOXCTL" -c "$TEST_TMP/s3down.ini" reconcile-artifacts --grace 0 >/dev/null 2>&1 || rc=$?
check "S3 unreachable: exit 69" test "$rc" -eq 69

finish
