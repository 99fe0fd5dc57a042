/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ABI fixture "missing_symbol": a well-formed descriptor behind a misspelt
 * entry point, so the .so exports no outbox_plugin_describe at all.
 */
#include "fixture.h"

const struct outbox_plugin *outbox_plugin_descriptor(void);

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
	.name = "missing_symbol",
	FIXTURE_CALLBACKS,
};

const struct outbox_plugin *outbox_plugin_descriptor(void)
{
	return &descriptor;
}
