/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/s3.c: S3 REST calls (see s3.h and docs/aws.md).
 */
#include "aws/s3.h"

#include <libxml/tree.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/crypto.h"
#include "aws/sigv4.h"
#include "aws/xml.h"

/* "/bucket/key" (path-style) or "/key" (virtual-hosted); key may be NULL
 * for bucket-level calls.  Caller frees with free(). */
static char *object_path(const struct s3_bucket *b, const char *key)
{
	char *bucket = b->virtual_hosted ? NULL : sigv4_uri_encode(b->name, false);
	char *k = key != NULL ? sigv4_uri_encode(key, true) : NULL;
	char *path = NULL;

	if ((!b->virtual_hosted && bucket == NULL) || (key != NULL && k == NULL))
		goto out;
	/* Bucket-level calls: "/bucket" path-style, "/" virtual-hosted. */
	if (asprintf(&path, "%s%s%s%s", b->virtual_hosted ? "" : "/", bucket != NULL ? bucket : "",
	             (k != NULL || b->virtual_hosted) ? "/" : "", k != NULL ? k : "") < 0)
		path = NULL;
out:
	free(bucket);
	free(k);
	return path;
}

/* Sends one request to the bucket; resp's body is borrowed from the client. */
static int s3_request(const struct s3_bucket *b, const char *method, const char *key,
                      const char *query, const struct sigv4_header *hdrs, size_t n_hdrs,
                      const void *body, size_t len, struct aws_http_response *resp,
                      struct aws_result *res)
{
	char *path = object_path(b, key);
	int rc;

	if (path == NULL)
		return aws_result_fail(res, "InternalError", "out of memory");
	const struct aws_http_request req = {
		.method = method, .path = path, .query = query,
		.vhost_bucket = b->virtual_hosted ? b->name : NULL,
		.headers = hdrs, .n_headers = n_hdrs, .body = body, .body_len = len,
	};
	rc = aws_http_perform(b->http, &req, resp, res);
	free(path);
	return rc;
}

static int content_md5(const void *body, size_t len, char out[32])
{
	const EVP_MD *md5 = aws_crypto_md5();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	if (md5 == NULL || EVP_Digest(body, len, md, &mdlen, md5, NULL) != 1 || mdlen != 16)
		return -1;
	/* 16 bytes encode to 24 characters plus NUL. */
	return EVP_EncodeBlock((unsigned char *)out, md, (int)mdlen) == 24 ? 0 : -1;
}

/* After a 412: is the stored object exactly body? */
static int compare_stored(const struct s3_bucket *b, const char *key, const void *body,
                          size_t len, enum s3_put_outcome *outcome, struct aws_result *res)
{
	char *stored = NULL;
	size_t stored_len = 0;

	if (s3_get_object(b, key, &stored, &stored_len, res) < 0)
		return -1;
	bool same = stored_len == len && (len == 0 || memcmp(stored, body, len) == 0);
	free(stored);
	if (same) {
		*outcome = S3_PUT_ALREADY_PRESENT;
		aws_result_reset(res);
		return 0;
	}
	*outcome = S3_PUT_CONFLICT;
	return aws_result_fail(res, "PreconditionFailed",
	                       "object \"%s\" already exists in bucket \"%s\" with other content",
	                       key, b->name);
}

int s3_put_object_create_only(const struct s3_bucket *b, const char *key, const void *body,
                              size_t len, const char *content_type,
                              enum s3_put_outcome *outcome, struct aws_result *res)
{
	char md5[32];
	struct aws_http_response resp;

	*outcome = S3_PUT_CONFLICT;
	if (content_md5(body, len, md5) < 0)
		return aws_result_fail(res, "InternalError", "could not compute Content-MD5");
	const struct sigv4_header hdrs[] = {
		{"Content-Type", content_type != NULL ? content_type : "application/octet-stream"},
		{"Content-MD5", md5},
		{"If-None-Match", "*"},
	};
	if (s3_request(b, "PUT", key, NULL, hdrs, 3, body, len, &resp, res) == 0) {
		*outcome = S3_PUT_CREATED;
		return 0;
	}
	if (res->status != 412)
		return -1;
	return compare_stored(b, key, body, len, outcome, res);
}

