/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source_imds.c: the EC2 instance profile through IMDSv2 (see
 * aws/credential_sources.h).  Every fetch asks for a session token
 * (PUT /latest/api/token), then the role name, then its credentials, each
 * with the token (1 s per call): IMDSv1 (no token) is not used, so
 * instances that require IMDSv2 work and a hop-limited container cannot
 * fall back to v1.
 *
 * IMDS is the last source of the chain, tried on every host without
 * credentials: until it has answered once, a call gets one try, so a host
 * that is not on EC2 learns it within IMDS_TIMEOUT_MS and exits 78
 * promptly.  Once it has answered, a call that gets no answer is tried
 * IMDS_ATTEMPTS times.
 */
#include "aws/credential_sources.h"
#include "aws/source.h"
#include "aws/endpoint.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws/credential_json.h"
#include "aws/fetch.h"

#define IMDS_DEFAULT_ENDPOINT "http://169.254.169.254"
#define IMDS_TIMEOUT_MS 1000L
/* Calls that got no answer at all are tried this often (as the Go and Java
 * SDKs do): a loaded host can miss the short timeout once. */
#define IMDS_ATTEMPTS 3
#define IMDS_TOKEN_TTL "21600"
#define IMDS_CREDS_PATH "/latest/meta-data/iam/security-credentials/"

struct imds_ctx {
	char *endpoint;   /* owned; no trailing '/' */
	bool answered;    /* some call got an HTTP answer */
};

static void imds_ctx_free(void *arg)
{
	struct imds_ctx *c = arg;

	if (c != NULL)
		free(c->endpoint);
	free(c);
}

/* One IMDS call; the answer's body in resp on HTTP 200, else -1. */
static int imds_call(struct imds_ctx *c, const char *method, const char *path,
                     const char *header, struct aws_fetch_response *resp, char *err,
                     size_t err_size)
{
	const char *endpoint = c->endpoint;
	int attempts = c->answered ? IMDS_ATTEMPTS : 1;
	struct aws_fetch_request req = {.method = method, .timeout_ms = IMDS_TIMEOUT_MS,
	                                .headers = {header}};
	char *url = NULL;
	int rc;

	if (asprintf(&url, "%s%s", endpoint, path) < 0) {
		memset(resp, 0, sizeof(*resp));
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	req.url = url;
	for (int attempt = 1;; attempt++) {
		rc = aws_fetch(&req, resp, err, err_size);
		if (rc == 0 || attempt >= attempts)
			break;
		aws_fetch_response_free(resp);
	}
	if (rc == 0)
		c->answered = true;
	if (rc == 0 && resp->status != 200) {
		snprintf(err, err_size, "%s \"%s\" answered HTTP %ld%s", method, url, resp->status,
		         resp->status == 404 && strcmp(method, "GET") == 0
		         ? " (no IAM role attached to the instance)" : "");
		rc = -1;
	}
	free(url);
	return rc;
}

static int imds_fetch(void *ctx, struct aws_creds **out, char *err, size_t err_size)
{
	struct imds_ctx *c = ctx;
	struct aws_fetch_response tok = {0}, role = {0}, doc = {0};
	char *hdr = NULL, *path = NULL;
	int rc = -1;

	*out = NULL;
	if (imds_call(c, "PUT", "/latest/api/token",
	              "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL, &tok, err, err_size) < 0)
		goto out;
	if (asprintf(&hdr, "X-aws-ec2-metadata-token: %s", tok.body) < 0) {
		hdr = NULL;
		goto out;
	}
	if (imds_call(c, "GET", IMDS_CREDS_PATH, hdr, &role, err, err_size) < 0)
		goto out;
	/* The first line is the role name; the SDKs use only that one. */
	role.body[strcspn(role.body, "\r\n")] = '\0';
	if (role.body[0] == '\0' || strchr(role.body, '/') != NULL) {
		snprintf(err, err_size, "IMDS returned no usable IAM role name");
		goto out;
	}
	if (asprintf(&path, "%s%s", IMDS_CREDS_PATH, role.body) < 0) {
		path = NULL;
		goto out;
	}
	if (imds_call(c, "GET", path, hdr, &doc, err, err_size) < 0)
		goto out;
	rc = aws_creds_from_json(doc.body, doc.body_len, out, err, err_size);
out:
	if (hdr != NULL)
		explicit_bzero(hdr, strlen(hdr));
	free(hdr);
	free(path);
	aws_fetch_response_free(&tok);
	aws_fetch_response_free(&role);
	aws_fetch_response_free(&doc);
	return rc;
}

enum aws_source_result aws_source_imds(const struct aws_source_ctx *ctx,
                                       struct aws_credential_source **src,
                                       struct aws_creds **first, char *why, size_t why_size)
{
	const char *disabled = aws_env_get("AWS_EC2_METADATA_DISABLED");
	const char *ep = aws_env_get("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	char name[300];
	struct imds_ctx *c;
	char *endpoint;
	size_t len;

	(void)ctx;
	if (disabled != NULL && strcasecmp(disabled, "true") == 0) {
		snprintf(why, why_size, "disabled by AWS_EC2_METADATA_DISABLED");
		return AWS_SOURCE_NOT_SET;
	}
	c = calloc(1, sizeof(*c));
	endpoint = c != NULL ? strdup(ep != NULL ? ep : IMDS_DEFAULT_ENDPOINT) : NULL;
	if (endpoint == NULL) {
		free(c);
		snprintf(why, why_size, "out of memory");
		return AWS_SOURCE_FAILED;
	}
	c->endpoint = endpoint;
	len = strlen(endpoint);
	while (len > 0 && endpoint[len - 1] == '/')
		endpoint[--len] = '\0';
	snprintf(name, sizeof(name), "instance metadata (IMDSv2 at \"%.200s\")", endpoint);
	return aws_source_make(name, imds_fetch, imds_ctx_free, c, true, src, first, why, why_size);
}
