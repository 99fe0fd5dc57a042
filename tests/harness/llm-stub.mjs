// tests/harness/llm-stub.mjs: a DETERMINISTIC STAND-IN for an
// OpenAI-compatible chat-completions endpoint.  It is not a language model:
// every answer is computed from the prompt with keyword rules, so tests and
// the demo give the same result on every run.  Its replies say so: the
// model is "stub-llm" and system_fingerprint reads "stub-llm: deterministic
// stand-in, not a language model".
//
// Usage:
//   node tests/harness/llm-stub.mjs [--port N] [--script FILE] [--delay MS]
//                                   [--exit-on-stdin-eof]
//
// Binds 127.0.0.1 only.  --port 0 (the default) picks a free port.  Prints
// "listening PORT" on stdout once it accepts connections.  Exits on SIGTERM
// or SIGINT, and when its stdin closes if --exit-on-stdin-eof is given (so
// a test that dies cannot leave it behind).  --delay MS (or the variable
// LLM_STUB_DELAY_MS) makes every answer wait MS milliseconds first, like a
// real model's thinking time.
//
// Endpoints:
//   POST /chat/completions, POST /v1/chat/completions
//        needs "Authorization: Bearer <anything non-empty>" (else 401, like
//        OpenAI) and a body with "model" and "messages"; answers the last
//        user message (see "Answers" below).
//   GET  /health                  {"status":"ok","stub":"stub-llm"}
//   POST /_stub/script            replace the fault script with the body's lines
//        (and count max_in_flight afresh from the requests in flight now)
//   GET  /_stub/stats             {"requests":N,"in_flight":N,"max_in_flight":N,
//        "last":{...}}: the number of chat requests so far, how many are
//        being answered now and the most ever answered at once, and a
//        summary of the last one (model, temperature, max_tokens,
//        response_format, whether a bearer token was sent; never the token)
//
// Fault script: lines consumed one per chat request before normal answers
// (from --script FILE, the LLM_STUB_SCRIPT variable naming a file, or
// POST /_stub/script).  Blank lines and "#" comments are ignored.
//   200 | ok       normal answer
//   NNN            HTTP status NNN with an OpenAI-style error body (500, 429, 400...)
//   NNN after S    the same with "Retry-After: S" (seconds)
//   malformed      200 whose message content is not JSON
//   wrongshape     200 whose content is a JSON object with the wrong keys
//   truncated      200 with finish_reason "length"
//   badcite        explanation answer citing a job id that was not given
//   sleep MS       wait MS milliseconds, then answer normally
//   close          drop the connection without answering
//
// Answers: the user message is a JSON object with "task":
//   news_extraction   tickers: $TICKER mentions plus the item's candidate
//                     symbols that appear as words in the title or body
//                     (the candidates when none does); sentiment from
//                     keyword lists; event_type from keywords; summary =
//                     the title; confidence 0.9 when the text names a
//                     ticker and a sentiment word, else 0.6
//   move_explanation  cites the given news whose sentiment has the sign of
//                     move_pct, in one sentence
import http from 'node:http';
import fs from 'node:fs';
import crypto from 'node:crypto';

const MODEL = 'stub-llm';
const BANNER = 'stub-llm: deterministic stand-in, not a language model';

const POSITIVE = ['beats', 'beat', 'surges', 'surge', 'record', 'approved', 'approves',
	'approval', 'raises', 'jumps', 'soars', 'upgrade', 'upgrades', 'wins', 'rallies', 'tops'];
const NEGATIVE = ['misses', 'miss', 'plunges', 'plunge', 'probe', 'recall', 'recalls', 'cuts',
	'downgrade', 'downgrades', 'falls', 'lawsuit', 'delays', 'delay', 'slumps', 'investigation'];
const EVENT_TYPES = [
	['regulatory', ['license', 'licence', 'export', 'regulator', 'antitrust', 'probe', 'ftc', 'sec',
		'approved', 'approval', 'investigation']],
	['earnings', ['earnings', 'quarter', 'quarterly', 'revenue', 'eps', 'profit']],
	['guidance', ['guidance', 'outlook', 'forecast']],
	['product', ['launch', 'launches', 'unveils', 'recall', 'recalls', 'delivery', 'deliveries']],
	['analyst', ['upgrade', 'upgrades', 'downgrade', 'downgrades', 'target', 'analyst']],
	['legal', ['lawsuit', 'court', 'settlement']],
];

