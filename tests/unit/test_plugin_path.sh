# test_plugin_path.sh: [outboxd] plugin_path, a search path for site
# plugins: a plugin found only in a second (site) directory loads; a site
# copy shadows the packaged one; a bad ABI there is refused with both
# versions named, as a symlink is, without falling back to a later
# directory; --check-config reports plugin option errors together with the
# core's.  Needs no service: --check-config runs no database code.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
# --check-config resolves the AWS credentials (docs/aws.md); on a machine
# without the test services nothing has exported any, so give it a static
# pair: the chain stops at the environment and never probes IMDS.
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-AKIDOUTBOXTEST}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-outbox-test-secret}"

cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler ($cc)"; exit 77; }
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config not found"; exit 77; }

pkg="$TEST_TMP/packaged"
site="$TEST_TMP/site"
mkdir -p "$pkg" "$site"
cp "$OUTBOX_PLUGIN_DIR/example.so" "$pkg/"
cp "$OUTBOX_PLUGIN_DIR/wrong_major.so" "$OUTBOX_PLUGIN_DIR/newer_minor.so" "$site/"
# A site plugin the package does not have: the example, renamed.
sed 's/"example"/"siteplug"/' "$OUTBOX_SRCDIR/plugins/example/example.c" >"$TEST_TMP/siteplug.c"
# shellcheck disable=SC2046 # pkg-config output is a word list
"$cc" -I"$OUTBOX_SRCDIR/include" $(pkg-config --cflags jansson) -std=c11 -fPIC -shared \
	-o "$site/siteplug.so" "$TEST_TMP/siteplug.c" $(pkg-config --libs jansson)
# The test override would replace the whole search path.
unset OUTBOX_PLUGIN_DIR

ep=http://127.0.0.1:9
# ini NAME PLUGIN_PATH DESTINATIONS...
ini() {
	local f="$TEST_TMP/$1.ini"
	printf '[outboxd]\nplugin_path = %s\n[database]\nconninfo = postgresql://postgres@127.0.0.1:9/none\n' "$2" >"$f"
	shift 2
	printf '%b\n' "$@" >>"$f"
	echo "$f"
}
dest() { # NAME PLUGIN [extra lines]
	printf '[destination:%s]\nqueue_url = %s/000000000000/%s\nplugin = %s\n%s' "$1" "$ep" "$1" "$2" "${3:-}"
}
# run FILE: --check-config at debug level; output in $out, exit code in $rc.
out="$TEST_TMP/out.txt"
run() {
	rc=0
	"$OUTBOXD" -c "$1" --check-config --log-level debug >"$out" 2>&1 || rc=$?
}

f=$(ini both "$site:$pkg" "$(dest a siteplug)" "$(dest b example)")
run "$f"
check "site and packaged plugins: --check-config passes" test "$rc" -eq 0
check "the site plugin is loaded from the second directory" \
	grep -qF "loaded plugin \"siteplug.so\" version" "$out"
check "... from the site directory" grep -qF "from \"$site/siteplug.so\"" "$out"
check "the packaged plugin is loaded from the packaged directory" grep -qF "from \"$pkg/example.so\"" "$out"

# Site before packaged: a site copy of example shadows the packaged one.
cp "$pkg/example.so" "$site/example.so"
run "$f"
check "a site copy shadows the packaged plugin" grep -qF "from \"$site/example.so\"" "$out"
rm "$site/example.so"

f=$(ini major "$site:$pkg" "$(dest a wrong_major)")
run "$f"
check "a site plugin with another ABI major: exit 78" test "$rc" -eq 78
check "... refused with both versions named" grep -qF \
	'major.ini:7: [destination:a] plugin: plugin "wrong_major.so": ABI 2.0 required, host provides 1.1' "$out"
rc=0
timeout 20 "$OUTBOXD" -c "$f" --role consumer >"$out" 2>&1 || rc=$?
check "... and a real start refuses it too (exit 78)" test "$rc" -eq 78
check "... with the same message" grep -qF 'plugin "wrong_major.so": ABI 2.0 required, host provides 1.1' "$out"

f=$(ini minor "$site:$pkg" "$(dest a newer_minor)")
run "$f"
check "a site plugin built for a newer minor is refused with both versions" \
	grep -qF 'plugin "newer_minor.so": ABI 1.2 required, host provides 1.1' "$out"

# A refused site file is not silently replaced by the packaged one.
ln -s "$pkg/example.so" "$site/example.so"
f=$(ini link "$site:$pkg" "$(dest a example)")
run "$f"
check "a symlink in the site directory is refused (exit 78)" test "$rc" -eq 78
check "... naming the link, not falling back to the packaged file" \
	grep -qF "plugin \"example.so\" refused: \"$site/example.so\" is a symbolic link" "$out"
rm "$site/example.so"

f=$(ini missing "$site:$pkg" "$(dest a nosuch)")
run "$f"
check "a plugin in neither directory: every place tried is named" grep -qF \
	"plugin \"nosuch.so\" not found: cannot stat \"$site/nosuch.so\": No such file or directory; cannot stat \"$pkg/nosuch.so\": No such file or directory" "$out"

f=$(ini relative "plugins:$pkg" "$(dest a example)")
run "$f"
check "a relative directory in plugin_path is a configuration error" grep -qF \
	'relative.ini:2: [outboxd] plugin_path: invalid value "plugins:'"$pkg"'": must be absolute directories separated by ":", without white space' "$out"

# One pass: the core's errors and the plugins' option errors together.
f=$(ini onepass "$site:$pkg" "$(dest a example 'plugin.colour = blue\n')" '[relay]\nbatch_size = 99\n')
run "$f"
check "--check-config with a core error still checks the plugins (exit 78)" test "$rc" -eq 78
check "... reports the core error" grep -qF 'onepass.ini:11: [relay] batch_size: value "99" is out of range' "$out"
check "... and the plugin option error in the same run" grep -qF \
	'onepass.ini:8: [destination:a] plugin.colour: unknown key for plugin "example"' "$out"

finish
