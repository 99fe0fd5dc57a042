#!/bin/bash
# The console in a real browser (docs/console.md): Debian's chromium,
# headless, driven by tests/integration/console_browser.mjs with
# playwright-core.  Sign in; the overview shows the three destinations;
# filter the jobs by status; open a dead job, redrive it, see it SUCCEEDED
# after a reload; pause a destination and see the relay stop publishing for
# it (counted at the emulator: its queue stays empty while another
# destination flows), resume it and see its events arrive.  The screenshots
# go to $OUTBOX_CONSOLE_SCREENSHOTS (docs/console/ for the shipped ones),
# else to the test's directory.
#
# The console runs in a relay-only outboxd; a second one consumes every
# destination but price, so price's messages stay in its queue to be counted.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_console_lib.sh"
require_pg
require_aws
if [ ! -x /usr/bin/chromium ]; then
	echo "SKIP: /usr/bin/chromium is not installed (tests/harness/install-deps.sh)"
	exit 77
fi
if ! playwright_core_install; then
	echo "SKIP: playwright-core could not be installed"
	exit 77
fi

console_setup browser
# Nothing consumes price: the sweeper must not re-arm (and the relay send
# again) its waiting jobs while the test counts its messages.
printf '\n[sweeper]\nhorizon_seconds = 3600\n' >>"$INI"
CINI="$TEST_TMP/consumer.ini"
ops_ini "$CINI" "$DB"
ops_dest "$CINI" news "plugin.fail_before_generation = 1"
ops_dest "$CINI" explanation
SHOTS=${OUTBOX_CONSOLE_SCREENSHOTS:-$TEST_TMP/shots}
mkdir -p "$SHOTS" "$TEST_TMP/profile"
export BASE=$CURL_BASE TOKEN PROFILE="$TEST_TMP/profile" SHOTS
export DESTINATIONS="news price explanation"
export PLAYWRIGHT_CORE="$OUTBOX_TOOLS_DIR/node_modules/playwright-core/index.mjs"
browser() { timeout 120 node "$OUTBOX_SRCDIR/tests/integration/console_browser.mjs" "$@"; }
PQ=$EP/000000000000/ops-$$-price

"$OUTBOXD" -c "$INI" --role relay >>"$TEST_TMP/relay.log" 2>&1 &
ops_pids+=("$!")
"$OUTBOXD" -c "$CINI" --role consumer >>"$TEST_TMP/consumer.log" 2>&1 &
ops_pids+=("$!")
check "the console answers" wait_for 20 console_up

DEAD=$(ops_enqueue news 1)
for i in 2 3; do ops_enqueue explanation "$i" >/dev/null; done
check "a news job dies in its first generation" wait_for 30 status_is "$DB" "$DEAD" DEAD
explanation_done() { [ "$(count_jobs "destination = 'explanation' AND status = 'SUCCEEDED'")" = "$1" ]; }
check "the explanation jobs succeed" wait_for 30 explanation_done 2
ops_enqueue price 1 >/dev/null
check "price's first message reaches its queue" wait_for 30 depth_is "$PQ" 1

check "browser: sign in, the overview" browser signin
check "browser: filter the jobs by status" browser filter
check "browser: redrive the dead job" browser redrive "$DEAD"
check "the job is SUCCEEDED in the database too, generation 1" \
	[ "$(psql_q "$DB" "SELECT status || ' ' || redrive_generation FROM outbox.jobs WHERE job_id = '$DEAD'")" = "SUCCEEDED 1" ]
check "the log names the operator who redrove it" grep -q "console: job \"$DEAD\" redriven .* by alice (session" "$TEST_TMP/relay.log"

check "browser: pause price" browser pause price
check "price is paused in the database" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.paused_destinations WHERE destination = 'price'")" = 1 ]
for i in 2 3 4 5 6; do ops_enqueue price "$i" >/dev/null; done
for i in 4 5; do ops_enqueue explanation "$i" >/dev/null; done
# The relay claims with the pause in the same statement: once explanation's
# later jobs went through, the relay has claimed since price's were enqueued.
check "explanation keeps flowing while price is paused" wait_for 30 explanation_done 4
check "paused: nothing more reached price's queue (the emulator counts 1)" depth_is "$PQ" 1
check "paused: price's five new events are still NEW" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.outbox_events WHERE destination = 'price' AND status = 'NEW'")" = 5 ]
check "browser: resume price" browser resume price
check "resumed: the emulator counts all six price messages" wait_for 30 depth_is "$PQ" 6
check "the log names who paused and resumed" sh -c "grep -q 'console: destination \"price\" paused, by alice' '$TEST_TMP/relay.log' && grep -q 'console: destination \"price\" resumed, by alice' '$TEST_TMP/relay.log'"
check "browser: the remaining screenshots" browser shots
for s in signin overview jobs job-dead job-succeeded overview-paused dead overview-phone jobs-phone; do
	check "screenshot $s.png written" [ -s "$SHOTS/$s.png" ]
done
check "the token is in no log line" sh -c "! grep -qF '$TOKEN' '$TEST_TMP/relay.log' '$TEST_TMP/consumer.log'"
finish
