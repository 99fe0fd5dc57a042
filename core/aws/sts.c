/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/sts.c: AssumeRoleWithWebIdentity and AssumeRole (see aws/sts.h).
 */
#include "aws/sts.h"

#include <curl/curl.h>
#include <libxml/tree.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws/fetch.h"
#include "aws/sigv4.h"
#include "aws/xml.h"

/* The text of child element name of parent (new string, xmlFree it); NULL. */
static xmlChar *child_text(xmlNode *parent, const char *name)
{
	xmlNode *n = aws_xml_child(parent, name);
	return n != NULL ? xmlNodeGetContent(n) : NULL;
}

static void wipe_xml(xmlChar *s)
{
	if (s != NULL) {
		explicit_bzero(s, strlen((const char *)s));
		xmlFree(s);
	}
}

static void report_error(xmlNode *root, char *err, size_t err_size)
{
	xmlNode *e = aws_xml_find(root, "Error");
	xmlChar *code = child_text(e, "Code");
	xmlChar *msg = child_text(e, "Message");

	if (code != NULL)
		snprintf(err, err_size, "STS refused: %s: %.300s", (const char *)code,
		         msg != NULL ? (const char *)msg : "");
	else
		snprintf(err, err_size, "STS answered without <Credentials>");
	xmlFree(code);
	xmlFree(msg);
}

static int creds_from(xmlNode *c, struct aws_creds **out, char *err, size_t err_size)
{
	xmlChar *key = child_text(c, "AccessKeyId");
	xmlChar *secret = child_text(c, "SecretAccessKey");
	xmlChar *token = child_text(c, "SessionToken");
	xmlChar *exp = child_text(c, "Expiration");
	long long expires_at = 0;
	int rc = -1;

	if (key == NULL || secret == NULL || token == NULL || exp == NULL) {
		snprintf(err, err_size, "STS <Credentials> lack AccessKeyId, SecretAccessKey, "
		                        "SessionToken or Expiration");
	} else if (aws_parse_iso8601((const char *)exp, &expires_at) < 0) {
		snprintf(err, err_size, "STS sent a malformed <Expiration>");
	} else {
		*out = aws_creds_new((const char *)key, (const char *)secret, (const char *)token,
		                     expires_at);
		if (*out != NULL)
			rc = 0;
		else
			snprintf(err, err_size, "STS sent empty credentials");
	}
	xmlFree(key);
	wipe_xml(secret);
	wipe_xml(token);
	xmlFree(exp);
	return rc;
}

int sts_parse_credentials(const char *xml, size_t len, struct aws_creds **out, char *err,
                          size_t err_size)
{
	xmlDoc *doc;
	xmlNode *root, *c;
	int rc = -1;

	*out = NULL;
	if (len > (size_t)AWS_FETCH_MAX_BYTES) {
		snprintf(err, err_size, "STS answer too large");
		return -1;
	}
	doc = aws_xml_read(xml, len);
	if (doc == NULL) {
		snprintf(err, err_size, "STS answer is not well-formed XML");
		return -1;
	}
	root = xmlDocGetRootElement(doc);
	c = aws_xml_find(root, "Credentials");
	if (c == NULL)
		report_error(root, err, err_size);
	else
		rc = creds_from(c, out, err, err_size);
	xmlFreeDoc(doc);
	return rc;
}

void sts_default_session_name(char *out, size_t out_size)
{
	snprintf(out, out_size, "outboxd-%lld", (long long)time(NULL));
}

/* Appends "&name=value" (value form-encoded) to *body. */
static int form_add(char **body, const char *name, const char *value)
{
	char *enc = sigv4_uri_encode(value, false);
	char *next = NULL;
	int n;

	if (enc == NULL)
		return -1;
	n = asprintf(&next, "%s&%s=%s", *body, name, enc);
	explicit_bzero(enc, strlen(enc));
	free(enc);
	if (n < 0)
		return -1;
	explicit_bzero(*body, strlen(*body));
	free(*body);
	*body = next;
	return 0;
}

static char *form_body(const char *action, const struct sts_role *role, const char *token)
{
	char *body = NULL;

	if (asprintf(&body, "Action=%s&Version=2011-06-15", action) < 0)
		return NULL;
	if (form_add(&body, "RoleArn", role->role_arn) < 0 ||
	    form_add(&body, "RoleSessionName", role->session_name) < 0 ||
	    (token != NULL && form_add(&body, "WebIdentityToken", token) < 0) ||
	    (role->external_id != NULL && form_add(&body, "ExternalId", role->external_id) < 0)) {
		free(body);
		return NULL;
	}
	return body;
}

/* Sends body to the STS endpoint with the given extra header lines and
 * reads the credentials from the answer. */
