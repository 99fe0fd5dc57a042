#!/bin/bash
# tests/packaging/prove-install.sh DEBDIR [ROOT]: the .deb files of DEBDIR
# (tests/packaging/build-debs.sh DEBDIR) installed on a fresh Debian 12,
# used, removed and purged.  Not part of make check or tests/run.sh: it
# runs debootstrap (a few minutes, and Debian's mirror) and needs root.
#   1. debootstrap --variant=minbase bookworm ROOT (a new directory under
#      /var/tmp unless ROOT is given), then the tools the proof itself uses:
#      PostgreSQL 15, a C compiler, make, pkgconf;
#   2. dpkg -i every package, apt-get -f install for their dependencies;
#   3. outboxd --version, outboxctl --version, outboxctl migrate against the
#      chroot's PostgreSQL on a free 127.0.0.1 port, outboxd --check-config;
#   4. outboxd-plugin-probe on every shipped plugin, from the packaged
#      plugin directory, and on the example kit renamed and built out of
#      tree against outboxd-plugin-dev;
#   5. dpkg -r (conffiles stay), dpkg -P, apt-get autoremove --purge: the
#      tree is then the one of step 1 except for dpkg's and apt's records
#      and the system user outboxd, which Debian policy keeps.
# OUTBOX_PROOF_MIRROR sets the mirror (http://deb.debian.org/debian).
set -euo pipefail

debdir=$(cd "${1:?usage: prove-install.sh DEBDIR [ROOT]}" && pwd)
mirror=${OUTBOX_PROOF_MIRROR:-http://deb.debian.org/debian}
created=0
if [ -n "${2:-}" ]; then
	root=$2
else
	root=$(mktemp -d /var/tmp/outbox-proof.XXXXXX)
	chmod 0755 "$root" # it becomes /, which apt's and PostgreSQL's users traverse
	created=1
fi
[ "$(id -u)" = 0 ] || { echo "prove-install.sh: must run as root (debootstrap, chroot)"; exit 1; }
command -v debootstrap >/dev/null || { echo "prove-install.sh: apt-get install debootstrap"; exit 1; }
bad=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; bad=$((bad + 1)); }
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root "$@"; }
# apt without a terminal log (the chroot has no /dev/pts), non-interactive.
apt_in_root() { in_root env DEBIAN_FRONTEND=noninteractive apt-get -o Dpkg::Use-Pty=0 -y -qq "$@"; }
step() { echo; echo "== $*"; }
# The packages dpkg has installed or half-removed, one a line.
packages() {
	in_root dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' |
		awk '$1 != "un" && $1 != "pn" { print $2 }' | sort
}

cleanup() {
	set +e
	[ -n "${pg_started:-}" ] && in_root su postgres -c \
		"/usr/lib/postgresql/15/bin/pg_ctl -D /var/lib/postgresql/15/main -m fast -w stop" >/dev/null
	for m in "$root/proc" "$root/dev"; do
		mountpoint -q "$m" && umount "$m"
	done
	if [ "$created" = 1 ] && ! mountpoint -q "$root/proc" && ! mountpoint -q "$root/dev"; then
		rm -rf "$root" "$root.debootstrap.log"
	fi
}
trap cleanup EXIT

step "debootstrap bookworm into $root"
if [ ! -f "$root/etc/debian_version" ]; then
	debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 || {
		tail -n 30 "$root.debootstrap.log"; exit 1; }
	rm -f "$root.debootstrap.log"
fi
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Nothing the packages install is started by their maintainer scripts: the
# proof starts PostgreSQL itself, on a port of its own.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
apt_in_root update
apt_in_root install --no-install-recommends \
	postgresql-15 gcc libc6-dev make pkgconf >"$root/tmp/prereq.log" 2>&1 || {
	tail -n 30 "$root/tmp/prereq.log"; exit 1; }
echo "Debian $(cat "$root/etc/debian_version"), with postgresql-15 gcc make pkgconf"

