/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source_container.c: the container credential endpoint of ECS tasks
 * and EKS Pod Identity (see aws/credential_sources.h).
 *
 * AWS_CONTAINER_CREDENTIALS_RELATIVE_URI is a path on 169.254.170.2;
 * AWS_CONTAINER_CREDENTIALS_FULL_URI is a whole URL, which must be https
 * or go to a loopback or the ECS/EKS link-local address (as the SDKs
 * require, so a token is never sent to an arbitrary host in clear).  The
 * Authorization header comes from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE
 * (read again at every refresh: EKS rotates it), else
 * AWS_CONTAINER_AUTHORIZATION_TOKEN.
 */
#include "aws/credential_sources.h"
#include "aws/endpoint.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/credential_json.h"
#include "aws/fetch.h"

#define CONTAINER_HOST "http://169.254.170.2"
#define CONTAINER_TIMEOUT_MS 2000L

static bool allowed_http_host(const char *host)
{
	static const char *const hosts[] = {"localhost", "169.254.170.2", "169.254.170.23",
	                                    "[fd00:ec2::23]", "[::1]", NULL};

	if (strncmp(host, "127.", 4) == 0)
		return true;
	for (size_t i = 0; hosts[i] != NULL; i++) {
		if (strcmp(host, hosts[i]) == 0)
			return true;
	}
	return false;
}

/* Refuses a FULL_URI that would send the token in clear to another host. */
static int check_full_uri(const char *uri, char *why, size_t why_size)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL;
	int rc = -1;

	if (u == NULL || curl_url_set(u, CURLUPART_URL, uri, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
		snprintf(why, why_size, "AWS_CONTAINER_CREDENTIALS_FULL_URI \"%s\" is not a URL", uri);
	else if (strcmp(scheme, "https") != 0 && !(strcmp(scheme, "http") == 0 && allowed_http_host(host)))
		snprintf(why, why_size, "AWS_CONTAINER_CREDENTIALS_FULL_URI \"%s\" must use https or a "
		                        "loopback or container link-local host", uri);
	else
		rc = 0;
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return rc;
}

/* The Authorization header line, or NULL without one; *line_out set to a
 * new string (wipe it).  -1 when the token file cannot be read. */
static int auth_line(char **line_out, char *err, size_t err_size)
{
	const char *file = aws_env_get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *value = aws_env_get("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	char *from_file = NULL;
	int rc = 0;

	*line_out = NULL;
	if (file != NULL) {
		from_file = aws_read_small_file(file, err, err_size);
		if (from_file == NULL)
			return -1;
		value = from_file;
	}
	if (value != NULL && strpbrk(value, "\r\n") != NULL) {
		snprintf(err, err_size, "the container authorization token contains a line break");
		rc = -1;
	} else if (value != NULL && asprintf(line_out, "Authorization: %s", value) < 0) {
		*line_out = NULL;
		snprintf(err, err_size, "out of memory");
		rc = -1;
	}
	if (from_file != NULL) {
		explicit_bzero(from_file, strlen(from_file));
		free(from_file);
	}
	return rc;
}

static int container_fetch(void *ctx, struct aws_creds **out, char *err, size_t err_size)
{
	const char *url = ctx;
	struct aws_fetch_request req = {.method = "GET", .url = url, .timeout_ms = CONTAINER_TIMEOUT_MS};
	struct aws_fetch_response resp;
	char *auth = NULL;
	int rc;

	*out = NULL;
	if (auth_line(&auth, err, err_size) < 0)
		return -1;
	req.headers[0] = auth;
	rc = aws_fetch(&req, &resp, err, err_size);
	if (rc == 0 && resp.status != 200) {
		snprintf(err, err_size, "\"%s\" answered HTTP %ld", url, resp.status);
		rc = -1;
	}
	if (rc == 0)
		rc = aws_creds_from_json(resp.body, resp.body_len, out, err, err_size);
	aws_fetch_response_free(&resp);
	if (auth != NULL) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	return rc;
}

enum aws_source_result aws_source_container(const struct aws_source_ctx *ctx,
                                            struct aws_credential_source **src,
                                            struct aws_creds **first, char *why,
                                            size_t why_size)
{
	const char *rel = aws_env_get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = aws_env_get("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	char *url = NULL;
	char name[512];

	(void)ctx;
	if (rel == NULL && full == NULL) {
		snprintf(why, why_size, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and "
		                        "AWS_CONTAINER_CREDENTIALS_FULL_URI are not set");
		return AWS_SOURCE_NOT_SET;
	}
	if (rel == NULL && check_full_uri(full, why, why_size) < 0)
		return AWS_SOURCE_FAILED;
	if (rel != NULL ? asprintf(&url, "%s%s%s", CONTAINER_HOST, rel[0] == '/' ? "" : "/", rel) < 0
	                : (url = strdup(full)) == NULL) {
		snprintf(why, why_size, "out of memory");
		return AWS_SOURCE_FAILED;
	}
	snprintf(name, sizeof(name), "container endpoint \"%.400s\"", url);
	return aws_source_make(name, container_fetch, free, url, true, src, first, why, why_size);
}
