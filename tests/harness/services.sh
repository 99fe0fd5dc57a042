# tests/harness/services.sh: start and stop the real services the tests use.
#
# Source it, then call services_start; it exports
#   OUTBOX_TEST_PG_CONNINFO   libpq URI of a throwaway cluster's "postgres" db
#   OUTBOX_TEST_PG_PORT, OUTBOX_TEST_PG_DATA, OUTBOX_TEST_PG_BIN
#   OUTBOX_TEST_AWS_ENDPOINT  http://127.0.0.1:PORT of fauxqs (SQS + S3)
#   AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_REGION test credentials
# services_stop stops both by PID and removes the cluster.  Every server is
# bound to 127.0.0.1 only.

: "${OUTBOX_PG_BIN:=/usr/lib/postgresql/15/bin}"
: "${OUTBOX_TOOLS_DIR:=/var/tmp/outboxd-test-tools}"
FAUXQS_VERSION=1.9.2

# Prints a TCP port on 127.0.0.1 that nothing listens on, below the
# kernel's ephemeral range (where a client connection could take it between
# this check and the server's bind).
free_port() {
	local port low
	low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	for _ in $(seq 1 200); do
		port=$(( 20000 + RANDOM % (low - 20000) ))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	echo "free_port: no free port found" >&2
	return 1
}

# Installs node-postgres ("pg", for tests/integration/test_producers.sh)
# into OUTBOX_TOOLS_DIR once (npm, pinned version); tests may run in
# parallel, hence the lock.
NODE_PG_VERSION=8.23.1
node_pg_install() {
	mkdir -p "$OUTBOX_TOOLS_DIR"
	(
		flock 9
		if [ -f "$OUTBOX_TOOLS_DIR/node_modules/pg/package.json" ] &&
		   grep -q "\"version\": \"$NODE_PG_VERSION\"" "$OUTBOX_TOOLS_DIR/node_modules/pg/package.json"; then
			exit 0
		fi
		cd "$OUTBOX_TOOLS_DIR" && npm install --no-audit --no-fund --silent "pg@$NODE_PG_VERSION"
	) 9>"$OUTBOX_TOOLS_DIR/.npm-install.lock" >&2
}

# Installs the Standard Webhooks reference implementation ("standardwebhooks",
# for tests/harness/webhook-receiver.mjs) the same way.
STANDARDWEBHOOKS_VERSION=1.1.1
standardwebhooks_install() {
	mkdir -p "$OUTBOX_TOOLS_DIR"
	(
		flock 9
		if [ -f "$OUTBOX_TOOLS_DIR/node_modules/standardwebhooks/package.json" ] &&
		   grep -q "\"version\": \"$STANDARDWEBHOOKS_VERSION\"" \
			"$OUTBOX_TOOLS_DIR/node_modules/standardwebhooks/package.json"; then
			exit 0
		fi
		cd "$OUTBOX_TOOLS_DIR" &&
			npm install --no-audit --no-fund --silent "standardwebhooks@$STANDARDWEBHOOKS_VERSION"
	) 9>"$OUTBOX_TOOLS_DIR/.npm-install.lock" >&2
}

# Installs playwright-core (tests/integration/test_console_browser.sh drives
# Debian's chromium with it; it downloads no browser) into OUTBOX_TOOLS_DIR
# once (npm, pinned version), under the same lock as node_pg_install.
PLAYWRIGHT_CORE_VERSION=1.65.1
playwright_core_install() {
	mkdir -p "$OUTBOX_TOOLS_DIR"
	(
		flock 9
		if [ -f "$OUTBOX_TOOLS_DIR/node_modules/playwright-core/package.json" ] &&
		   grep -q "\"version\": \"$PLAYWRIGHT_CORE_VERSION\"" "$OUTBOX_TOOLS_DIR/node_modules/playwright-core/package.json"; then
			exit 0
		fi
		cd "$OUTBOX_TOOLS_DIR" && npm install --no-audit --no-fund --silent "playwright-core@$PLAYWRIGHT_CORE_VERSION"
	) 9>"$OUTBOX_TOOLS_DIR/.npm-install.lock" >&2
}

# Installs fauxqs into OUTBOX_TOOLS_DIR once (npm, pinned version).
fauxqs_install() {
	if [ -f "$OUTBOX_TOOLS_DIR/node_modules/fauxqs/package.json" ] &&
	   grep -q "\"version\": \"$FAUXQS_VERSION\"" "$OUTBOX_TOOLS_DIR/node_modules/fauxqs/package.json"; then
		return 0
	fi
	mkdir -p "$OUTBOX_TOOLS_DIR"
	npm_install_or_explain "fauxqs@$FAUXQS_VERSION" "the SQS/S3 emulator"
}

