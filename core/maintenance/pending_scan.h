/*
 * maintenance/pending_scan.h: read outbox.jobs_unfinished_due once a second,
 * so that its file stops growing (docs/maintenance.md, "Keeping the
 * indexes compact").
 *
 * A completion leaves the unfinished version of its job behind, and that
 * version's entry in the partial index jobs_unfinished_due (V14; the claim
 * before it is an update in place, which keeps the entry live): the
 * completion reaches the row by its key, so nothing reads the index there.
 * A B-tree entry whose row is dead is removed by VACUUM, or, sooner, by the
 * insert that finds its page full, but only when an index scan has marked
 * the entry dead on an earlier visit.  New jobs enter at the right end of
 * each destination's range, on pages that no scan reads, so every page
 * filled needed a split and the
 * index's size was set by how many jobs arrived between two vacuums: a
 * high-water mark that grew whenever one vacuum came late.  This scan
 * reads each destination's range from its right end, marks the entries of
 * finished jobs dead, and the next insert on a full page frees them instead
 * of splitting it; the index then holds about what is unfinished.
 *
 * The relay's polling does the same for outbox_events_new_due.
 */
#ifndef OUTBOX_MAINTENANCE_PENDING_SCAN_H
#define OUTBOX_MAINTENANCE_PENDING_SCAN_H

#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"
#include "config/config.h"

/* Between two scans, by the instance that runs the sweeper. */
#define PENDING_SCAN_INTERVAL_MS 1000
/* Live entries read per destination and scan (the text for the SQL). */
#define PENDING_SCAN_ROWS_TEXT "1000"

/* One scan, in a transaction of its own, on conn (borrowed, idle) of the
 * destinations of cfg (borrowed).
 * Returns 0, or -1 with err set. */
int pending_scan_run(PGconn *conn, const struct cfg *cfg, char *err, size_t errlen)
	OUTBOX_MUSTCHECK;

#endif
