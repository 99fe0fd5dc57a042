# tests/bench/bench_lib.sh: the set-up the benchmark scripts of tests/bench
# share (sourced, after the script has parsed its arguments).  Benchmarks,
# not tests: they print figures and assert nothing.
#
#   bench_init NAME        OUTBOX_SRCDIR, OUTBOX_BUILDDIR (default: $PWD if
#                          it holds outboxd, else SRC/_build), services.sh,
#                          BENCH_WORK (a fresh directory under /var/tmp that
#                          the postgres user can enter); cleanup on EXIT, INT
#                          and TERM
#   bench_require_build    exit 64 unless OUTBOX_BUILDDIR holds outboxd
#   bench_pg_start         a durable cluster (tests/harness/durable-pg.sh) in
#                          $BENCH_WORK/pg; sets BENCH_CONNINFO, BENCH_PG_PORT
#                          and the OUTBOX_TEST_PG_* the test libraries read
#   bench_fauxqs_start     the SQS/S3 emulator and the test credentials
#   bench_pipeline         sources testlib.sh and test_pipeline_lib.sh; their
#                          cleanup then ends with bench_cleanup
#   bench_track PID        a background job of this shell to stop at exit
#                          (TERM, KILL after 10 s) if it still runs
#   bench_cleanup          stops everything above, removes BENCH_WORK; runs
#                          once, however the script ends
#
# Run as root: the durable cluster belongs to the postgres user.

bench_init() { # NAME
	BENCH_NAME=$1
	local here
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	export OUTBOX_SRCDIR=${OUTBOX_SRCDIR:-$(cd "$here/../.." && pwd)}
	if [ -z "${OUTBOX_BUILDDIR:-}" ]; then
		OUTBOX_BUILDDIR=$PWD
		[ -x "$OUTBOX_BUILDDIR/outboxd" ] || [ ! -x "$OUTBOX_SRCDIR/_build/outboxd" ] ||
			OUTBOX_BUILDDIR=$OUTBOX_SRCDIR/_build
	fi
	export OUTBOX_BUILDDIR
	. "$OUTBOX_SRCDIR/tests/harness/services.sh"
	BENCH_WORK=$(mktemp -d "/var/tmp/$BENCH_NAME.XXXXXX")
	# the cluster's directory lies below it and belongs to postgres
	chmod 755 "$BENCH_WORK"
	bench_pids=()
	bench_cleaned=0
	trap bench_on_exit EXIT
	# exit, so that the EXIT trap runs the cleanup once
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

bench_require_build() {
	[ -x "$OUTBOX_BUILDDIR/outboxd" ] ||
		{ echo "$BENCH_NAME: no outboxd in \"$OUTBOX_BUILDDIR\": run it from the build directory" >&2; exit 64; }
}

bench_pg_start() {
	BENCH_PG_PORT=$(free_port)
	BENCH_CONNINFO=$("$OUTBOX_SRCDIR/tests/harness/durable-pg.sh" start "$BENCH_WORK/pg" "$BENCH_PG_PORT")
	export OUTBOX_TEST_PG_CONNINFO=$BENCH_CONNINFO OUTBOX_TEST_PG_PORT=$BENCH_PG_PORT
}

bench_fauxqs_start() {
	fauxqs_start
	export AWS_ACCESS_KEY_ID=AKIDOUTBOXTEST AWS_SECRET_ACCESS_KEY=outbox-test-secret AWS_REGION=us-east-1
	unset AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_ENDPOINT_URL_SQS AWS_ENDPOINT_URL_S3
}

bench_pipeline() {
	. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
	. "$OUTBOX_SRCDIR/tests/integration/test_pipeline_lib.sh"
	pl_extra_cleanup() { bench_cleanup; }
	# both libraries set their own EXIT trap; ours calls theirs
	trap bench_on_exit EXIT
	pl_require
}

bench_track() { # PID
	bench_pids+=("$1")
}

bench_on_exit() {
	if declare -F pl_cleanup >/dev/null; then
		pl_cleanup # ends with pl_extra_cleanup, that is bench_cleanup
	fi
	bench_cleanup
}

bench_cleanup() {
	local p
	[ "$bench_cleaned" = 0 ] || return 0
	bench_cleaned=1
	set +e
	# only those still this shell's jobs: a PID already waited for may
	# belong to another process by now
	local live=() j
	for p in "${bench_pids[@]}"; do
		for j in $(jobs -p); do [ "$j" != "$p" ] || live+=("$p"); done
	done
	for p in "${live[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${live[@]}"; do
		for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	fauxqs_stop
	[ ! -f "$BENCH_WORK/pg/data/PG_VERSION" ] ||
		"$OUTBOX_SRCDIR/tests/harness/durable-pg.sh" stop "$BENCH_WORK/pg"
	rm -rf "$BENCH_WORK"
}
