#!/bin/bash
# Every option in the table of core/config/options.c must appear, in its own
# section, in docs/configuration.md (as a table row "| `key` | ...") and in
# conf/relay.ini.sample.in (as a "key = value" line, possibly commented
# out).
set -euo pipefail

srcdir=${OUTBOX_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
table=$srcdir/core/config/options.c
docs=$srcdir/docs/configuration.md
sample=$srcdir/conf/relay.ini.sample.in

# Lines look like: CFG_OPT_INT("relay", "batch_size", cfg, ...
options=$(sed -n 's/^[[:space:]]*CFG_OPT_[A-Z]*("\([a-z0-9_]*\)", "\([a-z0-9_]*\)".*/\1 \2/p' "$table")
if [ -z "$options" ]; then
	echo "no options found in $table: has the table format changed?" >&2
	exit 1
fi

# in_section FILE SECTION LINE_REGEX: some line of FILE in SECTION matches.
# In the sample a section starts at "[SECTION]"; in the docs at a heading
# "## [SECTION]" (any other heading ends it).  "destination" matches any
# [destination:NAME].  A sample section may be an example commented out
# whole (";[schedule:NAME]").
in_section() {
	awk -v sect="$2" -v re="$3" -v md="${1##*.}" '
		md == "md" && /^#+[[:space:]]/ {
			cur = $0
			sub(/^#+[[:space:]]+/, "", cur)
			next
		}
		md != "md" && /^[;#]?\[/ {
			sub(/^[;#]/, "")
			cur = $0
			next
		}
		index(cur, "[" sect "]") == 1 || index(cur, "[" sect ":") == 1 {
			if ($0 ~ re)
				found = 1
		}
		END { exit !found }' "$1"
}

status=0
count=0
while read -r section key; do
	count=$((count + 1))
	if ! in_section "$docs" "$section" "^\\| \`$key\` \\|"; then
		echo "option \"$key\" of [$section] is not documented in docs/configuration.md" >&2
		status=1
	fi
	if ! in_section "$sample" "$section" "^[;#]?[[:space:]]*$key[[:space:]]*="; then
		echo "option \"$key\" of [$section] is missing from conf/relay.ini.sample.in" >&2
		status=1
	fi
done <<< "$options"
echo "checked $count options"
exit $status
