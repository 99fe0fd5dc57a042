/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/log.h: the core's logging.
 *
 * One line per message on stderr:
 *   2026-11-30T06:40:01.123Z outboxd[1234] ERROR: could not connect to the database
 * Under journald (stderr is $JOURNAL_STREAM) the journal adds the time and
 * the program, so a line is the syslog priority and the message only:
 *   <3>ERROR: could not connect to the database
 * With LOG_FORMAT_JSON, one JSON object per line (common/log_fields.h):
 *   {"time":"...","level":"ERROR","program":"outboxd","pid":1234,"message":"...","dest":"news"}
 * Messages follow PostgreSQL's style: lower case, no trailing period, user
 * supplied names in double quotes, never a secret.  Structured context goes
 * at the end as key=value pairs ("dest=news event_id=...").
 */
#ifndef OUTBOX_CORE_COMMON_LOG_H
#define OUTBOX_CORE_COMMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/compiler.h"

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARNING = 1,
	LOG_LEVEL_INFO = 2,
	LOG_LEVEL_DEBUG = 3,
};

enum log_format {
	LOG_FORMAT_TEXT = 0, /* the default */
	LOG_FORMAT_JSON = 1,
};

/* Messages above this level are dropped; default LOG_LEVEL_INFO. */
extern enum log_level log_max_level;

/* Program name used in the prefix; borrowed, must outlive logging. */
void log_set_ident(const char *ident);
/* Accepts "error", "warning", "info", "debug"; returns false on anything else. */
bool log_parse_level(const char *name, enum log_level *out);
/* Accepts "text" and "json"; returns false on anything else. */
bool log_parse_format(const char *name, enum log_format *out);
/* Chooses the format and looks at $JOURNAL_STREAM; call before any thread
 * logs, or later from one thread only (outboxd's reload): a line being
 * written meanwhile comes out in either format.  Without a call: text, no
 * journald prefix. */
void log_set_format(enum log_format format);
/* "2026-11-30T06:40:01.123Z" into buf; returns its length. */
size_t log_format_timestamp(char *buf, size_t size);

void log_write(enum log_level level, const char *fmt, ...) OUTBOX_PRINTF(2, 3);
void log_vwrite(enum log_level level, const char *fmt, va_list ap) OUTBOX_PRINTF(2, 0);

#define log_error(...) log_write(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warning(...) log_write(LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_info(...) log_write(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...)                                           \
	do {                                                         \
		if (outbox_unlikely(log_max_level >= LOG_LEVEL_DEBUG))   \
			log_write(LOG_LEVEL_DEBUG, __VA_ARGS__);             \
	} while (0)

#endif
