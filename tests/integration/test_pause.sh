#!/bin/bash
# outboxctl pause DEST / resume DEST (docs/outboxd.md, "Pausing a
# destination") with two instances sharing one database: while alpha is
# paused neither instance publishes or claims anything of alpha (its events
# stay NEW, messages already in its queue stay there, nothing reaches its
# DLQ) while beta keeps flowing; after resume the backlog drains, every job
# SUCCEEDED once, nothing is dead.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_ops_lib.sh"
require_pg
require_aws

ops_setup pause alpha beta
AQ=$EP/000000000000/ops-$$-alpha
AQDLQ=$EP/000000000000/ops-$$-alpha-dlq
ctl() { "$OUTBOXCTL" -c "$INI" "$@"; }
paused_in() { [ "$(grep -c "destination paused: not receiving or claiming dest=alpha" "$1")" -ge 2 ]; }
resumed_in() { grep -q "destination resumed dest=alpha" "$1"; }

ops_start "$INI" "$TEST_TMP/a.log"; A=$OPID
ops_start "$INI" "$TEST_TMP/b.log"; B=$OPID
W=$(ops_enqueue beta warmup)
check "both instances serve (a warm-up job succeeds)" wait_for 30 status_is "$DB" "$W" SUCCEEDED

check "pause alpha" [ "$(ctl pause alpha)" = 'destination "alpha" paused' ]
check "pause again: already paused" [ "$(ctl pause alpha)" = 'destination "alpha" was already paused' ]
t0=$(date +%s%N)
check "instance A obeys within 3 s (both of its workers)" wait_for 3 paused_in "$TEST_TMP/a.log"
check "instance B obeys within 3 s (both of its workers)" wait_for 3 paused_in "$TEST_TMP/b.log"
echo "# both instances paused alpha after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check "status --json: alpha paused, beta not" \
	[ "$(ctl --json status | jq -c '[.destinations.alpha.paused, .destinations.beta.paused]')" = "[true,false]" ]
check "status text marks alpha paused" sh -c "'$OUTBOXCTL' -c '$INI' status | grep -qE '^alpha .* paused\$'"

# Jobs of both destinations; two alpha messages also sit in its queue, as if
# published just before the pause.
alpha=() beta=()
for i in 1 2 3 4 5; do alpha+=("$(ops_enqueue alpha "$i")"); beta+=("$(ops_enqueue beta "$i")"); done
send_body "$AQ" "$(event_body "$DB" "${alpha[0]}")"
send_body "$AQ" "$(event_body "$DB" "${alpha[1]}")"
beta_done() { [ "$(count_jobs "destination = 'beta' AND status = 'SUCCEEDED'")" = 6 ]; }
check "beta keeps flowing while alpha is paused" wait_for 30 beta_done
# beta's five jobs went through both relays and consumers meanwhile: had
# alpha not been paused, its jobs would have been published and run too.
check "paused: no alpha event published" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.outbox_events WHERE destination = 'alpha' AND status = 'NEW'")" = 5 ]
check "paused: no alpha job claimed" [ "$(count_jobs "destination = 'alpha' AND (status <> 'PENDING' OR attempt_count > 0)")" = 0 ]
check "paused: no alpha handler ran" [ "$(psql_q "$DB" "SELECT count(*) FROM public.recorder_runs r JOIN outbox.jobs j USING (job_id) WHERE j.destination = 'alpha'")" = 0 ]
check "paused: the two alpha messages are still in its queue" depth_is "$AQ" 2
check "paused: nothing in alpha's DLQ" depth_is "$AQDLQ" 0

check "resume alpha" [ "$(ctl resume alpha)" = 'destination "alpha" resumed' ]
check "resume again: was not paused" [ "$(ctl resume alpha)" = 'destination "alpha" was not paused' ]
alpha_done() { [ "$(count_jobs "destination = 'alpha' AND status = 'SUCCEEDED'")" = 5 ]; }
check "after resume the backlog drains" wait_for 30 alpha_done
# One instance may drain the whole backlog before the other's next read of
# the pause state (at most a second old): wait for both to say so.
check "both instances logged the resume" wait_for 10 sh -c "grep -q 'destination resumed dest=alpha' '$TEST_TMP/a.log' && grep -q 'destination resumed dest=alpha' '$TEST_TMP/b.log'"
ok=1
for j in "${alpha[@]}" "${beta[@]}"; do
	[ "$(recorder_rows "$DB" "$j")" = 1 ] || { echo "job $j: $(recorder_rows "$DB" "$j") committed runs"; ok=0; }
done
check "every job committed exactly once" [ "$ok" = 1 ]
check "nothing dead" [ "$(count_jobs "status = 'DEAD'"):$(psql_q "$DB" "SELECT count(*) FROM outbox.outbox_events WHERE status = 'DEAD'")" = 0:0 ]
check "alpha's queue drains" wait_for 20 depth_is "$AQ" 0
check "alpha's DLQ is empty" depth_is "$AQDLQ" 0
check "status --json: nothing paused" [ "$(ctl --json status | jq -c '[.destinations.alpha.paused, .destinations.beta.paused]')" = "[false,false]" ]

# bad input
rc=0; ctl pause nosuch 2>"$TEST_TMP/err" || rc=$?
check "pause of an unknown destination: exit 64" [ "$rc" = 64 ]
check "pause of an unknown destination: clear error" grep -q "outboxctl: destination \"nosuch\" is not configured in" "$TEST_TMP/err"
rc=0; ctl pause 2>/dev/null || rc=$?
check "pause without a destination: exit 64" [ "$rc" = 64 ]
check "instance A stops cleanly" ops_stop "$A"
check "instance B stops cleanly" ops_stop "$B"
finish
