#!/usr/bin/env bash
# tests/fresh-debian/run-demo.sh [--keep] [--ca FILE] SRC [DIR]: README's demo command on
# a Debian 12 that has nothing else: debootstraps bookworm into DIR (default
# /var/tmp/outboxd-fresh-debian), copies SRC's committed tree in (git
# archive HEAD; nothing of the host is bind-mounted but /proc, /sys and
# /dev), runs `bash conf/demo.sh` there as root, then runs it again with npm's
# registry unreachable in a fresh tools directory, which must fail with the
# one-line reason.  Prints the last 30 lines of each run.  Removes DIR at the
# end unless --keep.  --ca FILE: a certificate authority the network's TLS
# needs (a proxy that re-signs HTTPS, as on the project's machines), put in
# the chroot's /usr/local/share/ca-certificates and NODE_EXTRA_CA_CERTS; a
# fresh machine on such a network needs the same.  Needs root, debootstrap and Debian's mirror; it takes
# some ten minutes and is not part of make check or tests/run.sh.
set -euo pipefail

keep=0 ca=""
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=1; shift ;;
	--ca) ca=${2:?--ca needs a file}; shift 2 ;;
	*) break ;;
	esac
done
src=$(cd "${1:?usage: run-demo.sh [--keep] [--ca FILE] SRC [DIR]}" && pwd)
dir=${2:-/var/tmp/outboxd-fresh-debian}
mirror=${OUTBOX_DEBIAN_MIRROR:-http://deb.debian.org/debian}

unmount_all() {
	local m
	for m in dev/pts dev sys proc; do
		! mountpoint -q "$dir/$m" || umount -l "$dir/$m"
	done
}
finish() {
	local rc=$?
	set +e
	unmount_all
	[ "$keep" = 1 ] || rm -rf --one-file-system "$dir" "$dir.debootstrap.log"
	exit "$rc"
}
trap finish EXIT

[ -e "$dir/etc/debian_version" ] || debootstrap bookworm "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 || {
	tail -n 20 "$dir.debootstrap.log"; exit 1; }
mount -t proc proc "$dir/proc"
mount -t sysfs sys "$dir/sys"
mount --bind /dev "$dir/dev"
mount --bind /dev/pts "$dir/dev/pts"
cp /etc/resolv.conf "$dir/etc/resolv.conf"
rm -rf "$dir/root/outboxd"
mkdir -p "$dir/root/outboxd"
git -C "$src" archive HEAD | tar -x -C "$dir/root/outboxd"
extra_env=()
if [ -n "$ca" ]; then
	mkdir -p "$dir/usr/local/share/ca-certificates"
	cp "$ca" "$dir/usr/local/share/ca-certificates/run-demo-extra.crt"
	extra_env=(NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/run-demo-extra.crt)
fi

in_root() {
	chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		"${extra_env[@]}" "$@"
}

echo "== 1. bash conf/demo.sh from nothing (log: $dir/root/demo-1.log)"
rc1=0
in_root bash -c 'cd /root/outboxd && bash conf/demo.sh' >"$dir/root/demo-1.log" 2>&1 || rc1=$?
tail -n 30 "$dir/root/demo-1.log"
echo "== exit status $rc1"
in_root bash -c 'echo "left behind: clusters: $(pg_lsclusters -h | wc -l), prometheus.service: $(systemctl is-enabled prometheus.service 2>&1)"'

echo "== 2. again, npm's registry unreachable, a tools directory without fauxqs"
rc2=0
in_root bash -c 'cd /root/outboxd && OUTBOX_TOOLS_DIR=/var/tmp/outboxd-no-npm npm_config_registry=http://127.0.0.1:9/ bash conf/demo.sh' \
	>"$dir/root/demo-2.log" 2>&1 || rc2=$?
tail -n 30 "$dir/root/demo-2.log"
echo "== exit status $rc2"

[ "$rc1" -eq 0 ] || { echo "run-demo.sh: the demo failed on a fresh Debian 12"; exit 1; }
if [ "$rc2" -eq 0 ] || ! tail -n 1 "$dir/root/demo-2.log" | grep -q 'npm could not install fauxqs'; then
	echo "run-demo.sh: without npm's registry the demo did not end with the npm line"
	exit 1
fi
echo "run-demo.sh: both runs behaved"
