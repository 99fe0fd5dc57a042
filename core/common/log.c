/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/log.c: timestamped, levelled lines on stderr.
 *
 * A whole line is formatted first and written with one write(2), so lines
 * from different threads never interleave.
 */
#include "common/log.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

enum log_level log_max_level = LOG_LEVEL_INFO;
static const char *log_ident = "outbox";

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "ERROR",
	[LOG_LEVEL_WARNING] = "WARNING",
	[LOG_LEVEL_INFO] = "LOG",
	[LOG_LEVEL_DEBUG] = "DEBUG",
};

void log_set_ident(const char *ident)
{
	log_ident = ident;
}

bool log_parse_level(const char *name, enum log_level *out)
{
	static const struct {
		const char *name;
		enum log_level level;
	} table[] = {
		{"error", LOG_LEVEL_ERROR},
		{"warning", LOG_LEVEL_WARNING},
		{"info", LOG_LEVEL_INFO},
		{"debug", LOG_LEVEL_DEBUG},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcasecmp(name, table[i].name) == 0) {
			*out = table[i].level;
			return true;
		}
	}
	return false;
}

static size_t format_timestamp(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	int m = snprintf(buf + n, size - n, ".%03ldZ", ts.tv_nsec / 1000000L);
	return n + (m > 0 ? (size_t)m : 0);
}

void log_vwrite(enum log_level level, const char *fmt, va_list ap)
{
	char line[4096];
	size_t len;
	int n;

	if (level > log_max_level)
		return;
	len = format_timestamp(line, sizeof(line));
	n = snprintf(line + len, sizeof(line) - len, " %s[%ld] %s: ",
	             log_ident, (long)getpid(), level_names[level]);
	if (n > 0)
		len += (size_t)n;
	if (len < sizeof(line)) {
		n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
		if (n > 0)
			len += (size_t)n;
	}
	if (len >= sizeof(line) - 1) {
		/* Truncated: mark it rather than silently cut a message short. */
		len = sizeof(line) - 5;
		memcpy(line + len, "...", 3);
		len += 3;
	}
	line[len++] = '\n';
	/* Best effort: there is nowhere to report a failed log write. */
	ssize_t ignored = write(STDERR_FILENO, line, len);
	(void)ignored;
}

void log_write(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(level, fmt, ap);
	va_end(ap);
}
