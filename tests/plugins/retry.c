/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/* ABI fixture "retry": execute() always reports a transient failure. */
#include "fixture.h"

static enum outbox_verdict retry_execute(void *instance, const struct outbox_job *job,
                                         struct outbox_result *result)
{
	snprintf(result->msg, result->msg_size, "upstream answered 503");
	return OUTBOX_RETRY;
}

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
	.name = "retry",
	.version = "0",
	.init = fixture_init,
	.destroy = fixture_destroy,
	.execute = retry_execute,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
