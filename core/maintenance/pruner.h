/*
 * maintenance/pruner.h: delete what [retention] allows (docs/maintenance.md,
 * "Retention").
 *
 * Bounded batched deletes, oldest first, each batch found through a partial
 * index and committed on its own, so no statement holds many locks or
 * runs long and autovacuum (thresholds set by V5) reclaims the space
 * between runs.  Classes:
 *   - SUCCEEDED / DEAD jobs finished longer ago than their retention, with
 *     all their outbox events (an event never outlives its job);
 *   - PUBLISHED events (published_at) and DEAD events (created_at) older
 *     than events_seconds whose job is terminal or was redriven past them;
 *   - dead-letter evidence received longer ago than dlq_messages_seconds.
 * A non-terminal job and its current event are never deleted.  A retention
 * of 0 keeps that class for ever.
 */
#ifndef OUTBOX_MAINTENANCE_PRUNER_H
#define OUTBOX_MAINTENANCE_PRUNER_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"
#include "config/config.h"

/* Rows deleted (or, for a dry run, that would be). */
struct prune_counts {
	long succeeded_jobs;
	long dead_jobs;
	long events;
	long dlq_messages;
};

/*
 * Prunes with cfg's [retention] (borrowed) on conn (borrowed).  At most
 * max_batches statements per class (< 0: until nothing is left).  dry_run
 * counts without deleting.  Returns 0, or -1 with err set; what was deleted
 * before an error is committed and counted in out.
 */
int pruner_run(PGconn *conn, const struct cfg *cfg, bool dry_run, long max_batches,
               struct prune_counts *out, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* {"succeeded_jobs": N, "dead_jobs": N, "events": N, "dlq_messages": N};
 * caller frees. NULL when out of memory. */
char *prune_counts_json(const struct prune_counts *c);

#endif