function parseArgs(argv) {
	const opts = {port: 0, script: process.env.LLM_STUB_SCRIPT || '', exitOnEof: false,
		delay: Number(process.env.LLM_STUB_DELAY_MS || 0)};
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === '--port') opts.port = Number(argv[++i]);
		else if (argv[i] === '--script') opts.script = argv[++i];
		else if (argv[i] === '--exit-on-stdin-eof') opts.exitOnEof = true;
		else if (argv[i] === '--delay') opts.delay = Number(argv[++i]);
		else if (/^\d+$/.test(argv[i])) opts.port = Number(argv[i]);
		else {
			process.stderr.write(`llm-stub: unknown argument "${argv[i]}"\n`);
			process.exit(64);
		}
	}
	return opts;
}

function scriptLines(text) {
	return text.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter((l) => l !== '');
}

const opts = parseArgs(process.argv.slice(2));
let script = opts.script ? scriptLines(fs.readFileSync(opts.script, 'utf8')) : [];
let requests = 0;
let last = null;
let inFlight = 0;
let maxInFlight = 0;

function words(text) {
	return String(text || '').toLowerCase().split(/[^a-z0-9$]+/).filter((w) => w !== '');
}

function countOf(list, ws) {
	return ws.filter((w) => list.includes(w)).length;
}

function extractNews(item) {
	const text = `${item.title || ''} ${item.body || ''}`;
	const found = [];
	for (const m of text.matchAll(/\$([A-Z][A-Z0-9.]{0,9})\b/g))
		if (!found.includes(m[1])) found.push(m[1]);
	const candidates = Array.isArray(item.symbols) ? item.symbols.map(String) : [];
	for (const s of candidates)
		if (!found.includes(s) && new RegExp(`\\b${s.replace('.', '\\.')}\\b`).test(text)) found.push(s);
	const named = found.length > 0;
	const symbols = named ? found : candidates;
	const ws = words(text);
	const pos = countOf(POSITIVE, ws);
	const neg = countOf(NEGATIVE, ws);
	const sentiment = pos + neg === 0 ? 0 : Math.round(((pos - neg) / (pos + neg)) * 100) / 100;
	const type = EVENT_TYPES.find(([, keys]) => countOf(keys, ws) > 0);
	return {
		symbols,
		event_type: type ? type[0] : 'other',
		sentiment,
		summary: String(item.title || 'untitled').replace(/[\r\n]+/g, ' '),
		confidence: named && pos + neg > 0 ? 0.9 : 0.6,
	};
}

function explainMove(move, news, badcite) {
	const sign = Math.sign(Number(move.move_pct) || 0);
	const cited = news.filter((n) => sign !== 0 && Math.sign(Number(n.sentiment) || 0) === sign);
	const dir = sign >= 0 ? 'rose' : 'fell';
	const pct = Math.abs(Number(move.move_pct) || 0).toFixed(2);
	const head = `${move.symbol} ${dir} ${pct}% in the window starting ${move.window_start}`;
	const explanation = cited.length > 0
		? `${head}, in line with: ${cited.map((n) => n.title).join('; ')}.`
		: `${head}; none of the recent news given explains the move.`;
	const ids = cited.map((n) => n.job_id);
	if (badcite) ids.push('f'.repeat(64));
	return {explanation, cited_job_ids: ids};
}

function completion(content, finish) {
	const id = 'stub-' + crypto.createHash('sha256').update(content).digest('hex').slice(0, 16);
	return {
		id, object: 'chat.completion', created: 0, model: MODEL, system_fingerprint: BANNER,
		choices: [{index: 0, message: {role: 'assistant', content}, finish_reason: finish}],
		usage: {prompt_tokens: 0, completion_tokens: 0, total_tokens: 0},
	};
}

function send(res, status, body, extra) {
	res.writeHead(status, {'content-type': 'application/json', 'x-stub': BANNER, ...(extra || {})});
	res.end(JSON.stringify(body));
}

function sendError(res, status, message, type, extra) {
	send(res, status, {error: {message: `${MODEL}: ${message}`, type, code: null}}, extra);
}

