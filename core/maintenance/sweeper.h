/*
 * maintenance/sweeper.h: re-arm the outbox events of due jobs that nothing
 * will wake (docs/maintenance.md, "The sweeper").
 *
 * A job is asleep when it is due (PENDING past next_attempt_at, or CLAIMED
 * with an expired lease), its current event is PUBLISHED, and neither the
 * job nor that event was touched for longer than the horizon: its message
 * was purged, expired or deleted by someone else.  Its event goes back to
 * NEW (same event_id), so the relay publishes a new message; a duplicate is
 * absorbed by the consumer's claim CAS as any other.  A job whose retry is
 * not due, a live lease, a terminal job and a NEW event (already
 * scheduled) are never touched: the statement's WHERE says so and its row
 * locks keep a concurrent claim from slipping in.
 */
#ifndef OUTBOX_MAINTENANCE_SWEEPER_H
#define OUTBOX_MAINTENANCE_SWEEPER_H

#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"
#include "config/config.h"

struct sweeper_result {
	long rearmed;       /* events re-armed, all destinations */
	long destinations;  /* destinations that had at least one */
};

/*
 * One sweep over every destination of cfg (borrowed) on conn (borrowed),
 * in statements of [sweeper] batch_size, at most max_batches per
 * destination.  Logs a warning with the count for each destination that
 * had sleeping jobs.  Returns 0, or -1 with err set (what was re-armed
 * before the error is committed and counted in out).
 */
int sweeper_run(PGconn *conn, const struct cfg *cfg, long max_batches,
                struct sweeper_result *out, char *err, size_t errlen) OUTBOX_MUSTCHECK;

#endif
