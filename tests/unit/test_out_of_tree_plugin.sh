#!/usr/bin/env bash
# Install the build into a scratch DESTDIR, as a distribution package does,
# and check the layout: no .la file, bench_noop apart from the production
# plugins, every man page rendering cleanly.  Then build a plugin out of
# tree from plugins/example/example.c using only the installed header and
# outboxd-plugin.pc, build the installed example kit with its own Makefile,
# and load both with the real loader (outboxd-plugin-probe, the installed
# one for the kit).  Finally uninstall leaves no file behind.
set -euo pipefail

: "${OUTBOX_SRCDIR:?}" "${OUTBOX_BUILDDIR:?}"
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config not found"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler ($cc)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A nested make must not join the jobserver of the `make check` running us.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -s -C "$OUTBOX_BUILDDIR" install DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log"; echo "FAIL: make install DESTDIR failed"; exit 1; }

pc=$(find "$tmp/root" -name outboxd-plugin.pc -print -quit)
[ -n "$pc" ] || { echo "FAIL: outboxd-plugin.pc was not installed"; exit 1; }
hdr=$(find "$tmp/root" -path '*/outbox/plugin.h' -print -quit)
[ -n "$hdr" ] || { echo "FAIL: outbox/plugin.h was not installed"; exit 1; }

# The .pc file names the final prefix; the sysroot maps it into DESTDIR,
# whatever prefix configure (or distcheck) chose.
export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_SYSROOT_DIR="$tmp/root"
cflags=$(pkg-config --cflags outboxd-plugin)
case "$cflags" in
*"$tmp/root"*) ;;
*) echo "FAIL: cflags \"$cflags\" do not point into the install tree"; exit 1 ;;
esac
abi=$(pkg-config --variable=abi_version outboxd-plugin)
plugindir=$(pkg-config --variable=plugindir outboxd-plugin)
[ -n "$plugindir" ] || { echo "FAIL: outboxd-plugin.pc has no plugindir"; exit 1; }
# pkgconf puts the sysroot in front of variables too; pkg-config 0.29 does not.
case "$plugindir" in "$tmp/root"/*) ;; *) plugindir="$tmp/root$plugindir" ;; esac
[ -f "$plugindir/example.so" ] || {
	echo "FAIL: example.so not installed in plugindir \"$plugindir\""; exit 1; }

# The layout a distribution expects (issue 18; lintian's view).
echo "installed files:"
(cd "$tmp/root" && find . -type f | sort | sed 's/^/  /')
la=$(find "$tmp/root" -name '*.la')
[ -z "$la" ] || { echo "FAIL: .la files installed: $la"; exit 1; }
[ ! -e "$plugindir/bench_noop.so" ] || { echo "FAIL: bench_noop.so is in the plugin directory"; exit 1; }
benchdir=$(dirname "$plugindir")/bench-plugins
[ -f "$benchdir/bench_noop.so" ] || { echo "FAIL: bench_noop.so not in \"$benchdir\""; exit 1; }
migrationsdir=$(pkg-config --variable=migrationsdir outboxd-plugin)
case "$migrationsdir" in "$tmp/root"/*) ;; *) migrationsdir="$tmp/root$migrationsdir" ;; esac
[ -f "$migrationsdir/V1__core_schema.sql" ] && [ -d "$migrationsdir/plugins/news_llm" ] || {
	echo "FAIL: migrationsdir \"$migrationsdir\" does not hold the migrations"; exit 1; }
bindir=$(dirname "$(find "$tmp/root" -path '*/bin/outboxd' -print -quit)")
[ -x "$bindir/outboxd-plugin-probe" ] || { echo "FAIL: outboxd-plugin-probe not installed"; exit 1; }
for page in outboxd.8 outboxctl.1 relay.ini.5 outbox-bench.1 outbox-faultbench.1 outboxd-plugin-probe.1; do
	f=$(find "$tmp/root" -path "*/man/man${page##*.}/$page" -print -quit)
	[ -n "$f" ] || { echo "FAIL: man page $page not installed"; exit 1; }
	if command -v man >/dev/null; then
		warnings=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
		[ -z "$warnings" ] || { echo "FAIL: $page: $warnings"; exit 1; }
	fi
