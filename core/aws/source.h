/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source.h: making a credential source over its fetch function, the
 * one step every source of aws/credential_sources.h shares.  Apart from
 * credential_sources.h so that the sources call down into it while only
 * the chain calls the sources.
 */
#ifndef OUTBOX_CORE_AWS_SOURCE_H
#define OUTBOX_CORE_AWS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "aws/credential_sources.h"

/* The fetch result of a one-off source, as the refreshing provider wants it. */
typedef int (*aws_fetch_fn)(void *ctx, struct aws_creds **out, char *err, size_t err_size);

/*
 * Makes a source named name (copied) over fetch/ctx/free_ctx and fetches
 * once.  On success *src and *first are set and ctx belongs to *src; on
 * failure ctx is freed with free_ctx and why holds the reason.
 */
enum aws_source_result aws_source_make(const char *name, aws_fetch_fn fetch,
                                       void (*free_ctx)(void *), void *ctx, bool refreshable,
                                       struct aws_credential_source **src,
                                       struct aws_creds **first, char *why, size_t why_size);

#endif
