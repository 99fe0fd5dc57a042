# tests/harness/testlib.sh: helpers for shell integration tests.
# Source it at the top of a test; it sets -eu and defines:
#   require_pg / require_aws   exit 77 (SKIP) without the test services
#   newdb NAME                 fresh, migrated database; prints its conninfo
#   write_ini FILE CONNINFO    a relay.ini for that database (3 destinations)
#   psql_q CONNINFO SQL        one value, unaligned
#   check DESCRIPTION CMD...   runs CMD; counts and prints ok/not ok
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

finish() {
	echo "$checks_passed passed, $checks_failed failed"
	[ "$checks_failed" -eq 0 ]
}
