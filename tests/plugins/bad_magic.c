/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/* ABI fixture "bad_magic": well formed except for the wrong magic number. */
#include <stddef.h>

#include "fixture.h"

static const struct outbox_plugin descriptor = {
	FIXTURE_HEADER(0xdeadbeefu, sizeof(struct outbox_plugin), OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR),
	.name = "bad_magic",
	.version = "0",
	FIXTURE_CALLBACKS,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
