/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source_env.c: credentials from the environment (see
 * aws/credential_sources.h).
 */
#include "aws/credential_sources.h"
#include "aws/endpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum aws_source_result aws_source_env(const struct aws_source_ctx *ctx,
                                      struct aws_credential_source **src,
                                      struct aws_creds **first, char *why, size_t why_size)
{
	const char *key = aws_env_get("AWS_ACCESS_KEY_ID");
	const char *secret = aws_env_get("AWS_SECRET_ACCESS_KEY");

	(void)ctx;
	if (key == NULL || secret == NULL) {
		snprintf(why, why_size, "%s is not set",
		         key == NULL ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY");
		return AWS_SOURCE_NOT_SET;
	}
	*first = aws_creds_new(key, secret, aws_env_get("AWS_SESSION_TOKEN"), 0);
	*src = calloc(1, sizeof(**src));
	if (*first == NULL || *src == NULL || ((*src)->name = strdup("environment")) == NULL) {
		aws_creds_unref(*first);
		free(*src);
		*first = NULL;
		*src = NULL;
		snprintf(why, why_size, "out of memory");
		return AWS_SOURCE_FAILED;
	}
	return AWS_SOURCE_FOUND;
}
