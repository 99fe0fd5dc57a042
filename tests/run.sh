#!/usr/bin/env bash
# tests/run.sh: the whole test suite, from a fresh Debian 12 machine, as root.
#
#   1. installs the build and test dependencies (install_test_deps of
#      tests/harness/install-deps.sh: apt-get, npm: fauxqs 1.9.2; the tests
#      that need them install pg 8.23.1, standardwebhooks 1.1.1 and
#      playwright-core 1.65.1)
#   2. starts a throwaway PostgreSQL 15 (as the postgres user) and fauxqs,
#      each on a free 127.0.0.1 port
#   3. builds and runs `make check`, the unit tests again under valgrind,
#      everything again under ASan+UBSan, the fuzz targets for a bounded
#      time each, then `make distcheck`, then the Debian packages from the
#      tarball (tests/packaging/build-debs.sh: built twice and compared,
#      lintian, the file lists)
#   4. stops what it started, whatever happened, and fails if any process
#      it started is still running then (tests/harness/leftovers.sh)
#
# OUTBOX_SKIP_INSTALL=1 skips step 1; OUTBOX_SKIP_VALGRIND=1,
# OUTBOX_SKIP_SANITIZE=1, OUTBOX_SKIP_FUZZ=1, OUTBOX_SKIP_DISTCHECK=1 and
# OUTBOX_SKIP_PACKAGING=1 skip those passes; OUTBOX_FUZZ_SECONDS sets the time per fuzz target (20).
# Whatever fails, the last line says what failed and how to fix it.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc 2>/dev/null || echo 2)

# What is under way and what to do when it fails, for the last line.
stage="installing the build and test dependencies"
fix="run it as root on Debian 12, or install them (README) and set OUTBOX_SKIP_INSTALL=1"
export OUTBOX_FAILURE_LAST=1
OUTBOX_FAILURE=""
stage_is() { stage=$1 fix=$2; }
fail_line() {
	[ "$1" -eq 0 ] || echo "tests/run.sh: FAILED ${OUTBOX_FAILURE:-while $stage (exit $1); $fix}" >&2
}
trap 'rc=$?; fail_line $rc' EXIT

# shellcheck source=tests/harness/install-deps.sh
. "$top/tests/harness/install-deps.sh"
if [ "${OUTBOX_SKIP_INSTALL:-0}" = 1 ]; then check_node; else install_test_deps; fi

# Marks every process started from here on (tests/harness/leftovers.sh).
# shellcheck source=tests/harness/leftovers.sh
. "$top/tests/harness/leftovers.sh"
leftovers_mark

# shellcheck source=tests/harness/services.sh
. "$top/tests/harness/services.sh"
trap 'rc=$?; set +e; services_stop; leftovers_check || rc=1; fail_line $rc; exit $rc' EXIT
stage_is "starting PostgreSQL and fauxqs" "see the messages above (initdb, pg_ctl, npm, fauxqs)"
services_start
echo "tests/run.sh: PostgreSQL on port $OUTBOX_TEST_PG_PORT, fauxqs at $OUTBOX_TEST_AWS_ENDPOINT"

[ -x configure ] || autoreconf -fi >/dev/null

passed=0 failed=0 skipped=0
# Adds one build's automake summary to the totals.
count_results() {
	local log=$1/test-suite.log n
	[ -f "$log" ] || return 0
	n=$(sed -n 's/^# PASS: *//p' "$log" | head -n1); passed=$((passed + ${n:-0}))
	n=$(sed -n 's/^# SKIP: *//p' "$log" | head -n1); skipped=$((skipped + ${n:-0}))
	for k in FAIL ERROR XPASS; do
		n=$(sed -n "s/^# $k: *//p" "$log" | head -n1); failed=$((failed + ${n:-0}))
	done
}

summary() {
	echo "tests/run.sh: $passed passed, $failed failed, $skipped skipped"
}

# Prints the log of every test that did not pass.
show_failures() {
	local dir=$1 trs
	find "$dir/tests" -name '*.trs' 2>/dev/null | while read -r trs; do
		if grep -qE '^:test-result: (FAIL|ERROR|XPASS)' "$trs"; then
			echo "==== ${trs%.trs}.log"
			tail -n 80 "${trs%.trs}.log"
		fi
	done
}

