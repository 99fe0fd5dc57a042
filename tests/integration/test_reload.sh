#!/bin/bash
# SIGHUP reload (docs/outboxd.md, "Reloading") of a running outboxd
# --role all: (1) an added destination starts and the others keep running
# untouched; (2) a changed plugin option restarts that destination alone and
# takes effect; (3) a removed destination with a job in flight drains (the
# running handler finishes, nothing else of it is claimed, nothing lost:
# re-added, its waiting job runs once); (4) a broken file changes nothing,
# every error is logged FILE:LINE, and a changed [database] conninfo is
# reported as needing a restart while the running value stays; (5) [logging]
# level applies at reload, and --log-level on the command line wins over it.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
require_pg
require_aws

export GRACE=10 WORKERS=1
ops_setup reload alpha beta
LOG=$TEST_TMP/outboxd.log
# write_conf FILE DEST[:EXTRA]...: the ini with those destinations
write_conf() {
	local f=$1 spec
	shift
	ops_ini "$f" "$DB"
	for spec in "$@"; do ops_dest "$f" "${spec%%:*}" "$(printf '%s' "${spec#*:}" | tr '|' '\n')"; done
	printf '\n[metrics]\nlisten = 127.0.0.1:%s\n' "$MPORT" >>"$f"
}
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
MPORT=$(free_port)
# beta_workers: outboxd_consumer_workers_connected of beta (its worker and DLQ reader)
beta_workers() {
	curl -s "http://127.0.0.1:$MPORT/metrics" |
		awk '/^outboxd_consumer_workers_connected\{/ && /"beta"/ { s += $NF } END { printf "%d\n", s }'
}
beta_workers_at_least() { [ "$(beta_workers)" -ge "$1" ]; }
reload() { # EXPECTED_LOG_LINE: HUP and wait until the log says it
	local before
	before=$(grep -c "$1" "$LOG" || true)
	kill -HUP "$OPID"
	wait_for 30 sh -c "[ \$(grep -c '$1' '$LOG') -gt $before ]"
}
starts() { grep -c "consumer started: 1 destination(s)" "$LOG" || true; }
ctl() { "$OUTBOXCTL" -c "$INI" "$@"; }

write_conf "$INI" "alpha:plugin.sleep_ms = 3000" "beta:"
ops_start "$INI" "$LOG"
B1=$(ops_enqueue beta 1)
check "beta serves" wait_for 30 status_is "$DB" "$B1" SUCCEEDED
check "two destination units started" [ "$(starts)" = 2 ]

# (1) add gamma
write_conf "$INI" "alpha:plugin.sleep_ms = 3000" "beta:" "gamma:"
cp "$INI" "$TEST_TMP/ctl.ini"
ctl create-queues >/dev/null
check "(1) add: reloaded" reload "configuration reloaded: 1 added, 0 removed, 0 restarted, 2 unchanged"
check "(1) add: exactly one more unit started (alpha and beta untouched)" [ "$(starts)" = 3 ]
check "(1) add: nothing stopped" [ "$(grep -c 'stopping dest=' "$LOG" || true)" = 0 ]
G1=$(ops_enqueue gamma 1)
check "(1) add: the new destination is published and consumed" wait_for 30 status_is "$DB" "$G1" SUCCEEDED
B2=$(ops_enqueue beta 2)
check "(1) add: beta still serves" wait_for 30 status_is "$DB" "$B2" SUCCEEDED

# (2) change beta's plugin option: its first attempt now retries
BETA_WORKERS=$(beta_workers)
check "(2) change: beta's sessions are counted ($BETA_WORKERS)" [ "$BETA_WORKERS" -ge 1 ]
write_conf "$INI" "alpha:plugin.sleep_ms = 3000" "beta:plugin.retry_until_attempt = 1" "gamma:"
check "(2) change: reloaded" reload "configuration reloaded: 0 added, 0 removed, 1 restarted, 2 unchanged"
check "(2) change: only beta was stopped" [ "$(grep 'stopping dest=' "$LOG" | tr '\n' ' ' | sed 's/.*stopping/stopping/')" = "stopping dest=beta " ]
check "(2) change: one unit restarted" [ "$(starts)" = 4 ]
B3=$(ops_enqueue beta 3)
check "(2) change: beta serves with the new option" wait_for 30 status_is "$DB" "$B3" SUCCEEDED
# The stopped unit's sessions leave the gauge: once the new unit has all
# its sessions, beta counts what it counted before.
check "(2) change: beta's sessions are all up again" wait_for 10 beta_workers_at_least "$BETA_WORKERS"
check "(2) change: beta's sessions counted once ($BETA_WORKERS before, $(beta_workers) now)" \
	[ "$(beta_workers)" = "$BETA_WORKERS" ]
check "(2) change: the new option applied (RETRY first, then OK: 2 attempts)" \
	[ "$(psql_q "$DB" "SELECT attempt_count FROM outbox.jobs WHERE job_id = '$B3'")" = 2 ]
G2=$(ops_enqueue gamma 2)
check "(2) change: gamma untouched and serving" wait_for 30 status_is "$DB" "$G2" SUCCEEDED
check "(2) change: gamma kept its first option set (1 attempt)" \
	[ "$(psql_q "$DB" "SELECT attempt_count FROM outbox.jobs WHERE job_id = '$G2'")" = 1 ]

# (3) remove alpha while its handler runs (3 s, grace 10 s)
# one worker per destination: busy with A1 while A2's message waits
A1=$(ops_enqueue alpha 1)
running() { [ "$(executions "$A1")" -ge 1 ]; }
check "(3) remove: alpha's handler is running" wait_for 30 running
A2=$(ops_enqueue alpha 2)
published() { [ "$(psql_q "$DB" "SELECT status FROM outbox.outbox_events WHERE job_id = '$A2'")" = PUBLISHED ]; }
check "(3) remove: alpha's second job is in its queue" wait_for 30 published
write_conf "$INI" "beta:plugin.retry_until_attempt = 1" "gamma:"
check "(3) remove: reloaded" reload "configuration reloaded: 0 added, 1 removed, 0 restarted, 2 unchanged"
check "(3) remove: the running handler finished: SUCCEEDED" status_is "$DB" "$A1" SUCCEEDED
check "(3) remove: it ran once" [ "$(executions "$A1"):$(recorder_rows "$DB" "$A1")" = 1:1 ]
check "(3) remove: alpha was drained" grep -q "stopping dest=alpha" "$LOG"
G3=$(ops_enqueue gamma 3)
check "(3) remove: the others keep flowing" wait_for 30 status_is "$DB" "$G3" SUCCEEDED
check "(3) remove: alpha's other job waits, unclaimed, not lost" \
	[ "$(psql_q "$DB" "SELECT status || ':' || attempt_count FROM outbox.jobs WHERE job_id = '$A2'")" = "PENDING:0" ]
write_conf "$INI" "alpha:" "beta:plugin.retry_until_attempt = 1" "gamma:"
check "(3) re-add alpha: reloaded" reload "configuration reloaded: 1 added, 0 removed, 0 restarted, 2 unchanged"
check "(3) re-add alpha: its waiting job runs" wait_for 30 status_is "$DB" "$A2" SUCCEEDED
check "(3) re-add alpha: once" [ "$(executions "$A2"):$(recorder_rows "$DB" "$A2")" = 1:1 ]

# (4) a broken file: every error logged with FILE:LINE, nothing changes
cp "$INI" "$TEST_TMP/good.ini"
sed -i 's/^poll_interval_ms = 100$/poll_interval_ms = 100\nno_such_key = 1/' "$INI"
sed -i '0,/^plugin.log_file/s//plugin.sleep_ms = soon\n&/' "$INI"
ops_dest "$INI" delta "plugin.nonsense = 1"
sed -i "/^\[destination:delta\]/{n;d}" "$INI"   # delta loses its queue_url
check "(4) broken: reload refused" reload "reload failed: configuration file \"$INI\" test failed; the running configuration stays"
check "(4) broken: the unknown key, FILE:LINE" grep -qE "$INI:[0-9]+: \[relay\] no_such_key: " "$LOG"
check "(4) broken: the missing queue_url, FILE:LINE" grep -qE "$INI:[0-9]+: \[destination:delta\].*queue_url" "$LOG"
check "(4) broken: nothing stopped or started" [ "$(starts)" = 5 ]
B4=$(ops_enqueue beta 4)
check "(4) broken: the old configuration still serves" wait_for 30 status_is "$DB" "$B4" SUCCEEDED
# a bad plugin option alone (the file parses): refused by the plugin check
cp "$TEST_TMP/good.ini" "$INI"
sed -i '0,/^plugin.log_file/s//plugin.sleep_ms = soon\n&/' "$INI"
check "(4) bad plugin option: reload refused" reload "reload failed: configuration file"
check "(4) bad plugin option: FILE:LINE [destination:alpha] plugin.sleep_ms" grep -qE "$INI:[0-9]+: \[destination:alpha\] plugin.sleep_ms: " "$LOG"
# a changed conninfo: needs a restart; the running value stays
cp "$TEST_TMP/good.ini" "$INI"
sed -i "s|^conninfo = .*|conninfo = postgresql://postgres@127.0.0.1:1/nowhere|" "$INI"
check "(4) conninfo: reloaded without a destination change" reload "configuration reloaded: no destination changed"
check "(4) conninfo: says it needs a restart" grep -q "reload: \[database\] conninfo changed; it needs a restart of outboxd, the running value stays" "$LOG"
check "(4) conninfo: the value is never logged" sh -c "! grep -q 'nowhere' '$LOG'"
# a changed [retention] key: the maintenance thread keeps its settings, and says so
cp "$TEST_TMP/good.ini" "$INI"
printf '\n[retention]\nbatch_size = 7\n' >>"$INI"
check "(4) retention: reloaded without a destination change" reload "configuration reloaded: no destination changed"
check "(4) retention: says it needs a restart" grep -q "reload: \[retention\] batch_size changed; it needs a restart of outboxd, the running value stays" "$LOG"
G4=$(ops_enqueue gamma 4)
check "(4) conninfo: still served through the running database" wait_for 30 status_is "$DB" "$G4" SUCCEEDED

# (5) [logging] level: warning silences the LOG lines of the next reload
# (its warning still comes); back to info, the reloads say so again
cp "$TEST_TMP/good.ini" "$INI"
printf '\n[logging]\nlevel = warning\n' >>"$INI"
check "(5) logging: the new level is announced" reload "LOG: log level is now warning"
done_lines() { grep -c "configuration reloaded" "$LOG" || true; }
before=$(done_lines)
printf '\n[retention]\nbatch_size = 9\n' >>"$INI"
check "(5) logging: a warning still comes" reload "reload: \[retention\] batch_size changed"
cp "$TEST_TMP/good.ini" "$INI"
check "(5) logging: back to info is announced" reload "LOG: log level is now info"
check "(5) logging: at warning, the reload wrote no LOG line" [ "$(done_lines)" = "$((before + 1))" ]

check "every job ran to SUCCEEDED, nothing dead" [ "$(count_jobs "status <> 'SUCCEEDED'")" = 0 ]
ok=1
for j in $(psql_q "$DB" "SELECT job_id FROM outbox.jobs"); do
	[ "$(recorder_rows "$DB" "$j")" = 1 ] || { echo "job $j: $(recorder_rows "$DB" "$j") committed runs"; ok=0; }
done
check "every job committed exactly once" [ "$ok" = 1 ]
check "outboxd stops cleanly" ops_stop "$OPID"

# (5) --log-level beats [logging] level, at start and at reload; [logging]
# format = json applies from the start
printf '\n[logging]\nlevel = error\nformat = json\n' >>"$INI"
LOG=$TEST_TMP/pinned.log
"$OUTBOXD" -c "$INI" --role all --log-level info >>"$LOG" 2>&1 &
OPID=$!
ops_pids+=("$OPID")
check "(5) --log-level info: the start is logged despite level = error" wait_for 30 grep -q '"level":"LOG","program":"outboxd".*"message":"outboxd started' "$LOG"
check "(5) format = json: the start is a JSON line" sh -c "grep '\"message\":\"outboxd started' '$LOG' | jq -e .pid >/dev/null"
check "(5) --log-level info: a reload keeps it" reload '"message":"configuration reloaded'
# A second daemon beside the first: its own metrics port.
sed "s/^listen = .*/listen = 127.0.0.1:$(free_port)/" "$INI" >"$TEST_TMP/text.ini"
check "(5) --log-format text on the command line beats format = json" sh -c "'$OUTBOXD' -c '$TEST_TMP/text.ini' --log-format text --role all --log-level info >'$TEST_TMP/text.log' 2>&1 & p=\$!; for i in \$(seq 300); do grep -q 'LOG: outboxd started' '$TEST_TMP/text.log' && break; sleep 0.1; done; kill -TERM \$p; wait \$p; grep -q 'LOG: outboxd started' '$TEST_TMP/text.log'"
check "(5) --log-level info: no level change announced" sh -c "! grep -q 'log level is now' '$LOG'"
check "outboxd stops cleanly (pinned)" ops_stop "$OPID"
finish
