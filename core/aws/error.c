/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/error.c: AWS error codes, their classification, and error parsing
 * (see aws/error.h and docs/aws.md).
 */
#include "aws/error.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum code_flags {
	CODE_SLOW = 1,  /* clears only with time */
	CODE_SKEW = 2,  /* clock skew */
};

struct code_info {
	const char *name;   /* JSON-protocol (canonical) name */
	const char *legacy; /* query-protocol spelling; NULL if the same */
	enum aws_error_class klass;
	int flags;
};

#define T AWS_ERR_TRANSIENT
#define P AWS_ERR_PERMANENT
#define SQS_LEGACY(x) "AWS.SimpleQueueService." x

/* aws-notes.md sections 4 and 5; codes from the SQS and S3 models and the
 * SDKs' throttling and transient lists. */
static const struct code_info code_table[] = {
	/* SQS modelled errors */
	{"QueueDoesNotExist", SQS_LEGACY("NonExistentQueue"), P, 0},
	{"RequestThrottled", NULL, T, 0},
	{"KmsThrottled", "KMS.ThrottlingException", T, 0},
	{"OverLimit", NULL, T, CODE_SLOW},
	{"PurgeQueueInProgress", SQS_LEGACY("PurgeQueueInProgress"), T, CODE_SLOW},
	{"QueueDeletedRecently", SQS_LEGACY("QueueDeletedRecently"), T, CODE_SLOW},
	{"QueueNameExists", "QueueAlreadyExists", P, 0},
	{"ReceiptHandleIsInvalid", NULL, P, 0},
	{"InvalidAddress", NULL, P, 0},
	{"InvalidSecurity", NULL, P, 0},
	{"TooManyEntriesInBatchRequest", SQS_LEGACY("TooManyEntriesInBatchRequest"), P, 0},
	{"BatchRequestTooLong", SQS_LEGACY("BatchRequestTooLong"), P, 0},
	{"EmptyBatchRequest", SQS_LEGACY("EmptyBatchRequest"), P, 0},
	{"BatchEntryIdsNotDistinct", SQS_LEGACY("BatchEntryIdsNotDistinct"), P, 0},
	{"InvalidBatchEntryId", SQS_LEGACY("InvalidBatchEntryId"), P, 0},
	{"UnsupportedOperation", SQS_LEGACY("UnsupportedOperation"), P, 0},
	{"MessageNotInflight", SQS_LEGACY("MessageNotInflight"), P, 0},
	{"InvalidMessageContents", NULL, P, 0},
	{"InvalidAttributeName", NULL, P, 0},
	{"InvalidAttributeValue", NULL, P, 0},
	{"InvalidIdFormat", NULL, P, 0},
	{"KmsAccessDenied", "KMS.AccessDeniedException", P, 0},
	{"KmsDisabled", "KMS.DisabledException", P, 0},
	{"KmsInvalidKeyUsage", "KMS.InvalidKeyUsageException", P, 0},
	{"KmsInvalidState", "KMS.InvalidStateException", P, 0},
	{"KmsNotFound", "KMS.NotFoundException", P, 0},
	/* common to all services */
	{"InternalFailure", NULL, T, 0},
	{"InternalError", NULL, T, 0},
	{"ServiceUnavailable", NULL, T, 0},
	{"RequestExpired", NULL, T, CODE_SKEW},
	{"RequestTimeTooSkewed", NULL, T, CODE_SKEW},
	{"RequestInTheFuture", NULL, T, CODE_SKEW},
	/* temporary credentials that ran out: the provider fetches new ones
	 * (docs/aws.md, "Credentials"), so a later attempt succeeds */
	{"ExpiredToken", NULL, T, 0},
	{"ExpiredTokenException", NULL, T, 0},
	{"TokenRefreshRequired", NULL, T, 0},
	{"RequestTimeout", NULL, T, 0},
	{"RequestTimeoutException", NULL, T, 0},
	{"IncompleteSignature", NULL, P, 0},
	{"SignatureDoesNotMatch", NULL, P, 0},
	{"InvalidClientTokenId", NULL, P, 0},
	{"InvalidAccessKeyId", NULL, P, 0},
	{"MissingAuthenticationToken", NULL, P, 0},
	{"AccessDenied", NULL, P, 0},
	{"AccessDeniedException", NULL, P, 0},
	{"InvalidParameterValue", NULL, P, 0},
	{"InvalidParameterCombination", NULL, P, 0},
	{"MissingParameter", NULL, P, 0},
	{"InvalidAction", NULL, P, 0},
	{"OptInRequired", NULL, P, 0},
	{"ValidationError", NULL, P, 0},
	/* SDK throttling list */
	{"Throttling", NULL, T, 0},
	{"ThrottlingException", NULL, T, 0},
	{"ThrottledException", NULL, T, 0},
	{"RequestThrottledException", NULL, T, 0},
	{"TooManyRequestsException", NULL, T, 0},
	{"ProvisionedThroughputExceededException", NULL, T, 0},
	{"TransactionInProgressException", NULL, T, 0},
	{"RequestLimitExceeded", NULL, T, 0},
	{"BandwidthLimitExceeded", NULL, T, 0},
	{"LimitExceededException", NULL, T, 0},
	{"SlowDown", NULL, T, 0},
	{"PriorRequestNotComplete", NULL, T, 0},
	{"EC2ThrottledException", NULL, T, 0},
	/* S3 */
	{"ConditionalRequestConflict", NULL, T, 0},
	{"PreconditionFailed", NULL, P, 0},
	{"NoSuchBucket", NULL, P, 0},
	{"NoSuchKey", NULL, P, 0},
	{"BucketAlreadyExists", NULL, P, 0},
	/* raised by this client, never by AWS */
	{"ChecksumMismatch", NULL, T, 0},
	{"MalformedResponse", NULL, T, 0},
	{"ResponseTooLarge", NULL, P, 0},
	/* no valid credentials at the moment (a refresh failed): retry later */
	{"CredentialsUnavailable", NULL, T, 0},
};

