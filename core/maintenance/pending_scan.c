/*
 * maintenance/pending_scan.c: the scan of jobs_unfinished_due (see
 * pending_scan.h).
 */
#include "maintenance/pending_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "db/db.h"

/*
 * $1 the destinations.  For each, the newest PENDING_SCAN_ROWS live entries
 * from the right end of its range, backwards.  The right end is where new
 * jobs enter; the pages to the left of it take no more inserts and are
 * VACUUM's.  Dead entries do not count towards the limit, so a scan visits
 * every dead entry on its way and stops early only in a backlog: a million
 * unfinished jobs cost a thousand rows a destination.
 *
 * It must be an index scan of jobs_unfinished_due: only an index scan marks
 * entries dead (a bitmap scan does not, a sequential scan reads no index),
 * and only that index gives this order without a sort, which the planner
 * could otherwise prefer on another index of the destination.  The
 * settings hold for the scan's transaction only.
 */
static const char plan_sql[] =
	"BEGIN;"
	" SET LOCAL enable_sort = off;"
	" SET LOCAL enable_bitmapscan = off;"
	" SET LOCAL enable_seqscan = off";
static const char scan_sql[] =
	"SELECT count(*) FROM unnest($1::text[]) AS d(name),"
	" LATERAL (SELECT 1 FROM outbox.jobs j"
	"           WHERE j.destination = d.name AND j.finished_at IS NULL"
	"           ORDER BY j.next_attempt_at DESC LIMIT " PENDING_SCAN_ROWS_TEXT ") x";

/* {"a","b"} (caller frees); NULL when out of memory.  Destination names
 * are [a-z0-9_-] (config validation): nothing to escape. */
static char *names_array(const struct cfg *cfg)
{
	size_t len = 3, used = 1;
	char *out;

	for (size_t i = 0; i < cfg->n_destinations; i++)
		len += strlen(cfg->destinations[i].name) + 3;
	out = malloc(len);
	if (out == NULL)
		return NULL;
	out[0] = '{';
	for (size_t i = 0; i < cfg->n_destinations; i++)
		used += (size_t)snprintf(out + used, len - used, "%s\"%s\"", i > 0 ? "," : "",
		                         cfg->destinations[i].name);
	snprintf(out + used, len - used, "}");
	return out;
}

int pending_scan_run(PGconn *conn, const struct cfg *cfg, char *err, size_t errlen)
{
	char *names = names_array(cfg);
	const char *params[1] = {names};
	PGresult *res = NULL;
	char rberr[64];

	if (names == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (db_exec(conn, plan_sql, err, errlen) == 0)
		res = db_query(conn, scan_sql, 1, params, err, errlen);
	free(names);
	if (res != NULL && db_exec(conn, "COMMIT", err, errlen) == 0) {
		PQclear(res);
		return 0;
	}
	PQclear(res);
	/* err keeps the first failure; a lost connection fails this too. */
	if (PQtransactionStatus(conn) != PQTRANS_IDLE &&
	    db_exec(conn, "ROLLBACK", rberr, sizeof(rberr)) < 0)
		log_debug("could not roll back the scan of jobs_unfinished_due: %s", rberr);
	return -1;
}
