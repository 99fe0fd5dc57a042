/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/error.c: AWS error codes, their classification, and error parsing
 * (see aws/error.h and docs/aws.md).
 */
#include "aws/error.h"
#include "aws/xml.h"

#include <curl/curl.h>
#include <jansson.h>
#include <libxml/tree.h>
#include <stdarg.h>
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
	xmlDoc *doc = aws_xml_read(body, len);
	xmlNode *err = doc != NULL ? aws_xml_find(xmlDocGetRootElement(doc), "Error") : NULL;
	xmlNode *v;
	char code[AWS_RESULT_CODE_LEN];

	if (err == NULL)
		goto out;
	v = aws_xml_child(err, "Code");
	if (v != NULL) {
		aws_xml_text_buf(v, code, sizeof(code));
		aws_error_normalize_code(code, r->code, sizeof(r->code));
	}
	v = aws_xml_child(err, "Message");
	if (v != NULL)
		aws_xml_text_buf(v, r->message, sizeof(r->message));
	v = aws_xml_child(err, "RequestId");
	if (r->request_id[0] == '\0' && v != NULL)
		aws_xml_text_buf(v, r->request_id, sizeof(r->request_id));
out:
	xmlFreeDoc(doc);
}
