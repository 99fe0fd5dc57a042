// sigv4-verify.mjs: an AWS SigV4 signature checker written independently of
// core/aws/sigv4.c (node:crypto only), shared by the test servers
// (sigv4-server.mjs, aws-creds-stub.mjs).
//
// Rules: service "s3" uses the path as received and requires a signed
// x-amz-content-sha256 that matches the body (or UNSIGNED-PAYLOAD) and every
// x-amz-* header to be signed; other services normalise the path and encode
// each segment again.  Query names and values are decoded and re-encoded,
// then sorted by encoded name, then value.
import crypto from 'node:crypto';

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

export class AwsError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

// Checks req's signature.  lookup(keyId) returns the secret for a key id
// or throws an AwsError (unknown, expired, ...).  Returns {ok, creq,
// service, signedList, keyId, amzDate, signed}, or throws an AwsError for a
// request that cannot be checked at all.
export function verify(req, body, lookup) {
  const auth = req.headers.authorization;
  if (!auth) throw new AwsError(403, 'MissingAuthenticationToken', 'Request is missing Authentication Token');
  const m = AUTH_RE.exec(auth);
  if (!m) throw new AwsError(400, 'IncompleteSignature', 'Authorization header is malformed');
  const [, keyId, date8, region, service, signedList, signature] = m;
  const secret = lookup(keyId);
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
  return { creq, service, signedList, keyId, amzDate, signed, headers, ok: expected === signature };
}

// An AWS-style JSON error answer, with x-amzn-query-error as SQS sends it.
export function sendError(res, err, extraHeaders = {}) {
  const body = JSON.stringify({ __type: `com.amazonaws.sqs#${err.type}`, message: err.message });
  res.writeHead(err.status, {
    'content-type': 'application/x-amz-json-1.0',
    'x-amzn-query-error': `${err.type};Sender`,
    'x-amzn-requestid': crypto.randomUUID(),
    ...extraHeaders,
  });
  res.end(body);
}