static int post(const struct sts_role *role, const char *body, const char *const *hdrs,
                size_t n_hdrs, struct aws_creds **out, char *err, size_t err_size)
{
	struct aws_fetch_request req = {
		.method = "POST", .url = NULL, .body = body, .body_len = strlen(body),
		.timeout_ms = STS_TIMEOUT_MS,
	};
	struct aws_fetch_response resp;
	char *url = NULL;
	int rc;

	if (asprintf(&url, "%s/", role->endpoint) < 0)
		return -1;
	req.url = url;
	req.headers[0] = "Content-Type: application/x-www-form-urlencoded; charset=utf-8";
	for (size_t i = 0; i < n_hdrs && i + 1 < AWS_FETCH_MAX_HEADERS; i++)
		req.headers[i + 1] = hdrs[i];
	rc = aws_fetch(&req, &resp, err, err_size);
	if (rc == 0)
		rc = sts_parse_credentials(resp.body, resp.body_len, out, err, err_size);
	if (rc < 0 && resp.status != 0) {
		size_t used = strlen(err);
		snprintf(err + used, err_size - used, " (HTTP %ld from \"%s\")", resp.status, url);
	}
	aws_fetch_response_free(&resp);
	free(url);
	return rc;
}

int sts_assume_role_with_web_identity(const struct sts_role *role, const char *token,
                                      struct aws_creds **out, char *err, size_t err_size)
{
	char *body = form_body("AssumeRoleWithWebIdentity", role, token);
	int rc;

	*out = NULL;
	if (body == NULL) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	rc = post(role, body, NULL, 0, out, err, err_size);
	explicit_bzero(body, strlen(body));
	free(body);
	return rc;
}

/* host[:port] of the endpoint as curl sends it in Host:. */
static char *endpoint_host(const char *endpoint)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, *out = NULL;

	if (u != NULL && curl_url_set(u, CURLUPART_URL, endpoint, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
			port = NULL;
		if (asprintf(&out, "%s%s%s", host, port != NULL ? ":" : "", port != NULL ? port : "") < 0)
			out = NULL;
	}
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return out;
}

struct signed_lines {
	char *host, *date, *token, *auth;
};

static void signed_lines_free(struct signed_lines *l)
{
	free(l->host);
	free(l->date);
	if (l->token != NULL)
		explicit_bzero(l->token, strlen(l->token));
	free(l->token);
	if (l->auth != NULL)
		explicit_bzero(l->auth, strlen(l->auth));
	free(l->auth);
}

static int sign(const struct sts_role *role, const struct aws_creds *source, const char *body,
                struct signed_lines *l)
{
	struct sigv4_header h[4];
	struct sigv4_credentials creds = {source->access_key_id, source->secret_access_key,
	                                  source->session_token};
	struct sigv4_scope scope = {role->region, "sts", false};
	char date[17];
	char *host = endpoint_host(role->endpoint);
	char *auth;
	size_t n = 0;

	if (host == NULL)
		return -1;
	sigv4_format_date((long long)time(NULL), date);
	h[n++] = (struct sigv4_header){"Host", host};
	h[n++] = (struct sigv4_header){"X-Amz-Date", date};
	h[n++] = (struct sigv4_header){"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"};
	if (source->session_token != NULL)
		h[n++] = (struct sigv4_header){SIGV4_SECURITY_TOKEN_HEADER, source->session_token};
	struct sigv4_request sreq = {.method = "POST", .path = "/", .headers = h, .n_headers = n,
	                             .body = body, .body_len = strlen(body)};
	auth = sigv4_authorization(&sreq, &scope, &creds);
	if (auth == NULL || asprintf(&l->host, "Host: %s", host) < 0 ||
	    asprintf(&l->date, "X-Amz-Date: %s", date) < 0 ||
	    asprintf(&l->auth, "Authorization: %s", auth) < 0 ||
	    (source->session_token != NULL &&
	     asprintf(&l->token, "%s: %s", SIGV4_SECURITY_TOKEN_HEADER, source->session_token) < 0)) {
		free(host);
		if (auth != NULL)
			explicit_bzero(auth, strlen(auth));
		free(auth);
		return -1;
	}
	free(host);
	explicit_bzero(auth, strlen(auth));
	free(auth);
	return 0;
}

int sts_assume_role(const struct sts_role *role, const struct aws_creds *source,
                    struct aws_creds **out, char *err, size_t err_size)
{
	struct signed_lines l = {0};
	char *body = form_body("AssumeRole", role, NULL);
	int rc = -1;

	*out = NULL;
	if (body == NULL || sign(role, source, body, &l) < 0) {
		snprintf(err, err_size, "could not sign the AssumeRole request to \"%s\"", role->endpoint);
	} else {
		const char *hdrs[4] = {l.host, l.date, l.auth, l.token};
		rc = post(role, body, hdrs, l.token != NULL ? 4 : 3, out, err, err_size);
	}
	signed_lines_free(&l);
	free(body);
	return rc;
}
