/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/config.c: relay.ini parsing and validation (see config.h and
 * docs/configuration.md): sections, keys, and loading a whole file.  The
 * option table is in options.c, the line reader in reader.c, the checks
 * across sections in checks.c.
 *
 * inih splits "key = value" and strips inline comments; our line reader
 * does the line-level structure: line numbers, section headers, over-long
 * lines and continuation lines.  The distribution's libinih is built
 * without INI_HANDLER_LINENO and truncates section names silently, so we
 * hand inih only left-trimmed key lines (everything else becomes an empty
 * line) and inih's own section and continuation logic never runs.  The
 * handler is called for the line the reader returned last, which is how
 * it knows its line number.
 */
#include "config/config.h"
#include "config/internal.h"

#include <ctype.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cfg_fixed_sections[] = { "database", "aws", "s3", "relay", "consumer", "outboxd",
					   "retention", "sweeper", "metrics" };

_Static_assert(sizeof(cfg_fixed_sections) / sizeof(cfg_fixed_sections[0]) == CFG_N_FIXED,
	       "CFG_N_FIXED does not match the fixed sections");

/* ---- sections ---- */

/* Reports required keys the section just ended did not set. */
static void cfg_section_finish(struct cfg_parser *p)
{
	bool dest = p->kind == CFG_SECT_DEST;

	if (p->kind != CFG_SECT_FIXED && !dest)
		return;
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		bool mine = dest ? cfg_opt_is_dest(o) : strcmp(o->section, p->section) == 0;

		if (mine && (o->flags & CFG_F_REQUIRED) && !p->opt_line[i])
			cfg_error(p, p->section_line, p->section, o->name, "missing required key");
	}
	if (dest)
		cfg_remember_url_lines(p);
}

static void cfg_destination_start(struct cfg_parser *p, const char *name)
{
	const struct cfg_destination *prev = cfg_find_destination(p->cfg, name);
	struct cfg *cfg = p->cfg;
	struct cfg_destination *ds, *d;
	char *copy;

	if (!cfg_matches_charset(name, "_-", CFG_DEST_NAME_MAX))
		cfg_error(p, p->line, p->section, NULL,
			  "invalid destination name \"%s\": must match [a-z0-9_-]{1,40}", name);
	if (prev)
		cfg_error(p, p->line, p->section, NULL,
			  "duplicate destination \"%s\" (first defined at line %d)", name, prev->line);
	copy = strdup(name);
	ds = copy ? realloc(cfg->destinations, (cfg->n_destinations + 1) * sizeof(*ds)) : NULL;
	if (!ds) {
		free(copy);
		goto oom;
	}
	cfg->destinations = ds;
	d = &ds[cfg->n_destinations];
	memset(d, 0, sizeof(*d));
	cfg->n_destinations++;
	d->line = p->line;
	d->name = copy;
	if (cfg_apply_defaults(d, true) < 0)
		goto oom;
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		if (cfg_opt_is_dest(&cfg_opts[i]))
			p->opt_line[i] = 0;
	}
	p->dest_idx = cfg->n_destinations - 1;
	p->kind = CFG_SECT_DEST;
	return;
oom:
	cfg_error(p, p->line, p->section, NULL, "out of memory");
}

static void cfg_fixed_start(struct cfg_parser *p, size_t idx)
{
	if (p->fixed_line[idx]) {
		cfg_error(p, p->line, p->section, NULL,
			  "duplicate section (first defined at line %d)", p->fixed_line[idx]);
		return;
	}
	p->fixed_line[idx] = p->line;
	p->kind = CFG_SECT_FIXED;
}

static bool cfg_is_blank_or_comment(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0' || *s == ';' || *s == '#';
}

/*
 * We parse headers ourselves, so inih's truncation does not apply to them;
 * the 48-byte limit is kept for symmetry with keys, but a destination name
 * may have its full 40 bytes after "destination:".
 */
static size_t cfg_section_max(const char *name)
{
	if (strncmp(name, CFG_DEST_PREFIX, strlen(CFG_DEST_PREFIX)) == 0)
		return strlen(CFG_DEST_PREFIX) + CFG_DEST_NAME_MAX;
	return CFG_MAX_NAME_LEN;
}

