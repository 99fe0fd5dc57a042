/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * fixture.h: shared pieces of the ABI fixtures.  Each fixture differs from
 * a well-formed plugin in exactly one way, so the loader's refusal can only
 * have one cause; the callbacks here are the well-formed part.
 */
#ifndef OUTBOX_TESTS_PLUGINS_FIXTURE_H
#define OUTBOX_TESTS_PLUGINS_FIXTURE_H

#include <stdio.h>

#include <outbox/plugin.h>

static inline int fixture_init(const struct outbox_host *host, struct outbox_ctx *ctx,
                               void **instance, char *err, size_t errlen)
{
	*instance = NULL;
	return 0;
}

static inline void fixture_destroy(void *instance)
{
}

static inline enum outbox_verdict fixture_execute(void *instance, const struct outbox_job *job,
                                                  struct outbox_result *result)
{
	snprintf(result->msg, result->msg_size, "fixture ran");
	return OUTBOX_OK;
}

/* The header written out field by field, so one field can be wrong. */
#define FIXTURE_HEADER(magic, size, major, minor)   \
	.abi_magic = (magic), .struct_size = (size),    \
	.abi_major = (major), .abi_minor = (minor),     \
	.build_fingerprint = OUTBOX_PLUGIN_FINGERPRINT

#define FIXTURE_CALLBACKS \
	.init = fixture_init, .destroy = fixture_destroy, .execute = fixture_execute

#endif