int s3_get_object(const struct s3_bucket *b, const char *key, char **body, size_t *len,
                  struct aws_result *res)
{
	struct aws_http_response resp;

	*body = NULL;
	*len = 0;
	if (s3_request(b, "GET", key, NULL, NULL, 0, NULL, 0, &resp, res) < 0)
		return -1;
	*body = malloc(resp.body_len + 1);
	if (*body == NULL)
		return aws_result_fail(res, "InternalError", "out of memory");
	memcpy(*body, resp.body, resp.body_len);
	(*body)[resp.body_len] = '\0';
	*len = resp.body_len;
	return 0;
}

int s3_head_object(const struct s3_bucket *b, const char *key, struct s3_object_info *info,
                   struct aws_result *res)
{
	struct aws_http_response resp;

	info->size = -1;
	info->etag[0] = '\0';
	if (s3_request(b, "HEAD", key, NULL, NULL, 0, NULL, 0, &resp, res) < 0) {
		/* HEAD answers carry no error document. */
		if (res->status == 404 && res->code[0] == '\0')
			snprintf(res->code, sizeof(res->code), "NotFound");
		return -1;
	}
	snprintf(info->etag, sizeof(info->etag), "%s", resp.etag);
	info->size = resp.content_length;
	return 0;
}

int s3_delete_object(const struct s3_bucket *b, const char *key, struct aws_result *res)
{
	struct aws_http_response resp;

	return s3_request(b, "DELETE", key, NULL, NULL, 0, NULL, 0, &resp, res);
}

int s3_create_bucket(const struct s3_bucket *b, struct aws_result *res)
{
	const char *region = aws_http_region(b->http);
	char *body = NULL;
	struct aws_http_response resp;
	int rc;

	/* us-east-1 is the one region that refuses a LocationConstraint. */
	if (strcmp(region, "us-east-1") != 0 &&
	    asprintf(&body,
	             "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
	             "<LocationConstraint>%s</LocationConstraint></CreateBucketConfiguration>",
	             region) < 0)
		return aws_result_fail(res, "InternalError", "out of memory");
	const struct sigv4_header hdrs[] = {{"Content-Type", "application/xml"}};
	rc = s3_request(b, "PUT", NULL, NULL, hdrs, body != NULL ? 1 : 0, body,
	                body != NULL ? strlen(body) : 0, &resp, res);
	free(body);
	if (rc < 0 && strcmp(res->code, "BucketAlreadyOwnedByYou") == 0) {
		aws_result_reset(res);
		rc = 0;
	}
	return rc;
}

/* Appends "&name=encoded(value)" (no '&' first) to the query buffer. */
static int query_add(char *q, size_t size, const char *name, const char *value)
{
	char *enc = sigv4_uri_encode(value, false);
	size_t used = strlen(q);
	int n;

	if (enc == NULL)
		return -1;
	n = snprintf(q + used, size - used, "%s%s=%s", used > 0 ? "&" : "", name, enc);
	free(enc);
	return n >= 0 && (size_t)n < size - used ? 0 : -1;
}

/* The query in sorted order, as signed and sent; caller frees. */
static char *list_query(const struct s3_list_request *req)
{
	size_t size = 64 + 3 * ((req->prefix != NULL ? strlen(req->prefix) : 0) +
	                        (req->start_after != NULL ? strlen(req->start_after) : 0) +
	                        (req->continuation_token != NULL ? strlen(req->continuation_token) : 0));
	char *q = calloc(1, size);
	char max_keys[16];
	int rc = 0;

	if (q == NULL)
		return NULL;
	snprintf(max_keys, sizeof(max_keys), "%d", req->max_keys);
	if (req->continuation_token != NULL)
		rc |= query_add(q, size, "continuation-token", req->continuation_token);
	rc |= query_add(q, size, "list-type", "2");
	if (req->max_keys > 0)
		rc |= query_add(q, size, "max-keys", max_keys);
	if (req->prefix != NULL)
		rc |= query_add(q, size, "prefix", req->prefix);
	if (req->start_after != NULL)
		rc |= query_add(q, size, "start-after", req->start_after);
	if (rc != 0) {
		free(q);
		return NULL;
	}
	return q;
}

