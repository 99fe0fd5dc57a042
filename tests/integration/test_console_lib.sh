# tests/integration/test_console_lib.sh: helpers for the console tests
# (docs/console.md), sourced after tests/harness/testlib.sh,
# tests/integration/test_consumer_lib.sh and tests/integration/test_ops_lib.sh.
#
#   console_setup NAME        fresh database and $INI with the destinations
#                             news, price and explanation (recorder plugin:
#                             a job of news fails PERMANENT in its first
#                             generation, so it dies and a redrive succeeds)
#                             and [console] listen on a free port with
#                             token_env = OUTBOX_CONSOLE_TOKEN; sets DB, INI,
#                             CPORT, CURL_BASE, TOKEN (exported as that variable)
#   console_start LOG         outboxd --role all; waits for the console; sets OPID
#   cget PATH [CURL_ARGS...]  GET with the bearer token; prints the body
#   code METHOD PATH [ARGS...] the HTTP status of a request without credentials
#   csrf_token                the X-CSRF-Token a bearer request is given

console_setup() {
	DB=$(newdb "console_${1}_$$")
	INI="$TEST_TMP/relay.ini"
	CPORT=$(free_port)
	TOKEN="tok-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
	export OUTBOX_CONSOLE_TOKEN=$TOKEN
	CURL_BASE="http://127.0.0.1:$CPORT"
	ops_ini "$INI" "$DB"
	ops_dest "$INI" news "plugin.fail_before_generation = 1"
	ops_dest "$INI" price
	ops_dest "$INI" explanation
	cat >>"$INI" <<INI

[console]
listen = 127.0.0.1:$CPORT
token_env = OUTBOX_CONSOLE_TOKEN
INI
	cp "$INI" "$TEST_TMP/ctl.ini"
	"$OUTBOXCTL" -c "$INI" migrate >/dev/null 2>&1
	"$OUTBOXCTL" -c "$INI" create-queues >/dev/null
	psql_q "$DB" "CREATE TABLE public.recorder_runs (job_id text NOT NULL,
		attempt integer NOT NULL, generation integer NOT NULL)" >/dev/null
}

console_up() {
	curl -fsS -o /dev/null "$CURL_BASE/login"
}

console_start() {
	ops_start "$INI" "$1"
	wait_for 20 console_up
}

cget() {
	local path=$1
	shift
	curl -sS -H "Authorization: Bearer $TOKEN" "$@" "$CURL_BASE$path"
}

code() {
	local method=$1 path=$2
	shift 2
	curl -sS -o /dev/null -w '%{http_code}' -X "$method" "$@" "$CURL_BASE$path"
}

csrf_token() {
	curl -sS -o /dev/null -D - -H "Authorization: Bearer $TOKEN" "$CURL_BASE/" |
		tr -d '\r' | sed -n 's/^[Xx]-[Cc][Ss][Rr][Ff]-[Tt]oken: //p'
}
