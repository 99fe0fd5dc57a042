# tests/harness/leftovers.sh: find the processes a test run left behind.
#
# Source it and call leftovers_mark once, before starting anything: it
# exports OUTBOX_RUN_TOKEN, a value unique to this run, which every process
# started afterwards inherits in its environment (a test server, a daemon,
# PostgreSQL under runuser, a node stub).  leftovers_check then lists every
# process other than the caller that still carries the token, waits up to
# OUTBOX_LEFTOVER_WAIT seconds (default 5) for processes that are already
# stopping, and returns 1 if any is left (after printing them and killing
# them, by PID, so the next run starts clean).  A process that clears its
# environment escapes the check; none of ours does.
#
# Reading another user's /proc/PID/environ needs root or the same user,
# which tests/run.sh has.

leftovers_mark() {
	OUTBOX_RUN_TOKEN="outbox-run-$$-$(date +%s%N)"
	export OUTBOX_RUN_TOKEN
}

# Prints "PID COMMAND" for each marked process but the calling shell.
leftovers_list() {
	local env pid
	for env in /proc/[0-9]*/environ; do
		pid=${env#/proc/}
		pid=${pid%/environ}
		[ "$pid" != "$$" ] && [ "$pid" != "${BASHPID:-$$}" ] || continue
		if tr '\0' '\n' 2>/dev/null <"$env" | grep -qxF "OUTBOX_RUN_TOKEN=$OUTBOX_RUN_TOKEN"; then
			printf '%s %s\n' "$pid" "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")"
		fi
	done
}

leftovers_check() {
	local left waited=0 limit=$(( ${OUTBOX_LEFTOVER_WAIT:-5} * 10 ))
	[ -n "${OUTBOX_RUN_TOKEN:-}" ] || { echo "leftovers_check: leftovers_mark was not called" >&2; return 1; }
	left=$(leftovers_list)
	while [ -n "$left" ] && [ "$waited" -lt "$limit" ]; do
		sleep 0.1 # bounded wait for processes that were just signalled
		waited=$((waited + 1))
		left=$(leftovers_list)
	done
	[ -n "$left" ] || return 0
	echo "processes this run started are still running:" >&2
	printf '  %s\n' "$left" >&2
	printf '%s\n' "$left" | while read -r pid _; do kill "$pid" 2>/dev/null || true; done
	return 1
}
