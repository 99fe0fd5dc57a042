/*
 * daemon/console_snapshot.h: the overview's counts, kept fresh by a thread
 * of their own (docs/console.md, "Performance").
 *
 * Counting a ledger of a million jobs by destination and state takes about
 * a second however it is indexed (every row is counted), too long for a
 * page.  While someone looks at the overview (asked for in the last
 * minute), this thread recomputes the status document (ops/status.h) and
 * the jobs per minute, on a connection of its own, every 5 s or ten times
 * as long as the last computation took, whichever is longer: on a small
 * ledger the page is at most 5 s old, on a big one the console costs the
 * database at most a tenth of one backend.  The page says how old it is.
 */
#ifndef OUTBOX_CORE_DAEMON_CONSOLE_SNAPSHOT_H
#define OUTBOX_CORE_DAEMON_CONSOLE_SNAPSHOT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "config/config.h"

struct console_snapshot {
	pthread_mutex_t mu;
	pthread_cond_t cv;        /* on CLOCK_MONOTONIC */
	pthread_t thread;
	bool started;
	bool stop;
	const struct cfg *cfg;    /* borrowed */
	PGconn *conn;             /* owned by the thread */
	json_t *doc;              /* {"status", "per_minute"}; owned; NULL before the first */
	int64_t at_ms;            /* now_ms() when doc was made */
	int64_t wanted_ms;        /* now_ms() of the last console_snapshot_get() */
	int64_t interval_ms;
};

/* Starts the thread (cfg borrowed, must outlive it).  Returns 0 or -1. */
int console_snapshot_start(struct console_snapshot *s, const struct cfg *cfg);
/* Stops the thread, frees the document; a snapshot never started is fine. */
void console_snapshot_stop(struct console_snapshot *s);

/*
 * The latest document (new reference) and its age in seconds, waiting up
 * to wait_ms for the first one; NULL when there is none yet.
 */
json_t *console_snapshot_get(struct console_snapshot *s, int wait_ms, double *age_seconds);

#endif
