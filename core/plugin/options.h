/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/options.h: a destination's "plugin.*" keys checked against the
 * plugin's own option table (struct outbox_option), giving typed values.
 *
 * Also home of struct plugin_diag, the error sink the plugin loader and the
 * option checks report through.  It keeps this code free of config.c: the
 * caller decides how a problem becomes a "FILE:LINE: [destination:NAME] ..."
 *  line (plugin/instance.c has the wrapper for struct cfg).
 */
#ifndef OUTBOX_CORE_PLUGIN_OPTIONS_H
#define OUTBOX_CORE_PLUGIN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <outbox/plugin.h>

#include "config/config.h"
#include "common/compiler.h"

/*
 * Where problems go.  report() gets the offending "plugin.KEY" line (NULL
 * when the problem is not tied to one line, e.g. a missing key or a plugin
 * that does not load) and the message (borrowed, for the call only).  A
 * message about a line starts with the problem; the sink adds "plugin.KEY: ".
 * A NULL sink (or NULL report) logs each problem with log_error().
 */
struct plugin_diag {
	void (*report)(void *arg, const struct cfg_plugin_option *opt, const char *msg);
	void *arg;
};

/* Format one problem and hand it to diag (see above). */
void plugin_diag_report(const struct plugin_diag *diag,
                        const struct cfg_plugin_option *opt,
                        const char *fmt, ...) OUTBOX_PRINTF(3, 4);

/* One validated option of an instance. */
struct plugin_option_value {
	const struct outbox_option *decl; /* borrowed from the plugin's table */
	char *text;                       /* owned: configured value or default */
	long long i;                      /* OUTBOX_OPT_INT */
	double d;                         /* OUTBOX_OPT_DOUBLE (and INT as double) */
	bool b;                           /* OUTBOX_OPT_BOOL */
	int line;                         /* line in relay.ini; 0 for a default */
	bool configured;                  /* a line set it (valid or not) */
};

/* Every key of the plugin's table, in table order.  Free with plugin_options_free(). */
struct plugin_options {
	struct plugin_option_value *v;
	size_t n;
};

/*
 * Check opts (borrowed, n entries) against table (borrowed, NULL-name
 * terminated; NULL means the plugin takes no options).  Every problem is
 * reported to diag, not just the first: unknown or duplicate key, missing
 * required key, a value of the wrong type or out of range, a SECRET_ENV key
 * whose environment variable is not set (its value is never printed), and
 * an invalid default in the plugin's own table.  plugin names the plugin in
 * messages (borrowed).  On success returns 0 and fills *out (the caller
 * frees with plugin_options_free()); on failure returns -1 and *out is empty.
 */
int plugin_options_validate(const char *plugin, const struct outbox_option *table,
                            const struct cfg_plugin_option *opts, size_t n,
                            const struct plugin_diag *diag,
                            struct plugin_options *out) OUTBOX_MUSTCHECK;

void plugin_options_free(struct plugin_options *opts);

/* Borrowed pointer into opts, or NULL when name is not in the table. */
const struct plugin_option_value *plugin_options_find(const struct plugin_options *opts,
                                                      const char *name);

#endif
