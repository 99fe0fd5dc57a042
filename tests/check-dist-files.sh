#!/bin/bash
# tests/check-dist-files.sh DIR: the tree DIR (the unpacked release tarball,
# from the distcheck hook; or the source tree) has everything README.md's
# commands use: each script README runs ("bash conf/demo.sh", ...) and every
# file of the tree those scripts name, what "autoreconf -fi && ./configure &&
# make" needs, the licence, and every file the documentation links to.
set -euo pipefail

dir=${1:?usage: check-dist-files.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
missing=0

need() { # PATH WHY
	if [ ! -e "$dir/$1" ]; then
		echo "missing from $dir: $1 ($2)"
		missing=$((missing + 1))
	fi
}

for f in configure configure.ac Makefile.am Makefile.in LICENSE NEWS README.md; do
	need "$f" "the build commands of README.md, or the licence"
done
[ -f "$dir/README.md" ] || exit 1

# The scripts README's command blocks run, then the files they name: paths
# under the tree's own folders ("$top/tests/harness/services.sh",
# "conf/sample/news.jsonl"); build directories (_build*) are made by them.
scripts=$(awk '/^```/ { fence = !fence; next } fence' "$dir/README.md" |
	sed -n 's/^bash[[:space:]]\{1,\}\([^[:space:]]*\).*/\1/p' | sort -u)
[ -n "$scripts" ] || { echo "no \"bash SCRIPT\" command found in README.md"; exit 1; }
for s in $scripts; do
	need "$s" "README.md runs it"
	[ -f "$dir/$s" ] || continue
	set -f # the words below are paths to check, not globs to expand
	for f in $(grep -oE '(conf|tests|docs|migrations|plugins|include|core)/[A-Za-z0-9_./*-]*[A-Za-z0-9_/*]' "$dir/$s" | sort -u); do
		case "$f" in *'*'*) continue ;; esac # a glob, not a file
		need "$f" "$s uses it"
	done
	set +f
done

bash "$here/check-doc-links.sh" "$dir" >/dev/null || {
	bash "$here/check-doc-links.sh" "$dir" || true
	missing=$((missing + 1))
}
[ "$missing" -eq 0 ] || { echo "$missing problems: add them to EXTRA_DIST"; exit 1; }
echo "$dir has every file README.md's commands use: $(echo $scripts)"
