#!/bin/bash
# conf/prometheus-alerts.yml must pass `promtool check rules`, and every
# outboxd_* series its expressions use must be one outboxd serves (named in
# docs/metrics.md).  Without promtool: SKIP (exit 77).
set -euo pipefail

srcdir=${OUTBOX_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
rules=$srcdir/conf/prometheus-alerts.yml
if ! command -v promtool >/dev/null 2>&1; then
	echo "SKIP: promtool is not installed (Debian: prometheus)"
	exit 77
fi
promtool check rules "$rules"
status=0
for m in $(grep -o 'outboxd_[a-z_]*' "$rules" | sort -u); do
	if ! grep -q "\`$m[{\`]" "$srcdir/docs/metrics.md"; then
		echo "$rules uses $m, which docs/metrics.md does not list" >&2
		status=1
	fi
done
exit $status
