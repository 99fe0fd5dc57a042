/*
 * ops/status.h: what "outboxctl status" prints and the console's overview
 * shows, read once here: per destination the job and outbox counts by
 * state, the ages of the oldest NEW event and oldest due PENDING job,
 * whether it is paused, its queue's and DLQ's depth; the registered
 * instances; the sweeper's and pruner's last runs.  A service that is down
 * costs only its part: every failure is a line of the document's "errors".
 */
#ifndef OUTBOX_CORE_OPS_STATUS_H
#define OUTBOX_CORE_OPS_STATUS_H

#include <stdbool.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "config/config.h"

/* ops_status()'s *rc: everything read, the counts missing, or only the
 * instances or maintenance runs missing. */
enum ops_status_rc {
	OPS_STATUS_OK = 0,
	OPS_STATUS_NO_INSTANCES = -1,
	OPS_STATUS_NO_COUNTS = -2,
};

/*
 * The status document (docs/outboxctl.md, "status"):
 * {"destinations": {NAME: {"jobs", "outbox", "oldest_new_age_seconds",
 * "oldest_due_pending_age_seconds", "paused", "queue_depth", "dlq_depth"}},
 * "totals", "maintenance", "instances", "errors"}.  Configured destinations
 * come first, then any other found in the database.  conn (borrowed) NULL
 * means the database part is not read (no connection, a schema behind the
 * binary's); unread_why (borrowed), a whole message, then says why.  With
 * queues false the SQS depths are left out (not even null).  *rc is one of
 * enum ops_status_rc, *unavailable true when the database connection was
 * the problem.  New reference; NULL only out of memory.
 */
json_t *ops_status(const struct cfg *cfg, PGconn *conn, const char *unread_why, bool queues,
                   int *rc, bool *unavailable);

/*
 * Jobs finished per minute over the last hour: {"minutes": 60, "succeeded":
 * [n x 60], "dead": [n x 60]}, oldest minute first, the last one the
 * current (partial) minute.  New reference; NULL with err set.
 */
json_t *ops_jobs_per_minute(PGconn *conn, char *err, size_t errlen);

#endif
