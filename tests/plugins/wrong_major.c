/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/* ABI fixture "wrong_major": well formed except for a major version this host does not speak. */
#include <stddef.h>

#include "fixture.h"

static const struct outbox_plugin descriptor = {
	FIXTURE_HEADER(OUTBOX_PLUGIN_ABI_MAGIC, sizeof(struct outbox_plugin), OUTBOX_PLUGIN_ABI_MAJOR + 1, 0),
	.name = "wrong_major",
	.version = "0",
	FIXTURE_CALLBACKS,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
