# test_llm_stub.sh: the LLM stand-in (tests/harness/llm-stub.mjs) and the
# sample news agree with the scenario of conf/sample/README.md: the stub's
# extraction of every sample item, the NVDA explanation for the 14:35
# window, its fault script (argv and control endpoint) and its refusals.
# Needs node only (77 without it).
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"

if ! command -v node >/dev/null; then
	echo "SKIP: node is not installed"
	exit 77
fi
STUB="$OUTBOX_SRCDIR/tests/harness/llm-stub.mjs"
stub_pids=()
stop_stubs() {
	local rc=$? p
	for p in "${stub_pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$TEST_TMP"
	exit "$rc"
}
trap stop_stubs EXIT

# start_stub OUT [ARGS...]: starts a stub, waits for its port, sets PORT.
# Not called in a command substitution: its subshell would record the PID
# in a copy of stub_pids and the trap would kill nothing.
start_stub() {
	local out=$1
	shift
	node "$STUB" --port 0 "$@" >"$out" 2>&1 &
	stub_pids+=($!)
	for _ in $(seq 1 100); do
		if grep -q '^listening ' "$out"; then
			PORT=$(sed -n 's/^listening //p' "$out")
			return 0
		fi
		sleep 0.05 # polling for start-up, not hiding a race
	done
	cat "$out" >&2
	return 1
}

start_stub "$TEST_TMP/stub.out"
url="http://127.0.0.1:$PORT"

check "GET /health answers and names the stub" \
	bash -c "curl -fsS '$url/health' | grep -q '\"stub\":\"stub-llm\"'"
check "a request without a bearer token is refused with 401" \
	test "$(curl -s -o /dev/null -w '%{http_code}' -d '{}' "$url/v1/chat/completions")" = 401

# The scenario, checked in node: every sample item through the stub, then
# the explanation of the NVDA 14:35 window from what the stub extracted.
check "sample news and stub agree with conf/sample/README.md" \
	node --input-type=module -e '
import fs from "node:fs";
const [url, file] = process.argv.slice(1);
const ask = async (content) => {
	const r = await fetch(url + "/v1/chat/completions", {method: "POST",
		headers: {"authorization": "Bearer k", "content-type": "application/json"},
		body: JSON.stringify({model: "m", messages: [{role: "system", content: "s"}, {role: "user", content}]})});
	const j = await r.json();
	if (j.model !== "stub-llm") throw new Error("reply not labelled stub-llm");
	return JSON.parse(j.choices[0].message.content);
};
const items = fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
if (items.length < 30) throw new Error("only " + items.length + " sample items");
const nvda = [];
for (const [i, item] of items.entries()) {
	const x = await ask(JSON.stringify({task: "news_extraction", item}));
	if (x.summary !== item.title) throw new Error("summary is not the title: " + item.title);
	const isNvda = (item.symbols || []).includes("NVDA");
	if (x.symbols.includes("NVDA") !== isNvda) throw new Error("NVDA tagging wrong: " + item.title);
	if (isNvda) nvda.push({job_id: "job" + i, title: item.title, summary: x.summary,
		sentiment: x.sentiment, published_at: item.published_at});
}
const at = (t) => nvda.find((n) => n.published_at === "2026-11-27T" + t + ":00Z");
const want = {"09:00": 1, "13:20": -1, "14:33": 1, "14:34": 1, "14:36": 1};
for (const [t, sign] of Object.entries(want))
	if (!at(t) || Math.sign(at(t).sentiment) !== sign) throw new Error("NVDA item at " + t + " has the wrong sentiment");
if (at("14:33").title.indexOf("export license") < 0) throw new Error("14:33 headline is not the export license");
// What the explanation query returns for 14:35 with a 120-minute lookback.
const lo = Date.parse("2026-11-27T12:35:00Z"), hi = Date.parse("2026-11-27T14:40:00Z");
const given = nvda.filter((n) => Date.parse(n.published_at) >= lo && Date.parse(n.published_at) <= hi);
if (given.length !== 4) throw new Error(given.length + " NVDA items in the window lookup, want 4");
const e = await ask(JSON.stringify({task: "move_explanation",
	move: {symbol: "NVDA", window_start: "2026-11-27T14:35:00Z", move_pct: 4.1, close: 188.5, rules: []},
	news: given}));
const cited = e.cited_job_ids.map((id) => given.find((n) => n.job_id === id).published_at.slice(11, 16));
if (cited.join(",") !== "14:36,14:34,14:33" && cited.sort().join(",") !== "14:33,14:34,14:36")
	throw new Error("cited " + cited.join(","));
' "$url" "$OUTBOX_SRCDIR/conf/sample/news.jsonl"

# Fault script through the control endpoint: one line per request.
body='{"model":"m","messages":[{"role":"user","content":"{\"task\":\"news_extraction\",\"item\":{\"title\":\"t\",\"body\":\"b\",\"symbols\":[\"AAPL\"]}}"}]}'
post() {
	curl -s -o "$TEST_TMP/reply" -w '%{http_code}' -H 'Authorization: Bearer k' -d "$body" \
		"$url/v1/chat/completions"
}
requests() { curl -fsS "$url/_stub/stats" | sed -n 's/.*"requests":\([0-9]*\).*/\1/p'; }
before=$(requests)
curl -fsS -d $'500\n# a comment\nmalformed\n' "$url/_stub/script" >/dev/null
check "scripted 500 comes first" test "$(post)" = 500
check "then a 200 whose content is not JSON" \
	bash -c "[ \"\$(curl -s -H 'Authorization: Bearer k' -d '$body' '$url/v1/chat/completions' \
		| node -e 'let s=\"\";process.stdin.on(\"data\",d=>s+=d).on(\"end\",()=>{try{JSON.parse(JSON.parse(s).choices[0].message.content);console.log(\"json\")}catch{console.log(\"notjson\")}})')\" = notjson ]"
check "then normal answers again" test "$(post)" = 200
check "the stats count every chat request" test "$(requests)" = $((before + 3))

# Fault script from --script FILE at start-up.
printf '429\nsleep 200\n' >"$TEST_TMP/script"
start_stub "$TEST_TMP/stub2.out" --script "$TEST_TMP/script"
url="http://127.0.0.1:$PORT"
check "--script FILE: first request gets 429" test "$(post)" = 429
check "--script FILE: sleep then a normal answer" test "$(post)" = 200

finish