// The answer to a well-formed request, or an error status.
function answer(res, req, fault) {
	const user = [...req.messages].reverse().find((m) => m && m.role === 'user');
	let prompt;
	try { prompt = JSON.parse(user ? user.content : ''); } catch { prompt = null; }
	if (fault === 'malformed')
		return send(res, 200, completion('Sure! Here is the JSON you asked for: {symbols: [', 'stop'));
	if (fault === 'wrongshape')
		return send(res, 200, completion(JSON.stringify({answer: 'yes', sentiment: 'positive'}), 'stop'));
	if (fault === 'truncated')
		return send(res, 200, completion('{"symbols": ["NV', 'length'));
	let out;
	if (prompt && prompt.task === 'news_extraction' && prompt.item)
		out = extractNews(prompt.item);
	else if (prompt && prompt.task === 'move_explanation' && prompt.move)
		out = explainMove(prompt.move, Array.isArray(prompt.news) ? prompt.news : [], fault === 'badcite');
	else
		return sendError(res, 400, 'unrecognised prompt (expected a JSON user message with "task")',
			'invalid_request_error');
	return send(res, 200, completion(JSON.stringify(out), 'stop'));
}

function chat(req, res, raw) {
	const auth = String(req.headers.authorization || '');
	let body = null;
	try { body = JSON.parse(raw); } catch { /* handled below */ }
	requests++;
	last = body === null ? {parse_error: true} : {
		model: body.model, temperature: body.temperature, max_tokens: body.max_tokens,
		response_format: body.response_format, messages: Array.isArray(body.messages) ? body.messages.length : 0,
		bearer: /^Bearer \S+$/.test(auth),
	};
	if (!/^Bearer \S+$/.test(auth))
		return sendError(res, 401, 'missing bearer token (any non-empty key is accepted)', 'invalid_request_error');
	if (body === null || typeof body.model !== 'string' || !Array.isArray(body.messages))
		return sendError(res, 400, 'body must be JSON with "model" and "messages"', 'invalid_request_error');
	const step = script.length > 0 ? script.shift() : 'ok';
	// Counted from here until the answer is sent or the client goes away.
	inFlight++;
	if (inFlight > maxInFlight) maxInFlight = inFlight;
	res.on('close', () => { inFlight--; });
	if (opts.delay > 0)
		return setTimeout(() => { if (!res.destroyed) reply(req, res, body, step); }, opts.delay);
	return reply(req, res, body, step);
}

function reply(req, res, body, step) {
	const sleep = /^sleep\s+(\d+)$/.exec(step);
	const after = /^(\d{3})\s+after\s+(\d+)$/.exec(step);
	if (sleep)
		return setTimeout(() => { if (!res.destroyed) answer(res, body, 'ok'); }, Number(sleep[1]));
	if (step === 'close')
		return req.socket.destroy();
	if (after)
		return sendError(res, Number(after[1]), `scripted HTTP ${after[1]}`, 'rate_limit_error',
			{'retry-after': after[2]});
	if (/^\d{3}$/.test(step) && step !== '200')
		return sendError(res, Number(step), `scripted HTTP ${step}`,
			Number(step) === 429 ? 'rate_limit_error' : 'stub_fault');
	return answer(res, body, step);
}

const server = http.createServer((req, res) => {
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		const raw = Buffer.concat(chunks).toString('utf8');
		const path = req.url.split('?')[0];
		if (req.method === 'GET' && path === '/health')
			return send(res, 200, {status: 'ok', stub: MODEL, note: BANNER});
		if (req.method === 'POST' && (path === '/chat/completions' || path === '/v1/chat/completions'))
			return chat(req, res, raw);
		if (req.method === 'POST' && path === '/_stub/script') {
			script = scriptLines(raw);
			maxInFlight = inFlight;
			return send(res, 200, {script});
		}
		if (req.method === 'GET' && path === '/_stub/stats')
			return send(res, 200, {requests, in_flight: inFlight, max_in_flight: maxInFlight, last,
				script_left: script.length});
		return sendError(res, 404, `no route for ${req.method} ${path}`, 'not_found');
	});
});

server.listen(opts.port, '127.0.0.1', () => {
	process.stdout.write(`listening ${server.address().port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT'])
	process.on(sig, () => process.exit(0));
if (opts.exitOnEof) {
	process.stdin.on('end', () => process.exit(0));
	process.stdin.on('error', () => process.exit(0));
	process.stdin.resume();
}
