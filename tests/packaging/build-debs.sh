#!/bin/bash
# tests/packaging/build-debs.sh [OUTDIR]: the Debian packages built the way
# a distribution builds them (docs/packaging.md), and checked:
#   1. make dist's tarball, unpacked in a clean temporary directory, with
#      the tarball's own conf/debian copied to debian/;
#   2. dpkg-buildpackage -us -uc -b, twice: in two different directories,
#      at two different times (400 days apart with faketime), under two
#      time zones and locales;
#   3. every .deb of the first build is byte-identical (cmp) to the second's;
#   4. lintian reports no error and no warning;
#   5. each package holds exactly the files its list in
#      tests/packaging/expected/PACKAGE.files names (a new installed file
#      is one line there), its conffiles are those of PACKAGE.conffiles if
#      there is one, and no installed file names the build directory.
# OUTDIR, if given, receives the first build's .deb files.
# OUTBOX_SRCDIR is the source tree (default: this script's); OUTBOX_DIST
# is a tarball to use instead of running make dist.  The package test suite
# (dh_auto_test) is skipped (nocheck), as tests/run.sh has run make check;
# OUTBOX_DEB_CHECK=1 runs it.  Exits 77 (SKIP) without the Debian tools.
set -euo pipefail

top=${OUTBOX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${1:-}
for tool in dpkg-buildpackage dh lintian; do
	command -v "$tool" >/dev/null || {
		echo "SKIP: $tool is not installed (apt-get install devscripts debhelper lintian)"; exit 77; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/outbox-debs.XXXXXX")
trap 'rm -rf "$work"' EXIT
bad=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; bad=$((bad + 1)); }

# 1. The release tarball.
tarball=${OUTBOX_DIST:-}
if [ -z "$tarball" ]; then
	mkdir "$work/dist"
	(cd "$top" && { [ -x configure ] || autoreconf -fi; }) >"$work/autoreconf.out" 2>&1 || {
		cat "$work/autoreconf.out"; exit 1; }
	(cd "$work/dist" && "$top/configure" && make dist) >"$work/dist.out" 2>&1 || {
		tail -n 40 "$work/dist.out"; exit 1; }
	tarball=$(ls "$work"/dist/outboxd-*.tar.gz)
fi
base=$(basename "$tarball" .tar.gz)     # outboxd-VERSION
version=${base#outboxd-}
echo "# building from $(basename "$tarball")"

# 2. One package build in DIR; the rest of the arguments are environment.
build() {
	local dir=$1; shift
	mkdir -p "$dir"
	tar -xzf "$tarball" -C "$dir"
	cp "$tarball" "$dir/outboxd_$version.orig.tar.gz"
	[ -d "$dir/$base/conf/debian" ] || { echo "the tarball has no conf/debian"; return 1; }
	cp -r "$dir/$base/conf/debian" "$dir/$base/debian"
	local opts="parallel=2"
	[ "${OUTBOX_DEB_CHECK:-0}" = 1 ] || opts="nocheck $opts"
	(cd "$dir/$base" && env DEB_BUILD_OPTIONS="$opts" "$@" dpkg-buildpackage -us -uc -b) \
		>"$dir/build.out" 2>&1 || { tail -n 60 "$dir/build.out"; return 1; }
}
start=$(date +%s)
build "$work/a" TZ=UTC LC_ALL=C.UTF-8 || exit 1
ok "dpkg-buildpackage -us -uc -b in $work/a ($(($(date +%s) - start)) s)"
mid=$(date +%s)
# The second build's clock runs 400 days (and, in Kiritimati, 14 hours)
# ahead when faketime is installed: a build date anywhere would differ.
# Only the clock: the files' times stay those of the tarball (NO_FAKE_STAT),
# as they would in a build that really ran later.
later=
command -v faketime >/dev/null && later="NO_FAKE_STAT=1 faketime -f +400d"
build "$work/second/build/elsewhere" TZ=Pacific/Kiritimati LC_ALL=C $later || exit 1
ok "dpkg-buildpackage -us -uc -b again in $work/second/build/elsewhere, $((mid - start)) s later${later:+, clock +400 days} ($(($(date +%s) - mid)) s)"

# 3. Reproducible.
debs=$(cd "$work/a" && ls ./*.deb)
for deb in $debs; do
	deb=${deb#./}
	if cmp -s "$work/a/$deb" "$work/second/build/elsewhere/$deb"; then
		ok "$deb is byte-identical in both builds"
	else
		notok "$deb differs between the two builds"
		if command -v diffoscope >/dev/null; then
			diffoscope "$work/a/$deb" "$work/second/build/elsewhere/$deb" | head -n 60 || true
		fi
	fi
done

# 4. lintian: overrides live in conf/debian/*.lintian-overrides, each with
# its reason above it.
changes=$(ls "$work"/a/*.changes)
lintian --display-info --fail-on none "$changes" >"$work/lintian.out" 2>&1 || true
sed 's/^/# lintian: /' "$work/lintian.out"
if grep -qE '^[EW]: ' "$work/lintian.out"; then
	notok "lintian reports errors or warnings"
else
	ok "lintian reports no error and no warning"
fi

# 5. The file lists.  In the expected lists @MULTIARCH@ stands for the
# host's triplet; directories are not listed, files and links are.
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
expected_dir=$top/tests/packaging/expected
mkdir "$work/x"
for deb in $debs; do
	deb=${deb#./}
	pkg=${deb%%_*}
	case "$pkg" in *-dbgsym) continue ;; esac
	list=$expected_dir/$pkg.files
	if [ ! -f "$list" ]; then
		notok "$pkg: no list tests/packaging/expected/$pkg.files"
		continue
	fi
	dpkg-deb --fsys-tarfile "$work/a/$deb" | tar -t | sed -e 's|^\./|/|' | grep -v '/$' | sort >"$work/$pkg.got"
	sed -e "s|@MULTIARCH@|$multiarch|g" -e '/^#/d' -e '/^$/d' "$list" | sort >"$work/$pkg.want"
	if diff -u "$work/$pkg.want" "$work/$pkg.got" >"$work/$pkg.diff"; then
		ok "$pkg holds exactly the $(wc -l <"$work/$pkg.want") files of its list"
	else
		notok "$pkg's files differ from tests/packaging/expected/$pkg.files (- listed, + packaged):"
		sed -n 's/^\([-+]\/\)/#   \1/p' "$work/$pkg.diff"
	fi
	conffiles=$expected_dir/$pkg.conffiles
	if [ -f "$conffiles" ]; then
		if dpkg-deb -I "$work/a/$deb" conffiles 2>/dev/null | sort | cmp -s - <(sed '/^#/d' "$conffiles" | sort); then
			ok "$pkg's conffiles are exactly those of tests/packaging/expected/$pkg.conffiles"
		else
			notok "$pkg's conffiles: $(dpkg-deb -I "$work/a/$deb" conffiles 2>/dev/null | tr '\n' ' ')"
		fi
	fi
	dpkg-deb -x "$work/a/$deb" "$work/x"
done
for pkg_list in "$expected_dir"/*.files; do
	pkg=$(basename "$pkg_list" .files)
	ls "$work"/a/"${pkg}"_*.deb >/dev/null 2>&1 || notok "$pkg is listed but was not built"
done
if grep -rlF "$work" "$work/x" >"$work/paths.out"; then
	notok "installed files name the build directory:"
	sed 's/^/#   /' "$work/paths.out"
else
	ok "no installed file names the build directory"
fi

if [ -n "$out" ]; then
	mkdir -p "$out"
	cp "$work"/a/*.deb "$out"/
	echo "# the .deb files are in $out"
fi
[ "$bad" -eq 0 ] || { echo "$bad packaging checks failed"; exit 1; }
echo "the packages build, reproducibly, lintian-clean, with the listed files"
