/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/log.c: levelled lines on stderr, in one of three shapes
 * (common/log.h): text, text for journald, or JSON.
 *
 * A whole line is formatted first and written with one write(2), so lines
 * from different threads never interleave.
 */
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log_fields.h"

#define LOG_LINE_MAX 4096

enum log_level log_max_level = LOG_LEVEL_INFO;
static const char *log_ident = "outbox";
static enum log_format log_format = LOG_FORMAT_TEXT;
static bool log_journal;

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "ERROR",
	[LOG_LEVEL_WARNING] = "WARNING",
	[LOG_LEVEL_INFO] = "LOG",
	[LOG_LEVEL_DEBUG] = "DEBUG",
};

/* syslog(3) priorities, for journald's "<N>" prefix (sd-daemon(3)). */
static const int level_priorities[] = {
	[LOG_LEVEL_ERROR] = 3,
	[LOG_LEVEL_WARNING] = 4,
	[LOG_LEVEL_INFO] = 6,
	[LOG_LEVEL_DEBUG] = 7,
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

bool log_parse_format(const char *name, enum log_format *out)
{
	if (strcmp(name, "text") == 0)
		*out = LOG_FORMAT_TEXT;
	else if (strcmp(name, "json") == 0)
		*out = LOG_FORMAT_JSON;
	else
		return false;
	return true;
}

/*
 * systemd sets JOURNAL_STREAM=DEV:INODE when it connects stderr to the
 * journal; it is ours only if stderr still is that stream (a child whose
 * stderr was redirected inherits the variable but not the stream).
 */
static bool stderr_is_journal(void)
{
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (v == NULL || sscanf(v, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_set_format(enum log_format format)
{
	log_format = format;
	log_journal = stderr_is_journal();
}

size_t log_format_timestamp(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	int m = snprintf(buf + n, size - n, ".%03ldZ", ts.tv_nsec / 1000000L);
	return n + (m > 0 ? (size_t)m : 0);
}

/* Appends to line[*len]; marks a truncated line rather than silently cut it short. */
static void append(char *line, size_t *len, int n)
{
	if (n > 0)
		*len += (size_t)n;
	if (*len >= LOG_LINE_MAX - 1) {
		*len = LOG_LINE_MAX - 5;
		memcpy(line + *len, "...", 3);
		*len += 3;
	}
}

/* "2026-...Z outboxd[1234] LOG: " or, for journald, "<6>LOG: ". */
static size_t text_prefix(enum log_level level, char *line)
{
	size_t len = 0;

	if (log_journal) {
		append(line, &len, snprintf(line, LOG_LINE_MAX, "<%d>%s: ", level_priorities[level],
		                            level_names[level]));
		return len;
	}
	len = log_format_timestamp(line, LOG_LINE_MAX);
	append(line, &len, snprintf(line + len, LOG_LINE_MAX - len, " %s[%ld] %s: ", log_ident,
	                            (long)getpid(), level_names[level]));
	return len;
}

static void write_line(char *line, size_t len)
{
	line[len++] = '\n';
	/* Best effort: there is nowhere to report a failed log write. */
	ssize_t ignored = write(STDERR_FILENO, line, len);
	(void)ignored;
}

void log_vwrite(enum log_level level, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX + 1];
	size_t len;

	if (level > log_max_level)
		return;
	if (log_format == LOG_FORMAT_JSON) {
		char msg[LOG_LINE_MAX], ts[40];

		vsnprintf(msg, sizeof(msg), fmt, ap);
		log_format_timestamp(ts, sizeof(ts));
		len = log_fields_json(ts, level_names[level], log_ident, msg, line, LOG_LINE_MAX);
		write_line(line, len);
		return;
	}
	len = text_prefix(level, line);
	if (len < LOG_LINE_MAX - 1)
		append(line, &len, vsnprintf(line + len, LOG_LINE_MAX - len, fmt, ap));
	write_line(line, len);
}

void log_write(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(level, fmt, ap);
	va_end(ap);
}
