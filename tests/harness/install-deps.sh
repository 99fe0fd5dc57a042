# tests/harness/install-deps.sh: install what outboxd needs on Debian 12, as
# root.  Source it, then call
#   install_run_deps    what building outboxd and running the demo need
#                       (conf/demo.sh): the compiler and autotools, the -dev
#                       libraries, PostgreSQL 15, Node and npm
#   install_test_deps   that, plus the test tools (tests/run.sh)
# (install_deps is install_test_deps, for callers that know only that name).
# Each asks apt only for what is missing (Node and npm may come from outside
# Debian) and appends what it installed to $OUTBOX_TOOLS_DIR/apt-installed.txt,
# so that README's "apt-get purge" line removes exactly that.
#
# Debian's postinst scripts would start what they install: postgresql-15
# creates and starts a cluster 15/main on port 5432, prometheus enables and
# starts prometheus.service.  outboxd's scripts run their own throwaway
# cluster and need only promtool, so while apt runs a policy-rc.d keeps
# services from starting, and afterwards a 15/main cluster this install
# created is dropped and a prometheus.service it enabled is disabled.
#
# On failure a function returns 1 with OUTBOX_FAILURE set to the one line
# that says what failed and how to fix it; the calling script prints it last.
: "${OUTBOX_TOOLS_DIR:=/var/tmp/outboxd-test-tools}"

# libmicrohttpd-dev: outboxd's /metrics, /healthz and /readyz server.
OUTBOX_RUN_PKGS=(build-essential autoconf automake libtool pkg-config
	libpq-dev libcurl4-openssl-dev libjansson-dev libinih-dev libssl-dev libxml2-dev
	libmicrohttpd-dev postgresql-15 postgresql-client-15 curl ca-certificates)
# prometheus: promtool, which test_observability.sh checks /metrics with;
# universal-ctags: tests/check-layers.sh finds the function definitions of
# core/ with it, to fail on a call cycle between files; devscripts,
# debhelper, lintian, faketime: tests/packaging/build-debs.sh (run last by
# tests/run.sh) builds the Debian packages with dpkg-buildpackage and dh,
# checks them with lintian, and shifts its clock with faketime; chromium:
# the headless browser test_console_browser.sh drives the console in (with
# playwright-core from npm, which downloads no browser of its own).
OUTBOX_TEST_PKGS=(libcmocka-dev valgrind jq clang libclang-rt-14-dev python3 python3-psycopg2
	prometheus universal-ctags devscripts debhelper lintian faketime chromium)

# The oldest Node the emulator is known to run on here (Debian 12 ships
# 18.20.4), and the one fauxqs 1.9.2's package.json asks for.
OUTBOX_NODE_MIN=18 OUTBOX_NODE_WANTED=20

install_run_deps() {
	install_pkgs "${OUTBOX_RUN_PKGS[@]}" && check_node
}

install_test_deps() {
	install_pkgs "${OUTBOX_RUN_PKGS[@]}" "${OUTBOX_TEST_PKGS[@]}" && check_node
}

install_deps() {
	install_test_deps
}

# Installs the packages of the arguments that are missing, and Node and npm
# when there are none.
install_pkgs() {
	local want=() p had_main=0 log
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || want+=("$p")
	done
	command -v node >/dev/null || want+=(nodejs)
	command -v npm >/dev/null || want+=(npm)
	[ ${#want[@]} -gt 0 ] || return 0
	[ "$(id -u)" = 0 ] || {
		OUTBOX_FAILURE="install-deps: packages missing: ${want[*]}; run as root, or install them and set OUTBOX_SKIP_INSTALL=1"
		return 1; }
	[ ! -e /etc/postgresql/15/main ] || had_main=1
	echo "installing ${want[*]}" >&2
	log=$(mktemp /tmp/outbox-apt.XXXXXX)
	no_service_starts
	if ! apt-get update -qq >"$log" 2>&1 ||
	   ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${want[@]}" >>"$log" 2>&1; then
		allow_service_starts
		tail -n 20 "$log" >&2
		OUTBOX_FAILURE="install-deps: apt-get could not install ${want[*]}: $(grep -m1 -E '^(E|Err):' "$log" || tail -n 1 "$log"); check /etc/apt/sources.list* and the network, then run the command again"
		rm -f "$log"
		return 1
	fi
	allow_service_starts
	rm -f "$log"
	mkdir -p "$OUTBOX_TOOLS_DIR"
	printf '%s\n' "${want[@]}" >>"$OUTBOX_TOOLS_DIR/apt-installed.txt"
	if [ "$had_main" = 0 ] && [ -e /etc/postgresql/15/main ]; then
		pg_dropcluster --stop 15 main >&2 || true
	fi
	case " ${want[*]} " in
	*" prometheus "*) systemctl disable --now prometheus.service >/dev/null 2>&1 || true ;;
	esac
}

# A policy-rc.d that forbids every start (exit 101), unless one is there.
no_service_starts() {
	outbox_own_policy=0
	[ ! -e /usr/sbin/policy-rc.d ] || return 0
	printf '#!/bin/sh\n# conf/demo.sh, tests/run.sh: no service starts while they install\nexit 101\n' \
		>/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	outbox_own_policy=1
}

allow_service_starts() {
	[ "${outbox_own_policy:-0}" = 0 ] || rm -f /usr/sbin/policy-rc.d
	outbox_own_policy=0
}

# Refuses a Node older than the emulator runs on; says so when it is older
# than fauxqs declares (npm would warn EBADENGINE; services.sh installs
# with --loglevel=error, and the emulator works).
check_node() {
	local v major
	v=$(node --version 2>/dev/null) || {
		OUTBOX_FAILURE="install-deps: node does not run; install Node $OUTBOX_NODE_WANTED or later (apt-get install nodejs npm, or https://nodejs.org), then run the command again"
		return 1; }
	v=${v#v} major=${v%%.*}
	if [ "$major" -lt "$OUTBOX_NODE_MIN" ]; then
		OUTBOX_FAILURE="install-deps: Node $v is too old for the SQS/S3 emulator fauxqs (it declares Node $OUTBOX_NODE_WANTED and runs on $OUTBOX_NODE_MIN or later); install Node $OUTBOX_NODE_WANTED or later (https://nodejs.org), then run the command again"
		return 1
	fi
	[ "$major" -ge "$OUTBOX_NODE_WANTED" ] ||
		echo "note: Node $v is older than the $OUTBOX_NODE_WANTED the emulator fauxqs declares; it runs on Debian 12's Node 18 (tested), so this goes on (Node $OUTBOX_NODE_WANTED or later silences this note)" >&2
}
