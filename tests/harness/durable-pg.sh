#!/bin/bash
# tests/harness/durable-pg.sh: a throwaway PostgreSQL 15 cluster for
# benchmarks (docs/performance.md), durable unlike the tests' own
# (tests/harness/services.sh runs fsync off): fsync and synchronous_commit
# on, so every commit waits for its WAL flush, as in production.
#
#   durable-pg.sh start DIR PORT   initdb into DIR/data (DIR must not hold
#                                  a cluster yet), start it on 127.0.0.1:PORT,
#                                  print a libpq conninfo on stdout
#   durable-pg.sh stop DIR         stop it (fast shutdown) and remove DIR
#
# Run as root: the cluster belongs to the postgres user (runuser).  The
# binaries are those of OUTBOX_PG_BIN (default /usr/lib/postgresql/15/bin).
set -eu

: "${OUTBOX_PG_BIN:=/usr/lib/postgresql/15/bin}"

usage() {
	echo "usage: durable-pg.sh start DIR PORT | stop DIR" >&2
	exit 64
}

pg() { # BINARY ARGS...: as the postgres user
	local bin=$1
	shift
	runuser -u postgres -- "$OUTBOX_PG_BIN/$bin" "$@"
}

start() { # DIR PORT
	local dir=$1 port=$2
	case $port in
	'' | *[!0-9]*) echo "durable-pg.sh: invalid port \"$port\"" >&2; exit 64 ;;
	esac
	if [ -e "$dir/data" ]; then
		echo "durable-pg.sh: \"$dir/data\" already exists" >&2
		exit 1
	fi
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	chown postgres: "$dir"
	pg initdb -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
	# Appended last, so these win over initdb's defaults; stated even
	# where they are the defaults, so the file says what the figures need.
	cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
fsync = on
synchronous_commit = on
full_page_writes = on
shared_buffers = 256MB
max_connections = 200
log_min_messages = warning
CONF
	pg pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null ||
		{ cat "$dir/server.log" >&2; exit 1; }
	echo "postgresql://postgres@127.0.0.1:$port/postgres"
}

stop() { # DIR
	local dir=$1
	[ -f "$dir/data/PG_VERSION" ] || { echo "durable-pg.sh: no cluster in \"$dir/data\"" >&2; exit 1; }
	pg pg_ctl -D "$dir/data" -m fast -w stop >/dev/null || true
	rm -rf "$dir"
}

case ${1:-} in
start) [ $# -eq 3 ] || usage; start "$2" "$3" ;;
stop) [ $# -eq 2 ] || usage; stop "$2" ;;
*) usage ;;
esac
