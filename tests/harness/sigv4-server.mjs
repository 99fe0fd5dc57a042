// sigv4-server.mjs: an HTTP server that checks AWS SigV4 signatures with its
// own implementation (node:http + node:crypto only), so that core/aws/sigv4.c is
// tested against something other than itself.
//
//   node sigv4-server.mjs [PORT]     (or SIGV4_SERVER_PORT; default 0 = any)
//
// Credentials: SIGV4_ACCESS_KEY_ID / SIGV4_SECRET_ACCESS_KEY (falling back to
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY).  Binds 127.0.0.1 only and prints
// the port on stdout once listening.  A request whose signature matches gets
// 200 {"ok":true,...}; otherwise an AWS-style JSON error: 403
// SignatureDoesNotMatch, 403 InvalidClientTokenId, 403
// MissingAuthenticationToken or 400 IncompleteSignature, with
// x-amzn-query-error set as SQS does.  On a mismatch the server's canonical
// request goes to stderr (never the secret).
//
// Rules: service "s3" uses the path as received and requires a signed
// x-amz-content-sha256 that matches the body (or UNSIGNED-PAYLOAD) and every
// x-amz-* header to be signed; other services normalise the path and encode
// each segment again.  Query names and values are decoded and re-encoded,
// then sorted by encoded name, then value.
import http from 'node:http';
import crypto from 'node:crypto';

const accessKeyId = process.env.SIGV4_ACCESS_KEY_ID ?? process.env.AWS_ACCESS_KEY_ID;
const secret = process.env.SIGV4_SECRET_ACCESS_KEY ?? process.env.AWS_SECRET_ACCESS_KEY;
const port = Number(process.argv[2] ?? process.env.SIGV4_SERVER_PORT ?? 0);

if (!accessKeyId || !secret) {
  process.stderr.write('sigv4-server: SIGV4_ACCESS_KEY_ID and SIGV4_SECRET_ACCESS_KEY must be set\n');
  process.exit(2);
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

function isHex(c) {
  return c !== undefined && /[0-9A-Fa-f]/.test(String.fromCharCode(c));
}

// Percent-decoding to bytes: a '%' without two hex digits stays literal.
function pctDecode(text) {
  const input = Buffer.from(text, 'latin1');
  const out = [];
  for (let i = 0; i < input.length; i++) {
    if (input[i] === 0x25 && isHex(input[i + 1]) && isHex(input[i + 2])) {
      out.push(parseInt(input.subarray(i + 1, i + 3).toString('latin1'), 16));
      i += 2;
    } else {
      out.push(input[i]);
    }
  }
  return Buffer.from(out);
}

function uriEncode(bytes) {
  let s = '';
  for (const b of bytes) {
    const ch = String.fromCharCode(b);
    s += UNRESERVED.test(ch) ? ch : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return s;
}

function byteCompare(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function canonicalQuery(raw) {
  if (!raw) return '';
  return raw.split('&').filter((p) => p.length > 0).map((p) => {
    const i = p.indexOf('=');
    const name = i < 0 ? p : p.slice(0, i);
    const value = i < 0 ? '' : p.slice(i + 1);
    return [uriEncode(pctDecode(name)), uriEncode(pctDecode(value))];
  }).sort((a, b) => byteCompare(a[0], b[0]) || byteCompare(a[1], b[1]))
    .map(([n, v]) => `${n}=${v}`).join('&');
}

function canonicalPath(raw, s3) {
  if (s3) return raw === '' ? '/' : raw;
  const kept = [];
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') kept.pop();
    else kept.push(uriEncode(Buffer.from(seg, 'latin1')));
  }
  let path = '/' + kept.join('/');
  if (kept.length > 0 && raw.endsWith('/')) path += '/';
  return path;
}

// Lower-case name -> values in arrival order, each trimmed and collapsed.
function headerMap(rawHeaders) {
  const map = new Map();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    const value = rawHeaders[i + 1].replace(/[ \t]+/g, ' ').trim();
    if (!map.has(name)) map.set(name, []);
    map.get(name).push(value);
  }
  return map;
}

const AUTH_RE = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;\-]+), ?Signature=([0-9a-f]{64})$/;

