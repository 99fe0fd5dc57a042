#!/bin/bash
# tests/check-man-pages.sh: every man page in docs/ renders without a
# warning (man --warnings), has an ENVIRONMENT section, and is installed
# (listed in docs/docs.am).  SKIP without man(1).
set -euo pipefail

srcdir=${OUTBOX_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
command -v man >/dev/null || { echo "SKIP: man is not installed"; exit 77; }
bad=0
for page in "$srcdir"/docs/*.[1-8]; do
	name=docs/$(basename "$page")
	warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || {
		echo "not ok - $name: man failed: $warnings"; bad=$((bad + 1)); continue; }
	if [ -n "$warnings" ]; then
		echo "not ok - $name renders with warnings:"
		echo "$warnings"
		bad=$((bad + 1))
	else
		echo "ok - $name renders without warnings"
	fi
	grep -q '^\.SH ENVIRONMENT' "$page" && echo "ok - $name has an ENVIRONMENT section" || {
		echo "not ok - $name has no ENVIRONMENT section"; bad=$((bad + 1)); }
	grep -qF "$name" "$srcdir/docs/docs.am" && echo "ok - $name is installed" || {
		echo "not ok - $name is not in dist_man_MANS (docs/docs.am)"; bad=$((bad + 1)); }
done
[ "$bad" -eq 0 ]
