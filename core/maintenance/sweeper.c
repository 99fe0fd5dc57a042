/*
 * maintenance/sweeper.c: the sweep statement (see sweeper.h).
 */
#include "maintenance/sweeper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "db/db.h"

/*
 * $1 destination, $2 horizon in seconds, $3 batch size.  The job rows are
 * locked too (FOR UPDATE OF j, e): a claim committed after our snapshot
 * makes the row fail the recheck instead of being re-armed under a live
 * lease.  SKIP LOCKED: a row a consumer or relay holds right now is being
 * worked on, so it is not asleep.  Both kinds come from jobs_unfinished_due,
 * by its order: a claim takes due jobs only, so a CLAIMED job's
 * next_attempt_at is no later than its claim, which is earlier than its
 * lease's end; a lease that ended before the horizon belongs to a job due
 * before it.
 */
static const char sweep_sql[] =
	"WITH c AS ("
	"  SELECT e.event_id FROM outbox.jobs j"
	"    JOIN outbox.outbox_events e"
	"      ON e.job_id = j.job_id AND e.redrive_generation = j.redrive_generation"
	"   WHERE j.destination = $1 AND j.finished_at IS NULL"
	"     AND j.next_attempt_at < now() - make_interval(secs => $2::float8)"
	"     AND (j.status = 'PENDING'"
	"          OR j.status = 'CLAIMED'"
	"          AND j.lease_until < now() - make_interval(secs => $2::float8))"
	"     AND j.updated_at < now() - make_interval(secs => $2::float8)"
	"     AND e.status = 'PUBLISHED'"
	"     AND e.published_at < now() - make_interval(secs => $2::float8)"
	"   LIMIT $3::integer"
	"   FOR UPDATE OF j, e SKIP LOCKED)"
	" UPDATE outbox.outbox_events e SET status = 'NEW', published_at = NULL,"
	"       next_attempt_at = now(), claimed_by = NULL, claim_until = NULL,"
	"       last_error = 're-armed by the sweeper: the job was due and nothing touched it for '"
	"                    || $2 || ' s'"
	"  FROM c WHERE e.event_id = c.event_id";

/* Re-arms the sleeping jobs of one destination, counting them in *total
 * (committed batch by batch, so counted even when a later one fails). */
static int sweep_destination(PGconn *conn, const char *dest, int horizon, int batch,
                             long max_batches, long *total, char *err, size_t errlen)
{
	char h[16], b[16];
	const char *params[3] = {dest, h, b};

	snprintf(h, sizeof(h), "%d", horizon);
	snprintf(b, sizeof(b), "%d", batch);
	for (long i = 0; i < max_batches; i++) {
		PGresult *res = db_query(conn, sweep_sql, 3, params, err, errlen);
		long n;

		if (res == NULL)
			return -1;
		n = strtol(PQcmdTuples(res), NULL, 10);
		PQclear(res);
		*total += n;
		if (n < batch)
			break;
	}
	return 0;
}

int sweeper_run(PGconn *conn, const struct cfg *cfg, long max_batches,
                struct sweeper_result *out, char *err, size_t errlen)
{
	int horizon = cfg_sweeper_horizon_seconds(cfg);

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const char *dest = cfg->destinations[i].name;
		long n = 0;
		int rc = sweep_destination(conn, dest, horizon, cfg->sweeper.batch_size, max_batches,
		                           &n, err, errlen);

		if (n > 0) {
			out->rearmed += n;
			out->destinations++;
			log_warning("sweeper re-armed %ld outbox events of due jobs that no delivery "
			            "touched for %d s dest=%s", n, horizon, dest);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}
