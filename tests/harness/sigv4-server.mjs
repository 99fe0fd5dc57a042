// sigv4-server.mjs: an HTTP server that checks AWS SigV4 signatures with its
// own implementation (sigv4-verify.mjs: node:http + node:crypto only), so
// that core/aws/sigv4.c is tested against something other than itself.
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
import http from 'node:http';
import { AwsError, sendError, verify } from './sigv4-verify.mjs';

const accessKeyId = process.env.SIGV4_ACCESS_KEY_ID ?? process.env.AWS_ACCESS_KEY_ID;
const secret = process.env.SIGV4_SECRET_ACCESS_KEY ?? process.env.AWS_SECRET_ACCESS_KEY;
const port = Number(process.argv[2] ?? process.env.SIGV4_SERVER_PORT ?? 0);

if (!accessKeyId || !secret) {
  process.stderr.write('sigv4-server: SIGV4_ACCESS_KEY_ID and SIGV4_SECRET_ACCESS_KEY must be set\n');
  process.exit(2);
}

function lookup(keyId) {
  if (keyId !== accessKeyId) throw new AwsError(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
  return secret;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      const result = verify(req, Buffer.concat(chunks), lookup);
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
