#!/bin/bash
# tests/fuzz/run-fuzzers.sh: run each libFuzzer harness for a bounded time.
#
#   tests/fuzz/run-fuzzers.sh [BUILDDIR [SECONDS [TARGET...]]]
#
# BUILDDIR is a build configured with "--enable-fuzzing CC=clang" (default:
# the current directory); SECONDS per target (default 20); TARGETs default
# to message, config, artifact and cron.  Each target first replays its seed
# corpus (tests/fuzz/corpus/TARGET/, never modified: new inputs go to a
# scratch copy), then fuzzes for SECONDS.  Exit 0 when no target crashed,
# leaked, timed out or broke an invariant; else 1, with the crashing input
# saved under BUILDDIR/tests/fuzz/findings/ for a regression seed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-.}" && pwd) || exit 2
secs=${2:-20}
shift $(($# > 2 ? 2 : $#))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(message config artifact cron)
findings="$build/tests/fuzz/findings"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/outbox-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$findings"

# The message corpus must reach every rule of docs/consumer.md, not just the
# parser: replay it with the harness's trace and look for each action.
all_rules_reached() {
	local seen missing=""
	seen=$(FUZZ_MESSAGE_TRACE=1 "$1" -runs=0 "$2" 2>&1 | sed -n 's/^action=//p' | sort -u)
	for a in ignore terminal obsolete defer leave claim; do
		printf '%s\n' "$seen" | grep -qx "$a" || missing="$missing $a"
	done
	if [ -n "$missing" ]; then
		echo "not ok - fuzz_message: the corpus never reaches:$missing"
		return 1
	fi
}

failed=0
for t in "${targets[@]}"; do
	bin="$build/tests/fuzz/fuzz_$t"
	if [ ! -x "$bin" ]; then
		echo "not ok - fuzz_$t: $bin is missing (./configure --enable-fuzzing CC=clang && make fuzz)"
		failed=1
		continue
	fi
	mkdir -p "$scratch/$t"
	cp "$here/corpus/$t/"* "$scratch/$t/"
	log="$build/tests/fuzz/fuzz_$t.log"
	rc=0
	# -timeout: one input taking 10 s is a hang; -rss_limit_mb: a leak.
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$findings/$t-" "$scratch/$t" >"$log" 2>&1 || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ "$rc" -ne 0 ]; then
		echo "not ok - fuzz_$t: exit $rc after ${runs:-?} runs (see $log, inputs in $findings)"
		failed=1
	elif [ "$t" = message ] && ! all_rules_reached "$bin" "$scratch/$t"; then
		failed=1
	else
		echo "ok - fuzz_$t: ${runs:-?} runs in ${secs} s, corpus $(ls "$scratch/$t" | wc -l) inputs"
	fi
done
exit $failed
