// aws-creds-stub.mjs: the AWS credential endpoints outboxd's provider chain
// talks to, and a signature-verifying proxy in front of fauxqs (which does
// not check signatures), all on one 127.0.0.1 port.
//
//   node aws-creds-stub.mjs --upstream URL [options]
//
// Credential endpoints (each mints temporary keys whose id starts with its
// prefix: ASIASTS, ASIACTR, ASIAIMDS):
//   POST /  Action=AssumeRoleWithWebIdentity  STS; WebIdentityToken must equal
//                                  --web-token (XML answer, STS's shape)
//   POST /  Action=AssumeRole      STS; signed with the static key
//   GET  /container/creds          container endpoint; Authorization must
//                                  equal --container-token
//   PUT  /latest/api/token         IMDSv2 session token (needs the TTL header)
//   GET  /latest/meta-data/iam/security-credentials/[ROLE]
//                                  needs X-aws-ec2-metadata-token
// Everything else is an AWS request: its SigV4 signature is checked
// (sigv4-verify.mjs) and, when accepted, it is forwarded to --upstream and
// the answer passed back.
//
// Options:
//   --static-key ID:SECRET[:TOKEN]
//                           a key that is accepted (env/profile tests); with
//                           TOKEN, only with that session token, signed
//   --accept SRC            accept only keys of SRC: static, sts, container, imds
//   --lifetime S            minted keys expire S seconds after minting (3600)
//   --overlap S             a key superseded by a newer one of the same source
//                           is refused S seconds after that (default: never)
//   --skew S                the stub's clock is S seconds ahead: its Date
//                           header says so, and a request whose x-amz-date is
//                           more than 300 s away from it is refused with 403
//                           RequestTimeTooSkewed
// Refusals: unknown key or wrong source 403 InvalidClientTokenId; expired or
// revoked key 403 ExpiredToken; superseded past the overlap 403
// InvalidClientTokenId; session token missing or wrong 403
// InvalidClientTokenId; bad signature 403 SignatureDoesNotMatch.
//
// Control (no signature): GET /_stub/stats (JSON counters), GET
// /_stub/secrets (every secret and session token handed out, one a line,
// for the tests' "no secret in a log" check), POST /_stub/revoke (the
// newest minted key is refused from now on).  Prints "listening PORT" on
// stdout; exits when stdin closes (--exit-on-stdin-eof).
import http from 'node:http';
import crypto from 'node:crypto';
import { AwsError, sendError, verify } from './sigv4-verify.mjs';

const args = process.argv.slice(2);
function opt(name, dflt) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
}
const upstream = new URL(opt('--upstream', 'http://127.0.0.1:9'));
const staticKey = opt('--static-key', null);
const accept = opt('--accept', null);
const lifetime = Number(opt('--lifetime', '3600'));
const overlap = opt('--overlap', null) === null ? Infinity : Number(opt('--overlap'));
const skew = Number(opt('--skew', '0'));
const webToken = opt('--web-token', 'web-identity-token');
const containerToken = opt('--container-token', 'container-auth-token');
const roleName = 'outbox-role';

const keys = new Map(); // keyId -> {secret, token, source, mintedAt, expires, supersededAt, revoked}
const newest = new Map(); // source -> keyId
const imdsTokens = new Set();
const stats = { proxied: 0, minted: {}, rejected: {}, accepted_by_source: {}, imds_token_requests: 0 };

if (staticKey) {
  const [id, secret, token] = staticKey.split(':');
  keys.set(id, { secret, token: token ?? null, source: 'static', expires: Infinity });
}

const nowS = () => Date.now() / 1000;
const serverNow = () => nowS() + skew;
const rand = (n) => crypto.randomBytes(n).toString('base64url');
const count = (obj, k) => { obj[k] = (obj[k] ?? 0) + 1; };