#undef T
#undef P

static const struct code_info *code_lookup(const char *code)
{
	if (code == NULL || code[0] == '\0')
		return NULL;
	for (size_t i = 0; i < sizeof(code_table) / sizeof(code_table[0]); i++) {
		const struct code_info *ci = &code_table[i];
		if (strcmp(ci->name, code) == 0 ||
		    (ci->legacy != NULL && strcmp(ci->legacy, code) == 0))
			return ci;
	}
	return NULL;
}

void aws_result_reset(struct aws_result *r)
{
	memset(r, 0, sizeof(*r));
}

int aws_result_fail(struct aws_result *r, const char *code, const char *fmt, ...)
{
	va_list ap;

	aws_result_reset(r);
	snprintf(r->code, sizeof(r->code), "%s", aws_error_canonical_code(code));
	va_start(ap, fmt);
	(void)vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
	r->klass = aws_error_classify(0, r->code, CURLE_OK);
	/* An unknown local code with no status would read as success. */
	if (r->klass == AWS_ERR_NONE)
		r->klass = AWS_ERR_PERMANENT;
	return -1;
}

static enum aws_error_class classify_curl(int curl_code)
{
	switch (curl_code) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_PARTIAL_FILE:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_OUT_OF_MEMORY:
		return AWS_ERR_TRANSIENT;
	default:
		/* Bad URL, TLS verification failure, refused body: retrying the
		 * same request cannot help. */
		return AWS_ERR_PERMANENT;
	}
}

enum aws_error_class aws_error_classify(long http_status, const char *code, int curl_code)
{
	const struct code_info *ci = code_lookup(code);

	if (ci != NULL)
		return ci->klass;
	if (curl_code != CURLE_OK)
		return classify_curl(curl_code);
	if (http_status >= 500 || http_status == 408 || http_status == 429)
		return AWS_ERR_TRANSIENT;
	if (http_status >= 200 && http_status < 300 && (code == NULL || code[0] == '\0'))
		return AWS_ERR_NONE;
	return AWS_ERR_PERMANENT;
}

bool aws_error_is_slow_clearing(const char *code)
{
	const struct code_info *ci = code_lookup(code);
	return ci != NULL && (ci->flags & CODE_SLOW) != 0;
}

