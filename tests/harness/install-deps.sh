# tests/harness/install-deps.sh: install what building, testing and the demo
# need on Debian 12, as root.  Source it and call install_deps; it asks apt
# only for what is missing (Node and npm may come from outside Debian).
# libmicrohttpd-dev: outboxd's /metrics, /healthz and /readyz server;
# prometheus: promtool, which test_observability.sh checks /metrics with;
# universal-ctags: tests/check-layers.sh finds the function definitions of
# core/ with it, to fail on a call cycle between files.
install_deps() {
	local pkgs=(build-essential autoconf automake libtool pkg-config
		libpq-dev libcurl4-openssl-dev libjansson-dev libinih-dev libssl-dev libxml2-dev libcmocka-dev
		postgresql-15 postgresql-client-15 curl ca-certificates valgrind jq
		clang libclang-rt-14-dev python3 python3-psycopg2 libmicrohttpd-dev prometheus
		universal-ctags)
	local want=()
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || want+=("$p")
	done
	command -v node >/dev/null || want+=(nodejs)
	command -v npm >/dev/null || want+=(npm)
	if [ ${#want[@]} -gt 0 ]; then
		echo "installing ${want[*]}" >&2
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
	fi
}