# npm_install_or_explain PKG@VERSION WHAT: installs into OUTBOX_TOOLS_DIR; on
# failure prints npm's error lines, sets OUTBOX_FAILURE to one line naming
# the package, the registry and npm's error, and prints that line too unless
# OUTBOX_FAILURE_LAST=1 (the caller prints it as its last line).
npm_install_or_explain() {
	local pkg=$1 what=$2 log registry why
	log=$(mktemp /tmp/outbox-npm.XXXXXX)
	if (cd "$OUTBOX_TOOLS_DIR" && npm install --no-audit --no-fund --loglevel=error "$pkg") >"$log" 2>&1; then
		rm -f "$log"
		return 0
	fi
	grep -E '^npm (ERR!|error) (code |[A-Za-z]*Error: )' "$log" | head -n 3 >&2
	registry=$(cd "$OUTBOX_TOOLS_DIR" && npm config get registry 2>/dev/null)
	why=$(sed -n -E 's/^npm (ERR!|error) (code|errno) //p' "$log" | head -n 1)
	why="${why:+$why: }$(grep -m1 -oE '(request to|network|[0-9]{3} ).*' "$log" || tail -n 1 "$log")"
	rm -f "$log"
	OUTBOX_FAILURE="npm could not install $pkg ($what) from ${registry:-its registry}: $why; check the network and npm's registry setting (npm config get registry), then run the command again"
	[ "${OUTBOX_FAILURE_LAST:-0}" = 1 ] || echo "$OUTBOX_FAILURE" >&2
	return 1
}

# Starts a throwaway cluster; retries with another port if the chosen one
# was taken in the meantime (another test may be starting a server too).
pg_start() {
	for _ in 1 2 3; do
		pg_start_once && return 0
	done
	return 1
}

pg_start_once() {
	local port dir
	port=$(free_port) || return 1
	dir=$(mktemp -d /tmp/outbox-pg.XXXXXX)
	chown postgres: "$dir"
	runuser -u postgres -- "$OUTBOX_PG_BIN/initdb" -D "$dir/data" -U postgres \
		--auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2; return 1; }
	cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
fsync = off
full_page_writes = off
max_connections = 200
log_min_messages = warning
# Loaded, not created: only a test that runs CREATE EXTENSION in its own
# database reads it (tests/integration/test_consumer_statements.sh).
shared_preload_libraries = 'pg_stat_statements'
CONF
	# From the cluster's directory: the caller's may be closed to postgres
	# (/root), and pg_ctl would say so on stderr.
	(cd "$dir" && runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start) >/dev/null || {
		cat "$dir/server.log" >&2; rm -rf "$dir"; return 1; }
	export OUTBOX_TEST_PG_DATA="$dir/data" OUTBOX_TEST_PG_PORT="$port" OUTBOX_TEST_PG_BIN="$OUTBOX_PG_BIN"
	export OUTBOX_TEST_PG_CONNINFO="postgresql://postgres@127.0.0.1:$port/postgres"
}

pg_stop() {
	[ -n "${OUTBOX_TEST_PG_DATA:-}" ] || return 0
	runuser -u postgres -- "$OUTBOX_PG_BIN/pg_ctl" -D "$OUTBOX_TEST_PG_DATA" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$(dirname "$OUTBOX_TEST_PG_DATA")"
	unset OUTBOX_TEST_PG_DATA
}

fauxqs_start() {
	local port
	fauxqs_install || return 1
	port=$(free_port) || return 1
	# An SQS store without a host name makes fauxqs name queues after the
	# request's Host header (http://127.0.0.1:PORT/000000000000/NAME), so the
	# queue URLs in relay.ini look like the spec's; by default it would say
	# sqs.REGION.localhost and only accept that spelling.  SqsStore is not in
	# the package's exports map, hence the file path (fauxqs is pinned).
	(cd "$OUTBOX_TOOLS_DIR" && exec node --input-type=module -e "
		import {buildApp} from 'fauxqs';
		import {SqsStore} from '$OUTBOX_TOOLS_DIR/node_modules/fauxqs/dist/sqs/sqsStore.js';
		const sqsStore = new SqsStore(); sqsStore.host = '';
		await buildApp({logger:false, stores:{sqsStore}}).listen({port:$port, host:'127.0.0.1'})" \
		>"$OUTBOX_TOOLS_DIR/fauxqs-$port.log" 2>&1) &
	FAUXQS_PID=$!
	for _ in $(seq 1 100); do
		if curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
			export OUTBOX_TEST_AWS_ENDPOINT="http://127.0.0.1:$port" FAUXQS_PID
			return 0
		fi
		sleep 0.1
	done
	echo "fauxqs did not answer on port $port" >&2
	cat "$OUTBOX_TOOLS_DIR/fauxqs-$port.log" >&2
	return 1
}

fauxqs_stop() {
	[ -n "${FAUXQS_PID:-}" ] || return 0
	kill "$FAUXQS_PID" 2>/dev/null || true
	wait "$FAUXQS_PID" 2>/dev/null || true
	unset FAUXQS_PID
}

services_start() {
	pg_start || return 1
	fauxqs_start || return 1
	export AWS_ACCESS_KEY_ID=AKIDOUTBOXTEST AWS_SECRET_ACCESS_KEY=outbox-test-secret AWS_REGION=us-east-1
	unset AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_ENDPOINT_URL_SQS AWS_ENDPOINT_URL_S3
}

services_stop() {
	fauxqs_stop
	pg_stop
}
