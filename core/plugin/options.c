/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/options.c: typed checks of "plugin.*" keys against a plugin's
 * option table, so plugins never parse strings themselves (docs/plugin-api.md, "Options").
 */
#include "plugin/options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "config/text.h"

void plugin_diag_report(const struct plugin_diag *diag,
                        const struct cfg_plugin_option *opt,
                        const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (diag != NULL && diag->report != NULL) {
		diag->report(diag->arg, opt, msg);
		return;
	}
	if (opt != NULL)
		log_error("plugin.%s: %s", opt->key, msg);
	else
		log_error("%s", msg);
}

static bool bounded(const struct outbox_option *decl)
{
	return !(decl->min == 0 && decl->max == 0);
}

static int check_range(const struct outbox_option *decl, double x,
                       char *err, size_t errlen)
{
	if (bounded(decl) && (x < decl->min || x > decl->max)) {
		snprintf(err, errlen, "value %.15g is out of range (%.15g .. %.15g)",
		         x, decl->min, decl->max);
		return -1;
	}
	return 0;
}

static int parse_int(const struct outbox_option *decl, const char *text,
                     struct plugin_option_value *val, char *err, size_t errlen)
{
	char *end = NULL;

	errno = 0;
	long long x = strtoll(text, &end, 10);
	if (end == text || *end != '\0' || errno == ERANGE) {
		snprintf(err, errlen, "invalid integer \"%s\"", text);
		return -1;
	}
	val->i = x;
	val->d = (double)x;
	return check_range(decl, (double)x, err, errlen);
}

static int parse_double(const struct outbox_option *decl, const char *text,
                        struct plugin_option_value *val, char *err, size_t errlen)
{
	char *end = NULL;

	errno = 0;
	double x = strtod(text, &end);
	if (end == text || *end != '\0' || errno == ERANGE || !isfinite(x)) {
		snprintf(err, errlen, "invalid number \"%s\"", text);
		return -1;
	}
	val->d = x;
	return check_range(decl, x, err, errlen);
}

static int parse_bool(const char *text, struct plugin_option_value *val,
                      char *err, size_t errlen)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};

	for (size_t k = 0; k < sizeof(yes) / sizeof(yes[0]); k++) {
		if (strcasecmp(text, yes[k]) == 0) {
			val->b = true;
			return 0;
		}
		if (strcasecmp(text, no[k]) == 0) {
			val->b = false;
			return 0;
		}
	}
	snprintf(err, errlen, "invalid boolean \"%s\" (use true/false, yes/no, on/off or 1/0)",
	         text);
	return -1;
}

static int parse_url(const char *text, char *err, size_t errlen)
{
	const char *rest = NULL;

	if (strncmp(text, "https://", 8) == 0)
		rest = text + 8;
	else if (strncmp(text, "http://", 7) == 0)
		rest = text + 7;
	if (rest == NULL || *rest == '\0' || *rest == '/' || *rest == ':') {
		snprintf(err, errlen, "invalid URL \"%s\" (expected http://HOST... or https://HOST...)",
		         text);
		return -1;
	}
	for (const char *p = text; *p != '\0'; p++) {
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p)) {
			snprintf(err, errlen, "invalid URL \"%s\": contains white space", text);
			return -1;
		}
	}
	return 0;
}

static bool valid_env_name(const char *name)
{
	if (!(isalpha((unsigned char)*name) || *name == '_'))
		return false;
	for (const char *p = name; *p != '\0'; p++) {
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return false;
	}
	return true;
}

/*
 * The value names the variable; its content is a secret and never printed.
 * A value that looks like the secret itself (someone pasted the key where
 * its variable's name belongs) is not printed either, not even as the
 * name of a variable that is not set.
 */
static int check_secret_env(const char *name, char *err, size_t errlen)
{
	if (cfg_text_looks_like_secret(name)) {
		snprintf(err, errlen, "value (not shown) looks like a secret, not the name of an "
		         "environment variable: put the secret in the environment and name that "
		         "variable here");
		return -1;
	}
	/* Not shown either: what is not a variable's name may be a secret the
	 * heuristic above did not recognise. */
	if (!valid_env_name(name)) {
		snprintf(err, errlen, "value (not shown) is not the name of an environment "
		         "variable ([A-Za-z_][A-Za-z0-9_]*)");
		return -1;
	}
	const char *secret = getenv(name);
	if (secret == NULL || *secret == '\0') {
		snprintf(err, errlen, "environment variable \"%s\" is not set", name);
		return -1;
	}
	return 0;
}