run_build() {
	local dir=$1 rc=0; shift
	mkdir -p "$dir"
	(cd "$dir" && "$top/configure" --enable-werror "$@" >configure.out 2>&1) || {
		cat "$dir/configure.out"; return 1; }
	make -C "$dir" -j"$jobs" >"$dir/build.out" 2>&1 || { tail -n 60 "$dir/build.out"; return 1; }
	make -C "$dir" -j"$jobs" check || rc=$?
	count_results "$dir"
	[ "$rc" -eq 0 ] || show_failures "$dir"
	return "$rc"
}

# Whatever happened: the totals, then the services stop, then nothing this
# run started may still be running.
trap 'rc=$?; set +e; summary; services_stop; leftovers_check || rc=1; fail_line $rc; exit $rc' EXIT

failing="the failing tests' logs are above; rerun one with make check TESTS=... (docs/hacking.md)"
stage_is "make check" "$failing"
echo "== make check"
run_build "$top/_build"

if [ "${OUTBOX_SKIP_VALGRIND:-0}" != 1 ]; then
	stage_is "the unit tests under valgrind" "$failing"
	echo "== unit tests under valgrind (errors and definite leaks fail)"
	unit_tests=$(cd "$top/_build" && ls tests/unit/test_* 2>/dev/null | grep -v '\.' | tr '\n' ' ')
	rc=0
	make -C "$top/_build" check TESTS="$unit_tests" OUTBOX_VALGRIND=1 >"$top/_build/valgrind.out" 2>&1 || rc=$?
	count_results "$top/_build"
	if [ "$rc" -ne 0 ]; then
		show_failures "$top/_build"
		exit 1
	fi
	grep -E '^(PASS|FAIL|ERROR|SKIP):' "$top/_build/valgrind.out"
fi

if [ "${OUTBOX_SKIP_SANITIZE:-0}" != 1 ]; then
	stage_is "make check under ASan+UBSan (_build-asan)" "$failing"
	echo "== make check under AddressSanitizer + UndefinedBehaviorSanitizer"
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_build "$top/_build-asan" \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address,undefined"
fi

if [ "${OUTBOX_SKIP_FUZZ:-0}" != 1 ]; then
	stage_is "the fuzz targets (_build-fuzz)" "a crash's input is named above; see tests/fuzz/run-fuzzers.sh"
	echo "== fuzz targets, ${OUTBOX_FUZZ_SECONDS:-20} s each (tests/fuzz/run-fuzzers.sh)"
	mkdir -p "$top/_build-fuzz"
	(cd "$top/_build-fuzz" && "$top/configure" --enable-fuzzing CC=clang >configure.out 2>&1) || {
		cat "$top/_build-fuzz/configure.out"; exit 1; }
	make -C "$top/_build-fuzz" -j"$jobs" fuzz >"$top/_build-fuzz/build.out" 2>&1 || {
		tail -n 60 "$top/_build-fuzz/build.out"; exit 1; }
	bash "$top/tests/fuzz/run-fuzzers.sh" "$top/_build-fuzz" "${OUTBOX_FUZZ_SECONDS:-20}"
fi

if [ "${OUTBOX_SKIP_DISTCHECK:-0}" != 1 ]; then
	stage_is "make distcheck" "see _build/distcheck.out; a missing file belongs in its folder's .am fragment"
	echo "== make distcheck"
	make -C "$top/_build" -j"$jobs" distcheck >"$top/_build/distcheck.out" 2>&1 || {
		tail -n 80 "$top/_build/distcheck.out"
		for sub in "$top"/_build/outboxd-*/_build/sub; do show_failures "$sub"; done
		exit 1; }
	grep -E 'archives ready|outboxd-.*tar' "$top/_build/distcheck.out" | tail -n 2
	dist_tarball=$(ls "$top"/_build/outboxd-*.tar.gz | head -n 1)
fi

if [ "${OUTBOX_SKIP_PACKAGING:-0}" != 1 ]; then
	# From distcheck's tarball when it ran (else the script runs make dist);
	# exit 77 means the Debian tools are missing and cannot be installed.
	stage_is "the Debian packages (tests/packaging/build-debs.sh)" "see its messages above (dpkg-buildpackage, lintian, the file lists)"
	echo "== Debian packages from the tarball (tests/packaging/build-debs.sh)"
	rc=0
	OUTBOX_DIST=${dist_tarball:-} bash "$top/tests/packaging/build-debs.sh" || rc=$?
	case $rc in
	0) ;;
	77) echo "tests/run.sh: Debian packaging skipped: its tools are not installed" ;;
	*) exit 1 ;;
	esac
fi
echo "tests/run.sh: all passes succeeded"
