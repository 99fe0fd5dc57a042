/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/loader.h: loading handler plugins (plugin/module.h) and running
 * their instances (plugin/instance.h); programs include this one.
 *
 * A registry loads each .so named in relay.ini once, and no other:
 * NAME.so from the first directory of the search path that has it
 * ([outboxd] plugin_path, else PLUGINDIR), NAME in [a-z0-9_]+, a regular file,
 * dlopen(RTLD_NOW | RTLD_LOCAL), then the descriptor header is checked
 * before any plugin code runs (docs/plugin-api.md, "Loading rules").
 * An instance is one destination's use of a plugin: its options validated
 * against the plugin's table, init() called once, destroy() exactly once.
 *
 * Startup sequence for the daemon (single-threaded):
 *   plugin_registry_create(NULL, &reg);
 *   for each destination:
 *       plugin_instance_create_from_config(reg, cfg, dest, &services, errs, &inst);
 *   ... workers call plugin_instance_execute() / plugin_instance_commit() ...
 *   plugin_instance_destroy(inst) for each, then plugin_registry_free(reg).
 *
 * The registry is not thread-safe: create and destroy instances from one
 * thread.  execute/commit may be called from any thread.
 */
#ifndef OUTBOX_CORE_PLUGIN_LOADER_H
#define OUTBOX_CORE_PLUGIN_LOADER_H

#include "plugin/instance.h"
#include "plugin/module.h"

#endif
