# check-banned-functions.sh: no banned function (docs/hacking.md,
# "Conventions").  Fails if the sources call a
# banned function (unbounded copies, formatting without a size, strtok's
# hidden state, atoi's silent failures).  Use snprintf, strtol and friends.
: "${OUTBOX_SRCDIR:?}"
cd "$OUTBOX_SRCDIR" || exit 99
banned='strcpy|strcat|sprintf|vsprintf|strtok|gets|atoi|atol|atoll'
hits=$(grep -rnE "(^|[^a-z_0-9])($banned)[[:space:]]*\(" core plugins include tests \
	--include='*.c' --include='*.h' | grep -v '^tests/check-banned-functions.sh')
if [ -n "$hits" ]; then
	echo "banned functions used (docs/hacking.md, "Conventions"):"
	echo "$hits"
	exit 1
fi
echo "no banned function in core/, plugins/, include/, tests/"
