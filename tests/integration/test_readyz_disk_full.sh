#!/bin/bash
# test_readyz_disk_full.sh: /readyz fails when the database's disk is full.
# The database lives in a tablespace on a small tmpfs; once a filler file
# takes every free byte, PostgreSQL still answers every read, but nothing
# can be written there.  /readyz must say so (503 "database cannot write:
# ..."), and turn 200 again once the space is back.  Needs root (mount):
# exit 77 without it.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg
require_aws

MNT="$TEST_TMP/disk"
chmod 755 "$TEST_TMP" # the postgres user must reach the tablespace
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=32m tmpfs "$MNT" 2>/dev/null; then
	echo "SKIP: cannot mount a tmpfs (needs root)"
	exit 77
fi
name="outbox_test_full_$$"
opid=""
cleanup() {
	set +e
	[ -n "$opid" ] && kill "$opid" 2>/dev/null && wait "$opid" 2>/dev/null
	[ -n "${READER_PID:-}" ] && kill "$READER_PID" 2>/dev/null
	if [ "$checks_failed" -ne 0 ] && [ -f "$TEST_TMP/outboxd.log" ]; then
		echo "# outboxd's log:"
		sed 's/^/# /' "$TEST_TMP/outboxd.log" | tail -n 40
	fi
	psql_q "$OUTBOX_TEST_PG_CONNINFO" "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null 2>&1
	psql_q "$OUTBOX_TEST_PG_CONNINFO" "DROP TABLESPACE IF EXISTS $name" >/dev/null 2>&1
	umount "$MNT"
	rm -rf "$TEST_TMP"
}
trap cleanup EXIT
chown postgres: "$MNT"
psql_q "$OUTBOX_TEST_PG_CONNINFO" "CREATE TABLESPACE $name LOCATION '$MNT'" >/dev/null
psql_q "$OUTBOX_TEST_PG_CONNINFO" "CREATE DATABASE $name TABLESPACE $name" >/dev/null
DB="postgresql://postgres@127.0.0.1:$OUTBOX_TEST_PG_PORT/$name"
write_ini "$TEST_TMP/relay.ini" "$DB"
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
port=$(free_port)
printf '\n[metrics]\nlisten = 127.0.0.1:%s\n' "$port" >>"$TEST_TMP/relay.ini"
"$OUTBOXCTL" -c "$TEST_TMP/relay.ini" migrate >/dev/null
URL="http://127.0.0.1:$port"

# poll_until SECONDS CMD...: CMD succeeds within SECONDS
poll_until() {
	local deadline=$(( SECONDS + $1 ))
	shift
	until "$@"; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.2
	done
}
status_is() { test "$(curl -s -o "$TEST_TMP/body" -w '%{http_code}' "$URL/readyz")" = "$1"; }
"$OUTBOXD" -c "$TEST_TMP/relay.ini" --role relay >"$TEST_TMP/outboxd.log" 2>&1 &
opid=$!
check "/readyz is 200 with room on the disk" poll_until 60 status_is 200
# A session opened before the disk fills, for the read below: a backend
# that starts on a full disk may have to rewrite the database's relation
# cache init file (removed whenever a catalog's own pg_class row changes,
# e.g. by autovacuum of pg_class) and then dies with FATAL "could not write
# init file", which says nothing about reads; outboxd's sessions are open
# already, as this one is.
coproc READER { psql -XAtq "$DB" 2>&1; }
reader_query() { # SQL: one line of its answer, within 10 s
	local line
	echo "$1;" >&"${READER[1]}" && IFS= read -r -t 10 line <&"${READER[0]}" && echo "$line"
}
# reads_answer EXPECTED: the reader's count of jobs is EXPECTED (what it
# said otherwise goes to the log)
reads_answer() {
	local got
	got=$(reader_query "SELECT count(*) FROM outbox.jobs")
	[ "$got" = "$1" ] || { echo "# the reader said: ${got:-nothing within 10 s}"; return 1; }
}
# The coprocess starts psql; its backend must be up, with the table's
# catalog entries cached, before the disk fills (else it is the race the
# comment above names, not a read).
check "the reader's session is open" reads_answer 0

# Every free byte of the database's disk taken (dd stops at ENOSPC).  A
# session of the database may free a few pages a moment later (a temporary
# file of a query the pruner or the write check was running, or a relation
# cache file it failed to write): each wait tops the filler up again before
# it looks, so the disk is full whenever /readyz is asked.
fill_disk() {
	dd if=/dev/zero of="$MNT/filler" bs=4k oflag=append conv=notrunc >/dev/null 2>&1 || true
}
disk_full() { fill_disk; test "$(df --output=avail -k "$MNT" | tail -1 | tr -d ' ')" -lt 64; }
# 503 for the disk, not for a lane that lost its connection meanwhile.
full_and_503() { fill_disk; status_is 503 && grep -q '^database cannot write: ' "$TEST_TMP/body"; }
check "the disk is full" poll_until 60 disk_full
check "reads still work" reads_answer 0
check "/readyz is 503 on the full disk" poll_until 60 full_and_503
check "/readyz says the database cannot write" grep -q '^database cannot write: ' "$TEST_TMP/body"
echo "# /readyz: $(cat "$TEST_TMP/body")"
rm -f "$MNT/filler"
check "/readyz is 200 again once there is room" poll_until 60 status_is 200
check "outboxd is still running" kill -0 "$opid"
finish
