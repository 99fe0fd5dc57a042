/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench_settings.c: the --baseline-settings fragment ([relay] and
 * [consumer] keys) and its merge into the relay.ini the bench generates
 * (see bench.h).  Merged, not appended: outboxd rejects a key given twice.
 */
#include "bench/bench.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* s without leading and trailing blanks, in place. */
static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static const struct bench_setting *find(const struct bench_settings *s, const char *section,
                                        const char *key)
{
	for (int i = 0; s != NULL && i < s->n; i++) {
		if (strcmp(s->kv[i].section, section) == 0 && strcmp(s->kv[i].key, key) == 0)
			return &s->kv[i];
	}
	return NULL;
}

/* One "key = value" line of section into s; 0, or -1 with a message. */
static int add(struct bench_settings *s, const char *section, char *line, char *msg,
               size_t len)
{
	char *eq = strchr(line, '=');
	char *key, *value;

	if (eq == NULL) {
		snprintf(msg, len, "expected \"key = value\"");
		return -1;
	}
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (section[0] == '\0') {
		snprintf(msg, len, "key \"%s\" is outside a section", key);
		return -1;
	}
	if (strcmp(key, "workers") == 0) {
		snprintf(msg, len, "key \"workers\" is set by --workers, not here");
		return -1;
	}
	if (find(s, section, key) != NULL) {
		snprintf(msg, len, "key \"%s\" is set twice in [%s]", key, section);
		return -1;
	}
	if (s->n == BENCH_SETTINGS_MAX || strlen(key) >= sizeof(s->kv[0].key) ||
	    strlen(value) >= sizeof(s->kv[0].value)) {
		snprintf(msg, len, "too many or too long settings");
		return -1;
	}
	snprintf(s->kv[s->n].section, sizeof(s->kv[0].section), "%s", section);
	snprintf(s->kv[s->n].key, sizeof(s->kv[0].key), "%s", key);
	snprintf(s->kv[s->n].value, sizeof(s->kv[0].value), "%s", value);
	s->n++;
	return 0;
}

/* A "[name]" line: only relay and consumer. */
static int enter(char *line, char *section, char *msg, size_t len)
{
	char *close = strchr(line, ']');

	if (close == NULL || trim(close + 1)[0] != '\0') {
		snprintf(msg, len, "expected \"[section]\"");
		return -1;
	}
	*close = '\0';
	line = trim(line + 1);
	if (strcmp(line, "relay") != 0 && strcmp(line, "consumer") != 0) {
		snprintf(msg, len, "section \"%s\" is not allowed here (only [relay] and [consumer])",
		         line);
		return -1;
	}
	snprintf(section, 16, "%s", line);
	return 0;
}

int bench_settings_load(const char *path, struct bench_settings *s)
{
	char buf[1024], section[16] = "", msg[200] = "";
	FILE *f = fopen(path, "r");
	int lineno = 0, rc = 0;

	s->n = 0;
	if (f == NULL) {
		fprintf(stderr, "outbox-bench: could not open \"%s\": %m\n", path);
		return -1;
	}
	while (rc == 0 && fgets(buf, sizeof(buf), f) != NULL) {
		char *line = trim(buf);

		lineno++;
		if (line[0] == '\0' || line[0] == '#' || line[0] == ';')
			continue;
		rc = line[0] == '[' ? enter(line, section, msg, sizeof(msg))
		                    : add(s, section, line, msg, sizeof(msg));
	}
	fclose(f);
	if (rc < 0)
		fprintf(stderr, "%s:%d: %s\n", path, lineno, msg);
	return rc;
}

void bench_settings_write(FILE *f, const char *section, const char *const *keys,
                          const char *const *values, int n, const struct bench_settings *s)
{
	fprintf(f, "\n[%s]\n", section);
	for (int i = 0; i < n; i++) {
		const struct bench_setting *o = find(s, section, keys[i]);

		if (values[i] != NULL || o != NULL)
			fprintf(f, "%s = %s\n", keys[i], o != NULL ? o->value : values[i]);
	}
	for (int i = 0; s != NULL && i < s->n; i++) {
		bool known = false;

		for (int k = 0; k < n && !known; k++)
			known = strcmp(keys[k], s->kv[i].key) == 0;
		if (!known && strcmp(s->kv[i].section, section) == 0)
			fprintf(f, "%s = %s\n", s->kv[i].key, s->kv[i].value);
	}
}
