// tests/harness/http-stub.mjs: canned AWS answers for the client's
// classification tests (tests/integration/test_sqs.c, test_s3.c).
//
// Listens on 127.0.0.1 on a free port and prints that port on stdout.  It
// exits when its stdin closes, so it cannot outlive the test that started
// it, and on SIGTERM.
//
// SQS (JSON protocol): the scenario is the last path segment of QueueUrl
// (or QueueName for GetQueueUrl):
//   http500     500 with a non-JSON body
//   throttled   403 RequestThrottled (x-amzn-query-error too)
//   denied      403 AccessDenied
//   legacy      400 with only x-amzn-query-error NonExistentQueue
//   hang        never answers (client timeout)
//   bigbody     200 with a 2 MiB body
//   partial     SendMessageBatch: entry "bad" SenderFault, "busy" server fault
//   md5bad      SendMessageBatch: every MD5OfMessageBody wrong;
//               ReceiveMessage: messages "good" (right MD5) and "bad" (wrong)
//   short       SendMessageBatch: entry "lost" is in neither list
//   askedfor    ReceiveMessage: one message whose body is the attribute
//               names the request asked for (a JSON object)
//   headers     GetQueueUrl: QueueUrl is a JSON report of the request headers
// S3 (path-style, bucket "stub-bucket"): an in-memory store that honours
// If-None-Match: * (412); a key starting with "conflict" answers 409.
import http from 'node:http';
import crypto from 'node:crypto';

const objects = new Map();

function sqsError(res, status, type, message, queryError) {
	const headers = {'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'stub-' + type};
	if (queryError) headers['x-amzn-query-error'] = queryError;
	res.writeHead(status, headers);
	const body = {message};
	if (type !== '') body.__type = 'com.amazonaws.sqs#' + type;
	res.end(JSON.stringify(body));
}

function sqsOk(res, body) {
	res.writeHead(200, {'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'stub-ok'});
	res.end(JSON.stringify(body));
}

function md5(s) {
	return crypto.createHash('md5').update(s, 'utf8').digest('hex');
}

function sendBatchReply(res, req, scenario) {
	const ok = [];
	const failed = [];
	for (const e of req.Entries || []) {
		if (scenario === 'short' && e.Id === 'lost')
			continue;
		if (scenario === 'partial' && e.Id === 'bad')
			failed.push({Id: e.Id, SenderFault: true, Code: 'InvalidParameterValue', Message: 'bad entry'});
		else if (scenario === 'partial' && e.Id === 'busy')
			failed.push({Id: e.Id, SenderFault: false, Code: 'InternalError', Message: 'try again'});
		else
			ok.push({Id: e.Id, MessageId: 'm-' + e.Id,
				MD5OfMessageBody: scenario === 'md5bad' ? md5('x' + e.MessageBody) : md5(e.MessageBody)});
	}
	sqsOk(res, {Successful: ok, Failed: failed});
}

function sqs(req, res, raw) {
	let body = {};
	try { body = JSON.parse(raw); } catch { /* scenario '' */ }
	const action = String(req.headers['x-amz-target'] || '').replace(/^AmazonSQS\./, '');
	const scenario = String(body.QueueUrl || body.QueueName || '').split('/').pop();
	switch (scenario) {
	case 'http500':
		res.writeHead(500, {'content-type': 'text/plain'});
		return res.end('internal error');
	case 'throttled':
		return sqsError(res, 403, 'RequestThrottled', 'Rate exceeded', 'RequestThrottled;Sender');
	case 'denied':
		return sqsError(res, 403, 'AccessDenied', 'Access to the resource is denied', 'AccessDenied;Sender');
	case 'legacy':
		return sqsError(res, 400, '', 'The specified queue does not exist.',
			'AWS.SimpleQueueService.NonExistentQueue;Sender');
	case 'hang':
		return; // never answers; the client's timeout fires
	case 'bigbody':
		return sqsOk(res, {pad: 'x'.repeat(2 * 1024 * 1024)});
	case 'headers':
		return sqsOk(res, {QueueUrl: JSON.stringify({
			authorization: req.headers.authorization || '',
			date: req.headers['x-amz-date'] || '',
			token: req.headers['x-amz-security-token'] || '',
			expect: req.headers.expect || '',
			target: req.headers['x-amz-target'] || '',
			contentType: req.headers['content-type'] || '',
		})});
	}
	if (action === 'SendMessageBatch')
		return sendBatchReply(res, body, scenario);
	if (action === 'ReceiveMessage' && scenario === 'askedfor') {
		const asked = JSON.stringify({AttributeNames: body.AttributeNames ?? null,
			MessageSystemAttributeNames: body.MessageSystemAttributeNames ?? null,
			MessageAttributeNames: body.MessageAttributeNames ?? null});
		return sqsOk(res, {Messages: [{MessageId: 'asked', ReceiptHandle: 'rh-asked',
			Body: asked, MD5OfBody: md5(asked)}]});
	}
	if (action === 'ReceiveMessage' && scenario === 'md5bad')
		return sqsOk(res, {Messages: ['good', 'bad'].map((id) => ({MessageId: id,
			ReceiptHandle: 'rh-' + id, Body: '{"id":"' + id + '"}',
			MD5OfBody: md5((id === 'bad' ? 'x' : '') + '{"id":"' + id + '"}')}))});
	return sqsError(res, 400, 'InvalidAction', 'stub does not know ' + action + ' for "' + scenario + '"');
}

function s3Error(res, status, code, message) {
	res.writeHead(status, {'content-type': 'application/xml', 'x-amz-request-id': 'stub-' + code});
	res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code>` +
		`<Message>${message}</Message><RequestId>stub-${code}</RequestId></Error>`);
}

function s3(req, res, raw) {
	const path = decodeURIComponent(new URL(req.url, 'http://stub').pathname);
	const key = path.replace(/^\/stub-bucket\/?/, '');
	if (key === '')
		return s3Error(res, 400, 'InvalidRequest', 'bucket-level calls are not stubbed');
	if (req.method === 'PUT') {
		if (key.startsWith('conflict'))
			return s3Error(res, 409, 'ConditionalRequestConflict', 'A conflicting operation is in progress');
		if (req.headers['if-none-match'] === '*' && objects.has(key))
			return s3Error(res, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
		objects.set(key, raw);
		res.writeHead(200, {etag: '"' + crypto.createHash('md5').update(raw).digest('hex') + '"'});
		return res.end();
	}
	if (req.method === 'GET') {
		if (!objects.has(key))
			return s3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
		res.writeHead(200, {'content-type': 'application/octet-stream'});
		return res.end(objects.get(key));
	}
	return s3Error(res, 405, 'MethodNotAllowed', 'not stubbed');
}

const server = http.createServer((req, res) => {
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		const raw = Buffer.concat(chunks);
		if (req.url.startsWith('/stub-bucket'))
			s3(req, res, raw);
		else
			sqs(req, res, raw.toString('utf8'));
	});
});

server.listen(0, '127.0.0.1', () => {
	process.stdout.write(server.address().port + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
