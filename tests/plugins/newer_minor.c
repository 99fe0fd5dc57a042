/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/* ABI fixture "newer_minor": well formed except for a minor version newer than the host's. */
#include <stddef.h>

#include "fixture.h"

static const struct outbox_plugin descriptor = {
	FIXTURE_HEADER(OUTBOX_PLUGIN_ABI_MAGIC, sizeof(struct outbox_plugin), OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR + 1),
	.name = "newer_minor",
	.version = "0",
	FIXTURE_CALLBACKS,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
