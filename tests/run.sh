#!/usr/bin/env bash
# tests/run.sh: the whole test suite, from a fresh Debian 12 machine, as root.
#
#   1. installs the build and test dependencies (apt-get, npm: fauxqs 1.9.2)
#   2. starts a throwaway PostgreSQL 15 (as the postgres user) and fauxqs,
#      each on a free 127.0.0.1 port
#   3. builds and runs `make check`, then again under ASan+UBSan,
#      then `make distcheck`
#   4. stops what it started, whatever happened
#
# OUTBOX_SKIP_INSTALL=1 skips step 1; OUTBOX_SKIP_SANITIZE=1 and
# OUTBOX_SKIP_DISTCHECK=1 skip those passes (handy while developing).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc 2>/dev/null || echo 2)

install_deps() {
	local pkgs=(build-essential autoconf automake libtool pkg-config
		libpq-dev libcurl4-openssl-dev libjansson-dev libinih-dev libssl-dev libcmocka-dev
		postgresql-15 postgresql-client-15 nodejs npm curl ca-certificates valgrind jq)
	local missing=()
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	# Node and npm may come from outside Debian on this machine; only ask apt for them if absent.
	if command -v node >/dev/null && command -v npm >/dev/null; then
		missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
	fi
	local want=()
	for p in "${missing[@]}"; do [ -n "$p" ] && want+=("$p"); done
	if [ ${#want[@]} -gt 0 ]; then
		echo "tests/run.sh: installing ${want[*]}"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
	fi
}

[ "${OUTBOX_SKIP_INSTALL:-0}" = 1 ] || install_deps

# shellcheck source=tests/harness/services.sh
. "$top/tests/harness/services.sh"
trap services_stop EXIT
services_start
echo "tests/run.sh: PostgreSQL on port $OUTBOX_TEST_PG_PORT, fauxqs at $OUTBOX_TEST_AWS_ENDPOINT"

[ -x configure ] || autoreconf -fi >/dev/null

run_build() {
	local dir=$1; shift
	mkdir -p "$dir"
	(cd "$dir" && "$top/configure" --enable-werror "$@" >configure.out 2>&1) || {
		cat "$dir/configure.out"; return 1; }
	make -C "$dir" -j"$jobs" >/dev/null
	if ! make -C "$dir" -j"$jobs" check; then
		find "$dir/tests" -name '*.log' -newer "$dir/configure.out" -exec grep -l -E '^(FAIL|ERROR)' {} + 2>/dev/null |
			while read -r f; do echo "==== $f"; tail -n 60 "${f%.trs}.log"; done
		for f in "$dir"/tests/*/*.log "$dir"/tests/*.log; do
			[ -f "$f" ] && grep -qE '^# (FAIL|ERROR):? *[1-9]|^(FAIL|ERROR):' "$f" && { echo "==== $f"; tail -n 80 "$f"; }
		done
		return 1
	fi
}

echo "== make check"
run_build "$top/_build"

if [ "${OUTBOX_SKIP_SANITIZE:-0}" != 1 ]; then
	echo "== make check under AddressSanitizer + UndefinedBehaviorSanitizer"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_build "$top/_build-asan" \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address,undefined"
fi

if [ "${OUTBOX_SKIP_DISTCHECK:-0}" != 1 ]; then
	echo "== make distcheck"
	make -C "$top/_build" -j"$jobs" distcheck >"$top/_build/distcheck.out" 2>&1 || {
		tail -n 80 "$top/_build/distcheck.out"; exit 1; }
	grep -E '^=+$|archives ready|outboxd-.*tar' "$top/_build/distcheck.out" | tail -n 3
fi
echo "tests/run.sh: all passes succeeded"
