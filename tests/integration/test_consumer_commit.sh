#!/bin/bash
# The completion transaction belongs to the host.
# (a) a plugin running transaction control through tx_exec (COMMIT,
#     ROLLBACK, BEGIN, SAVEPOINT, even behind a comment) is refused: its
#     writes are rolled back and the job is DEAD 'PERMANENT' with a
#     last_error saying the plugin tried to end the transaction;
# (b) a price job whose window is corrected while execute() runs goes DEAD
#     'STALE' at once (its writes discarded, its message deleted) instead of
#     staying CLAIMED until its lease expires; a handler failing on such a
#     job records 'STALE', not 'PERMANENT'.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws

setup_db "consumer_commit_$$"
make_queues "ccommit-$$" 10 2
dead_as() { [ "$(psql_q "$DB" "SELECT status || ':' || coalesce(dead_reason, '-') FROM outbox.jobs WHERE job_id = '$1'")" = "$2" ]; }
last_error() { psql_q "$DB" "SELECT last_error FROM outbox.jobs WHERE job_id = '$1'"; }

# (a) one consumer per statement
n=0
for sql in "COMMIT" "rollback" "BEGIN" "SAVEPOINT s1" "/* hidden */ commit" "END"; do
	n=$((n + 1))
	consumer_ini "$TEST_TMP/a$n.ini" "$DB" news "$QURL" "$DLQURL" "plugin.commit_sql = $sql"
	J=$(enqueue_job "$DB" news "$n")
	send_body "$QURL" "$(event_body "$DB" "$J")"
	start_consumer "$TEST_TMP/a$n.ini" "$TEST_TMP/consumer.log"
	check "(a) '$sql': the job is DEAD PERMANENT" wait_for 20 dead_as "$J" DEAD:PERMANENT
	check "(a) '$sql': last_error names it" eval '[[ "$(last_error "$J")" == *"the plugin tried to end the transaction"* ]]'
	check "(a) '$sql': the plugin's row was rolled back" [ "$(recorder_rows "$DB" "$J")" = 0 ]
	check "(a) '$sql': message deleted" wait_for 10 depth_is "$QURL" 0
	check "(a) '$sql': consumer exits 0" stop_consumer
done

# (a2) statements that hide transaction control behind ';' or a nested
# comment, or run a second statement, are refused as well; the other job of
# the same receive batch succeeds once; a ';' inside literals, quoted
# identifiers, dollar quotes and comments is allowed.
m=0
a2_case() { # SQL VERDICT(refused|ok)
	local sql=$1 want=$2 J G
	m=$((m + 1))
	printf '%s\n' "$sql" >"$TEST_TMP/a2-$m.sql"
	J=$(enqueue_job "$DB" news "a2-bad-$m")
	G=$(enqueue_job "$DB" news "a2-good-$m")
	WORKERS=1 consumer_ini "$TEST_TMP/a2-$m.ini" "$DB" news "$QURL" "$DLQURL" "plugin.commit_sql_file = $TEST_TMP/a2-$m.sql
plugin.commit_sql_job = $J"
	send_body "$QURL" "$(event_body "$DB" "$J")"
	send_body "$QURL" "$(event_body "$DB" "$G")"
	start_consumer "$TEST_TMP/a2-$m.ini" "$TEST_TMP/consumer.log"
	if [ "$want" = refused ]; then
		check "(a2) '$sql': the job is DEAD PERMANENT" wait_for 20 dead_as "$J" DEAD:PERMANENT
		check "(a2) '$sql': last_error names it" eval '[[ "$(last_error "$J")" == *"the plugin tried to end the transaction"* ]]'
		check "(a2) '$sql': the plugin's row was rolled back" [ "$(recorder_rows "$DB" "$J")" = 0 ]
	else
		check "(a2) '$sql': allowed, the job succeeds" wait_for 20 status_is "$DB" "$J" SUCCEEDED
		check "(a2) '$sql': one row" [ "$(recorder_rows "$DB" "$J")" = 1 ]
	fi
	check "(a2) '$sql': the other job succeeds" wait_for 20 status_is "$DB" "$G" SUCCEEDED
	check "(a2) '$sql': messages deleted" wait_for 10 depth_is "$QURL" 0
	check "(a2) '$sql': consumer exits 0" stop_consumer
	check "(a2) '$sql': the other job's row committed once" [ "$(recorder_rows "$DB" "$G")" = 1 ]
}
for sql in ";COMMIT" "; COMMIT" "/* /* */ */ COMMIT" ";;ROLLBACK" "SELECT 1; COMMIT" \
	"SELECT 'it''s'; COMMIT" "SELECT \$\$;\$\$; COMMIT" "SELECT E'\\'';'; COMMIT" \
	"SELECT 'a\\'; COMMIT; SELECT ''"; do
	a2_case "$sql" refused
done
a2_case "SELECT 'a;b' AS s, E'c\\';d' AS e, \$q\$;COMMIT\$q\$ AS d, 1 AS \"x;y\" /* ; /* ; */ ; */ ; -- ; COMMIT" ok

