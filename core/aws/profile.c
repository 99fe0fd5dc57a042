/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/profile.c: the shared credentials and config files (see
 * aws/profile.h).
 */
#include "aws/profile.h"
#include "aws/endpoint.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parse_state {
	struct aws_profiles *p;
	bool credentials_file;
	bool oom;
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

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	const char *profile = section_profile(section, st->credentials_file);

	if (profile == NULL || name == NULL)
		return 1;
	if (add_entry(st->p, profile, name, value != NULL ? value : "", st->credentials_file) < 0) {
		st->oom = true;
		return 0;
	}
	return 1;
}

static int read_file(struct aws_profiles *p, const char *path, bool credentials_file, char *err,
                     size_t err_size)
{
	struct parse_state st = {p, credentials_file, false};
	FILE *f = fopen(path, "r");
	int rc;

	if (f == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		snprintf(err, err_size, "could not open \"%s\": %s", path, strerror(errno));
		return -1;
	}
	rc = ini_parse_file(f, on_key, &st);
	fclose(f);
	if (st.oom) {
		snprintf(err, err_size, "out of memory while reading \"%s\"", path);
		return -1;
	}
	if (rc != 0) {
		snprintf(err, err_size, "%s:%d: syntax error", path, rc);
		return -1;
	}
	return 0;
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
