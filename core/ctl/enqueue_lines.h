/*
 * ctl/enqueue_lines.h: the JSON-lines loop that enqueue and enqueue-news
 * share.
 *
 * Every non-blank line is enqueued in its own transaction, so a bad line
 * writes nothing and never takes good lines with it.  A line longer than
 * the caller's limit is read to its end and refused without being held,
 * and so is a line with a NUL byte.  Prints
 * "JOB_ID EVENT_ID" per enqueued line (after its commit; "(already
 * enqueued)" when the job existed); a bad line is reported as
 * FILE:LINE: problem, and the command exits 1 at the end.  With --json, one
 * document: {"jobs", "rejected", "enqueued", "already_enqueued",
 * "rejected_count"}.
 */
#ifndef OUTBOX_CORE_CTL_ENQUEUE_LINES_H
#define OUTBOX_CORE_CTL_ENQUEUE_LINES_H

#include <stddef.h>

#include <libpq-fe.h>

#include "ctl/ctl.h"
#include "outbox/producer.h"

/*
 * Enqueues one line (NUL-terminated, borrowed) inside the open transaction;
 * returns 0, or -1 with the reason in err (the loop then rolls back).
 */
typedef int (*enqueue_line_fn)(PGconn *conn, const char *line, void *arg,
                               struct outbox_enqueued *out, char *err, size_t errlen);

/*
 * Runs fn over every line of the file named path ("-": stdin), lines of at
 * most line_max bytes, newline included; what names a line's content in
 * the too-long message ("news item").  Returns an exit code.
 */
int enqueue_lines(struct ctl *ctl, PGconn *conn, const char *path, size_t line_max,
                  const char *what, enqueue_line_fn fn, void *arg);

/* Prints one enqueued job as the loop does ("JOB_ID EVENT_ID[ (already enqueued)]"). */
void enqueue_print(const struct outbox_enqueued *out);

#endif
