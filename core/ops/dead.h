/*
 * ops/dead.h: dead jobs and dead outbox events, for "outboxctl dead" and
 * the console's /dead page.
 */
#ifndef OUTBOX_CORE_OPS_DEAD_H
#define OUTBOX_CORE_OPS_DEAD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <libpq-fe.h>

/* Which dead jobs; every field may be NULL / 0 for "any". */
struct ops_dead_filter {
	const char *destination; /* borrowed */
	const char *reason;      /* borrowed: PERMANENT, STALE, DLQ, ... */
	int limit;               /* at most this many jobs and events; 0: all */
	bool evidence;           /* add each job's outbox.dlq_messages rows */
};

/*
 * {"jobs": [{"job_id", "destination", "dead_reason", "last_error",
 * "attempt_count", "finished_at", "job_type"} (+ "evidence": [...])],
 * "events": [{"event_id", "destination", "dead_reason", "last_error"}]},
 * oldest first (docs/outboxctl.md, "dead").  attempt_count a number,
 * finished_at ISO 8601 UTC, absent values null.  An evidence row:
 * {"id", "destination", "sqs_message_id", "event_id", "receive_count",
 * "outcome", "received_at", "attributes", "body"}.  New reference; NULL
 * with err set.
 */
json_t *ops_dead(PGconn *conn, const struct ops_dead_filter *f, char *err, size_t errlen);

/*
 * Dead jobs counted by destination and reason: [{"destination",
 * "dead_reason", "count"}], most first.  New reference; NULL with err set.
 */
json_t *ops_dead_reasons(PGconn *conn, char *err, size_t errlen);

/*
 * The ids of the dead jobs that f matches (f->limit 0: all of them), oldest
 * first: what "redrive all matching" acts on.  New reference (an array of
 * strings); NULL with err set.
 */
json_t *ops_dead_job_ids(PGconn *conn, const struct ops_dead_filter *f, char *err,
                         size_t errlen);

#endif
