/*
 * maintenance/maintenance.h: the sweeper and the pruner inside outboxd
 * (docs/maintenance.md).
 *
 * One thread per process with its own connection.  Each task runs on one
 * instance at a time across all the outboxd processes of a database: the
 * instance that holds the task's session-level advisory lock runs it every
 * interval; the others try to take the lock every interval, so when the
 * holder dies (its connection closes and PostgreSQL releases the lock) or
 * stops, another takes over within one interval.  Each run is recorded in
 * outbox.maintenance_runs (outboxctl status shows it).  The sweeper's
 * instance also reads jobs_unfinished_due every second (pending_scan.h), not
 * recorded.  The same thread keeps a consumer-only process's registry row
 * (maintenance_register()).
 */
#ifndef OUTBOX_MAINTENANCE_MAINTENANCE_H
#define OUTBOX_MAINTENANCE_MAINTENANCE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/compiler.h"
#include "config/config.h"
#include "maintenance/pruner.h"

/* pg_try_advisory_lock(MAINTENANCE_LOCK_CLASS, task) */
#define MAINTENANCE_LOCK_CLASS 0x6f627864 /* "obxd" */
#define MAINTENANCE_LOCK_SWEEPER 1
#define MAINTENANCE_LOCK_PRUNER 2
/* Held by the session of an index rebuild while it runs (compact.h). */
#define MAINTENANCE_LOCK_REINDEX 3

struct maintenance;

/* What this process's maintenance thread has done since it started (for
 * metrics); a copy, taken under the thread's lock. */
struct maintenance_counters {
	bool sweeper_leader;          /* this instance holds the sweeper's lock */
	bool pruner_leader;
	unsigned long sweeper_runs;
	unsigned long sweeper_rearmed_total;
	long sweeper_last_rearmed;
	unsigned long pruner_runs;
	struct prune_counts pruned_total;
	struct prune_counts pruned_last;
	unsigned long failed_runs;    /* runs of either task that ended in an error */
};

/*
 * Starts the thread.  cfg is borrowed and must outlive maintenance_stop();
 * instance_id is copied.  Returns 0 and *out, or -1 (logged).
 */
int maintenance_start(const struct cfg *cfg, const char *instance_id,
                      struct maintenance **out) OUTBOX_MUSTCHECK;

/*
 * From now on the thread keeps this process's row in outbox.relay_instances
 * (db/registry.h) with role (a DB_ROLE_* string, kept) and the n
 * destinations in names (copied), for a process whose relay does not
 * register it: a consumer-only one.  Called again (after a reload), it
 * replaces them.  maintenance_stop() deletes the row.  Returns 0, or -1
 * when out of memory.
 */
int maintenance_register(struct maintenance *m, const char *role, const char *const *names,
                         size_t n) OUTBOX_MUSTCHECK;

/* Copies the counters into *out.  m may be NULL (all zero). */
void maintenance_counters_read(struct maintenance *m, struct maintenance_counters *out);

/* The configuration was reloaded: an index rebuild refused for lack of
 * rights is tried again at the next check.  NULL is a no-op; any thread. */
void maintenance_reloaded(struct maintenance *m);

/* Stops the thread (a run in progress finishes its statement), releases
 * the locks and frees m.  NULL is a no-op. */
void maintenance_stop(struct maintenance *m);

#endif
