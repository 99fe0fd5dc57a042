/*
 * maintenance/compact.h: keep the B-tree indexes of the outbox schema
 * compact (docs/maintenance.md, "Keeping the indexes compact").
 *
 * An index keyed by a random value (the job id) keeps the size of the
 * largest number of entries it ever held: its keys are deleted where they
 * were inserted, a leaf page is almost never entirely empty, and B-tree
 * pages are never merged.  Every few pruner runs this estimates each
 * index's compact size from the catalog (reltuples and the key columns'
 * pg_stats avg_width) and, when an index is reindex_bloat_ratio times its
 * estimate and at least reindex_min_bytes, rebuilds it with REINDEX INDEX
 * CONCURRENTLY on a connection of its own, one index at a time across all
 * instances (an advisory lock that the rebuild's session holds), without
 * blocking the maintenance thread: the rebuild's result is collected at a
 * later pruner run.
 */
#ifndef OUTBOX_CORE_MAINTENANCE_COMPACT_H
#define OUTBOX_CORE_MAINTENANCE_COMPACT_H

#include <stdbool.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "config/config.h"

struct compact;

/*
 * New state; lock_class and lock_key name the advisory lock a rebuild's
 * session takes (pg_try_advisory_lock(lock_class, lock_key)).  Caller frees
 * with compact_free().  NULL when out of memory.
 */
struct compact *compact_new(int lock_class, int lock_key);

/*
 * Closes a rebuild's connection without cancelling it: the server
 * finishes the REINDEX (it notices the closed socket only when it
 * answers) and releases the lock then.  NULL is a no-op.
 */
void compact_free(struct compact *c);

/* After a reload: a rebuild refused for lack of rights is tried again. */
void compact_reset(struct compact *c);

/*
 * One step, at a pruner run, on conn (borrowed: the maintenance thread's)
 * with cfg's [retention] and conninfo (borrowed): collects a rebuild that
 * finished, or every few runs estimates the indexes and may start one.
 * Problems are logged here.  Returns what was checked for the run's record
 * ({"checked": N, "bloated": N, "rebuilding": NAME or null}, a new
 * reference), or NULL when this run checked nothing.
 */
json_t *compact_step(struct compact *c, PGconn *conn, const struct cfg *cfg);

/*
 * The bytes of a B-tree index freshly built over `tuples` entries whose
 * columns are `columns` (borrowed): "WIDTH:ALIGN,..." in index order, each
 * column's average width in bytes and its alignment (c, s, i, d; a short
 * varlena is c), e.g. "65:c" for a 64-character text key.  fillfactor in
 * percent, block in bytes.  An estimate: docs/maintenance.md gives its
 * measured error.
 */
double compact_size(double tuples, const char *columns, int fillfactor, int block);

#endif
