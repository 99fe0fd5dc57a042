#!/bin/bash
# test_daemon_hostile.sh: a running outboxd against a hostile neighbour.
#
# (1) Slow clients (docs/metrics.md, "Slow clients"): 40 connections from
# 127.0.0.2, each trickling one header line a second and never ending its
# request (tests/harness/slow-clients.py, bounded to 15 s), while /healthz
# and /readyz are asked from 127.0.0.1 every 0.3 s: every answer is 200
# within 1 s; no attacking connection lives past the whole-request
# deadline (5 s, plus the watchdog's period); the per-client limit refuses
# the rest; and the log grows by a few lines, not one per connection.
# (2) relay.ini replaced by a FIFO (docs/configuration.md, "Reloading"):
# SIGHUP is refused at once, naming the FIFO, the old configuration keeps
# running, and SIGTERM then stops the daemon within 5 s; --check-config and
# outboxctl on the FIFO fail at once.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
require_pg
require_aws
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

ops_setup hostile alpha
port=$(free_port)
printf '\n[metrics]\nlisten = 127.0.0.1:%s\n' "$port" >>"$INI"
URL="http://127.0.0.1:$port"
LOG=$TEST_TMP/outboxd.log
ops_start "$INI" "$LOG"
ready() { test "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$URL/readyz")" = 200; }
check "outboxd is ready" wait_for 60 ready
J1=$(ops_enqueue alpha 1)
check "a job runs before the attack" wait_for 30 status_is "$DB" "$J1" SUCCEEDED

# --- (1) slow clients -----------------------------------------------------------
lines_before=$(wc -l <"$LOG")
python3 "$OUTBOX_SRCDIR/tests/harness/slow-clients.py" 127.0.0.1 "$port" --from 127.0.0.2 \
	--connections 40 --seconds 15 --interval 1 >"$TEST_TMP/attack.json" &
attack=$!
ops_pids+=("$attack")
sleep 1 # probing starts once the attack holds its connections
probes=0 bad=0
while kill -0 "$attack" 2>/dev/null; do
	for path in /healthz /readyz; do
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$URL$path") || true
		probes=$((probes + 1))
		[ "$code" = 200 ] || { bad=$((bad + 1)); echo "# $path answered '$code' during the attack"; }
	done
	sleep 0.3
done
wait "$attack" || true
echo "# attack: $(cat "$TEST_TMP/attack.json"); $probes probes, $bad not 200 within 1 s"
attack_value() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$TEST_TMP/attack.json" "$1"; }
check "the attack ran ($probes probes during it)" test "$probes" -ge 30
check "every probe answered 200 within 1 s during the attack" test "$bad" = 0
check "the attack held connections ($(attack_value max_open) at once)" test "$(attack_value max_open)" -ge 8
check "the per-client limit refused the rest ($(attack_value refused) refused)" test "$(attack_value refused)" -gt 0
check "no request outlived the deadline (longest $(attack_value max_life_s) s)" \
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 7.5 else 1)" "$(attack_value max_life_s)"
grown=$(( $(wc -l <"$LOG") - lines_before ))
tail -n "$grown" "$LOG" | sed 's/^/# log: /'
check "the log grew by a few lines, not one per connection ($grown)" test "$grown" -le 8
J2=$(ops_enqueue alpha 2)
check "jobs still run after the attack" wait_for 30 status_is "$DB" "$J2" SUCCEEDED

# --- (2) a FIFO in relay.ini's place ---------------------------------------------
cp "$INI" "$TEST_TMP/relay.ini.good"
rm "$INI"
mkfifo "$INI"
start=$SECONDS
kill -HUP "$OPID"
check "SIGHUP with a FIFO: refused, naming it" \
	wait_for 10 grep -q "it is a FIFO, not a regular file" "$LOG"
check "refused at once ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt 5
check "the old configuration keeps running" curl -fs --max-time 1 -o /dev/null "$URL/healthz"
J3=$(ops_enqueue alpha 3)
check "and keeps running jobs" wait_for 30 status_is "$DB" "$J3" SUCCEEDED
start=$SECONDS
rc=0
kill -TERM "$OPID"
# bounded: a daemon stuck in open(2) would ignore SIGTERM
( sleep 10; kill -KILL "$OPID" 2>/dev/null ) &
killer=$!
wait "$OPID" || rc=$?
kill "$killer" 2>/dev/null || true
wait "$killer" 2>/dev/null || true
check "SIGTERM then stops the daemon, exit 0 ($rc)" test "$rc" = 0
check "within 5 s ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt 5
for cmd in "$OUTBOXD -c $INI --check-config" "$OUTBOXCTL -c $INI status"; do
	start=$SECONDS
	rc=0
	timeout 20 $cmd >"$TEST_TMP/fifo.out" 2>&1 || rc=$?
	check "${cmd##*/} on a FIFO: fails with 78 ($rc)" test "$rc" = 78
	check "${cmd##*/}: at once ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt 5
	check "${cmd##*/}: names the FIFO" grep -qF "it is a FIFO, not a regular file" "$TEST_TMP/fifo.out"
done
finish