bool aws_error_is_clock_skew(const char *code)
{
	const struct code_info *ci = code_lookup(code);
	return ci != NULL && (ci->flags & CODE_SKEW) != 0;
}

const char *aws_error_class_name(enum aws_error_class klass)
{
	switch (klass) {
	case AWS_ERR_NONE:
		return "none";
	case AWS_ERR_TRANSIENT:
		return "transient";
	case AWS_ERR_PERMANENT:
		return "permanent";
	}
	return "unknown";
}

const char *aws_error_canonical_code(const char *code)
{
	const struct code_info *ci = code_lookup(code);
	if (ci != NULL)
		return ci->name;
	return code != NULL ? code : "";
}

void aws_error_normalize_code(const char *in, char *out, size_t out_size)
{
	const char *start;
	size_t len;
	char tmp[AWS_RESULT_CODE_LEN];

	if (out_size == 0)
		return;
	out[0] = '\0';
	if (in == NULL)
		return;
	/* Cut first: a ':' or ';' suffix may itself contain '#'. */
	len = strcspn(in, ":;");
	start = in;
	for (size_t i = 0; i < len; i++) {
		if (in[i] == '#')
			start = in + i + 1;
	}
	len -= (size_t)(start - in);
	while (len > 0 && (*start == ' ' || *start == '\t')) {
		start++;
		len--;
	}
	while (len > 0 && (start[len - 1] == ' ' || start[len - 1] == '\t'))
		len--;
	if (len >= sizeof(tmp))
		len = sizeof(tmp) - 1;
	memcpy(tmp, start, len);
	tmp[len] = '\0';
	snprintf(out, out_size, "%s", aws_error_canonical_code(tmp));
}

