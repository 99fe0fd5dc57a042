/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/errors.c: the list of configuration problems and the one format
 * every message has, "FILE:LINE: [section] key: problem".
 */
#include "config/config.h"
#include "config/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- error lists ---- */

void cfg_errors_add(struct cfg_errors *errs, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0) {
		errs->dropped++;
		return;
	}
	if (errs->n == errs->cap) {
		size_t cap = errs->cap ? errs->cap * 2 : 8;
		char **msgs = realloc(errs->msgs, cap * sizeof(*msgs));

		if (!msgs) {
			free(msg);
			errs->dropped++;
			return;
		}
		errs->msgs = msgs;
		errs->cap = cap;
	}
	errs->msgs[errs->n++] = msg;
}

size_t cfg_errors_count(const struct cfg_errors *errs)
{
	return errs->n + errs->dropped;
}

void cfg_errors_print(const struct cfg_errors *errs, FILE *out)
{
	for (size_t i = 0; i < errs->n; i++)
		fprintf(out, "%s\n", errs->msgs[i]);
	if (errs->dropped)
		fprintf(out, "%zu more errors lost: out of memory\n", errs->dropped);
}

void cfg_errors_free(struct cfg_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		free(errs->msgs[i]);
	free(errs->msgs);
	errs->msgs = NULL;
	errs->n = 0;
	errs->cap = 0;
	errs->dropped = 0;
}

void cfg_verror(struct cfg_errors *errs, const char *file, int line,
		const char *section, const char *key, const char *fmt, va_list ap)
{
	char *msg = NULL;
	char at[24] = "";
	bool has_sect = section && *section;
	bool has_key = key && *key;

	if (vasprintf(&msg, fmt, ap) < 0) {
		errs->dropped++;
		return;
	}
	if (line > 0)
		snprintf(at, sizeof(at), ":%d", line); /* an int always fits */
	cfg_errors_add(errs, "%s%s: %s%s%s%s%s%s%s", file, at,
		       has_sect ? "[" : "", has_sect ? section : "", has_sect ? "]" : "",
		       has_sect && has_key ? " " : "", has_key ? key : "",
		       has_sect || has_key ? ": " : "", msg);
	free(msg);
}

void cfg_error(struct cfg_parser *p, int line, const char *section,
	       const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_verror(p->errs, p->cfg->file, line, section, key, fmt, ap);
	va_end(ap);
}

void cfg_plugin_option_error(struct cfg_errors *errs, const struct cfg *cfg,
			     const struct cfg_destination *d,
			     const struct cfg_plugin_option *opt, const char *fmt, ...)
{
	char section[sizeof(CFG_DEST_PREFIX) + CFG_DEST_NAME_MAX];
	char *key = NULL;
	va_list ap;
	int n;

	n = snprintf(section, sizeof(section), CFG_DEST_PREFIX "%s", d->name);
	if (n < 0 || (size_t)n >= sizeof(section)) {
		errs->dropped++;
		return;
	}
	/* No option: the plugin itself (the "plugin =" line); an option that
	 * is not in the file (line 0): the section's line. */
	if (opt && asprintf(&key, CFG_PLUGIN_PREFIX "%s", opt->key) < 0) {
		errs->dropped++;
		return;
	}
	int line = opt == NULL ? d->plugin_line : opt->line > 0 ? opt->line : d->line;
	va_start(ap, fmt);
	cfg_verror(errs, cfg->file, line, section, opt ? key : "plugin", fmt, ap);
	va_end(ap);
	free(key);
}