# What the tree holds before the packages, for step 5.  dpkg's and apt's
# records, logs and caches change by design; so do the database's files.
snapshot() {
	in_root find / -xdev \( -path /proc -o -path /dev -o -path /sys -o -path /tmp -o -path /run \
		-o -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/cache -o -path /var/log \
		-o -path /var/lib/postgresql \) -prune -o -print | sort
}
snapshot >"$root/tmp/before.list"
packages >"$root/tmp/packages.before"
cp "$root/etc/passwd" "$root/tmp/passwd.before"
cp "$root/etc/group" "$root/tmp/group.before"

step "dpkg -i, then apt-get -f install"
mkdir -p "$root/tmp/debs"
cp "$debdir"/*.deb "$root/tmp/debs/"
rm -f "$root"/tmp/debs/*-dbgsym_*.deb
(cd "$root/tmp/debs" && ls ./*.deb | sed 's|^\./|  |')
in_root sh -c 'dpkg -i /tmp/debs/*.deb' >"$root/tmp/dpkg-i.log" 2>&1 || true
grep -E '^dpkg: dependency problems|depends on' "$root/tmp/dpkg-i.log" | head -n 8 | sed 's/^/  /'
apt_in_root -f install >"$root/tmp/apt-f.log" 2>&1 || {
	tail -n 30 "$root/tmp/apt-f.log"; exit 1; }
echo "apt-get -f install added $(packages | comm -13 "$root/tmp/packages.before" - |
	grep -cvE '^(liboutbox|outboxd)') packages of their dependencies"
in_root dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\n' \
	outboxd liboutbox0 liboutbox-dev outboxd-plugin-dev outboxd-bench | sed 's/^/  /'
if in_root dpkg-query -W -f '${db:Status-Abbrev}\n' outboxd liboutbox0 liboutbox-dev \
	outboxd-plugin-dev outboxd-bench | grep -qv '^ii'; then
	notok "every package is installed"
else
	ok "every package is installed"
fi
user=$(in_root getent passwd outboxd || true)
[ -n "$user" ] && ok "system user: $user" || notok "no system user outboxd"
in_root dpkg-query -W -f '${Conffiles}\n' outboxd | sed '/^$/d; s/^/  conffile:/'

step "outboxd --version, outboxctl --version"
in_root outboxd --version && ok "outboxd --version" || notok "outboxd --version"
in_root outboxctl --version && ok "outboxctl --version" || notok "outboxctl --version"

step "outboxctl migrate against PostgreSQL 15 in the chroot"
port=25432
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
in_root su postgres -c "/usr/lib/postgresql/15/bin/pg_ctl -D /var/lib/postgresql/15/main -w -l /tmp/pg.log \
	-o '-c config_file=/etc/postgresql/15/main/postgresql.conf -p $port -c listen_addresses=127.0.0.1 \
	-k /tmp -c dynamic_shared_memory_type=mmap' start" >/dev/null
pg_started=1
in_root su postgres -c "psql -X -q -h /tmp -p $port -c \"CREATE ROLE outbox LOGIN PASSWORD 'outbox'\" \
	-c 'CREATE DATABASE outbox OWNER outbox'"
echo "PostgreSQL $(in_root su postgres -c "psql -X -At -h /tmp -p $port -c 'SHOW server_version'") on 127.0.0.1:$port"
# The packaged relay.ini, pointed at that server; its plugins stay.
sed "s|^conninfo = .*|conninfo = postgresql://outbox@127.0.0.1:$port/outbox|" \
	"$root/etc/outboxd/relay.ini" >"$root/tmp/relay.ini"
# Placeholder secrets: --check-config wants credentials to exist, not to work.
export_pg="PGPASSWORD=outbox OPENAI_API_KEY=proof AWS_ACCESS_KEY_ID=proof AWS_SECRET_ACCESS_KEY=proof"
in_root env $export_pg outboxctl -c /tmp/relay.ini migrate && ok "outboxctl migrate" || notok "outboxctl migrate"
in_root env $export_pg outboxctl -c /tmp/relay.ini migrate && ok "outboxctl migrate again (nothing to do)" ||
	notok "outboxctl migrate again"
in_root env $export_pg outboxd -c /tmp/relay.ini --check-config && ok "outboxd --check-config (loads the plugins relay.ini names)" ||
	notok "outboxd --check-config"

step "outboxd-plugin-probe on each shipped plugin"
plugindir=$(in_root pkg-config --variable=plugindir outboxd-plugin)
echo "plugindir (outboxd-plugin.pc): $plugindir; ABI $(in_root pkg-config --variable=abi_version outboxd-plugin)"
for so in "$root$plugindir"/*.so; do
	name=$(basename "$so" .so)
	# Each plugin's required options; the LLM endpoint is a closed port.
	case "$name" in
	news_llm | explanation) opts="endpoint=http://127.0.0.1:9/v1 model=proof" ;;
	*) opts= ;;
	esac
	echo "\$ outboxd-plugin-probe $plugindir $name $opts"
	if in_root env OPENAI_API_KEY=proof outboxd-plugin-probe "$plugindir" "$name" $opts >"$root/tmp/probe.out" 2>&1; then
		grep -E '^(host ABI|verdict)' "$root/tmp/probe.out"
		ok "$name.so loads from $plugindir and runs"
	else
		cat "$root/tmp/probe.out"
		notok "$name.so is refused"
	fi
done

step "a plugin built out of tree against outboxd-plugin-dev"
in_root sh -ec 'rm -rf /tmp/myplugin; cp -r /usr/share/doc/outboxd-plugin-dev/examples /tmp/myplugin
	cd /tmp/myplugin; sed -i "s/example/myplugin/g" example.c Makefile; mv example.c myplugin.c
	make' && ok "myplugin.so built with the example kit's Makefile" || notok "myplugin.so does not build"
if in_root outboxd-plugin-probe /tmp/myplugin myplugin >"$root/tmp/probe.out" 2>&1; then
	grep -E '^(host ABI|verdict)' "$root/tmp/probe.out"
	ok "myplugin.so loads"
else
	cat "$root/tmp/probe.out"
	notok "myplugin.so is refused"
fi

in_root su postgres -c "/usr/lib/postgresql/15/bin/pg_ctl -D /var/lib/postgresql/15/main -m fast -w stop" >/dev/null
pg_started=

step "dpkg -r, then dpkg -P, then apt-get autoremove --purge"
pkgs="outboxd-bench outboxd-plugin-dev liboutbox-dev outboxd liboutbox0"
in_root dpkg -r $pkgs >/dev/null
[ -f "$root/etc/outboxd/relay.ini" ] && ok "after dpkg -r the conffile /etc/outboxd/relay.ini stays" ||
	notok "dpkg -r removed the conffile"
# Only a package with conffiles stays known to dpkg (config-files, "rc").
rc_pkgs=$(in_root dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' $pkgs 2>/dev/null | awk '$1 == "rc" { print $2 }' || true)
echo "left in state config-files: $rc_pkgs"
in_root dpkg -P $rc_pkgs >/dev/null
[ ! -e "$root/etc/outboxd" ] && ok "after dpkg -P /etc/outboxd is gone" || notok "/etc/outboxd is left"
apt_in_root autoremove --purge >/dev/null
# apt keeps a dependency that a package installed before still recommends
# (ca-certificates, by openssl): what apt added is purged by name.
added=$(packages | comm -13 "$root/tmp/packages.before" -)
if [ -n "$added" ]; then
	echo "purging what apt added and autoremove kept: $(echo $added)"
	apt_in_root purge $added >/dev/null
fi
rm -rf "$root/tmp/myplugin"
left=$(packages | grep -E '^(liboutbox|outboxd)' || true)
[ -z "$left" ] && ok "dpkg knows none of the packages" || notok "dpkg still knows: $left"
snapshot >"$root/tmp/after.list"
if diff -u "$root/tmp/before.list" "$root/tmp/after.list" >"$root/tmp/tree.diff"; then
	ok "every path outside dpkg's and apt's records is as before the install"
else
	notok "the tree differs from before the install (- gone, + left):"
	sed -n 's/^\([-+]\/\)/  \1/p' "$root/tmp/tree.diff"
fi
echo "the user database, before and after (policy keeps the system user):"
diff "$root/tmp/passwd.before" "$root/etc/passwd" | sed -n 's/^>/  passwd +/p' || true
diff "$root/tmp/group.before" "$root/etc/group" | sed -n 's/^>/  group +/p' || true

echo
[ "$bad" -eq 0 ] || { echo "$bad checks failed"; exit 1; }
echo "the packages install, work, and purge cleanly on Debian $(cat "$root/etc/debian_version")"
