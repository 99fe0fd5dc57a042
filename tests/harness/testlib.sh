# tests/harness/testlib.sh: helpers for shell integration tests.
# Source it at the top of a test; it sets -eu and defines:
#   require_pg / require_aws   exit 77 (SKIP) without the test services
#   newdb NAME                 fresh, migrated database; prints its conninfo
#   write_ini FILE CONNINFO    a relay.ini for that database (3 destinations)
#   psql_q CONNINFO SQL        one value, unaligned
#   check DESCRIPTION CMD...   runs CMD; counts and prints ok/not ok
#   wait_for SECONDS CMD...    polls CMD every 0.1 s until it succeeds; 1 after
#                              SECONDS (every test that polls uses these two)
#   wait_sql CONNINFO SQL EXPECTED SECONDS
#                              polls SQL until it prints EXPECTED; 1 after
#                              SECONDS, saying what it got
#   private_pg_start           a cluster of the test's own, for tests that kill
#                              PostgreSQL (PRIV_PG_*); private_pg_ctl, private_pg_stop
#   finish                     prints the totals; exits 1 if any check failed
set -eu

: "${OUTBOX_SRCDIR:?}" "${OUTBOX_BUILDDIR:?}"
OUTBOXCTL="$OUTBOX_BUILDDIR/outboxctl"
OUTBOXD="$OUTBOX_BUILDDIR/outboxd"
export OUTBOX_MIGRATIONS_DIR="$OUTBOX_SRCDIR/migrations"
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/outbox-test.XXXXXX")
trap 'rm -rf "$TEST_TMP"' EXIT
checks_passed=0
checks_failed=0

require_pg() {
	if [ -z "${OUTBOX_TEST_PG_CONNINFO:-}" ]; then
		echo "SKIP: OUTBOX_TEST_PG_CONNINFO is not set (run tests/run.sh)"
		exit 77
	fi
}

require_aws() {
	if [ -z "${OUTBOX_TEST_AWS_ENDPOINT:-}" ]; then
		echo "SKIP: OUTBOX_TEST_AWS_ENDPOINT is not set (run tests/run.sh)"
		exit 77
	fi
}

psql_q() {
	psql -X -q -v ON_ERROR_STOP=1 -At -d "$1" -c "$2"
}

newdb() {
	PGOPTIONS="-c client_min_messages=warning" psql_q "$OUTBOX_TEST_PG_CONNINFO" "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)" >/dev/null
	psql_q "$OUTBOX_TEST_PG_CONNINFO" "CREATE DATABASE \"$1\"" >/dev/null
	echo "postgresql://postgres@127.0.0.1:$OUTBOX_TEST_PG_PORT/$1"
}

write_ini() {
	local endpoint=${OUTBOX_TEST_AWS_ENDPOINT:-http://127.0.0.1:9}
	cat >"$1" <<INI
[database]
conninfo = $2

[aws]
region = us-east-1
endpoint_url = $endpoint

[s3]
bucket = outbox-test
endpoint_url = $endpoint

[destination:news]
queue_url = $endpoint/000000000000/news
plugin = example

[destination:price]
queue_url = $endpoint/000000000000/price
plugin = example

[destination:explanation]
queue_url = $endpoint/000000000000/explanation
plugin = example
INI
}

check() {
	local what=$1
	shift
	if "$@"; then
		checks_passed=$((checks_passed + 1))
		echo "ok - $what"
	else
		checks_failed=$((checks_failed + 1))
		echo "not ok - $what"
	fi
}

wait_for() {
	local deadline=$(( SECONDS + $1 ))
	shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.1
	done
}

wait_sql() {
	local deadline=$(( SECONDS + $4 )) v=""
	while :; do
		v=$(psql_q "$1" "$2" 2>/dev/null) || v="(query failed)"
		[ "$v" = "$3" ] && return 0
		[ $SECONDS -lt $deadline ] || break
		sleep 0.1
	done
	echo "# wait_sql: got '$v', expected '$3' after $4 s: $2" >&2
	return 1
}

# A throwaway cluster of the test's own (services.sh's pg_start), for tests
# that stop or kill PostgreSQL: the shared one must never be.  Sets
# PRIV_PG_DATA, PRIV_PG_PORT and PRIV_PG_CONNINFO; the shared cluster's
# OUTBOX_TEST_PG_* keep their values.  Returns 1 if it could not start.
private_pg_start() {
	local shared_data=${OUTBOX_TEST_PG_DATA:-} shared_conninfo=${OUTBOX_TEST_PG_CONNINFO:-}
	local shared_port=${OUTBOX_TEST_PG_PORT:-}
	. "$OUTBOX_SRCDIR/tests/harness/services.sh"
	pg_start || return 1
	PRIV_PG_DATA=$OUTBOX_TEST_PG_DATA PRIV_PG_PORT=$OUTBOX_TEST_PG_PORT
	PRIV_PG_CONNINFO=$OUTBOX_TEST_PG_CONNINFO
	export OUTBOX_TEST_PG_DATA=$shared_data OUTBOX_TEST_PG_CONNINFO=$shared_conninfo
	export OUTBOX_TEST_PG_PORT=$shared_port
}

# private_pg_ctl ARGS...: the private cluster's pg_ctl, as postgres, logging
# to the server log beside its data directory.
private_pg_ctl() {
	runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$PRIV_PG_DATA" \
		-l "$(dirname "$PRIV_PG_DATA")/server.log" "$@"
}

# Stops the private cluster (immediate) and removes it; a no-op without one.
private_pg_stop() {
	[ -n "${PRIV_PG_DATA:-}" ] || return 0
	private_pg_ctl -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$(dirname "$PRIV_PG_DATA")"
	PRIV_PG_DATA=
}

# log_tails N: the last N lines of every log in TEST_TMP, as comments; for
# a cleanup to call when the test failed, since CI keeps only the output.
log_tails() {
	local f
	for f in "$TEST_TMP"/*.log; do
		[ -f "$f" ] || continue
		echo "# --- the last $1 lines of $(basename "$f")"
		tail -n "$1" "$f" | sed 's/^/# /'
	done
}

finish() {
	echo "$checks_passed passed, $checks_failed failed"
	[ "$checks_failed" -eq 0 ]
}
