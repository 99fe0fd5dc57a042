/*
 * ops/redrive.h: redrive one job, for "outboxctl redrive" and the
 * console's redrive actions.
 *
 * One transaction per job (consumer/ledger.h, ledger_redrive): lock the
 * job, refuse it under a live lease, raise redrive_generation, reset it to
 * PENDING and insert the outbox event of the new generation, which the
 * relay then publishes.  Messages of older generations can no longer claim
 * the job (docs/consumer.md).
 */
#ifndef OUTBOX_CORE_OPS_REDRIVE_H
#define OUTBOX_CORE_OPS_REDRIVE_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"

struct ops_redrive_result {
	bool changed;       /* false: only_dead and the job was not DEAD */
	int generation;     /* the new redrive_generation when changed */
	char event_id[128]; /* the new event when changed */
	char status[16];    /* the job's status before (PENDING, ..., DEAD) */
};

/* Prepares the statements a redrive runs, once per connection.
 * Returns 0 or -1 with err set. */
int ops_redrive_prepare(PGconn *conn, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Redrives job_id in a transaction of its own.  With only_dead a job that is
 * not DEAD is left as it is (out->changed false): the console's button
 * then redrives once however often a request is repeated.  Returns 0, or -1
 * with err set to a message for the operator ("no such job", "job is
 * claimed under a live lease; try again later", or the database's).
 */
int ops_redrive_job(PGconn *conn, const char *job_id, bool only_dead,
                    struct ops_redrive_result *out, char *err, size_t errlen) OUTBOX_MUSTCHECK;

#endif