static const char *json_str(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

void aws_error_parse_json(const char *body, size_t len, const char *error_type_header,
                          const char *query_error_header, struct aws_result *r)
{
	json_t *root = NULL;
	const char *type = NULL;
	const char *msg = NULL;

	if (body != NULL && len > 0)
		root = json_loadb(body, len, 0, NULL);
	if (json_is_object(root)) {
		type = json_str(root, "__type");
		if (type == NULL)
			type = json_str(root, "code");
		msg = json_str(root, "message");
		if (msg == NULL)
			msg = json_str(root, "Message");
	}
	if (type == NULL || type[0] == '\0')
		type = error_type_header;
	if (type == NULL || type[0] == '\0')
		type = query_error_header;
	if (type != NULL && type[0] != '\0')
		aws_error_normalize_code(type, r->code, sizeof(r->code));
	if (msg != NULL)
		snprintf(r->message, sizeof(r->message), "%s", msg);
	json_decref(root);
}

void aws_error_parse_xml(const char *body, size_t len, struct aws_result *r)
{
	struct aws_xml_span doc = {body, len};
	struct aws_xml_span err;
	struct aws_xml_span v;
	char code[AWS_RESULT_CODE_LEN];

	if (body == NULL || !aws_xml_find(doc, "Error", &err, NULL))
		return;
	if (aws_xml_find(err, "Code", &v, NULL)) {
		aws_xml_decode_buf(v, code, sizeof(code));
		aws_error_normalize_code(code, r->code, sizeof(r->code));
	}
	if (aws_xml_find(err, "Message", &v, NULL))
		aws_xml_decode_buf(v, r->message, sizeof(r->message));
	if (r->request_id[0] == '\0' && aws_xml_find(err, "RequestId", &v, NULL))
		aws_xml_decode_buf(v, r->request_id, sizeof(r->request_id));
}

/* Position of needle in the span at or after from, or SIZE_MAX. */
static size_t span_search(struct aws_xml_span s, size_t from, const char *needle)
{
	size_t n = strlen(needle);

	if (n == 0 || s.len < n)
		return SIZE_MAX;
	for (size_t i = from; i + n <= s.len; i++) {
		if (s.p[i] == needle[0] && memcmp(s.p + i, needle, n) == 0)
			return i;
	}
	return SIZE_MAX;
}

bool aws_xml_find(struct aws_xml_span in, const char *tag, struct aws_xml_span *inner,
                  struct aws_xml_span *rest)
{
	size_t tlen = strlen(tag);
	size_t pos = 0;

	if (in.p == NULL)
		return false;
	for (;;) {
		size_t open = span_search(in, pos, "<");
		size_t after;
		char next;

		if (open == SIZE_MAX || open + 1 + tlen >= in.len)
			return false;
		after = open + 1 + tlen;
		next = in.p[after];
		pos = open + 1;
		if (memcmp(in.p + open + 1, tag, tlen) != 0 ||
		    (next != '>' && next != '/' && next != ' ' && next != '\t' &&
		     next != '\r' && next != '\n'))
			continue;
		size_t gt = span_search(in, after, ">");
		if (gt == SIZE_MAX)
			return false;
		if (in.p[gt - 1] == '/') {
			/* <tag/>: present and empty */
			if (inner != NULL)
				*inner = (struct aws_xml_span){in.p + gt + 1, 0};
			if (rest != NULL)
				*rest = (struct aws_xml_span){in.p + gt + 1, in.len - gt - 1};
			return true;
		}
		char close[80];
		int cn = snprintf(close, sizeof(close), "</%s>", tag);
		if (cn < 0 || (size_t)cn >= sizeof(close))
			return false;
		size_t end = span_search(in, gt + 1, close);
		if (end == SIZE_MAX)
			return false;
		if (inner != NULL)
			*inner = (struct aws_xml_span){in.p + gt + 1, end - gt - 1};
		if (rest != NULL) {
			size_t r0 = end + (size_t)cn;
			*rest = (struct aws_xml_span){in.p + r0, in.len - r0};
		}
		return true;
	}
}

/* Appends the UTF-8 encoding of cp to out; returns bytes written or 0. */
static size_t put_utf8(unsigned long cp, char *out)
{
	if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static const struct {
	const char *name;
	char c;
} xml_entities[] = {
	{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''},
};

/* Decodes the reference body ref (between '&' and ';') into out; returns
 * the number of bytes written, 0 when malformed. */
static size_t decode_ref(const char *ref, size_t n, char *out)
{
	char num[16];
	char *end = NULL;
	unsigned long cp;

	if (n >= 2 && ref[0] == '#') {
		bool hex = ref[1] == 'x' || ref[1] == 'X';
		size_t skip = hex ? 2 : 1;
		if (n - skip == 0 || n - skip >= sizeof(num))
			return 0;
		memcpy(num, ref + skip, n - skip);
		num[n - skip] = '\0';
		cp = strtoul(num, &end, hex ? 16 : 10);
		if (end == num || *end != '\0' || num[0] == '-' || num[0] == '+')
			return 0;
		return put_utf8(cp, out);
	}
	for (size_t i = 0; i < sizeof(xml_entities) / sizeof(xml_entities[0]); i++) {
		if (strlen(xml_entities[i].name) == n && memcmp(xml_entities[i].name, ref, n) == 0) {
			out[0] = xml_entities[i].c;
			return 1;
		}
	}
	return 0;
}

char *aws_xml_decode(struct aws_xml_span s)
{
	/* Decoding never grows the text: the shortest reference (&#9;) is 4
	 * bytes and yields at most 4. */
	char *out = malloc(s.len + 1);
	size_t o = 0;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] != '&') {
			out[o++] = s.p[i];
			continue;
		}
		const char *semi = memchr(s.p + i + 1, ';', s.len - i - 1);
		size_t w = semi == NULL ? 0 : decode_ref(s.p + i + 1, (size_t)(semi - s.p) - i - 1, out + o);
		if (w == 0) {
			free(out);
			return NULL;
		}
		o += w;
		i = (size_t)(semi - s.p);
	}
	out[o] = '\0';
	return out;
}

void aws_xml_decode_buf(struct aws_xml_span s, char *out, size_t out_size)
{
	char *d = aws_xml_decode(s);

	if (out_size == 0)
		goto out;
	snprintf(out, out_size, "%s", d != NULL ? d : "");
out:
	free(d);
}
