/*
 * common/log_fields.h: a log message's trailing key=value context, and the
 * JSON form of a log line (--log-format json).
 */
#ifndef OUTBOX_CORE_LOG_FIELDS_H
#define OUTBOX_CORE_LOG_FIELDS_H

#include <stddef.h>

#include <jansson.h>

#include "common/compiler.h"

/*
 * Splits msg ("could not send dest=news error=\"a b\" failures=3") into its
 * text and its trailing key=value pairs: the longest tail made only of
 * pairs whose key is [a-z_]+ and whose value is a bare word or a quoted
 * string (\" and \\ escapes).  Returns a new object {"message": TEXT,
 * KEY: VALUE, ...} (values are strings; a key repeated keeps its first
 * value), or NULL when out of memory.
 */
json_t *log_fields_parse(const char *msg) OUTBOX_MUSTCHECK;

/*
 * One JSON object for a log line, without the newline, into out (size
 * bytes; the result is shortened to fit).  Keys: "time" (ts, borrowed: the
 * caller's clock, log_format_timestamp() in common/log.c), "level",
 * "program", "pid", "message", then the message's context keys.  Returns
 * the length written.
 */
size_t log_fields_json(const char *ts, const char *level, const char *program, const char *msg,
                       char *out, size_t size);

#endif