static int parse_value(const struct outbox_option *decl, const char *text,
                       struct plugin_option_value *val, char *err, size_t errlen)
{
	switch (decl->type) {
	case OUTBOX_OPT_STRING:
		if (*text == '\0') {
			snprintf(err, errlen, "empty value");
			return -1;
		}
		if (decl->flags & OUTBOX_OPT_SECRET_ENV)
			return check_secret_env(text, err, errlen);
		return 0;
	case OUTBOX_OPT_INT:
		return parse_int(decl, text, val, err, errlen);
	case OUTBOX_OPT_DOUBLE:
		return parse_double(decl, text, val, err, errlen);
	case OUTBOX_OPT_BOOL:
		return parse_bool(text, val, err, errlen);
	case OUTBOX_OPT_URL:
		return parse_url(text, err, errlen);
	}
	snprintf(err, errlen, "the plugin declares an unknown type %d", (int)decl->type);
	return -1;
}

/* "a, b, c" for the unknown-key hint; cut short rather than fail. */
static void known_keys(const struct outbox_option *table, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t k = 0; table != NULL && table[k].name != NULL && len < size; k++) {
		int n = snprintf(buf + len, size - len, "%splugin.%s%s",
		                 k > 0 ? ", " : "", table[k].name,
		                 (table[k].flags & OUTBOX_OPT_PREFIX) ? "NAME" : "");
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

static size_t table_len(const struct outbox_option *table)
{
	size_t n = 0;

	while (table != NULL && table[n].name != NULL)
		n++;
	return n;
}

static int find_slot(const struct plugin_options *out, const char *name)
{
	for (size_t k = 0; k < out->n; k++) {
		if (strcmp(out->v[k].decl->name, name) == 0)
			return (int)k;
	}
	return -1;
}

/* The OUTBOX_OPT_PREFIX entry a key "PREFIX.SUFFIX" belongs to, or -1. */
static int find_prefix_slot(const struct plugin_options *out, const char *key)
{
	for (size_t k = 0; k < out->n; k++) {
		const struct outbox_option *decl = out->v[k].decl;
		size_t n = strlen(decl->name);
		if ((decl->flags & OUTBOX_OPT_PREFIX) && strncmp(key, decl->name, n) == 0 &&
		    key[n] != '\0')
			return (int)k;
	}
	return -1;
}

/*
 * One "plugin.PREFIX.SUFFIX" line: appended to the entry's text as
 * "SUFFIX=VALUE\n"; a SUFFIX given twice is a duplicate like any key.
 */
static int take_prefixed(struct plugin_option_value *val, const struct cfg_plugin_option *opt,
                         const struct plugin_diag *diag)
{
	const char *suffix = opt->key + strlen(val->decl->name);
	size_t have = val->text != NULL ? strlen(val->text) : 0;
	size_t slen = strlen(suffix);
	char *grown;

	for (const char *p = val->text; p != NULL && *p != '\0'; p = strchr(p, '\n') + 1) {
		if (strncmp(p, suffix, slen) == 0 && p[slen] == '=') {
			plugin_diag_report(diag, opt, "duplicate key");
			return 1;
		}
	}
	if (*opt->value == '\0') {
		plugin_diag_report(diag, opt, "empty value");
		return 1;
	}
	size_t add = slen + strlen(opt->value) + 3;
	grown = realloc(val->text, have + add);
	if (grown == NULL) {
		plugin_diag_report(diag, opt, "out of memory");
		return 1;
	}
	snprintf(grown + have, add, "%s=%s\n", suffix, opt->value);
	val->text = grown;
	if (!val->configured)
		val->line = opt->line;
	val->configured = true;
	return 0;
}

static int set_value(struct plugin_option_value *val, const char *text, int line)
{
	val->text = strdup(text);
	if (val->text == NULL)
		return -1;
	val->line = line;
	return 0;
}

/* One configured line; returns the number of problems reported (0 or 1). */
static int take_configured(const char *plugin, const struct outbox_option *table,
                           const struct cfg_plugin_option *opt,
                           const struct plugin_diag *diag, struct plugin_options *out)
{
	char err[512];
	int k = find_slot(out, opt->key);

	if (k >= 0 && (out->v[k].decl->flags & OUTBOX_OPT_PREFIX))
		k = -1; /* "plugin.header." alone names no header */
	if (k < 0 && find_prefix_slot(out, opt->key) >= 0)
		return take_prefixed(&out->v[find_prefix_slot(out, opt->key)], opt, diag);
	if (k < 0) {
		char keys[512];
		known_keys(table, keys, sizeof(keys));
		plugin_diag_report(diag, opt, "unknown key for plugin \"%s\" (it accepts: %s)",
		                   plugin, keys[0] != '\0' ? keys : "no plugin.* keys");
		return 1;
	}
	struct plugin_option_value *val = &out->v[k];
	if (val->configured) {
		plugin_diag_report(diag, opt, "duplicate key (first set on line %d)", val->line);
		return 1;
	}
	val->configured = true;
	val->line = opt->line;
	if (parse_value(val->decl, opt->value, val, err, sizeof(err)) < 0) {
		plugin_diag_report(diag, opt, "%s", err);
		return 1;
	}
	if (set_value(val, opt->value, opt->line) < 0) {
		plugin_diag_report(diag, opt, "out of memory");
		return 1;
	}
	return 0;
}

/* Keys the file left out: required ones are errors, the rest get defaults. */
static int take_defaults(const char *plugin, const struct plugin_diag *diag,
                         struct plugin_options *out)
{
	char err[512];
	int problems = 0;

	for (size_t k = 0; k < out->n; k++) {
		struct plugin_option_value *val = &out->v[k];
		const struct outbox_option *decl = val->decl;
		if (decl->flags & OUTBOX_OPT_PREFIX) {
			/* Lines joined without their last '\n'; "" when there were none. */
			if (val->text == NULL && (val->text = strdup("")) == NULL) {
				plugin_diag_report(diag, NULL, "out of memory");
				problems++;
			} else if (val->text[0] != '\0') {
				val->text[strlen(val->text) - 1] = '\0';
			}
			continue;
		}
		if (val->configured)
			continue;
		/* Not in the file: reported against the key, at the section's line. */
		struct cfg_plugin_option absent = {.key = (char *)decl->name, .value = NULL, .line = 0};

		if (decl->default_value == NULL) {
			plugin_diag_report(diag, &absent, "required key is missing (%s)",
			                   decl->help != NULL ? decl->help : "no help");
			problems++;
		} else if (parse_value(decl, decl->default_value, val, err, sizeof(err)) < 0) {
			plugin_diag_report(diag, &absent, "%s (default value of plugin \"%s\")", err, plugin);
			problems++;
		} else if (set_value(val, decl->default_value, 0) < 0) {
			plugin_diag_report(diag, &absent, "out of memory");
			problems++;
		}
	}
	return problems;
}

int plugin_options_validate(const char *plugin, const struct outbox_option *table,
                            const struct cfg_plugin_option *opts, size_t n,
                            const struct plugin_diag *diag,
                            struct plugin_options *out)
{
	int problems = 0;

	out->n = table_len(table);
	out->v = calloc(out->n + 1, sizeof(*out->v));
	if (out->v == NULL) {
		out->n = 0;
		plugin_diag_report(diag, NULL, "out of memory");
		return -1;
	}
	for (size_t k = 0; k < out->n; k++)
		out->v[k].decl = &table[k];
	for (size_t j = 0; j < n; j++)
		problems += take_configured(plugin, table, &opts[j], diag, out);
	problems += take_defaults(plugin, diag, out);
	if (problems > 0) {
		plugin_options_free(out);
		return -1;
	}
	return 0;
}

void plugin_options_free(struct plugin_options *opts)
{
	for (size_t k = 0; k < opts->n; k++)
		free(opts->v[k].text);
	free(opts->v);
	opts->v = NULL;
	opts->n = 0;
}

const struct plugin_option_value *plugin_options_find(const struct plugin_options *opts,
                                                      const char *name)
{
	int k = find_slot(opts, name);

	return k < 0 ? NULL : &opts->v[k];
}
