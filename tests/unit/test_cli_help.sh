#!/bin/bash
# test_cli_help.sh: --help, --version and -V of every installed program
# (exit 0, the version, plugin ABI and library versions; the help lists
# every long option the program's source declares), and --help of every
# outboxctl command, which must work without a configuration file.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"

abi=$(sed -n 's/^#define OUTBOX_PLUGIN_ABI_MAJOR \([0-9]*\).*/\1/p' "$OUTBOX_SRCDIR/include/outbox/plugin.h")
for prog in outboxd outboxctl; do
	out="$TEST_TMP/$prog.version"
	rc=0
	"$OUTBOX_BUILDDIR/$prog" --version >"$out" 2>&1 || rc=$?
	check "$prog --version exits 0" test "$rc" = 0
	check "$prog --version names itself and the version" grep -qE "^$prog \(outboxd\) [0-9]+\.[0-9]+" "$out"
	check "$prog --version gives the plugin ABI" grep -qE "^plugin ABI $abi\.[0-9]+$" "$out"
	for lib in libpq libcurl jansson OpenSSL; do
		check "$prog --version gives the $lib version" grep -qE "^$lib [0-9]" "$out"
	done
done
check "outboxd --version gives the libmicrohttpd version" grep -qE '^libmicrohttpd [0-9]' "$TEST_TMP/outboxd.version"

# Every program: --help and -V exit 0; the help names each option of its
# getopt table (read from the source, so a new option without help fails).
for spec in outboxd:core/daemon/outboxd.c outbox-bench:core/bench/bench.c \
	outbox-faultbench:core/faultbench/faultbench.c outboxd-plugin-probe: outboxctl:; do
	prog=${spec%%:*} src=${spec#*:}
	for flag in --help -h --version -V; do
		rc=0
		"$OUTBOX_BUILDDIR/$prog" $flag >"$TEST_TMP/out" 2>&1 || rc=$?
		check "$prog $flag exits 0" test "$rc" = 0
	done
	"$OUTBOX_BUILDDIR/$prog" -V >"$TEST_TMP/out" 2>&1 || true
	check "$prog -V names itself" grep -qE "^$prog \(outboxd\) [0-9]+\.[0-9]+" "$TEST_TMP/out"
	"$OUTBOX_BUILDDIR/$prog" --help >"$TEST_TMP/help.$prog" 2>&1 || true
	check "$prog --help starts with its usage" grep -q "^usage: $prog " "$TEST_TMP/help.$prog"
	for o in --help --version; do
		check "$prog --help lists $o" grep -qe "$o" "$TEST_TMP/help.$prog"
	done
	[ -n "$src" ] || continue
	longopts=$(grep -oE '\{"[a-z-]+", (no|required)_argument' "$OUTBOX_SRCDIR/$src" | cut -d'"' -f2)
	check "$prog: its option table was found" test "$(echo "$longopts" | wc -w)" -ge 3
	for o in $longopts; do
		check "$prog --help lists --$o" grep -qe "--$o\b" "$TEST_TMP/help.$prog"
	done
done
for o in --config --json --quiet --verbose; do
	check "outboxctl --help lists $o" grep -qe "$o" "$TEST_TMP/help.outboxctl"
done

# The commands, as outboxctl --help lists them.
"$OUTBOXCTL" --help >"$TEST_TMP/help" 2>&1
commands=$(sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' "$TEST_TMP/help")
check "outboxctl --help lists commands" test "$(echo "$commands" | wc -w)" -ge 8
for c in $commands; do
	for flag in --help -h; do
		rc=0
		"$OUTBOXCTL" -c /nonexistent/relay.ini "$c" "$flag" >"$TEST_TMP/c.out" 2>&1 || rc=$?
		check "outboxctl $c $flag exits 0 without reading the configuration" test "$rc" = 0
		check "outboxctl $c $flag prints its usage" grep -q "^usage: outboxctl .*$c" "$TEST_TMP/c.out"
	done
done
finish