function hmac(key, data) {
  return crypto.createHmac('sha256', key).update(data).digest();
}

function sha256hex(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

class AwsError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

// Returns {creq, sts, signature} for the request, or throws an AwsError for
// a request that cannot be checked at all.
function verify(req, body) {
  const auth = req.headers.authorization;
  if (!auth) throw new AwsError(403, 'MissingAuthenticationToken', 'Request is missing Authentication Token');
  const m = AUTH_RE.exec(auth);
  if (!m) throw new AwsError(400, 'IncompleteSignature', 'Authorization header is malformed');
  const [, keyId, date8, region, service, signedList, signature] = m;
  if (keyId !== accessKeyId) throw new AwsError(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
  const headers = headerMap(req.rawHeaders);
  const signed = signedList.split(';');
  const amzDate = (headers.get('x-amz-date') ?? [''])[0];
  if (!signed.includes('host') || !signed.includes('x-amz-date') || !amzDate.startsWith(date8)) {
    throw new AwsError(400, 'IncompleteSignature', 'host and x-amz-date must be signed and match the credential date');
  }
  const s3 = service === 's3';
  let payloadHash = sha256hex(body);
  if (s3) {
    const declared = (headers.get('x-amz-content-sha256') ?? [undefined])[0];
    if (declared === undefined || !signed.includes('x-amz-content-sha256')) {
      throw new AwsError(400, 'IncompleteSignature', 'x-amz-content-sha256 must be sent and signed');
    }
    if (declared !== 'UNSIGNED-PAYLOAD' && declared !== payloadHash) {
      throw new AwsError(400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.');
    }
    for (const name of headers.keys()) {
      if (name.startsWith('x-amz-') && !signed.includes(name)) {
        throw new AwsError(403, 'AccessDenied', `There were headers present in the request which were not signed: ${name}`);
      }
    }
    payloadHash = declared;
  }
  const q = req.url.indexOf('?');
  const rawPath = q < 0 ? req.url : req.url.slice(0, q);
  const rawQuery = q < 0 ? '' : req.url.slice(q + 1);
  const headerLines = signed.map((name) => {
    if (!headers.has(name)) throw new AwsError(400, 'IncompleteSignature', `signed header ${name} is missing`);
    return `${name}:${headers.get(name).join(',')}\n`;
  }).join('');
  const creq = [req.method, canonicalPath(rawPath, s3), canonicalQuery(rawQuery),
    headerLines, signedList, payloadHash].join('\n');
  const scope = `${date8}/${region}/${service}/aws4_request`;
  const sts = ['AWS4-HMAC-SHA256', amzDate, scope, sha256hex(creq)].join('\n');
  const kSigning = hmac(hmac(hmac(hmac('AWS4' + secret, date8), region), service), 'aws4_request');
  const expected = hmac(kSigning, sts).toString('hex');
  return { creq, service, signedList, ok: expected === signature };
}

function sendError(res, err) {
  const body = JSON.stringify({ __type: `com.amazonaws.sqs#${err.type}`, message: err.message });
  res.writeHead(err.status, {
    'content-type': 'application/x-amz-json-1.0',
    'x-amzn-query-error': `${err.type};Sender`,
    'x-amzn-requestid': crypto.randomUUID(),
  });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      const result = verify(req, Buffer.concat(chunks));
      if (!result.ok) {
        process.stderr.write(`sigv4-server: signature mismatch; canonical request:\n${result.creq}\n`);
        throw new AwsError(403, 'SignatureDoesNotMatch',
          'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, service: result.service, signedHeaders: result.signedList }));
    } catch (err) {
      if (!(err instanceof AwsError)) throw err;
      sendError(res, err);
    }
  });
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
// No SIGTERM handler: the default action ends the process at once, even with
// keep-alive connections open, which is what the tests' cleanup wants.
