#!/bin/bash
# test_systemd_unit.sh: the generated outboxd.service as systemd sees it:
# systemd-analyze verify passes, the sandboxing's exposure is at most 2.0,
# and it is Type=notify with RestartPreventExitStatus=78.  The ExecStart
# paths are pointed at the build tree so verify can find the binary.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
if ! command -v systemd-analyze >/dev/null; then
	echo "SKIP: systemd-analyze is not installed"
	exit 77
fi
unit="$TEST_TMP/outboxd.service"
# Only the binary's path changes: the rest is exactly what make installs.
sed -n 's|^ExecStart=\([^ ]*\) .*|\1|p' "$OUTBOX_BUILDDIR/conf/outboxd.service" | head -1 >"$TEST_TMP/bin"
sed -e "s|$(cat "$TEST_TMP/bin")|$OUTBOX_BUILDDIR/outboxd|g" "$OUTBOX_BUILDDIR/conf/outboxd.service" >"$unit"
check "systemd-analyze verify passes" sh -c "systemd-analyze verify '$unit' >'$TEST_TMP/verify.out' 2>&1"
sed 's/^/# verify: /' "$TEST_TMP/verify.out"
exposure=$(systemd-analyze security --offline=yes "$unit" 2>/dev/null |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "# systemd-analyze security exposure: $exposure"
check "exposure is at most 2.0" awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 2.0) }'
check "Type=notify" grep -qx 'Type=notify' "$unit"
check "a configuration error (78) is not restarted" grep -qx 'RestartPreventExitStatus=78' "$unit"
finish
