/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ABI fixture "init_fails": init() allocates its instance, then fails.  The
 * host must still call destroy() once; destroy() frees the instance (a leak
 * checker notices if it is skipped) and reports through host->query so the
 * test's mock services can count the call.
 */
#include <stdlib.h>

#include "fixture.h"

struct init_fails {
	const struct outbox_host *host;
	struct outbox_ctx *ctx;
};

static int init_fails_init(const struct outbox_host *host, struct outbox_ctx *ctx,
                           void **instance, char *err, size_t errlen)
{
	struct init_fails *self = calloc(1, sizeof(*self));

	*instance = self;
	if (self != NULL) {
		self->host = host;
		self->ctx = ctx;
	}
	snprintf(err, errlen, "upstream \"%s\" refused the handshake", "fixture");
	return -1;
}

static void init_fails_destroy(void *instance)
{
	struct init_fails *self = instance;
	char err[256];
	json_t *rows = NULL;

	if (self == NULL)
		return;
	if (self->host->query(self->ctx, "fixture:destroy", 0, NULL, &rows, err, sizeof(err)) == 0)
		json_decref(rows);
	free(self);
}

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
	.name = "init_fails",
	.version = "0",
	.init = init_fails_init,
	.destroy = init_fails_destroy,
	.execute = fixture_execute,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
