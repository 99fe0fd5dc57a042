#!/bin/bash
# test_cli_help.sh: --version of outboxd and outboxctl (version, plugin ABI,
# library versions) and --help of every outboxctl command, which must work
# without a configuration file.
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

# The commands, as outboxctl --help lists them.
"$OUTBOXCTL" --help >"$TEST_TMP/help" 2>&1
commands=$(sed -n 's/^  \([a-z-]*\).*/\1/p' "$TEST_TMP/help")
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