# (c) a commit() that hits an SQL error but returns OK poisons only its own
# job: the other jobs of the receive batch succeed exactly once, the
# poisoned one is rolled back to its savepoint and retried with a backoff.
P=$(enqueue_job "$DB" news c-poison)
G1=$(enqueue_job "$DB" news c-good-1)
G2=$(enqueue_job "$DB" news c-good-2)
G3=$(enqueue_job "$DB" news c-good-3)
WORKERS=1 consumer_ini "$TEST_TMP/c.ini" "$DB" news "$QURL" "$DLQURL" "plugin.poison_job = $P"
for J in "$G1" "$P" "$G2" "$G3"; do
	send_body "$QURL" "$(event_body "$DB" "$J")"
done
poison_retried() {
	[ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE job_id = '$P'
		AND status = 'PENDING' AND attempt_count >= 1 AND next_attempt_at > now()
		AND last_error LIKE 'commit() returned OK after an SQL error: %division by zero%'")" = 1 ]
}
start_consumer "$TEST_TMP/c.ini" "$TEST_TMP/consumer.log"
for J in "$G1" "$G2" "$G3"; do
	check "(c) good job $J succeeds" wait_for 20 status_is "$DB" "$J" SUCCEEDED
done
check "(c) the poisoned job is PENDING with a backoff and its error" wait_for 20 poison_retried
check "(c) consumer exits 0" stop_consumer
for J in "$G1" "$G2" "$G3"; do
	check "(c) good job $J committed once" [ "$(recorder_rows "$DB" "$J")" = 1 ]
done
check "(c) the poisoned job's row was rolled back" [ "$(recorder_rows "$DB" "$P")" = 0 ]
check "(c) not DEAD" [ "$(job_status "$DB" "$P")" != DEAD ]
sqs PurgeQueue "{\"QueueUrl\":\"$QURL\"}" >/dev/null

# (b) price jobs of window (SYM, 2026-01-01 00:00Z), generation 1
psql_q "$DB" "INSERT INTO outbox.price_windows (symbol, window_start, artifact_key, artifact_sha256)
	VALUES ('SYM', '2026-01-01T00:00:00Z', 'k', repeat('a', 64))" >/dev/null
price_job() { # N: a price job of destination news; prints its job_id
	local id
	id=$(printf 'price-%s-%s' "$1" "$$" | sha256sum | cut -c1-64)
	psql_q "$DB" "INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload,
		window_symbol, window_start, window_generation)
		VALUES ('$id', 'price', 'news', '{}', '{}', 'SYM', '2026-01-01T00:00:00Z', 1)" >/dev/null
	echo "$id"
}
price_body() {
	printf '{"event_id":"price:%s:0","job_id":"%s","job_type":"price","destination":"news","redrive_generation":0,"window_generation":1}' "$1" "$1"
}
correct_window() {
	psql_q "$DB" "UPDATE outbox.price_windows SET generation = generation + 1,
		corrected_at = now() WHERE symbol = 'SYM'" >/dev/null
}
running() { [ "$(executions "$1")" = 1 ]; }

LEASE=60 consumer_ini "$TEST_TMP/b.ini" "$DB" news "$QURL" "$DLQURL" "plugin.sleep_ms = 3000"
JP=$(price_job 1)
send_body "$QURL" "$(price_body "$JP")"
start_consumer "$TEST_TMP/b.ini" "$TEST_TMP/consumer.log"
check "(b) the handler started" wait_for 20 running "$JP"
correct_window
check "(b) corrected during execute: DEAD STALE at once" wait_for 15 dead_as "$JP" DEAD:STALE
check "(b) the handler's row was discarded" [ "$(recorder_rows "$DB" "$JP")" = 0 ]
check "(b) message deleted" wait_for 10 depth_is "$QURL" 0
check "(b) not reported as a lost claim" eval '! grep -q "lost the claim.*job_id=$JP" "$TEST_TMP/consumer.log"'
check "(b) consumer exits 0" stop_consumer

LEASE=60 consumer_ini "$TEST_TMP/f.ini" "$DB" news "$QURL" "$DLQURL" "plugin.sleep_ms = 3000
plugin.verdict = fail"
JF=$(price_job 2)
psql_q "$DB" "UPDATE outbox.jobs SET window_generation = (SELECT generation FROM outbox.price_windows
	WHERE symbol = 'SYM') WHERE job_id = '$JF'" >/dev/null
gen=$(psql_q "$DB" "SELECT generation FROM outbox.price_windows WHERE symbol = 'SYM'")
send_body "$QURL" "$(price_body "$JF" | sed "s/\"window_generation\":1/\"window_generation\":$gen/")"
start_consumer "$TEST_TMP/f.ini" "$TEST_TMP/consumer.log"
check "(b) failing handler started" wait_for 20 running "$JF"
correct_window
check "(b) a failure of a corrected price job records STALE" wait_for 15 dead_as "$JF" DEAD:STALE
check "(b) consumer exits 0 again" stop_consumer
finish
