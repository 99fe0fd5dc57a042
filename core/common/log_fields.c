/*
 * common/log_fields.c: see common/log_fields.h.
 *
 * Messages put their context last ("... dest=news job_id=ab12"), written by
 * hand in each log call; this recovers it as fields so a log shipper need
 * not parse text.  Values are escaped by jansson, never by hand.
 */
#include "common/log_fields.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A JSON string of s[0..n); bytes that are not UTF-8 become '?' (jansson
 * refuses invalid UTF-8, and a log line must never be lost for it). */
static json_t *safe_string(const char *s, size_t n)
{
	json_t *v = json_stringn(s, n);
	char *copy;

	if (v != NULL)
		return v;
	copy = malloc(n + 1);
	if (copy == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		copy[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
	v = json_stringn(copy, n);
	free(copy);
	return v;
}

/* Reads one key=value at s (after its space); returns the end, or NULL
 * when s is not a pair.  With obj, also stores the pair. */
static const char *read_pair(const char *s, json_t *obj)
{
	const char *key = s, *val;
	size_t key_len, cap;
	char *buf, *w;

	while ((*s >= 'a' && *s <= 'z') || *s == '_')
		s++;
	key_len = (size_t)(s - key);
	if (key_len == 0 || *s != '=')
		return NULL;
	val = ++s;
	cap = strlen(val) + 1;
	buf = malloc(cap);
	if (buf == NULL)
		return NULL;
	w = buf;
	if (*s == '"') {
		for (s++; *s != '\0' && *s != '"'; s++) {
			if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
				s++;
			*w++ = *s;
		}
		if (*s != '"' || (s[1] != '\0' && s[1] != ' ')) {
			free(buf);
			return NULL;
		}
		s++;
	} else {
		while (*s != '\0' && *s != ' ')
			*w++ = *s++;
	}
	*w = '\0';
	if (obj != NULL) {
		char k[64];

		snprintf(k, sizeof(k), "%.*s", (int)(key_len < sizeof(k) ? key_len : sizeof(k) - 1), key);
		if (json_object_get(obj, k) == NULL)
			json_object_set_new(obj, k, safe_string(buf, strlen(buf)));
	}
	free(buf);
	return s;
}

/* True when everything from s on is " key=value" pairs. */
static bool all_pairs(const char *s)
{
	while (*s == ' ') {
		s = read_pair(s + 1, NULL);
		if (s == NULL)
			return false;
	}
	return *s == '\0';
}

json_t *log_fields_parse(const char *msg)
{
	json_t *obj = json_object();
	const char *tail = NULL;

	if (obj == NULL)
		return NULL;
	/* The first space after which only pairs follow starts the context. */
	for (const char *p = strchr(msg, ' '); p != NULL; p = strchr(p + 1, ' ')) {
		if (all_pairs(p)) {
			tail = p;
			break;
		}
	}
	json_object_set_new(obj, "message",
	                    safe_string(msg, tail ? (size_t)(tail - msg) : strlen(msg)));
	for (const char *s = tail; s != NULL && *s == ' ';)
		s = read_pair(s + 1, obj);
	return obj;
}

static size_t copy_out(const char *text, char *out, size_t size)
{
	size_t len = strlen(text);

	if (len >= size)
		len = size - 1;
	memcpy(out, text, len);
	out[len] = '\0';
	return len;
}

size_t log_fields_json(const char *ts, const char *level, const char *program, const char *msg,
                       char *out, size_t size)
{
	json_t *fields = log_fields_parse(msg);
	json_t *line = json_object();
	const char *key;
	json_t *v;
	char *text;
	size_t len;

	if (fields == NULL || line == NULL ||
	    json_object_set_new(line, "time", json_string(ts)) < 0 ||
	    json_object_set_new(line, "level", json_string(level)) < 0 ||
	    json_object_set_new(line, "program", json_string(program)) < 0 ||
	    json_object_set_new(line, "pid", json_integer((json_int_t)getpid())) < 0) {
		json_decref(fields);
		json_decref(line);
		return copy_out("{\"level\":\"ERROR\",\"message\":\"out of memory formatting a log line\"}",
		                out, size);
	}
	/* "message" first, the context after: the order the text had. */
	json_object_set(line, "message", json_object_get(fields, "message"));
	json_object_foreach(fields, key, v) {
		if (json_object_get(line, key) == NULL)
			json_object_set(line, key, v);
	}
	text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	if (text != NULL && strlen(text) >= size) {
		/* Too long for one line: keep the start of the message only. */
		free(text);
		json_object_clear(line);
		json_object_set_new(line, "time", json_string(ts));
		json_object_set_new(line, "level", json_string(level));
		json_object_set_new(line, "program", json_string(program));
		json_object_set_new(line, "message", safe_string(msg, strnlen(msg, size / 8)));
		json_object_set_new(line, "truncated", json_true());
		text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	}
	len = copy_out(text != NULL ? text : "{\"message\":\"out of memory formatting a log line\"}",
	               out, size);
	free(text);
	json_decref(fields);
	json_decref(line);
	return len;
}
