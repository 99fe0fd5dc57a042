/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/* ABI fixture "short_struct": well formed except for a struct_size smaller than ABI 1.0's descriptor. */
#include <stddef.h>

#include "fixture.h"

static const struct outbox_plugin descriptor = {
	FIXTURE_HEADER(OUTBOX_PLUGIN_ABI_MAGIC, offsetof(struct outbox_plugin, init), OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR),
	.name = "short_struct",
	.version = "0",
	FIXTURE_CALLBACKS,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