/* t points at the '[' of a header line; it is modified. */
static void cfg_section_start(struct cfg_parser *p, char *t)
{
	char *end = strchr(t, ']');
	const char *name = t + 1;

	cfg_section_finish(p);
	p->key_seen = false;
	p->kind = CFG_SECT_IGNORED;
	p->section[0] = '\0';
	p->section_line = p->line;
	if (!end) {
		cfg_error(p, p->line, NULL, NULL, "invalid section header: missing \"]\"");
		return;
	}
	*end = '\0';
	if (strlen(name) > cfg_section_max(name)) {
		cfg_error(p, p->line, NULL, NULL, "section name \"%s\" is too long (at most %zu bytes)",
			  name, cfg_section_max(name));
		return;
	}
	snprintf(p->section, sizeof(p->section), "%s", name); /* length checked above */
	if (!cfg_is_blank_or_comment(end + 1)) {
		cfg_error(p, p->line, p->section, NULL, "unexpected text after \"]\"");
		return;
	}
	for (size_t i = 0; i < CFG_N_FIXED; i++) {
		if (strcmp(name, cfg_fixed_sections[i]) == 0) {
			cfg_fixed_start(p, i);
			return;
		}
	}
	if (strncmp(name, CFG_DEST_PREFIX, strlen(CFG_DEST_PREFIX)) == 0) {
		cfg_destination_start(p, name + strlen(CFG_DEST_PREFIX));
		return;
	}
	cfg_error(p, p->line, p->section, NULL, "unknown section");
}

/* ---- keys ---- */

static void cfg_add_plugin_option(struct cfg_parser *p, struct cfg_destination *d,
				  const char *name, const char *v)
{
	const char *key = name + strlen(CFG_PLUGIN_PREFIX);
	struct cfg_plugin_option *opts;
	char *k, *val;

	if (!cfg_matches_charset(key, "_", CFG_MAX_NAME_LEN)) {
		cfg_error(p, p->line, p->section, name,
			  "invalid plugin option name: must be \"plugin.\" followed by [a-z0-9_]+");
		return;
	}
	for (size_t i = 0; i < d->n_plugin_options; i++) {
		if (strcmp(d->plugin_options[i].key, key) == 0) {
			cfg_error(p, p->line, p->section, name, "duplicate key (first set at line %d)",
				  d->plugin_options[i].line);
			return;
		}
	}
	if (*v == '\0') {
		cfg_error(p, p->line, p->section, name, "missing value");
		return;
	}
	k = strdup(key);
	val = strdup(v);
	opts = k && val ? realloc(d->plugin_options, (d->n_plugin_options + 1) * sizeof(*opts)) : NULL;
	if (!opts) {
		free(k);
		free(val);
		cfg_error(p, p->line, p->section, name, "out of memory");
		return;
	}
	d->plugin_options = opts;
	opts[d->n_plugin_options++] = (struct cfg_plugin_option){ k, val, p->line };
}

static void cfg_set_key(struct cfg_parser *p, const char *name, const char *v)
{
	bool dest = p->kind == CFG_SECT_DEST;
	void *base = p->cfg;

	if (dest) {
		base = &p->cfg->destinations[p->dest_idx];
		if (strncmp(name, CFG_PLUGIN_PREFIX, strlen(CFG_PLUGIN_PREFIX)) == 0) {
			cfg_add_plugin_option(p, base, name, v);
			return;
		}
	}
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		bool mine = dest ? cfg_opt_is_dest(o) : strcmp(o->section, p->section) == 0;

		if (mine && strcmp(o->name, name) == 0) {
			cfg_set_opt(p, i, base, v);
			return;
		}
	}
	cfg_error(p, p->line, p->section, name, "unknown key");
}

/* inih handler; section is always "" because the reader keeps headers away. */
static int cfg_on_key(void *user, const char *section, const char *name, const char *value)
{
	struct cfg_parser *p = user;

	(void)section;
	/* Cannot truncate: name comes from one line of at most INI_MAX_LINE bytes. */
	snprintf(p->prev_key, sizeof(p->prev_key), "%s", name);
	if (*name == '\0') {
		cfg_error(p, p->line, p->section, NULL, "missing key name before \"=\"");
		return 1;
	}
	if (strlen(name) > CFG_MAX_NAME_LEN) {
		cfg_error(p, p->line, p->section, name, "key name is too long (at most %d bytes)",
			  CFG_MAX_NAME_LEN);
		return 1;
	}
	switch (p->kind) {
	case CFG_SECT_NONE:
		cfg_error(p, p->line, NULL, name, "key outside any section");
		break;
	case CFG_SECT_IGNORED:
		break;
	case CFG_SECT_FIXED:
	case CFG_SECT_DEST:
		cfg_set_key(p, name, value);
		break;
	}
	return 1; /* errors are collected here, never counted by inih */
}

