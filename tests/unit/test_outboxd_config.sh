# test_outboxd_config.sh: outboxd refuses a bad configuration or plugin at
# startup and with --check-config: exit 78, every problem as FILE:LINE.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
# --check-config resolves the AWS credentials (docs/aws.md); on a machine
# without the test services nothing has exported any, so give it a static
# pair: the chain stops at the environment and never probes IMDS.
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-AKIDOUTBOXTEST}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-outbox-test-secret}"

ep=http://127.0.0.1:9
plugins="$TEST_TMP/plugins"
mkdir -p "$plugins"
for p in example news_llm wrong_major newer_minor missing_symbol init_fails short_struct bad_magic; do
	cp "$OUTBOX_PLUGIN_DIR/$p.so" "$plugins/"
done
mkdir "$plugins/dir_plugin.so"
ln -s "$plugins/example.so" "$plugins/linked.so"
export OUTBOX_PLUGIN_DIR="$plugins"

# ini NAME DESTINATION-SECTIONS...: a file with a good head and the given tail.
ini() {
	local f="$TEST_TMP/$1.ini"
	shift
	printf '[database]\nconninfo = postgresql://postgres@127.0.0.1:9/none\n[aws]\nendpoint_url = %s\n' "$ep" >"$f"
	printf '%b' "$@" >>"$f"
	echo "$f"
}

# expect_refusal FILE PATTERN...: both --check-config and a real start exit
# 78 and print every pattern.
expect_refusal() {
	local f=$1 rc out="$TEST_TMP/out.txt"
	shift
	for mode in --check-config start; do
		rc=0
		if [ "$mode" = start ]; then
			timeout 20 "$OUTBOXD" -c "$f" >"$out" 2>&1 || rc=$?
		else
			"$OUTBOXD" -c "$f" --check-config >"$out" 2>&1 || rc=$?
		fi
		check "$(basename "$f") ($mode): exit 78" test "$rc" -eq 78
		for pat in "$@"; do
			check "$(basename "$f") ($mode): reports '$pat'" grep -qF -- "$pat" "$out"
		done
	done
}

dest() { # NAME PLUGIN [extra lines]
	printf '[destination:%s]\nqueue_url = %s/000000000000/%s\nplugin = %s\n%s' "$1" "$ep" "$1" "$2" "${3:-}"
}

good=$(ini good "$(dest news example)")
check "a good file passes --check-config" sh -c "'$OUTBOXD' -c '$good' --check-config >/dev/null 2>&1"
check "and says so" sh -c "'$OUTBOXD' -c '$good' --check-config | grep -q 'test is successful'"

f=$(ini several '[destination:news]\nplugin = example\n' '[relay]\nbatch_size = eleven\npoll_interval_ms = 5\n' \
	'[consumer]\ncolour = blue\n')
expect_refusal "$f" \
	"several.ini:5: [destination:news] queue_url: missing required key" \
	"several.ini:8: [relay] batch_size:" \
	"several.ini:9: [relay] poll_interval_ms:" \
	"several.ini:11: [consumer] colour: unknown key"
check "several errors: exactly four reported" test "$("$OUTBOXD" -c "$f" --check-config 2>&1 | grep -c 'several.ini:')" -eq 4

expect_refusal "$(ini major "$(dest news wrong_major)")" \
	'major.ini:7: [destination:news] plugin: plugin "wrong_major.so": ABI 2.0 required, host provides 1.1'
expect_refusal "$(ini minor "$(dest news newer_minor)")" \
	'plugin "newer_minor.so": ABI 1.2 required, host provides 1.1'
expect_refusal "$(ini nosym "$(dest news missing_symbol)")" \
	'plugin "missing_symbol.so" refused: it does not export'
expect_refusal "$(ini magic "$(dest news bad_magic)")" 'plugin "bad_magic.so" refused: bad ABI magic'
expect_refusal "$(ini short "$(dest news short_struct)")" 'plugin "short_struct.so": descriptor is'
expect_refusal "$(ini dir "$(dest news dir_plugin)")" 'is a directory, not a regular file'
expect_refusal "$(ini link "$(dest news linked)")" 'is a symbolic link'
expect_refusal "$(ini missing "$(dest news nosuchplugin)")" 'plugin "nosuchplugin.so" not found'
expect_refusal "$(ini unknownkey "$(dest news example 'plugin.colour = blue\n')")" \
	'unknownkey.ini:8: [destination:news] plugin.colour: unknown key for plugin "example"'
