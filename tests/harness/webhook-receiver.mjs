// tests/harness/webhook-receiver.mjs: a Standard Webhooks receiver for the
// webhook plugin's tests.  Every request's signature is checked with the
// reference implementation, the `standardwebhooks` package from npm
// (installed by services.sh's standardwebhooks_install); the path of the
// URL chooses how the receiver answers, so one receiver serves several
// destinations that each behave differently.
//
// Usage:
//   node tests/harness/webhook-receiver.mjs --secret whsec_... --log FILE
//        [--port N] [--exit-on-stdin-eof]
//
// Binds 127.0.0.1 only; --port 0 (the default) picks a free port.  Prints
// "listening PORT" once it accepts connections.  Exits on SIGTERM, and when
// stdin closes with --exit-on-stdin-eof.
//
// Every POST appends one JSON line to the log, before answering:
//   {"path", "id", "timestamp", "valid", "error", "job_id", "attempt",
//    "type", "traceparent", "header_traceparent", "user_agent", "extra",
//    "at_ms"}
// ("valid" is what Webhook.verify() said; "extra" the X-Test header.)
//
// Paths:
//   /ok                       200
//   /status/NNN[?after=S][&times=K]
//                             NNN (with "Retry-After: S" when given) for the
//                             first K requests of each webhook-id (all when
//                             K is absent), then 200; a 4xx body holds
//                             control bytes, invalid UTF-8 and 600 more bytes
//   /redirect                 302 to /ok
//   /big?mib=N                200 with an N MiB body (10 by default)
//   /endless                  200, then body bytes as fast as the socket takes
//   /trickle                  200, then one body byte every 200 ms, forever
//   /slow-headers             the status line, then one header byte every 200 ms
//   /hang                     reads the request, never answers
//   /hold-first               the first request of each webhook-id is never
//                             answered; later ones get 200
//   GET /_stats               {"requests": N, "invalid": M}
import fs from 'node:fs';
import http from 'node:http';
import {createRequire} from 'node:module';
import path from 'node:path';

const toolsDir = process.env.OUTBOX_TOOLS_DIR || '/var/tmp/outboxd-test-tools';
const require = createRequire(path.join(toolsDir, 'node_modules', 'noop.js'));
const {Webhook} = require('standardwebhooks');

function parseArgs(argv) {
	const opts = {port: 0, secret: '', log: '', exitOnEof: false};
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === '--port') opts.port = Number(argv[++i]);
		else if (argv[i] === '--secret') opts.secret = argv[++i];
		else if (argv[i] === '--log') opts.log = argv[++i];
		else if (argv[i] === '--exit-on-stdin-eof') opts.exitOnEof = true;
		else {
			process.stderr.write(`webhook-receiver: unknown argument "${argv[i]}"\n`);
			process.exit(64);
		}
	}
	if (!opts.secret || !opts.log) {
		process.stderr.write('webhook-receiver: --secret and --log are required\n');
		process.exit(64);
	}
	return opts;
}

const opts = parseArgs(process.argv.slice(2));
const wh = new Webhook(opts.secret);
const seen = new Map(); // "path id" -> requests so far
let requests = 0;
let invalid = 0;

function record(req, body) {
	const entry = {path: req.url, id: req.headers['webhook-id'] || null,
		timestamp: req.headers['webhook-timestamp'] || null, valid: false, error: null,
		header_traceparent: req.headers['traceparent'] || null,
		user_agent: req.headers['user-agent'] || null, extra: req.headers['x-test'] || null,
		at_ms: Date.now()};
	try {
		const msg = wh.verify(body, {'webhook-id': entry.id,
			'webhook-timestamp': entry.timestamp,
			'webhook-signature': req.headers['webhook-signature'] || ''});
		entry.valid = true;
		entry.job_id = msg.data.job_id;
		entry.attempt = msg.data.attempt;
		entry.type = msg.type;
		entry.traceparent = msg.data.traceparent;
	} catch (e) {
		entry.error = String(e && e.message ? e.message : e);
		invalid++;
	}
	requests++;
	fs.appendFileSync(opts.log, JSON.stringify(entry) + '\n');
	return entry;
}

const hostileBody = Buffer.concat([Buffer.from('bad request: field "amount" \x00\x1b[31m\r\n'),
	Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' \\ end;' + 'x'.repeat(600))]);

function countFor(key) {
	const n = (seen.get(key) || 0) + 1;
	seen.set(key, n);
	return n;
}

function statusPath(req, res, url, entry) {
	const code = Number(url.pathname.split('/')[2]);
	const after = url.searchParams.get('after');
	const times = url.searchParams.has('times') ? Number(url.searchParams.get('times')) : Infinity;
	if (countFor(url.pathname + ' ' + entry.id) > times) {
		res.writeHead(200).end('ok');
		return;
	}
	const headers = after !== null ? {'Retry-After': after} : {};
	res.writeHead(code, headers).end(code >= 400 && code < 500 ? hostileBody : 'not now');
}

function trickle(res, write) {
	const timer = setInterval(() => { if (!write()) clearInterval(timer); }, 200);
	res.on('close', () => clearInterval(timer));
}

function answer(req, res, body) {
	const url = new URL(req.url, 'http://127.0.0.1');
	if (req.method === 'GET' && url.pathname === '/_stats') {
		res.writeHead(200, {'Content-Type': 'application/json'})
			.end(JSON.stringify({requests, invalid}));
		return;
	}
	const entry = record(req, body);
	switch (url.pathname.split('/')[1]) {
	case 'ok':
		res.writeHead(200).end('ok');
		return;
	case 'status':
		statusPath(req, res, url, entry);
		return;
	case 'redirect':
		res.writeHead(302, {Location: '/ok'}).end();
		return;
	case 'big': {
		const mib = Number(url.searchParams.get('mib') || 10);
		const chunk = Buffer.alloc(1 << 20, 'b');
		res.writeHead(200, {'Content-Length': String(mib << 20)});
		let sent = 0;
		const more = () => {
			while (sent < mib) {
				sent++;
				if (!res.write(chunk)) {
					res.once('drain', more);
					return;
				}
			}
			res.end();
		};
		more();
		return;
	}
	case 'endless': {
		const chunk = Buffer.alloc(64 << 10, 'e');
		res.writeHead(200);
		const more = () => { while (!res.destroyed && res.write(chunk)); if (!res.destroyed) res.once('drain', more); };
		more();
		return;
	}
	case 'trickle':
		res.writeHead(200);
		trickle(res, () => res.write('t'));
		return;
	case 'slow-headers': {
		const sock = res.socket;
		sock.write('HTTP/1.1 200 OK\r\nX-Slow: ');
		trickle(res, () => !sock.destroyed && sock.write('s'));
		return;
	}
	case 'hang':
		return;
	case 'hold-first':
		if (countFor('hold ' + entry.id) > 1)
			res.writeHead(200).end('ok');
		return;
	default:
		res.writeHead(404).end('no such test path');
	}
}

const server = http.createServer((req, res) => {
	const parts = [];
	req.on('data', (c) => parts.push(c));
	req.on('end', () => answer(req, res, Buffer.concat(parts).toString('utf8')));
});
server.keepAliveTimeout = 60000;
server.listen(opts.port, '127.0.0.1', () => {
	process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
if (opts.exitOnEof) {
	process.stdin.on('end', () => process.exit(0));
	process.stdin.resume();
}