/* ini_reader: see the comment at the top of this file. */
static char *cfg_read_line(char *str, int num, void *stream)
{
	struct cfg_parser *p = stream;
	ssize_t len = cfg_next_line(p);
	char *s, *t;

	if (len < 0)
		return NULL;
	p->line++;
	str[0] = '\0';
	if (!cfg_line_bytes_ok(p, (size_t)len))
		return str; /* reported; the line is skipped */
	s = cfg_line_content(p, cfg_stored_len(len));
	t = s + strspn(s, " \t\v\f\r");
	if ((len < CFG_LINE_BUF ? strlen(s) : (size_t)len) + 2 > (size_t)num) {
		cfg_error(p, p->line, NULL, NULL, "line is too long (at most %d bytes)", num - 2);
	} else if (*t == '\0' || *t == ';' || *t == '#') {
		/* blank line or comment */
	} else if (t > s && p->key_seen) {
		cfg_error(p, p->line, p->section, p->prev_key,
			  "indented line: continuation lines are not supported");
	} else if (*t == '[') {
		cfg_section_start(p, t);
	} else if (!cfg_has_separator(t)) {
		cfg_error(p, p->line, p->section, NULL, "syntax error: expected \"key = value\"");
	} else {
		p->key_seen = true;
		memcpy(str, t, strlen(t) + 1); /* fits: checked against num above */
	}
	return str;
}

static struct cfg *cfg_new(const char *path)
{
	struct cfg *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return NULL;
	cfg->file = strdup(path);
	if (!cfg->file || cfg_apply_defaults(cfg, false) < 0) {
		cfg_free(cfg);
		return NULL;
	}
	return cfg;
}

/*
 * Parses and checks path.  Returns the cfg it built, whatever errors it
 * appended to errs, or NULL when the file could not be opened or memory
 * ran out (both reported to errs).
 */
static struct cfg *cfg_parse(const char *path, struct cfg_errors *errs)
{
	struct cfg_parser p = { .errs = errs, .kind = CFG_SECT_NONE };
	struct cfg *cfg = NULL;
	size_t before = cfg_errors_count(errs);
	int irc;

	p.cfg = cfg_new(path);
	if (!p.cfg) {
		cfg_errors_add(errs, "%s: out of memory", path);
		return NULL;
	}
	if (!cfg_open(&p, path))
		goto out;
	irc = ini_parse_stream(cfg_read_line, &p, cfg_on_key, &p);
	if (ferror(p.rd.fp))
		cfg_error(&p, 0, NULL, NULL, "could not read file");
	else if (p.rd.too_large)
		cfg_error(&p, 0, NULL, NULL, "file is too large (more than %ld bytes)",
			  CFG_MAX_FILE_BYTES);
	else if (irc == -2)
		cfg_error(&p, 0, NULL, NULL, "out of memory");
	else if (irc > 0 && cfg_errors_count(errs) == before)
		cfg_error(&p, irc, NULL, NULL, "syntax error"); /* not expected: see cfg_read_line */
	cfg_section_finish(&p);
	if (!ferror(p.rd.fp) && !p.rd.too_large) {
		cfg_check_file(&p);
		cfg = p.cfg;
		p.cfg = NULL;
	}
out:
	if (p.rd.fp)
		fclose(p.rd.fp);
	free(p.url_lines);
	cfg_free(p.cfg);
	return cfg;
}

int cfg_load(const char *path, struct cfg **out, struct cfg_errors *errs)
{
	size_t before = cfg_errors_count(errs);
	struct cfg *cfg = cfg_parse(path, errs);

	*out = NULL;
	if (cfg == NULL || cfg_errors_count(errs) != before) {
		cfg_free(cfg);
		return -1;
	}
	*out = cfg;
	return 0;
}

int cfg_load_partial(const char *path, struct cfg **out, struct cfg_errors *errs)
{
	size_t before = cfg_errors_count(errs);

	*out = cfg_parse(path, errs);
	return *out != NULL && cfg_errors_count(errs) == before ? 0 : -1;
}
