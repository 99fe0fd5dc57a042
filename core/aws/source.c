/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source.c: making a credential source over its fetch function (see
 * aws/source.h).
 */
#include "aws/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum aws_source_result aws_source_make(const char *name, aws_fetch_fn fetch,
                                       void (*free_ctx)(void *), void *ctx, bool refreshable,
                                       struct aws_credential_source **src,
                                       struct aws_creds **first, char *why, size_t why_size)
{
	struct aws_credential_source *s = calloc(1, sizeof(*s));

	*src = NULL;
	*first = NULL;
	if (s == NULL || (s->name = strdup(name)) == NULL) {
		free(s);
		free_ctx(ctx);
		snprintf(why, why_size, "out of memory");
		return AWS_SOURCE_FAILED;
	}
	s->fetch = fetch;
	s->free_ctx = free_ctx;
	s->ctx = ctx;
	s->refreshable = refreshable;
	if (fetch(ctx, first, why, why_size) < 0 || *first == NULL) {
		aws_creds_unref(*first);
		*first = NULL;
		free_ctx(ctx);
		free(s->name);
		free(s);
		return AWS_SOURCE_FAILED;
	}
	*src = s;
	return AWS_SOURCE_FOUND;
}
