/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/quarantine.c: poison jobs go DEAD 'CRASHED' (see quarantine.h).
 */
#include "consumer/quarantine.h"

#include <stdio.h>

#include "common/log.h"
#include "consumer/session.h"

bool consumer_quarantine_due(struct consumer_worker *w, const struct ledger_claim *claim)
{
	int limit = w->c->cfg->consumer.quarantine_after_crashes;

	if (claim->crash_count >= limit)
		return true;
	if (claim->crash_count > 0)
		log_warning("job ran before and its process ended during the run (%d of %d crash(es)"
		            " before quarantine) dest=%s job_id=%s attempt=%d", claim->crash_count,
		            limit, w->dest->name, claim->job_id, claim->attempt_count);
	return false;
}

void consumer_quarantine(struct consumer_worker *w, const struct sqs_message *m,
                         const struct ledger_claim *claim)
{
	char why[160], err[512];
	int rc;

	snprintf(why, sizeof(why), "quarantined: %d handler run(s) ended with their process",
	         claim->crash_count);
	rc = ledger_fail(w->conn, claim, "CRASHED", why, err, sizeof(err));
	if (rc < 0) {
		log_warning("could not quarantine the job; it is decided when its lease expires: %s"
		            " job_id=%s", err, claim->job_id);
		consumer_worker_db_failed(w);
		return;
	}
	if (rc == 0) {
		w->counters.lost_claims++;
		log_warning("lost the claim; quarantine not recorded job_id=%s", claim->job_id);
		return;
	}
	w->counters.failed++;
	log_error("job quarantined: its handler ended the process %d time(s); marked DEAD"
	          " CRASHED, not run again (outboxctl redrive runs it again) dest=%s job_id=%s",
	          claim->crash_count, w->dest->name, claim->job_id);
	consumer_worker_delete(w, m);
}
