/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source_web_identity.c: a role assumed with a web identity token file
 * through STS AssumeRoleWithWebIdentity (EKS IRSA); see
 * aws/credential_sources.h.  The token file is read again at every
 * refresh: the kubelet rotates it.
 */
#include "aws/credential_sources.h"
#include "aws/source.h"
#include "aws/endpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/fetch.h"
#include "aws/sts.h"

struct web_identity {
	char *endpoint;
	char *region;
	char *role_arn;
	char *token_file;
	char *session_name;
};

static void web_identity_free(void *p)
{
	struct web_identity *w = p;

	if (w == NULL)
		return;
	free(w->endpoint);
	free(w->region);
	free(w->role_arn);
	free(w->token_file);
	free(w->session_name);
	free(w);
}

static int web_identity_fetch(void *p, struct aws_creds **out, char *err, size_t err_size)
{
	struct web_identity *w = p;
	struct sts_role role = {w->endpoint, w->region, w->role_arn, w->session_name, NULL};
	char *token = aws_read_small_file(w->token_file, err, err_size);
	int rc;

	*out = NULL;
	if (token == NULL)
		return -1;
	rc = sts_assume_role_with_web_identity(&role, token, out, err, err_size);
	explicit_bzero(token, strlen(token));
	free(token);
	return rc;
}

enum aws_source_result aws_source_web_identity_with(const struct aws_source_ctx *ctx,
                                                    const char *name, const char *role_arn,
                                                    const char *token_file,
                                                    const char *session_name,
                                                    struct aws_credential_source **src,
                                                    struct aws_creds **first, char *why,
                                                    size_t why_size)
{
	struct web_identity *w = calloc(1, sizeof(*w));
	char default_name[64];

	if (session_name == NULL || session_name[0] == '\0') {
		sts_default_session_name(default_name, sizeof(default_name));
		session_name = default_name;
	}
	if (w == NULL || (w->endpoint = strdup(ctx->sts_endpoint)) == NULL ||
	    (w->region = strdup(ctx->region)) == NULL || (w->role_arn = strdup(role_arn)) == NULL ||
	    (w->token_file = strdup(token_file)) == NULL ||
	    (w->session_name = strdup(session_name)) == NULL) {
		web_identity_free(w);
		snprintf(why, why_size, "out of memory");
		return AWS_SOURCE_FAILED;
	}
	return aws_source_make(name, web_identity_fetch, web_identity_free, w, true, src, first,
	                       why, why_size);
}

enum aws_source_result aws_source_web_identity(const struct aws_source_ctx *ctx,
                                               struct aws_credential_source **src,
                                               struct aws_creds **first, char *why,
                                               size_t why_size)
{
	const char *file = aws_env_get("AWS_WEB_IDENTITY_TOKEN_FILE");
	const char *arn = aws_env_get("AWS_ROLE_ARN");
	char name[512];

	if (file == NULL || arn == NULL) {
		snprintf(why, why_size, "%s is not set",
		         file == NULL ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "AWS_ROLE_ARN");
		return AWS_SOURCE_NOT_SET;
	}
	snprintf(name, sizeof(name), "web identity (role \"%.200s\", token file \"%.200s\")", arn, file);
	return aws_source_web_identity_with(ctx, name, arn, file, aws_env_get("AWS_ROLE_SESSION_NAME"),
	                                    src, first, why, why_size);
}
