#!/bin/bash
# tests/check-leftovers.sh: tests/harness/leftovers.sh, which tests/run.sh
# uses to fail when a process it started outlives the run, finds a process
# left running (and stops it), and finds nothing once everything stopped.
set -u
. "$OUTBOX_SRCDIR/tests/harness/leftovers.sh"
fails=0
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; fails=$((fails + 1)); }

leftovers_mark
sleep 300 &
left=$!
if OUTBOX_LEFTOVER_WAIT=0 leftovers_check 2>"${TMPDIR:-/tmp}/leftovers.$$"; then
	notok "a running child is reported"
else
	grep -q "^  $left sleep 300" "${TMPDIR:-/tmp}/leftovers.$$" && ok "a running child is reported with its PID and command" ||
		notok "the report names PID $left: $(cat "${TMPDIR:-/tmp}/leftovers.$$")"
fi
rm -f "${TMPDIR:-/tmp}/leftovers.$$"
# The check killed it; reap it so it is gone, not a zombie.
wait "$left" 2>/dev/null
[ ! -e "/proc/$left" ] && ok "the leftover was stopped" || notok "the leftover $left is still there"
leftovers_check && ok "nothing is reported once every child has stopped" || notok "a clean run reported leftovers"

( unset OUTBOX_RUN_TOKEN; leftovers_check 2>/dev/null ) && notok "a check without a mark passes" ||
	ok "a check without a mark fails"
[ "$fails" -eq 0 ]
