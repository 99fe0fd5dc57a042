/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/profile.c: the shared credentials and config files (see
 * aws/profile.h).
 */
#include "aws/profile.h"
#include "aws/env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/textfile.h"

struct parse_state {
	struct aws_profiles *p;
	bool credentials_file;
};

const char *aws_profile_name(void)
{
	const char *v = aws_env_get("AWS_PROFILE");
	return v != NULL ? v : "default";
}

/* "~/..." expanded with HOME; the variable's value, else HOME/default. */
static char *file_path(const char *var, const char *default_rel)
{
	const char *v = aws_env_get(var);
	const char *home = aws_env_get("HOME");
	char *out = NULL;

	if (v != NULL && strncmp(v, "~/", 2) != 0)
		return strdup(v);
	if (home == NULL)
		home = "";
	if (asprintf(&out, "%s/%s", home, v != NULL ? v + 2 : default_rel) < 0)
		return NULL;
	return out;
}

/* The profile a section header names in this file; NULL when the section
 * is not a profile (e.g. [sso-session x] in the config file). */
static const char *section_profile(const char *section, bool credentials_file)
{
	if (credentials_file || strcmp(section, "default") == 0)
		return section;
	if (strncmp(section, "profile ", 8) == 0) {
		section += 8;
		while (*section == ' ')
			section++;
		return section;
	}
	return NULL;
}

static int add_entry(struct aws_profiles *p, const char *section, const char *key,
                     const char *value, bool credentials_file)
{
	struct aws_profile_entry *e;

	if (p->n == p->cap) {
		size_t cap = p->cap == 0 ? 16 : p->cap * 2;
		struct aws_profile_entry *grown = realloc(p->items, cap * sizeof(*grown));
		if (grown == NULL)
			return -1;
		p->items = grown;
		p->cap = cap;
	}
	e = &p->items[p->n];
	e->section = strdup(section);
	e->key = strdup(key);
	e->value = strdup(value);
	e->from_credentials_file = credentials_file;
	if (e->section == NULL || e->key == NULL || e->value == NULL) {
		free(e->section);
		free(e->key);
		free(e->value);
		return -1;
	}
	p->n++;
	return 0;
}

/*
 * The lines of one shared file, read with the bounded reader relay.ini
 * uses (common/textfile.h), but with room for long values: STS session
 * tokens are hundreds to over a thousand characters, more than inih's
 * 200-byte line.  The syntax is inih's, as the files were read before:
 * "[section]", "key = value" (or "key: value"), comments starting with ";"
 * or "#" and inline comments after " ;".  An indented line after a key is
 * a sub-property (the config file's "s3 =" block) and is skipped: no
 * credential setting is nested.
 */
static char *trim(char *s)
{
	char *end;

	s += strspn(s, " \t\r\n\v\f");
	end = s + strlen(s);
	while (end > s && strchr(" \t\r\n\v\f", end[-1]) != NULL)
		*--end = '\0';
	return s;
}

/* Cuts s at an inline " ;" comment, as inih does. */
static void cut_comment(char *s)
{
	for (char *c = s; *c != '\0'; c++) {
		if (*c == ';' && c > s && (c[-1] == ' ' || c[-1] == '\t')) {
			*c = '\0';
			return;
		}
	}
}

struct line_state {
	char section[AWS_PROFILE_LINE_MAX];
	bool key_seen; /* a key line since the last header: an indented line continues it */
};

/* One line of a file; 0, or -1 with "FILE:LINE: problem" in err. */
static int parse_line(struct parse_state *st, struct line_state *ls, char *line,
                      const char *where, char *err, size_t err_size)
{
	bool indented = line[0] == ' ' || line[0] == '\t';
	char *t = trim(line), *sep;

	if (*t == '\0' || *t == ';' || *t == '#')
		return 0;
	if (indented && ls->key_seen)
		return 0;
	if (*t == '[') {
		char *close = strchr(t, ']');

		if (close == NULL) {
			snprintf(err, err_size, "%s: syntax error: a section header needs \"]\"", where);
			return -1;
		}
		*close = '\0';
		snprintf(ls->section, sizeof(ls->section), "%s", trim(t + 1));
		ls->key_seen = false;
		return 0;
	}
	cut_comment(t);
	sep = t + strcspn(t, "=:");
	if (*sep == '\0') {
		snprintf(err, err_size, "%s: syntax error: expected \"key = value\"", where);
		return -1;
	}
	*sep = '\0';
	ls->key_seen = true;
	const char *profile = section_profile(ls->section, st->credentials_file);
	if (profile != NULL &&
	    add_entry(st->p, profile, trim(t), trim(sep + 1), st->credentials_file) < 0) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	return 0;
}

