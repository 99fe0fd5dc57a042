/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/module.h: loading handler plugins.
 *
 * A registry loads each .so named in relay.ini once, and no other:
 * NAME.so from the first directory of the search path that has it
 * ([outboxd] plugin_path, else PLUGINDIR), NAME in [a-z0-9_]+, a regular file
 * that nobody but its owner can replace, dlopen(RTLD_NOW | RTLD_LOCAL), then
 * the descriptor header is checked before any plugin code runs
 * (docs/plugin-api.md, "Loading rules").
 *
 * The registry is not thread-safe: use it from one thread.
 */
#ifndef OUTBOX_CORE_PLUGIN_MODULE_H
#define OUTBOX_CORE_PLUGIN_MODULE_H

#include <stddef.h>

#include <outbox/plugin.h>

#include "common/compiler.h"
#include "plugin/options.h"

struct plugin_registry;
struct plugin_module;

/*
 * The search path a program should use: $OUTBOX_PLUGIN_DIR when set (the
 * test override; a warning is logged), else configured (borrowed; e.g. the
 * [outboxd] plugin_path of relay.ini) when not NULL, else PLUGINDIR.
 * Returns one of those pointers, borrowed.
 */
const char *plugin_search_path(const char *configured);

/*
 * dir (borrowed, copied) is where NAME.so files are looked up: one
 * directory, or a colon-separated list tried in order; NULL means
 * plugin_search_path(NULL).  Returns 0 and *out (caller frees with
 * plugin_registry_free()), or -1 (out of memory, or no directory in dir).
 */
int plugin_registry_create(const char *dir, struct plugin_registry **out) OUTBOX_MUSTCHECK;

/*
 * Frees the registry and its modules.  Every instance must have been
 * destroyed.  The .so files are dlclose'd, except in sanitizer builds or
 * when OUTBOX_VALGRIND=1 / OUTBOX_NO_DLCLOSE=1 is set, so that leak reports
 * still resolve plugin symbols.
 */
void plugin_registry_free(struct plugin_registry *reg);

/* Borrowed; the directory or search path the registry loads from, as given. */
const char *plugin_registry_dir(const struct plugin_registry *reg);

/*
 * Load plugin name (borrowed) once: a second call for the same name returns
 * the module already loaded.  Every refusal is reported to diag (the
 * message names the file, e.g. plugin "x.so": ABI 1.1 required, host
 * provides 1.0) and the .so is dlclose'd.  Returns 0 and *out (borrowed,
 * owned by reg), or -1.
 */
int plugin_registry_load(struct plugin_registry *reg, const char *name,
                         const struct plugin_diag *diag,
                         struct plugin_module **out) OUTBOX_MUSTCHECK;

/* Borrowed; valid while the registry lives. */
const struct outbox_plugin *plugin_module_descriptor(const struct plugin_module *mod);

/* Borrowed; the plugin's name, valid while the registry lives. */
const char *plugin_module_name(const struct plugin_module *mod);

#endif
