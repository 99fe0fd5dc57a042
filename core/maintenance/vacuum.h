/*
 * maintenance/vacuum.h: VACUUM outbox.jobs and outbox.outbox_events on the
 * pruner's schedule (docs/maintenance.md, "Keeping the indexes compact").
 *
 * A time-ordered index (jobs_created, outbox_events_published_at) empties
 * whole pages at its left end, where the pruner deletes and no insert lands
 * again.  Those pages come back only when VACUUM unlinks and recycles them,
 * so the file grows to hold the most rows ever deleted between two vacuums
 * of the table.  Left to autovacuum that interval follows its clock (its
 * naptime, which table its worker takes first) and the index steps up
 * whenever one interval is longer than any before.  The pruner's instance
 * therefore vacuums a table itself after every vacuum_after_rows rows the
 * pruner deleted from it, which bounds the interval by rows.  Autovacuum
 * still runs as before (statistics, wraparound); SKIP_LOCKED skips a table
 * it is vacuuming at that moment, which does the same work.
 *
 * The VACUUM runs on a connection of its own, one at a time, sent without
 * waiting: a large table does not hold the sweeper, and the result is
 * collected at a later pruner run.  Its session is throttled like
 * autovacuum (vacuum_cost_delay 2 ms), and it never truncates the file
 * (TRUNCATE false: that takes an ACCESS EXCLUSIVE lock, and the tail it
 * gives back is refilled by new rows before the next VACUUM).
 */
#ifndef OUTBOX_CORE_MAINTENANCE_VACUUM_H
#define OUTBOX_CORE_MAINTENANCE_VACUUM_H

#include <jansson.h>
#include <libpq-fe.h>

#include "config/config.h"

struct table_vacuum;

/* New state, nothing deleted yet.  Caller frees with table_vacuum_free();
 * NULL when out of memory. */
struct table_vacuum *table_vacuum_new(void);

/*
 * Closes a VACUUM's connection without cancelling it: the server finishes
 * the VACUUM (it notices the closed socket only when it answers).  NULL is
 * a no-op.
 */
void table_vacuum_free(struct table_vacuum *v);

/* After a reload: a table this role was found unable to vacuum is tried again. */
void table_vacuum_reset(struct table_vacuum *v);

/*
 * One step, at a pruner run that deleted jobs_deleted rows of outbox.jobs
 * and events_deleted of outbox.outbox_events: collects a VACUUM that
 * finished, then starts one of each table whose deleted rows since its last
 * VACUUM reached cfg's [retention] vacuum_after_rows (0: never).  conn
 * (borrowed, the maintenance thread's) checks this role's right to vacuum,
 * once; cfg is borrowed.  Problems are logged here.  Returns the tables a
 * VACUUM started for at this run ({"started": ["jobs", ...]}, a new
 * reference), or NULL when none started.
 */
json_t *table_vacuum_step(struct table_vacuum *v, PGconn *conn, const struct cfg *cfg,
                          long jobs_deleted, long events_deleted);

#endif
