#!/bin/bash
# test_webhook_config.sh: outboxd --check-config on the webhook plugin's
# options: each mistake is refused (exit 78) with FILE:LINE, the secret is
# never shown, and plaintext http:// off loopback is allowed with a warning.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
# --check-config resolves AWS credentials: a static pair keeps it off IMDS.
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-AKIDOUTBOXTEST}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-outbox-test-secret}"
export OUTBOX_PLUGIN_DIR=${OUTBOX_PLUGIN_DIR:-$OUTBOX_BUILDDIR/.libs}
if [ ! -f "$OUTBOX_PLUGIN_DIR/webhook.so" ]; then
	echo "SKIP: plugin webhook.so is not built"
	exit 77
fi
ep=http://127.0.0.1:9
key=$(head -c 32 /dev/urandom | base64 -w0)
export HOOK_SECRET="whsec_$key"

# hooks NAME LINES: a file whose [destination:hooks] (line 5, its "plugin ="
# on line 7, where init()'s own refusals point) ends with LINES (plugin.url
# is line 8, plugin.secret_env line 9, further LINES from line 10).
hooks() {
	local f="$TEST_TMP/$1.ini"
	printf '[database]\nconninfo = postgresql://postgres@127.0.0.1:9/none\n[aws]\nendpoint_url = %s\n' "$ep" >"$f"
	printf '[destination:hooks]\nqueue_url = %s/000000000000/hooks\nplugin = webhook\n' "$ep" >>"$f"
	printf '%b' "$2" >>"$f"
	echo "$f"
}
std='plugin.url = https://billing.example.com/outboxd/jobs\nplugin.secret_env = HOOK_SECRET\n'

# refused FILE PATTERN: exit 78 and PATTERN in the output, the key nowhere.
refused() {
	local rc=0 out="$TEST_TMP/out.txt"
	"$OUTBOXD" -c "$1" --check-config >"$out" 2>&1 || rc=$?
	check "$(basename "$1"): exit 78" test "$rc" -eq 78
	check "$(basename "$1"): reports '$2'" grep -qF -- "$2" "$out"
	check "$(basename "$1"): the secret is not shown" sh -c "! grep -qF -- '$key' '$out'"
}

f=$(hooks good "$std"'plugin.timeout_ms = 2500\nplugin.header.X-Source = outboxd\nplugin.header.Authorization = Bearer abc\n')
check "a good webhook destination passes --check-config" \
	sh -c "'$OUTBOXD' -c '$f' --check-config >'$TEST_TMP/good.txt' 2>&1"
check "https: no plaintext warning" sh -c "! grep -q plaintext '$TEST_TMP/good.txt'"
check "the secret is not shown" sh -c "! grep -qF -- '$key' '$TEST_TMP/good.txt'"

refused "$(hooks badurl 'plugin.url = ftp://billing.example.com/jobs\nplugin.secret_env = HOOK_SECRET\n')" \
	'badurl.ini:8: [destination:hooks] plugin.url: invalid URL "ftp://billing.example.com/jobs"'
refused "$(hooks spaceurl 'plugin.url = https://billing.example.com/a b\nplugin.secret_env = HOOK_SECRET\n')" \
	'spaceurl.ini:8: [destination:hooks] plugin.url: invalid URL "https://billing.example.com/a b": contains white space'
refused "$(hooks nourl 'plugin.secret_env = HOOK_SECRET\n')" \
	'nourl.ini:5: [destination:hooks] plugin.url: required key is missing'
refused "$(hooks noenv 'plugin.url = https://billing.example.com/jobs\nplugin.secret_env = NO_SUCH_WEBHOOK_SECRET\n')" \
	'noenv.ini:9: [destination:hooks] plugin.secret_env: environment variable "NO_SUCH_WEBHOOK_SECRET" is not set'
refused "$(hooks pasted "plugin.url = https://billing.example.com/jobs\nplugin.secret_env = whsec_$key\n")" \
	'pasted.ini:9: [destination:hooks] plugin.secret_env: value (not shown) '
refused "$(hooks fast "${std}plugin.timeout_ms = 50\n")" \
	'fast.ini:10: [destination:hooks] plugin.timeout_ms: value 50 is out of range (100 .. 86400000)'
refused "$(hooks slow "${std}plugin.timeout_ms = 86400001\n")" \
	'slow.ini:10: [destination:hooks] plugin.timeout_ms: value 86400001 is out of range (100 .. 86400000)'
refused "$(hooks cap "${std}plugin.max_response_bytes = -1\n")" \
	'cap.ini:10: [destination:hooks] plugin.max_response_bytes: value -1 is out of range'
refused "$(hooks colour "${std}plugin.colour = blue\n")" \
	'colour.ini:10: [destination:hooks] plugin.colour: unknown key for plugin "webhook" (it accepts: plugin.url, plugin.secret_env, plugin.timeout_ms, plugin.ca_file, plugin.max_response_bytes, plugin.header.NAME)'
refused "$(hooks badname "${std}plugin.header.X@Y = 1\n")" \
	'badname.ini:10: [destination:hooks] plugin.header.X@Y: invalid plugin option name'
refused "$(hooks twice "${std}plugin.header.X-A = 1\nplugin.header.X-A = 2\n")" \
	'twice.ini:11: [destination:hooks] plugin.header.X-A: duplicate key'
refused "$(hooks reserved "${std}plugin.header.Webhook-Signature = v1,forged\n")" \
	'reserved.ini:7: [destination:hooks] plugin: plugin "webhook" failed to start: plugin.header.Webhook-Signature: the plugin sets this header itself'
refused "$(hooks ca "${std}plugin.ca_file = $TEST_TMP/no-such-ca.pem\n")" \
	"plugin \"webhook\" failed to start: plugin.ca_file \"$TEST_TMP/no-such-ca.pem\" cannot be read"

HOOK_SECRET="not-a-standard-webhooks-secret"
refused "$(hooks prefix "$std")" \
	'failed to start: environment variable "HOOK_SECRET" (plugin.secret_env): the secret does not start with "whsec_"'
HOOK_SECRET="whsec_not base64!"
refused "$(hooks base64 "$std")" 'the secret after "whsec_" is not valid base64'
HOOK_SECRET="whsec_$(head -c 8 /dev/urandom | base64 -w0)"
refused "$(hooks short "$std")" "the secret's key is 8 bytes; it must have 24 to 1024"
HOOK_SECRET="whsec_$key"

f=$(hooks plain 'plugin.url = http://user:pw@billing.example.com:8080/jobs?token=t0k3n\nplugin.secret_env = HOOK_SECRET\n')
rc=0
"$OUTBOXD" -c "$f" --check-config >"$TEST_TMP/plain.txt" 2>&1 || rc=$?
check "plain http:// off loopback is allowed" test "$rc" = 0
check "and warned about" grep -qF 'webhook URL "http://billing.example.com:8080/jobs?..." is plaintext http:// to a host that is not loopback' "$TEST_TMP/plain.txt"
check "the URL's password and query are not shown" sh -c "! grep -qE 'pw@|t0k3n' '$TEST_TMP/plain.txt'"
for url in http://127.0.0.1:8080/jobs http://localhost/jobs 'http://[::1]:9/jobs' http://127.1.2.3/x; do
	f=$(hooks loop "plugin.url = $url\nplugin.secret_env = HOOK_SECRET\n")
	check "no warning for loopback $url" sh -c "'$OUTBOXD' -c '$f' --check-config 2>&1 | grep -q 'test is successful' &&
		! '$OUTBOXD' -c '$f' --check-config 2>&1 | grep -q plaintext"
done
finish