function mint(source, prefix) {
  const keyId = `${prefix}${rand(9).toUpperCase().replace(/[^A-Z0-9]/g, 'X')}`;
  const k = { secret: rand(30), token: `tok-${rand(48)}`, source, mintedAt: nowS(),
    expires: nowS() + lifetime, supersededAt: null, revoked: false };
  const prev = newest.get(source);
  if (prev && keys.has(prev)) keys.get(prev).supersededAt = nowS();
  keys.set(keyId, k);
  newest.set(source, keyId);
  count(stats.minted, source);
  return { keyId, ...k, expiration: new Date(k.expires * 1000).toISOString().replace(/\.\d+Z$/, 'Z') };
}

function dateHeader() {
  return new Date(serverNow() * 1000).toUTCString();
}

// forSts: AssumeRole is signed with a source profile's static key, which
// --accept does not restrict.
function lookup(keyId, forSts) {
  const k = keys.get(keyId);
  if (!k || (accept && !forSts && k.source !== accept)) {
    throw new AwsError(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
  }
  if (k.revoked || nowS() >= k.expires) {
    throw new AwsError(403, 'ExpiredToken', 'The security token included in the request is expired');
  }
  if (k.supersededAt !== null && nowS() - k.supersededAt > overlap) {
    throw new AwsError(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
  }
  return k.secret;
}

function checkRequest(req, body, forSts = false) {
  const result = verify(req, body, (id) => lookup(id, forSts));
  const k = keys.get(result.keyId);
  const tok = (result.headers.get('x-amz-security-token') ?? [null])[0];
  if (k.token !== null && (tok !== k.token || !result.signed.includes('x-amz-security-token'))) {
    throw new AwsError(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
  }
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(result.amzDate);
  const t = m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) / 1000 : NaN;
  if (!(Math.abs(t - serverNow()) <= 300)) {
    throw new AwsError(403, 'RequestTimeTooSkewed', 'The difference between the request time and the server\'s time is too large.');
  }
  if (!result.ok) {
    throw new AwsError(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
  }
  return { ...result, source: k.source };
}

function stsCredentialsXml(action, c) {
  return `<${action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <${action}Result>
    <Credentials>
      <AccessKeyId>${c.keyId}</AccessKeyId>
      <SecretAccessKey>${c.secret}</SecretAccessKey>
      <SessionToken>${c.token}</SessionToken>
      <Expiration>${c.expiration}</Expiration>
    </Credentials>
    <AssumedRoleUser><Arn>arn:aws:sts::000000000000:assumed-role/outbox/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>
  </${action}Result>
  <ResponseMetadata><RequestId>${crypto.randomUUID()}</RequestId></ResponseMetadata>
</${action}Response>
`;
}

function stsError(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'text/xml', date: dateHeader() });
  res.end(`<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${crypto.randomUUID()}</RequestId></ErrorResponse>\n`);
}

function handleSts(req, res, body, form) {
  const action = form.get('Action');
  if (action === 'AssumeRoleWithWebIdentity') {
    if (form.get('WebIdentityToken') !== webToken) return stsError(res, 400, 'InvalidIdentityToken', 'token rejected');
    if (!form.get('RoleArn') || !form.get('RoleSessionName')) return stsError(res, 400, 'MissingParameter', 'RoleArn and RoleSessionName are required');
  } else if (action === 'AssumeRole') {
    try {
      checkRequest(req, body, true);
    } catch (err) {
      if (!(err instanceof AwsError)) throw err;
      count(stats.rejected, `sts:${err.type}`);
      return stsError(res, err.status, err.type, err.message);
    }
  } else {
    return stsError(res, 400, 'InvalidAction', 'unknown action');
  }
  res.writeHead(200, { 'content-type': 'text/xml', date: dateHeader() });
  res.end(stsCredentialsXml(action, mint('sts', 'ASIASTS')));
}

function json(res, status, obj) {
  res.writeHead(status, { 'content-type': 'application/json', date: dateHeader() });
  res.end(JSON.stringify(obj));
}

function handleImds(req, res) {
  if (req.method === 'PUT' && req.url === '/latest/api/token') {
    stats.imds_token_requests++;
    if (!req.headers['x-aws-ec2-metadata-token-ttl-seconds']) return json(res, 400, {});
    const t = rand(24);
    imdsTokens.add(t);
    res.writeHead(200, { 'content-type': 'text/plain' });
    return res.end(t);
  }
  // IMDSv2 only: a GET without a valid session token is 401.
  if (!imdsTokens.has(req.headers['x-aws-ec2-metadata-token'])) {
    count(stats.rejected, 'imds:no-token');
    res.writeHead(401);
    return res.end();
  }
  const base = '/latest/meta-data/iam/security-credentials/';
  if (req.url === base) {
    res.writeHead(200, { 'content-type': 'text/plain' });
    return res.end(`${roleName}\n`);
  }
  if (req.url === base + roleName) {
    const c = mint('imds', 'ASIAIMDS');
    return json(res, 200, { Code: 'Success', LastUpdated: new Date().toISOString(), Type: 'AWS-HMAC',
      AccessKeyId: c.keyId, SecretAccessKey: c.secret, Token: c.token, Expiration: c.expiration });
  }
  res.writeHead(404);
  res.end();
}

function handleContainer(req, res) {
  if (req.headers.authorization !== containerToken) {
    count(stats.rejected, 'container:auth');
    return json(res, 401, { message: 'unauthorized' });
  }
  const c = mint('container', 'ASIACTR');
  json(res, 200, { AccessKeyId: c.keyId, SecretAccessKey: c.secret, Token: c.token, Expiration: c.expiration });
}

function proxy(req, res, body) {
  try {
    count(stats.accepted_by_source, checkRequest(req, body).source);
  } catch (err) {
    if (!(err instanceof AwsError)) throw err;
    count(stats.rejected, err.type);
    return sendError(res, err, { date: dateHeader() });
  }
  stats.proxied++;
  const headers = { ...req.headers, host: upstream.host };
  delete headers['content-length'];
  const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method,
    path: req.url, headers: { ...headers, 'content-length': body.length } }, (ur) => {
    const h = { ...ur.headers, date: dateHeader() };
    res.writeHead(ur.statusCode, h);
    ur.pipe(res);
  });
  up.on('error', (e) => {
    res.writeHead(503, { 'content-type': 'application/x-amz-json-1.0' });
    res.end(JSON.stringify({ __type: 'ServiceUnavailable', message: String(e.message) }));
  });
  up.end(body);
}

function control(req, res) {
  if (req.url === '/_stub/stats') return json(res, 200, stats);
  if (req.url === '/_stub/secrets') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const lines = [];
    for (const k of keys.values()) {
      lines.push(k.secret);
      if (k.token) lines.push(k.token);
    }
    return res.end(lines.join('\n') + '\n');
  }
  if (req.url === '/_stub/revoke' && req.method === 'POST') {
    const src = accept ?? 'sts';
    const id = newest.get(src);
    if (id) keys.get(id).revoked = true;
    return json(res, 200, { revoked: id ? 1 : 0 });
  }
  json(res, 404, {});
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (req.url.startsWith('/_stub/')) return control(req, res);
    if (req.url.startsWith('/latest/')) return handleImds(req, res);
    if (req.url.startsWith('/container/')) return handleContainer(req, res);
    const ctype = req.headers['content-type'] ?? '';
    if (req.method === 'POST' && ctype.startsWith('application/x-www-form-urlencoded')) {
      return handleSts(req, res, body, new URLSearchParams(body.toString('utf8')));
    }
    proxy(req, res, body);
  });
});

server.keepAliveTimeout = 30000;
server.listen(Number(opt('--port', '0')), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
if (args.includes('--exit-on-stdin-eof')) {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}