static bool xml_bool(xmlNode *parent, const char *tag)
{
	char v[8];

	aws_xml_text_buf(aws_xml_child(parent, tag), v, sizeof(v));
	return strcmp(v, "true") == 0;
}

static int parse_entry(xmlNode *c, struct s3_list_entry *e)
{
	xmlNode *key = aws_xml_child(c, "Key");
	xmlNode *size = aws_xml_child(c, "Size");
	char num[24];

	memset(e, 0, sizeof(*e));
	if (key == NULL)
		return -1;
	e->key = aws_xml_text(key);
	if (e->key == NULL)
		return -1;
	e->size = -1;
	if (size != NULL) {
		char *end = NULL;
		aws_xml_text_buf(size, num, sizeof(num));
		long long s = strtoll(num, &end, 10);
		if (end != num && *end == '\0' && s >= 0)
			e->size = s;
	}
	aws_xml_text_buf(aws_xml_child(c, "LastModified"), e->last_modified, sizeof(e->last_modified));
	aws_xml_text_buf(aws_xml_child(c, "ETag"), e->etag, sizeof(e->etag));
	return 0;
}

static int add_entry(xmlNode *c, struct s3_list_page *page, size_t *cap, struct aws_result *res)
{
	if (page->n == *cap) {
		size_t next = *cap == 0 ? 16 : *cap * 2;
		struct s3_list_entry *p = realloc(page->entries, next * sizeof(*p));

		if (p == NULL)
			return aws_result_fail(res, "InternalError", "out of memory");
		page->entries = p;
		*cap = next;
	}
	if (parse_entry(c, &page->entries[page->n]) < 0)
		return aws_result_fail(res, "MalformedResponse", "listing entry without a valid Key");
	page->n++;
	return 0;
}

static int parse_root(xmlNode *root, struct s3_list_page *page, struct aws_result *res)
{
	size_t cap = 0;

	page->is_truncated = xml_bool(root, "IsTruncated");
	if (page->is_truncated) {
		xmlNode *t = aws_xml_child(root, "NextContinuationToken");
		if (t == NULL)
			return aws_result_fail(res, "MalformedResponse", "truncated listing without NextContinuationToken");
		page->next_token = aws_xml_text(t);
		if (page->next_token == NULL)
			return aws_result_fail(res, "InternalError", "out of memory");
	}
	for (xmlNode *c = root->children; c != NULL; c = c->next) {
		if (c->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, (const xmlChar *)"Contents") == 0 &&
		    add_entry(c, page, &cap, res) < 0)
			return -1;
	}
	return 0;
}

static int parse_list(const char *body, size_t len, struct s3_list_page *page,
                      struct aws_result *res)
{
	xmlDoc *doc = aws_xml_read(body, len);
	xmlNode *root = doc != NULL ? xmlDocGetRootElement(doc) : NULL;
	int rc;

	if (root == NULL || xmlStrcmp(root->name, (const xmlChar *)"ListBucketResult") != 0)
		rc = aws_result_fail(res, "MalformedResponse", "ListObjectsV2 answer is not a ListBucketResult document");
	else
		rc = parse_root(root, page, res);
	xmlFreeDoc(doc);
	return rc;
}

int s3_list_objects_v2(const struct s3_bucket *b, const struct s3_list_request *req,
                       struct s3_list_page *page, struct aws_result *res)
{
	struct aws_http_response resp;
	char *query;
	int rc;

	memset(page, 0, sizeof(*page));
	if (req->max_keys < 0 || req->max_keys > 1000)
		return aws_result_fail(res, "InvalidParameterValue", "max-keys must be 0..1000");
	query = list_query(req);
	if (query == NULL)
		return aws_result_fail(res, "InternalError", "out of memory");
	rc = s3_request(b, "GET", NULL, query, NULL, 0, NULL, 0, &resp, res);
	free(query);
	if (rc < 0)
		return -1;
	return parse_list(resp.body, resp.body_len, page, res);
}

void s3_list_page_free(struct s3_list_page *page)
{
	for (size_t i = 0; i < page->n; i++)
		free(page->entries[i].key);
	free(page->entries);
	free(page->next_token);
	memset(page, 0, sizeof(*page));
}
