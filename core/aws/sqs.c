/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/sqs.c: the SQS JSON-protocol calls (see sqs.h and docs/aws.md).
 */
#include "aws/sqs.h"

#include <openssl/evp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws/crypto.h"
#include "common/hexdigest.h"
#include "common/log.h"
#include "common/metrics.h"

#define SQS_CONTENT_TYPE "application/x-amz-json-1.0"
/* Extra time over the long-poll wait before the HTTP request gives up. */
#define SQS_RECEIVE_TIMEOUT_MARGIN_MS 10000L

/* Decodes one UTF-8 sequence at s (n bytes left); returns its length and
 * the code point in *cp, or 0 when malformed (overlong, surrogate, > U+10FFFF). */
static size_t utf8_next(const unsigned char *s, size_t n, unsigned long *cp)
{
	static const unsigned long min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
	size_t len;
	unsigned long v;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2;
		v = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3;
		v = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4;
		v = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	if (v < min_cp[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return len;
}

static bool sqs_char_allowed(unsigned long cp)
{
	return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
	       (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

int sqs_validate_body(const char *body, size_t len, struct aws_result *res)
{
	const unsigned char *s = (const unsigned char *)body;
	size_t i = 0;

	aws_result_reset(res);
	if (len == 0)
		return aws_result_fail(res, "InvalidParameterValue", "message body is empty");
	if (len > SQS_MAX_MESSAGE_BYTES)
		return aws_result_fail(res, "InvalidParameterValue",
		                       "message body of %zu bytes exceeds the SQS limit of %d bytes",
		                       len, SQS_MAX_MESSAGE_BYTES);
	while (i < len) {
		unsigned long cp = 0;
		size_t step = utf8_next(s + i, len - i, &cp);
		if (step == 0)
			return aws_result_fail(res, "InvalidMessageContents",
			                       "message body is not valid UTF-8 at byte %zu", i);
		if (!sqs_char_allowed(cp))
			return aws_result_fail(res, "InvalidMessageContents",
			                       "message body has character U+%04lX at byte %zu, which SQS does not accept",
			                       cp, i);
		i += step;
	}
	return 0;
}

/* Requests per action and messages received, for outbox-bench (through
 * outboxd's OUTBOX_STATS_FILE); process-wide, relaxed atomics. */
static const char *const counted_actions[] = {
	"SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch",
	"ChangeMessageVisibility", "ChangeMessageVisibilityBatch",
};
#define N_COUNTED (sizeof(counted_actions) / sizeof(counted_actions[0]))
static atomic_ulong action_counts[N_COUNTED + 1]; /* last: any other action */
static atomic_ulong empty_receives;
static atomic_ulong messages_received;

static void count_action(const char *action)
{
	size_t i = 0;

	while (i < N_COUNTED && strcmp(counted_actions[i], action) != 0)
		i++;
	atomic_fetch_add_explicit(&action_counts[i], 1, memory_order_relaxed);
}

json_t *sqs_request_counts(void)
{
	json_t *o = json_object();

	for (size_t i = 0; o != NULL && i <= N_COUNTED; i++) {
		unsigned long n = atomic_load_explicit(&action_counts[i], memory_order_relaxed);

		if (n > 0)
			json_object_set_new(o, i < N_COUNTED ? counted_actions[i] : "other",
			                    json_integer((json_int_t)n));
	}
	if (o != NULL) {
		json_object_set_new(o, "empty_receives", json_integer((json_int_t)atomic_load_explicit(
			&empty_receives, memory_order_relaxed)));
		json_object_set_new(o, "messages_received", json_integer((json_int_t)atomic_load_explicit(
			&messages_received, memory_order_relaxed)));
	}
	return o;
}

/* A JSON-protocol request ready to perform: what the request points to. */
struct sqs_prepared {
	char *body;                  /* owned */
	char target[64];
	struct sigv4_header hdrs[2];
	struct aws_http_request req; /* points into this struct */
};

/* Builds p from request (consumed); -1 with res filled when it cannot. */
static int sqs_prepare(struct sqs_prepared *p, const char *action, json_t *request,
                       long timeout_ms, struct aws_result *res)
{
	memset(p, 0, sizeof(*p));
	p->body = request != NULL ? json_dumps(request, JSON_COMPACT) : NULL;
	json_decref(request);
	if (p->body == NULL)
		return aws_result_fail(res, "InternalError", "could not build the %s request", action);
	snprintf(p->target, sizeof(p->target), "AmazonSQS.%s", action);
	count_action(action);
	p->hdrs[0] = (struct sigv4_header){"Content-Type", SQS_CONTENT_TYPE};
	p->hdrs[1] = (struct sigv4_header){"X-Amz-Target", p->target};
	p->req = (struct aws_http_request){
		.method = "POST", .path = "/", .headers = p->hdrs, .n_headers = 2,
		.body = p->body, .body_len = strlen(p->body), .timeout_ms = timeout_ms,
	};
	return 0;
}

/* The answer of a performed request: *reply a new reference to the parsed
 * object (when reply is not NULL).  Returns 0, or -1 with res filled. */
static int sqs_reply(const char *action, int rc, const struct aws_http_response *resp,
                     json_t **reply, struct aws_result *res)
{
	if (reply != NULL)
		*reply = NULL;
	if (rc < 0)
		return -1;
	if (reply == NULL)
		return 0;
	*reply = json_loadb(resp->body, resp->body_len, 0, NULL);
	if (!json_is_object(*reply)) {
		json_decref(*reply);
		*reply = NULL;
		return aws_result_fail(res, "MalformedResponse", "%s answer is not a JSON object",
		                       action);
	}
	return 0;
}

/*
 * One JSON-protocol call: takes ownership of request; *reply (when not NULL)
 * receives a new reference to the parsed answer.
 */
static int sqs_call(struct aws_http *c, const char *action, json_t *request, long timeout_ms,
                    json_t **reply, struct aws_result *res)
{
	struct sqs_prepared p;
	struct aws_http_response resp;
	double t0;
	int rc;

	if (reply != NULL)
		*reply = NULL;
	aws_result_reset(res);
	if (sqs_prepare(&p, action, request, timeout_ms, res) < 0)
		return -1;
	t0 = metrics_now_seconds();
	rc = aws_http_perform(c, &p.req, &resp, res);
	metrics_observe_keyed(METRIC_SQS_REQUEST_SECONDS, action, metrics_now_seconds() - t0);
	rc = sqs_reply(action, rc, &resp, reply, res);
	free(p.body);
	return rc;
}

static const char *obj_str(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void md5_hex(const void *data, size_t len, char out[33])
{
	const EVP_MD *md5 = aws_crypto_md5(); /* fetched once: every message is checked */
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	out[0] = '\0';
	if (md5 == NULL || EVP_Digest(data, len, md, &mdlen, md5, NULL) != 1 || mdlen != 16)
		return;
	hex_encode(md, mdlen, out);
}

/* true when expected (hex, any case) is the MD5 of data; a missing value
 * (an emulator that omits it) is accepted. */
static bool md5_matches(const char *expected, const void *data, size_t len)
{
	char hex[33];

	if (expected == NULL)
		return true;
	md5_hex(data, len, hex);
	return hex[0] != '\0' && strcasecmp(hex, expected) == 0;
}

static bool entry_id_valid(const char *id)
{
	size_t len = id != NULL ? strlen(id) : 0;

	if (len == 0 || len > SQS_MAX_ENTRY_ID_LEN)
		return false;
	return strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

static void init_pending(struct sqs_entry_result *results, size_t n);

/*
 * Starts a batch call: checks n, id syntax and distinctness (what SQS would
 * refuse for the whole batch) and marks every entry "no answer yet".
 */
static int begin_batch(const char *const *ids, size_t n, struct sqs_entry_result *results,
                       struct aws_result *res)
{
	aws_result_reset(res);
	if (n == 0)
		return aws_result_fail(res, "EmptyBatchRequest", "batch has no entries");
	if (n > SQS_MAX_BATCH_ENTRIES)
		return aws_result_fail(res, "TooManyEntriesInBatchRequest",
		                       "batch has %zu entries, more than the SQS limit of %d", n,
		                       SQS_MAX_BATCH_ENTRIES);
	for (size_t i = 0; i < n; i++) {
		if (!entry_id_valid(ids[i]))
			return aws_result_fail(res, "InvalidBatchEntryId",
			                       "batch entry %zu has an invalid id", i);
		for (size_t j = 0; j < i; j++) {
			if (strcmp(ids[i], ids[j]) == 0)
				return aws_result_fail(res, "BatchEntryIdsNotDistinct",
				                       "batch entry id \"%s\" is used twice", ids[i]);
		}
	}
	init_pending(results, n);
	return 0;
}

static void entry_fail(struct sqs_entry_result *r, enum aws_error_class klass, bool sender_fault,
                       const char *code, const char *message)
{
	memset(r, 0, sizeof(*r));
	r->klass = klass;
	r->sender_fault = sender_fault;
	snprintf(r->code, sizeof(r->code), "%s", aws_error_canonical_code(code));
	snprintf(r->message, sizeof(r->message), "%s", message != NULL ? message : "");
}

static int index_of(const char *const *ids, size_t n, const char *id)
{
	for (size_t i = 0; id != NULL && i < n; i++) {
		if (strcmp(ids[i], id) == 0)
			return (int)i;
	}
	return -1;
}

static void apply_failed(const json_t *failed, const char *const *ids, size_t n,
                         struct sqs_entry_result *results)
{
	size_t k;
	const json_t *e;

	json_array_foreach(failed, k, e) {
		int i = index_of(ids, n, obj_str(e, "Id"));
		if (i < 0)
			continue;
		bool sender = json_is_true(json_object_get(e, "SenderFault"));
		const char *code = obj_str(e, "Code");
		/* SenderFault decides: a bad entry fails again unchanged, a
		 * server-side failure of one entry is worth re-sending. */
		entry_fail(&results[i], sender ? AWS_ERR_PERMANENT : AWS_ERR_TRANSIENT, sender,
		           code != NULL ? code : "", obj_str(e, "Message"));
	}
}

/*
 * Applies a batch answer to results; sent[i] (may be NULL) is the body
 * sent for ids[i], for the MD5 check.  Entries the answer does not mention
 * stay as initialised by the caller.
 */
static void apply_batch_reply(const json_t *reply, const char *const *ids, size_t n,
                              const struct sqs_send_entry *sent,
                              struct sqs_entry_result *results)
{
	size_t k;
	const json_t *e;

	json_array_foreach(json_object_get(reply, "Successful"), k, e) {
		int i = index_of(ids, n, obj_str(e, "Id"));
		if (i < 0)
			continue;
		if (sent != NULL &&
		    !md5_matches(obj_str(e, "MD5OfMessageBody"), sent[i].body, sent[i].body_len)) {
			entry_fail(&results[i], AWS_ERR_TRANSIENT, false, "ChecksumMismatch",
			           "MD5OfMessageBody does not match the body sent");
			continue;
		}
		memset(&results[i], 0, sizeof(results[i]));
		results[i].ok = true;
		snprintf(results[i].message_id, sizeof(results[i].message_id), "%s",
		         obj_str(e, "MessageId") != NULL ? obj_str(e, "MessageId") : "");
	}
	apply_failed(json_object_get(reply, "Failed"), ids, n, results);
}

/* Copied, not built with entry_fail(): the code is canonical already, and
 * every entry of every batch starts here. */
static const struct sqs_entry_result pending_result = {
	.klass = AWS_ERR_TRANSIENT,
	.code = "MalformedResponse",
	.message = "entry missing from the batch answer",
};

static void init_pending(struct sqs_entry_result *results, size_t n)
{
	for (size_t i = 0; i < n; i++)
		results[i] = pending_result;
}

/* Validates bodies into results and returns the JSON entries to send. */
/* What the traceparent attribute adds to a message's size: SQS counts
 * every attribute's name, type and value. */
static size_t trace_attribute_bytes(const char *traceparent)
{
	return traceparent ? strlen("traceparent") + strlen("String") + strlen(traceparent) : 0;
}

const char *sqs_message_traceparent(const struct sqs_message *m)
{
	const json_t *v = json_object_get(json_object_get(m->message_attributes, "traceparent"),
	                                  "StringValue");

	return json_string_value(v);
}

static json_t *send_entries_json(const struct sqs_send_entry *entries, size_t n,
                                 struct sqs_entry_result *results, size_t *total)
{
	json_t *arr = json_array();
	struct aws_result vr;

	*total = 0;
	for (size_t i = 0; arr != NULL && i < n; i++) {
		if (sqs_validate_body(entries[i].body, entries[i].body_len, &vr) < 0) {
			entry_fail(&results[i], vr.klass, true, vr.code, vr.message);
			continue;
		}
		*total += entries[i].body_len + trace_attribute_bytes(entries[i].traceparent);
		json_t *body = json_stringn(entries[i].body, entries[i].body_len);
		json_t *attrs = entries[i].traceparent == NULL ? NULL :
			json_pack("{s:{s:s, s:s}}", "traceparent", "DataType", "String",
			          "StringValue", entries[i].traceparent);
		if (json_array_append_new(arr, json_pack("{s:s, s:o?, s:o?}", "Id", entries[i].id,
		                                         "MessageBody", body,
		                                         "MessageAttributes", attrs)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* Sends a batch (takes ownership of entries_json) and applies the answer. */
static int batch_call(struct aws_http *c, const char *action, const char *queue_url,
                      json_t *entries_json, const char *const *ids, size_t n,
                      const struct sqs_send_entry *sent, struct sqs_entry_result *results,
                      struct aws_result *res)
{
	json_t *reply = NULL;

	if (sqs_call(c, action,
	             json_pack("{s:s, s:o}", "QueueUrl", queue_url, "Entries", entries_json), 0,
	             &reply, res) < 0)
		return -1;
	apply_batch_reply(reply, ids, n, sent, results);
	json_decref(reply);
	return 0;
}

/*
 * Checks a SendMessageBatch and builds its request: 1 and *request (new
 * reference) when there is something to send, 0 when every entry failed
 * validation (nothing to send), -1 with res filled when SQS would refuse
 * the batch as a whole.
 */
static int send_request(const char *queue_url, const struct sqs_send_entry *entries, size_t n,
                        struct sqs_entry_result *results, json_t **request,
                        struct aws_result *res)
{
	const char *ids[SQS_MAX_BATCH_ENTRIES] = {NULL};
	json_t *arr = NULL;
	size_t total = 0;

	*request = NULL;
	for (size_t i = 0; i < n && i < SQS_MAX_BATCH_ENTRIES; i++)
		ids[i] = entries[i].id;
	if (begin_batch(ids, n, results, res) < 0)
		return -1;
	arr = send_entries_json(entries, n, results, &total);
	if (arr == NULL)
		return aws_result_fail(res, "InternalError", "could not build the batch");
	if (total > SQS_MAX_BATCH_BYTES) {
		json_decref(arr);
		return aws_result_fail(res, "BatchRequestTooLong",
		                       "batch of %zu messages totals %zu bytes, over the SQS limit of %d bytes; split it",
		                       n, total, SQS_MAX_BATCH_BYTES);
	}
	if (json_array_size(arr) == 0) {
		json_decref(arr);
		return 0;
	}
	*request = json_pack("{s:s, s:o}", "QueueUrl", queue_url, "Entries", arr);
	return 1;
}

/* Applies a SendMessageBatch answer to the entries' results. */
static void apply_send_reply(const json_t *reply, const struct sqs_send_entry *entries,
                             size_t n, struct sqs_entry_result *results)
{
	const char *ids[SQS_MAX_BATCH_ENTRIES] = {NULL};

	for (size_t i = 0; i < n && i < SQS_MAX_BATCH_ENTRIES; i++)
		ids[i] = entries[i].id;
	apply_batch_reply(reply, ids, n, entries, results);
}

int sqs_send_message_batch(struct aws_http *c, const char *queue_url,
                           const struct sqs_send_entry *entries, size_t n,
                           struct sqs_entry_result *results, struct aws_result *res)
{
	json_t *request, *reply = NULL;
	int rc = send_request(queue_url, entries, n, results, &request, res);

	if (rc <= 0)
		return rc;
	if (sqs_call(c, "SendMessageBatch", request, 0, &reply, res) < 0)
		return -1;
	apply_send_reply(reply, entries, n, results);
	json_decref(reply);
	return 0;
}

void sqs_send_message_batches(struct aws_http_multi *mh, struct aws_http *const *clients,
                              const char *queue_url, struct sqs_send_batch *b, size_t n)
{
	struct sqs_prepared p[AWS_HTTP_MAX_TRANSFERS];
	struct aws_http_transfer t[AWS_HTTP_MAX_TRANSFERS];
	size_t idx[AWS_HTTP_MAX_TRANSFERS], k = 0;
	double started, took;

	for (; n > AWS_HTTP_MAX_TRANSFERS; b += AWS_HTTP_MAX_TRANSFERS, n -= AWS_HTTP_MAX_TRANSFERS)
		sqs_send_message_batches(mh, clients, queue_url, b, AWS_HTTP_MAX_TRANSFERS);
	for (size_t i = 0; i < n; i++) {
		json_t *request;

		aws_result_reset(&b[i].res);
		b[i].rc = send_request(queue_url, b[i].entries, b[i].n, b[i].results, &request,
		                       &b[i].res);
		if (b[i].rc <= 0)
			continue;
		if (sqs_prepare(&p[k], "SendMessageBatch", request, 0, &b[i].res) < 0) {
			b[i].rc = -1;
			continue;
		}
		t[k] = (struct aws_http_transfer){.client = clients[k], .req = &p[k].req};
		idx[k++] = i;
	}
	started = metrics_now_seconds();
	aws_http_perform_many(mh, t, k);
	took = metrics_now_seconds() - started;
	for (size_t j = 0; j < k; j++) {
		metrics_observe_keyed(METRIC_SQS_REQUEST_SECONDS, "SendMessageBatch", took);
		struct sqs_send_batch *sb = &b[idx[j]];
		json_t *reply;

		sb->res = t[j].res;
		sb->rc = sqs_reply("SendMessageBatch", t[j].rc, &t[j].resp, &reply, &sb->res);
		if (sb->rc == 0)
			apply_send_reply(reply, sb->entries, sb->n, sb->results);
		json_decref(reply);
		free(p[j].body);
	}
}

/* Shared by DeleteMessageBatch and ChangeMessageVisibilityBatch. */
static int handle_batch(struct aws_http *c, const char *action, const char *queue_url,
                        const struct sqs_handle_entry *entries, size_t n, bool visibility,
                        struct sqs_entry_result *results, struct aws_result *res)
{
	const char *ids[SQS_MAX_BATCH_ENTRIES] = {NULL};
	json_t *arr;

	for (size_t i = 0; i < n && i < SQS_MAX_BATCH_ENTRIES; i++)
		ids[i] = entries[i].id;
	if (begin_batch(ids, n, results, res) < 0)
		return -1;
	arr = json_array();
	for (size_t i = 0; arr != NULL && i < n; i++) {
		json_t *e = json_pack("{s:s, s:s}", "Id", entries[i].id, "ReceiptHandle",
		                      entries[i].receipt_handle);
		if (e != NULL && visibility &&
		    json_object_set_new(e, "VisibilityTimeout",
		                        json_integer(entries[i].visibility_timeout)) < 0) {
			json_decref(e);
			e = NULL;
		}
		if (json_array_append_new(arr, e) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	if (arr == NULL)
		return aws_result_fail(res, "InternalError", "could not build the batch");
	return batch_call(c, action, queue_url, arr, ids, n, NULL, results, res);
}

int sqs_delete_message_batch(struct aws_http *c, const char *queue_url,
                             const struct sqs_handle_entry *entries, size_t n,
                             struct sqs_entry_result *results, struct aws_result *res)
{
	return handle_batch(c, "DeleteMessageBatch", queue_url, entries, n, false, results, res);
}

int sqs_change_message_visibility_batch(struct aws_http *c, const char *queue_url,
                                        const struct sqs_handle_entry *entries, size_t n,
                                        struct sqs_entry_result *results,
                                        struct aws_result *res)
{
	return handle_batch(c, "ChangeMessageVisibilityBatch", queue_url, entries, n, true,
	                    results, res);
}

int sqs_delete_message(struct aws_http *c, const char *queue_url, const char *receipt_handle,
                       struct aws_result *res)
{
	return sqs_call(c, "DeleteMessage",
	                json_pack("{s:s, s:s}", "QueueUrl", queue_url, "ReceiptHandle",
	                          receipt_handle),
	                0, NULL, res);
}

int sqs_change_message_visibility(struct aws_http *c, const char *queue_url,
                                  const char *receipt_handle, int visibility_timeout,
                                  struct aws_result *res)
{
	return sqs_call(c, "ChangeMessageVisibility",
	                json_pack("{s:s, s:s, s:i}", "QueueUrl", queue_url, "ReceiptHandle",
	                          receipt_handle, "VisibilityTimeout", visibility_timeout),
	                0, NULL, res);
}

/* SQS sends numeric attributes as strings. */
static long long attr_number(const json_t *attrs, const char *name)
{
	const char *s = obj_str(attrs, name);
	char *end = NULL;
	long long v;

	if (s == NULL)
		return 0;
	v = strtoll(s, &end, 10);
	return end != s && *end == '\0' && v >= 0 ? v : 0;
}

/* Fills *m from one element of Messages; false when it must be dropped. */
static bool parse_message(const json_t *e, struct sqs_message *m)
{
	const json_t *body = json_object_get(e, "Body");

	memset(m, 0, sizeof(*m));
	m->message_id = obj_str(e, "MessageId");
	m->receipt_handle = obj_str(e, "ReceiptHandle");
	if (m->message_id == NULL || m->receipt_handle == NULL || !json_is_string(body)) {
		log_warning("SQS returned a message without id, receipt handle or body");
		return false;
	}
	m->body = json_string_value(body);
	m->body_len = json_string_length(body);
	if (!md5_matches(obj_str(e, "MD5OfBody"), m->body, m->body_len)) {
		log_warning("dropping SQS message \"%s\": MD5OfBody does not match its body",
		            m->message_id);
		return false;
	}
	m->attributes = json_object_get(e, "Attributes");
	m->message_attributes = json_object_get(e, "MessageAttributes");
	m->receive_count = (int)attr_number(m->attributes, "ApproximateReceiveCount");
	m->sent_timestamp_ms = attr_number(m->attributes, "SentTimestamp");
	return true;
}

static json_t *receive_request(const char *queue_url, const struct sqs_receive_options *o)
{
	json_t *req = json_pack("{s:s, s:i, s:i, s:[s]}", "QueueUrl", queue_url,
	                        "MaxNumberOfMessages", o->max_messages, "WaitTimeSeconds",
	                        o->wait_time_seconds, "MessageAttributeNames",
	                        o->trace_only ? "traceparent" : "All");

	if (req != NULL && !o->trace_only &&
	    (json_object_set_new(req, "AttributeNames", json_pack("[s]", "All")) < 0 ||
	     json_object_set_new(req, "MessageSystemAttributeNames", json_pack("[s]", "All")) < 0)) {
		json_decref(req);
		return NULL;
	}
	if (req != NULL && o->visibility_timeout >= 0 &&
	    json_object_set_new(req, "VisibilityTimeout", json_integer(o->visibility_timeout)) < 0) {
		json_decref(req);
		return NULL;
	}
	return req;
}

int sqs_receive_message(struct aws_http *c, const char *queue_url,
                        const struct sqs_receive_options *opts, struct sqs_messages *out,
                        struct aws_result *res)
{
	long timeout = opts->wait_time_seconds * 1000L + SQS_RECEIVE_TIMEOUT_MARGIN_MS;
	const json_t *msgs;
	size_t k;
	const json_t *e;

	memset(out, 0, sizeof(*out));
	if (opts->max_messages < 1 || opts->max_messages > SQS_MAX_BATCH_ENTRIES ||
	    opts->wait_time_seconds < 0 || opts->wait_time_seconds > SQS_MAX_WAIT_SECONDS ||
	    opts->visibility_timeout > SQS_MAX_VISIBILITY_TIMEOUT)
		return aws_result_fail(res, "InvalidParameterValue",
		                       "receive options out of range (messages 1..10, wait 0..20 s)");
	if (sqs_call(c, "ReceiveMessage", receive_request(queue_url, opts), timeout, &out->root,
	             res) < 0)
		return -1;
	msgs = json_object_get(out->root, "Messages");
	if (json_array_size(msgs) == 0) {
		atomic_fetch_add_explicit(&empty_receives, 1, memory_order_relaxed);
		return 0;
	}
	out->items = calloc(json_array_size(msgs), sizeof(*out->items));
	if (out->items == NULL)
		return aws_result_fail(res, "InternalError", "out of memory");
	json_array_foreach(msgs, k, e) {
		if (parse_message(e, &out->items[out->n]))
			out->n++;
	}
	atomic_fetch_add_explicit(&messages_received, out->n, memory_order_relaxed);
	return 0;
}

int sqs_messages_join(struct sqs_messages *into, struct sqs_messages *more)
{
	struct sqs_message *items;
	json_t *roots;

	if (more->n == 0) {
		sqs_messages_free(more);
		return 0;
	}
	items = realloc(into->items, (into->n + more->n) * sizeof(*items));
	if (items == NULL)
		return -1;
	into->items = items;
	/* Both answers stay alive under one root: the items point into them. */
	roots = json_array();
	if (roots == NULL || (into->root != NULL && json_array_append(roots, into->root) < 0) ||
	    (more->root != NULL && json_array_append(roots, more->root) < 0)) {
		json_decref(roots);
		return -1;
	}
	memcpy(into->items + into->n, more->items, more->n * sizeof(*items));
	into->n += more->n;
	json_decref(into->root);
	into->root = roots;
	sqs_messages_free(more);
	return 0;
}

void sqs_messages_free(struct sqs_messages *m)
{
	free(m->items);
	json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

/* Answers of the form {"QueueUrl": "..."}; *queue_url caller frees. */
static int take_queue_url(json_t *reply, char **queue_url, struct aws_result *res)
{
	const char *url = obj_str(reply, "QueueUrl");

	*queue_url = url != NULL ? strdup(url) : NULL;
	json_decref(reply);
	if (*queue_url == NULL)
		return aws_result_fail(res, "MalformedResponse", "answer has no QueueUrl");
	return 0;
}

int sqs_create_queue(struct aws_http *c, const char *name, const struct sqs_attribute *attrs,
                     size_t n_attrs, char **queue_url, struct aws_result *res)
{
	json_t *req = json_pack("{s:s}", "QueueName", name);
	json_t *a = json_object();
	json_t *reply = NULL;

	*queue_url = NULL;
	for (size_t i = 0; req != NULL && a != NULL && i < n_attrs; i++) {
		if (json_object_set_new(a, attrs[i].name, json_string(attrs[i].value)) < 0) {
			json_decref(a);
			a = NULL;
		}
	}
	if (req == NULL || a == NULL || json_object_set_new(req, "Attributes", a) < 0) {
		json_decref(req);
		return aws_result_fail(res, "InternalError", "could not build the CreateQueue request");
	}
	if (sqs_call(c, "CreateQueue", req, 0, &reply, res) < 0)
		return -1;
	return take_queue_url(reply, queue_url, res);
}

int sqs_get_queue_url(struct aws_http *c, const char *name, char **queue_url,
                      struct aws_result *res)
{
	json_t *reply = NULL;

	*queue_url = NULL;
	if (sqs_call(c, "GetQueueUrl", json_pack("{s:s}", "QueueName", name), 0, &reply, res) < 0)
		return -1;
	return take_queue_url(reply, queue_url, res);
}

int sqs_get_queue_attributes(struct aws_http *c, const char *queue_url,
                             const char *const *names, size_t n, json_t **attrs,
                             struct aws_result *res)
{
	json_t *list = json_array();
	json_t *reply = NULL;

	*attrs = NULL;
	for (size_t i = 0; list != NULL && i < (names != NULL ? n : 1); i++) {
		if (json_array_append_new(list, json_string(names != NULL ? names[i] : "All")) < 0) {
			json_decref(list);
			list = NULL;
		}
	}
	if (list == NULL)
		return aws_result_fail(res, "InternalError", "out of memory");
	if (sqs_call(c, "GetQueueAttributes",
	             json_pack("{s:s, s:o}", "QueueUrl", queue_url, "AttributeNames", list), 0,
	             &reply, res) < 0)
		return -1;
	*attrs = json_incref(json_object_get(reply, "Attributes"));
	json_decref(reply);
	if (*attrs == NULL)
		*attrs = json_object();
	return *attrs != NULL ? 0 : aws_result_fail(res, "InternalError", "out of memory");
}

char *sqs_redrive_policy(const char *dlq_arn, int max_receive_count)
{
	json_t *p = json_pack("{s:s, s:i}", "deadLetterTargetArn", dlq_arn, "maxReceiveCount",
	                      max_receive_count);
	char *s = p != NULL ? json_dumps(p, JSON_COMPACT) : NULL;

	json_decref(p);
	return s;
}
