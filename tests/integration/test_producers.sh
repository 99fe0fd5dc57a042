#!/usr/bin/env bash
# test_producers.sh: producers in other languages, with the examples of
# docs/producers.md exactly as written there (SQL, Python with psycopg2,
# Node with pg, C with liboutbox built through pkg-config).
#
# Python and Node each: enqueue in a transaction that rolls back -> no
# rows; enqueue twice -> one job and one event.  The same identity through
# C, outboxctl and SQL -> one job.  Then a real outboxd runs every job to
# SUCCEEDED, and the handler's log line shows the producer's traceparent.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
require_pg
require_aws
# Debian's python3-psycopg2 is for Debian's python3, which a pyenv or venv
# on PATH may hide.
PY=
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import psycopg2' 2>/dev/null; then PY=$py; break; fi
done
[ -n "$PY" ] || { echo "SKIP: python3-psycopg2 is not installed"; exit 77; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node or npm not found"; exit 77; }
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config not found"; exit 77; }
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
node_pg_install || { echo "FAIL: could not install pg from npm"; exit 1; }
export NODE_PATH="$OUTBOX_TOOLS_DIR/node_modules"

# The examples, cut out of the documentation.
example() {
	awk -v name="$1" '
		$0 == "<!-- example: " name " -->" { want = 1; next }
		want && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$OUTBOX_SRCDIR/docs/producers.md" >"$TEST_TMP/$1"
	[ -s "$TEST_TMP/$1" ] || { echo "FAIL: no example $1 in docs/producers.md"; exit 1; }
}
for f in enqueue.sql producer.py producer.js producer.c; do example "$f"; done

DB=$(newdb "outbox_test_producers_$$")
export DATABASE_URL=$DB
make_queues "producers-$$" 5 5
tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
consumer_ini "$TEST_TMP/relay.ini" "$DB" mail "$QURL" "$DLQURL" "plugin.log_info = sending"
ctl() { "$OUTBOXCTL" -c "$TEST_TMP/relay.ini" "$@"; }
ctl migrate >/dev/null 2>&1
psql_q "$DB" "CREATE TABLE signups (user_id bigint PRIMARY KEY, signed_up_at timestamptz NOT NULL DEFAULT now());
	CREATE TABLE public.recorder_runs (job_id text NOT NULL, attempt integer NOT NULL, generation integer NOT NULL)" >/dev/null
rows() { # jobs/events/signups of user $1
	psql_q "$DB" "SELECT (SELECT count(*) FROM outbox.jobs WHERE identity->>'user_id' = '$1') || '/' ||
		(SELECT count(*) FROM outbox.outbox_events e JOIN outbox.jobs j USING (job_id) WHERE j.identity->>'user_id' = '$1') || '/' ||
		(SELECT count(*) FROM signups WHERE user_id = $1)"
}
job_of() { psql_q "$DB" "SELECT outbox.job_id('{\"type\":\"welcome_email\",\"user_id\":$1}')"; }

# --- Python and Node: rollback, then twice --------------------------------
producer_checks() { # LANGUAGE USER_ID COMMAND...
	local lang=$1 user=$2 rc=0 want
	shift 2
	want=$(job_of "$user")
	"$@" "$user" --fail >"$TEST_TMP/$lang.fail.out" 2>&1 || rc=$?
	check "$lang: a failing transaction exits non-zero" test "$rc" -ne 0
	check "$lang: the rollback leaves no job, no event, no signup" test "$(rows "$user")" = "0/0/0"
	check "$lang: first enqueue creates the job" test "$("$@" "$user")" = "$want welcome_email:$want:0 true"
	check "$lang: second enqueue is a no-op with the same ids" test "$("$@" "$user")" = "$want welcome_email:$want:0 false"
	check "$lang: one job, one event, one signup" test "$(rows "$user")" = "1/1/1"
}
producer_checks python 1 "$PY" "$TEST_TMP/producer.py"
producer_checks node 2 node "$TEST_TMP/producer.js"

# --- C through the installed liboutbox and pkg-config ---------------------
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -s -C "$OUTBOX_BUILDDIR" install DESTDIR="$TEST_TMP/root" >"$TEST_TMP/install.log" 2>&1 || {
	cat "$TEST_TMP/install.log"; echo "FAIL: make install DESTDIR failed"; exit 1; }
pc=$(find "$TEST_TMP/root" -name liboutbox.pc -print -quit)
[ -n "$pc" ] || { echo "FAIL: liboutbox.pc was not installed"; exit 1; }
# As if installed in its prefix: point the .pc file's own paths into
# DESTDIR (a sysroot would move libpq's and jansson's paths too).
mkdir -p "$TEST_TMP/pc"
sed -E "s#^(prefix|exec_prefix|libdir|includedir)=/#\1=$TEST_TMP/root/#" "$pc" >"$TEST_TMP/pc/liboutbox.pc"
export PKG_CONFIG_PATH="$TEST_TMP/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
check "pkg-config --libs liboutbox names libpq" grep -qw -- -lpq <<<"$(pkg-config --libs liboutbox)"
# The build's own CFLAGS/LDFLAGS only matter for a sanitizer build, whose
# liboutbox needs the sanitizer runtime linked into the program.
# shellcheck disable=SC2046,SC2086 # word lists
check "the C example builds with pkg-config's flags alone" \
	${CC:-cc} -std=c11 -Wall -Wextra -Werror ${OUTBOX_BUILD_CFLAGS:-} -o "$TEST_TMP/producer" \
	"$TEST_TMP/producer.c" $(pkg-config --cflags --libs liboutbox) ${OUTBOX_BUILD_LDFLAGS:-}
libdir=$(dirname "$(find "$TEST_TMP/root" -name 'liboutbox.so' -print -quit)")
cprod() { LD_LIBRARY_PATH="$libdir" "$TEST_TMP/producer" "$@"; }
producer_checks c 3 cprod

# --- one identity, three callers: SQL, C, outboxctl -> one job -------------
psql -X -q -v ON_ERROR_STOP=1 -At -d "$DB" -f "$TEST_TMP/enqueue.sql" >"$TEST_TMP/sql.out"
j42=$(job_of 42)
check "SQL example creates the job" test "$(cat "$TEST_TMP/sql.out")" = "$j42|welcome_email:$j42:0|t"
check "C finds it" test "$(cprod 42)" = "$j42 welcome_email:$j42:0 false"
check "outboxctl finds it" test "$(ctl enqueue --type welcome_email --destination mail \
	--identity '{"type":"welcome_email","user_id":42}' --payload '{}')" = \
	"$j42 welcome_email:$j42:0 (already enqueued)"
check "python finds it" test "$("$PY" "$TEST_TMP/producer.py" 42)" = "$j42 welcome_email:$j42:0 false"
check "one row for three callers" test "$(rows 42)" = "1/1/1"

# --- traced job, then everything through a real outboxd --------------------
j99=$(ctl --json enqueue --type welcome_email --destination mail --traceparent "$tp" \
	--identity '{"type":"welcome_email","user_id":99}' --payload '{}' | jq -r .job_id)
"$OUTBOXD" -c "$TEST_TMP/relay.ini" --role all >"$TEST_TMP/outboxd.log" 2>&1 &
opid=$!
trap 'kill -TERM $opid 2>/dev/null || true; wait $opid 2>/dev/null || true; rm -rf "$TEST_TMP"' EXIT
all_done() { [ "$(psql_q "$DB" "SELECT count(*) FILTER (WHERE status = 'SUCCEEDED') || '/' || count(*) FROM outbox.jobs")" = "5/5" ]; }
check "every job runs to SUCCEEDED through outboxd" wait_for 60 all_done
check "each ran once" test "$(psql_q "$DB" "SELECT count(*) || '/' || count(DISTINCT job_id) FROM public.recorder_runs")" = "5/5"
check "the handler's log line carries the producer's traceparent" \
	grep -q "sending dest=mail plugin=recorder job=$j99 traceparent=$tp" "$TEST_TMP/outboxd.log"
check "untraced jobs log no traceparent" \
	test "$(grep -c 'sending dest=mail plugin=recorder job=[0-9a-f]*$' "$TEST_TMP/outboxd.log")" = 4
kill -TERM $opid
check "outboxd exits 0" wait $opid
finish