done
echo "ok: no .la, bench_noop in bench-plugins, migrationsdir, the probe and six man pages installed"

# The example kit: copied out of the documentation, built with its own
# Makefile against the installed headers, loaded by the installed probe.
kit=$(find "$tmp/root" -type d -path '*/doc/*/examples' -print -quit)
[ -n "$kit" ] && [ -f "$kit/example.c" ] && [ -f "$kit/Makefile" ] || {
	echo "FAIL: the example kit is not installed in \$(docdir)/examples"; exit 1; }
cp -r "$kit" "$tmp/kit"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$tmp/kit" CC="$cc" CFLAGS="-O2 -Wall -Wextra -Werror" >"$tmp/kit.log" 2>&1 || {
	cat "$tmp/kit.log"; echo "FAIL: the example kit's Makefile did not build"; exit 1; }
libdir=$(pkg-config --variable=libdir outboxd-plugin)
case "$libdir" in "$tmp/root"/*) ;; *) libdir="$tmp/root$libdir" ;; esac
out=$(LD_LIBRARY_PATH="$libdir" "$bindir/outboxd-plugin-probe" "$tmp/kit" example prefix=kit)
grep -q '^verdict: OK (kit: handled probe job)$' <<<"$out" || {
	echo "$out"; echo "FAIL: the kit's example.so did not load and run"; exit 1; }
echo "ok: the example kit builds with its Makefile and loads"

# Rename the copy, as a third party would, so nothing from the build tree
# can stand in for it.
mkdir -p "$tmp/plugins"
sed 's/"example"/"thirdparty"/' "$OUTBOX_SRCDIR/plugins/example/example.c" >"$tmp/thirdparty.c"
# shellcheck disable=SC2086 # pkg-config output is a word list
"$cc" $cflags -std=c11 -Wall -Wextra -Werror -fPIC -shared \
	-o "$tmp/plugins/thirdparty.so" "$tmp/thirdparty.c" $(pkg-config --libs jansson)

out=$("$OUTBOX_BUILDDIR/outboxd-plugin-probe" "$tmp/plugins" thirdparty prefix=oot max_items=5)
echo "$out"
grep -qx "host ABI $abi" <<<"$out" || { echo "FAIL: host ABI differs from abi_version $abi"; exit 1; }
grep -q '^verdict: OK (oot: handled probe job)$' <<<"$out" || { echo "FAIL: unexpected verdict"; exit 1; }

# Without a database the commit's tx_exec is "not available": a transient failure.
out=$("$OUTBOX_BUILDDIR/outboxd-plugin-probe" "$tmp/plugins" thirdparty dry_run=false)
grep -q '^verdict: RETRY (commit: host service "tx_exec" is not available)$' <<<"$out" || {
	echo "$out"; echo "FAIL: commit without database services"; exit 1; }

# An option the copy does not declare is refused before init.
if "$OUTBOX_BUILDDIR/outboxd-plugin-probe" "$tmp/plugins" thirdparty colour=red 2>"$tmp/err"; then
	echo "FAIL: unknown option accepted"; exit 1
fi
grep -q 'plugin.colour: unknown key for plugin "thirdparty"' "$tmp/err" || {
	cat "$tmp/err"; echo "FAIL: unknown option not reported"; exit 1; }

env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -s -C "$OUTBOX_BUILDDIR" uninstall DESTDIR="$tmp/root" >"$tmp/uninstall.log" 2>&1 || {
	cat "$tmp/uninstall.log"; echo "FAIL: make uninstall failed"; exit 1; }
left=$(find "$tmp/root" -type f)
[ -z "$left" ] || { echo "FAIL: files left after uninstall:"; echo "$left"; exit 1; }
echo "PASS: out-of-tree plugin built against the installed files and loaded"
