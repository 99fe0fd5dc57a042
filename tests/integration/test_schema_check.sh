#!/bin/bash
# test_schema_check.sh: outboxd (every role) and every outboxctl command but
# migrate refuse a database whose schema lacks migrations this build ships
# (exit 78, naming them, "run outboxctl migrate"); migrate itself works on an
# empty database; a plugin's migrations count only when relay.ini names the
# plugin; versions newer than the build knows are accepted with a warning.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg

db=$(newdb outbox_test_schema_check)
ini="$TEST_TMP/relay.ini"
write_ini "$ini" "$db"
newest=$(cd "$OUTBOX_SRCDIR/migrations" && ls V*__*.sql | sort -t_ -k1.2n | tail -1)

# run WHAT CMD...: its exit code in $rc, its output in $TEST_TMP/WHAT.out
run() {
	local what=$1
	shift
	rc=0
	"$@" >"$TEST_TMP/$what.out" 2>&1 || rc=$?
}

# --- an empty database ----------------------------------------------------
run empty-status "$OUTBOXCTL" -c "$ini" status
check "status on an empty database: exit 78" test "$rc" = 78
check "status on an empty database names V1" grep -q '"V1__core_schema.sql" (core)' "$TEST_TMP/empty-status.out"
check "status on an empty database names the newest" grep -qF "\"$newest\" (core)" "$TEST_TMP/empty-status.out"
check "status on an empty database says to migrate" grep -q 'run outboxctl migrate' "$TEST_TMP/empty-status.out"
rc=0
"$OUTBOXCTL" -c "$ini" status --json >"$TEST_TMP/empty-status-json.out" 2>/dev/null || rc=$?
check "status --json on an empty database: exit 78" test "$rc" = 78
check "status --json on an empty database: the errors name V1" \
	test "$(jq -r '.errors[0]' "$TEST_TMP/empty-status-json.out" 2>/dev/null | grep -c 'V1__core_schema.sql')" = 1
check "status --json on an empty database: counts are null" \
	test "$(jq -r '.totals.jobs' "$TEST_TMP/empty-status-json.out" 2>/dev/null)" = null
run empty-migrate "$OUTBOXCTL" -c "$ini" migrate
check "migrate works on an empty database" test "$rc" = 0
check "migrate prints no LOG line by default" sh -c "! grep -q 'LOG:' '$TEST_TMP/empty-migrate.out'"
check "migrate says what it did" grep -q '^applied [0-9]* migrations' "$TEST_TMP/empty-migrate.out"
run migrated-status "$OUTBOXCTL" -c "$ini" status
check "status after migrate: exit 0" test "$rc" = 0
check "status after migrate prints no LOG line" sh -c "! grep -q 'LOG:' '$TEST_TMP/migrated-status.out'"

# --- one migration behind: migrated by a build that lacked the newest -----
db=$(newdb outbox_test_schema_check)
write_ini "$ini" "$db"
cp -r "$OUTBOX_SRCDIR/migrations" "$TEST_TMP/older"
rm "$TEST_TMP/older/$newest"
OUTBOX_MIGRATIONS_DIR="$TEST_TMP/older" "$OUTBOXCTL" -c "$ini" migrate >/dev/null
for role in all relay consumer; do
	run "outboxd-$role" timeout 60 "$OUTBOXD" -c "$ini" --role "$role"
	check "outboxd --role $role one migration behind: exit 78" test "$rc" = 78
	check "outboxd --role $role names the missing migration" grep -qF "\"$newest\" (core)" "$TEST_TMP/outboxd-$role.out"
	check "outboxd --role $role says to run outboxctl migrate" grep -q 'run outboxctl migrate' "$TEST_TMP/outboxd-$role.out"
	check "outboxd --role $role names only that one" test "$(grep -o '"V[0-9]*__[a-z_]*\.sql"' "$TEST_TMP/outboxd-$role.out" | sort -u | wc -l)" = 1
done
for cmd in "status" "dead" "prune --dry-run" "pause news" "redrive 00" \
	"enqueue --type t --destination news --identity {} --payload {}"; do
	name=ctl-${cmd%% *}
	# shellcheck disable=SC2086 # the command's words
	run "$name" "$OUTBOXCTL" -c "$ini" $cmd
	check "outboxctl $cmd one migration behind: exit 78" test "$rc" = 78
	check "outboxctl $cmd names the missing migration" grep -qF "\"$newest\" (core)" "$TEST_TMP/$name.out"
done
check "pause did nothing" test "$(psql_q "$db" "SELECT count(*) FROM outbox.paused_destinations")" = 0
check "enqueue wrote nothing" test "$(psql_q "$db" "SELECT count(*) FROM outbox.jobs")" = 0
run remigrate "$OUTBOXCTL" -v -c "$ini" migrate
check "migrate applies the missing one" grep -q 'applied 1 migrations' "$TEST_TMP/remigrate.out"
check "migrate -v logs each file it applies" grep -qF "LOG: applied migration \"$newest\"" "$TEST_TMP/remigrate.out"
run dead-after "$OUTBOXCTL" -c "$ini" dead
check "dead after migrate: exit 0" test "$rc" = 0

# --- plugin migrations count only for plugins the file names --------------
sed 's/^plugin = example$/plugin = news_llm/' "$ini" >"$TEST_TMP/llm.ini"
run llm-dead "$OUTBOXCTL" -c "$TEST_TMP/llm.ini" dead
check "a named plugin's unapplied migration: exit 78" test "$rc" = 78
check "a named plugin's unapplied migration is named" grep -q '"V1__extractions.sql" (news_llm)' "$TEST_TMP/llm-dead.out"
run llm-migrate "$OUTBOXCTL" -c "$TEST_TMP/llm.ini" migrate
run llm-dead2 "$OUTBOXCTL" -c "$TEST_TMP/llm.ini" dead
check "after migrate the plugin's schema is accepted" test "$rc" = 0
run example-dead "$OUTBOXCTL" -c "$ini" dead
check "other plugins' migrations do not count for this file" test "$rc" = 0

# --- a newer schema than this build knows ---------------------------------
psql_q "$db" "INSERT INTO outbox.schema_migrations (component, version, name, checksum)
              VALUES ('core', 999999, 'V999999__from_the_future.sql', 'x')" >/dev/null
run newer "$OUTBOXCTL" -c "$ini" dead
check "a newer schema is accepted" test "$rc" = 0
check "a newer schema is warned about, naming the migration" grep -q 'WARNING: .*"V999999__from_the_future.sql" (core)' "$TEST_TMP/newer.out"
finish
