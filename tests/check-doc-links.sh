#!/bin/bash
# tests/check-doc-links.sh [DIR]: every relative link of README.md and
# docs/*.md under DIR (default: the source tree) resolves: the file exists,
# and a #fragment names a heading of the target (GitHub's anchors: lower
# case, punctuation dropped, spaces to hyphens).  Links to http(s) and
# mailto are not followed (the build has no network).  And every docs/*.md
# page is linked from README.md's text, so a new page cannot hide from
# readers.  make check runs it on the source tree; the distcheck hook on the
# tarball's tree.
set -euo pipefail

top=${1:-${OUTBOX_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}}
bad=0

# Prints the anchors of a Markdown file's headings, one per line.
anchors() {
	sed -n 's/^#\{1,6\}[[:space:]]\{1,\}//p' "$1" |
		sed -e 's/[[:space:]]*#*[[:space:]]*$//' -e 's/`//g' |
		tr '[:upper:]' '[:lower:]' |
		sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}

# Prints "TARGET" for each inline link ](TARGET) outside fenced code blocks.
links() {
	awk '/^```/ { fence = !fence; next } !fence' "$1" |
		grep -oE '\]\([^) ]+\)' | sed -e 's/^](//' -e 's/)$//'
}

for md in "$top/README.md" "$top"/docs/*.md; do
	[ -f "$md" ] || continue
	dir=$(dirname "$md")
	rel=${md#"$top"/}
	while read -r target; do
		case "$target" in
		http://* | https://* | mailto:*) continue ;;
		esac
		file=${target%%#*}
		frag=
		[ "$file" = "$target" ] || frag=${target#*#}
		path=$md
		[ -z "$file" ] || path="$dir/$file"
		if [ ! -e "$path" ]; then
			echo "$rel: link \"$target\": no such file \"${path#"$top"/}\""
			bad=$((bad + 1))
			continue
		fi
		if [ -n "$frag" ] && ! anchors "$path" | grep -qxF -- "$frag"; then
			echo "$rel: link \"$target\": no heading with anchor \"#$frag\" in \"${path#"$top"/}\""
			bad=$((bad + 1))
		fi
	done < <(links "$md")
done
readme_links=$(links "$top/README.md" | sed 's/#.*//' | sort -u)
for md in "$top"/docs/*.md; do
	[ -f "$md" ] || continue
	page=docs/$(basename "$md")
	if ! grep -qxF -- "$page" <<<"$readme_links"; then
		echo "README.md: no link to \"$page\": list it in the documentation table"
		bad=$((bad + 1))
	fi
done
[ "$bad" -eq 0 ] || { echo "$bad broken or missing links"; exit 1; }
echo "every relative link in README.md and docs/*.md resolves, and README.md links every docs/*.md page"