static int parse_lines(struct parse_state *st, struct textfile_lines *rd, const char *path,
                       char *err, size_t err_size)
{
	struct line_state *ls = calloc(1, sizeof(*ls));
	char where[512];
	ssize_t len;
	int line = 0, rc = 0;

	if (ls == NULL) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	while (rc == 0 && (len = textfile_next_line(rd)) >= 0) {
		char *s = rd->buf;
		size_t content = (size_t)len;

		if (content == textfile_stored_len(rd, len))
			while (content > 0 && (s[content - 1] == '\n' || s[content - 1] == '\r'))
				content--;
		snprintf(where, sizeof(where), "%.480s:%d", path, ++line);
		if (content > AWS_PROFILE_LINE_MAX) {
			snprintf(err, err_size, "%s: line is too long (at most %d bytes)", where,
			         AWS_PROFILE_LINE_MAX);
			rc = -1;
		} else if (rd->nul_at >= 0) {
			snprintf(err, err_size, "%s: line contains a NUL byte (column %ld)", where,
			         rd->nul_at + 1);
			rc = -1;
		} else {
			if (line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
				s += 3;
			rc = parse_line(st, ls, s, where, err, err_size);
		}
	}
	if (rc == 0 && ferror(rd->fp)) {
		snprintf(err, err_size, "could not read \"%s\"", path);
		rc = -1;
	} else if (rc == 0 && rd->too_large) {
		snprintf(err, err_size, "\"%s\" is too large (more than %ld bytes)", path,
		         rd->max_bytes);
		rc = -1;
	}
	explicit_bzero(rd->buf, rd->buf_size);
	free(ls);
	return rc;
}

static int read_file(struct aws_profiles *p, const char *path, bool credentials_file, char *err,
                     size_t err_size)
{
	struct parse_state st = {p, credentials_file};
	/* a line, its newline, and one byte more to tell a too-long one */
	char *buf = malloc(AWS_PROFILE_LINE_MAX + 3);
	struct textfile_lines rd = {.buf = buf, .buf_size = AWS_PROFILE_LINE_MAX + 3,
	                            .max_bytes = AWS_PROFILE_MAX_FILE_BYTES};
	char why[256];
	int rc;

	if (buf == NULL) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	rd.fp = textfile_open(path, AWS_PROFILE_MAX_FILE_BYTES, why, sizeof(why));
	if (rd.fp == NULL) {
		free(buf);
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		snprintf(err, err_size, "\"%s\": %s", path, why);
		return -1;
	}
	rc = parse_lines(&st, &rd, path, err, err_size);
	fclose(rd.fp);
	free(buf);
	return rc;
}

int aws_profiles_load(struct aws_profiles *p, char *err, size_t err_size)
{
	memset(p, 0, sizeof(*p));
	p->credentials_path = file_path("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
	p->config_path = file_path("AWS_CONFIG_FILE", ".aws/config");
	if (p->credentials_path == NULL || p->config_path == NULL) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	if (read_file(p, p->credentials_path, true, err, err_size) < 0 ||
	    read_file(p, p->config_path, false, err, err_size) < 0)
		return -1;
	return 0;
}

void aws_profiles_free(struct aws_profiles *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->items[i].section);
		free(p->items[i].key);
		explicit_bzero(p->items[i].value, strlen(p->items[i].value));
		free(p->items[i].value);
	}
	free(p->items);
	free(p->credentials_path);
	free(p->config_path);
	memset(p, 0, sizeof(*p));
}

const char *aws_profile_get(const struct aws_profiles *p, const char *profile, const char *key)
{
	const char *from_config = NULL;

	/* The last assignment in a file wins, as in the SDKs' parsers. */
	const char *from_credentials = NULL;
	for (size_t i = 0; i < p->n; i++) {
		const struct aws_profile_entry *e = &p->items[i];
		if (strcmp(e->section, profile) != 0 || strcmp(e->key, key) != 0 || e->value[0] == '\0')
			continue;
		if (e->from_credentials_file)
			from_credentials = e->value;
		else
			from_config = e->value;
	}
	return from_credentials != NULL ? from_credentials : from_config;
}

bool aws_profile_exists(const struct aws_profiles *p, const char *profile)
{
	for (size_t i = 0; i < p->n; i++) {
		if (strcmp(p->items[i].section, profile) == 0)
			return true;
	}
	return false;
}