expect_refusal "$(ini badvalue "$(dest news example 'plugin.max_items = lots\n')")" \
	'badvalue.ini:8: [destination:news] plugin.max_items: invalid integer "lots"'
expect_refusal "$(ini initfails "$(dest news init_fails)")" 'plugin "init_fails" failed to start'

# Configurations that cannot work (issue 11, item 3), refused with FILE:LINE.
expect_refusal "$(ini dlqmain "$(dest news example "dlq_url = $ep/000000000000/news\n")")" \
	"dlqmain.ini:8: [destination:news] dlq_url: dead-letter queue is the destination's own queue_url (line 6)"
expect_refusal "$(ini shared "$(dest news example '\n')" "$(dest price example '\n')" \
	"[destination:price2]\nqueue_url = $ep/000000000000/price\nplugin = example\n")" \
	'shared.ini:14: [destination:price2] queue_url: queue is also the queue_url of destination "price" (line 10)'
expect_refusal "$(ini notutf8 "$(dest news example '\n')" "[s3]\nendpoint_url = $ep/b\xe9cket\n")" \
	'notutf8.ini:10: [s3]: invalid byte sequence for encoding "UTF8": 0xe9 (column 36)'
f=$(ini nul "$(dest news example '\n')")
printf 'plugin.max_items = 5\0000\n' >>"$f"
expect_refusal "$f" 'nul.ini:9: [destination:news]: line contains a NUL byte (column 21)'
rc=0
timeout 10 "$OUTBOXD" -c /dev/zero --check-config >"$TEST_TMP/z.txt" 2>&1 || rc=$?
check "-c /dev/zero: exit 78 at once" test "$rc" -eq 78
check "-c /dev/zero: not a regular file" grep -qF '/dev/zero: could not read file: it is a character device, not a regular file' "$TEST_TMP/z.txt"
pasted=sk-proj-4fGh7Jk2Lm9Np3Qr5St8Uv1Wx6Yz0AbCdEf
f=$(ini pasted "$(dest news news_llm "plugin.api_key_env = $pasted\n")")
expect_refusal "$f" 'pasted.ini:8: [destination:news] plugin.api_key_env: value (not shown) looks like a secret'
check "the pasted secret is not echoed" sh -c "! '$OUTBOXD' -c '$f' --check-config 2>&1 | grep -q 4fGh7"

# The relay role does not load plugins: a relay host needs no plugin files.
f=$(ini relayonly "$(dest news nosuchplugin)")
rc=0
"$OUTBOXD" -c "$f" --role relay --check-config >"$TEST_TMP/r.txt" 2>&1 || rc=$?
check "--check-config still checks plugins for --role relay" test "$rc" -eq 78

rc=0
"$OUTBOXD" -c "$good" --role sideways >"$TEST_TMP/u.txt" 2>&1 || rc=$?
check "a bad role is a usage error (64)" test "$rc" -eq 64
rc=0
"$OUTBOXD" -c "$TEST_TMP/absent.ini" --check-config >"$TEST_TMP/a.txt" 2>&1 || rc=$?
check "a missing file: exit 78" test "$rc" -eq 78
check "a missing file is named" grep -q "absent.ini" "$TEST_TMP/a.txt"
# [metrics] listen: numeric HOST:PORT only (a name would bind where the resolver says).
f=$(ini listen '[metrics]\nlisten = localhost:9187\n' "$(dest news example)")
expect_refusal "$f" 'listen.ini:6: [metrics] listen: invalid value "localhost:9187": must be HOST:PORT'
for bad in 127.0.0.1 127.0.0.1:0 127.0.0.1:65536 127.0.0.1:x ::1:9187 '[::1]9187' ':9187'; do
	f=$(ini listen_bad "[metrics]\nlisten = $bad\n" "$(dest news example)")
	check "listen = $bad is refused" sh -c "! '$OUTBOXD' -c '$f' --check-config >/dev/null 2>&1"
done
for good in 127.0.0.1:9187 '[::1]:9187' 0.0.0.0:1; do
	f=$(ini listen_good "[metrics]\nlisten = $good\n" "$(dest news example)")
	check "listen = $good is accepted" sh -c "'$OUTBOXD' -c '$f' --check-config >/dev/null 2>&1"
done

finish
