/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ops/redrive.c: see ops/redrive.h.
 */
#include "ops/redrive.h"

#include <stdio.h>
#include <string.h>

#include "consumer/ledger.h"
#include "db/db.h"

/* Taken before ledger_redrive() locks the row again: the same lock, so the
 * status read is the one the redrive acts on. */
static const char status_sql[] =
	"SELECT status FROM outbox.jobs WHERE job_id = $1 FOR UPDATE";

int ops_redrive_prepare(PGconn *conn, char *err, size_t errlen)
{
	return ledger_prepare(conn, err, errlen);
}

/* 1: go on, 0: no such job, 2: not dead (left alone), -1: error. */
static int read_status(PGconn *conn, const char *job_id, bool only_dead,
                       struct ops_redrive_result *out, char *err, size_t errlen)
{
	const char *params[1] = {job_id};
	PGresult *res = db_query(conn, status_sql, 1, params, err, errlen);
	int rc = 1;

	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1)
		rc = 0;
	else
		snprintf(out->status, sizeof(out->status), "%s", PQgetvalue(res, 0, 0));
	if (rc == 1 && only_dead && strcmp(out->status, "DEAD") != 0)
		rc = 2;
	PQclear(res);
	return rc;
}

int ops_redrive_job(PGconn *conn, const char *job_id, bool only_dead,
                    struct ops_redrive_result *out, char *err, size_t errlen)
{
	char dberr[512], rberr[256];
	int rc;

	memset(out, 0, sizeof(*out));
	if (db_exec(conn, "BEGIN", dberr, sizeof(dberr)) < 0) {
		snprintf(err, errlen, "could not begin: %s", dberr);
		return -1;
	}
	rc = read_status(conn, job_id, only_dead, out, dberr, sizeof(dberr));
	if (rc == 1)
		rc = ledger_redrive(conn, job_id, &out->generation, out->event_id,
		                    sizeof(out->event_id), dberr, sizeof(dberr));
	if (rc == 1 && db_exec(conn, "COMMIT", dberr, sizeof(dberr)) == 0) {
		out->changed = true;
		return 0;
	}
	if (db_exec(conn, "ROLLBACK", rberr, sizeof(rberr)) < 0 && rc >= 0) {
		snprintf(dberr, sizeof(dberr), "%s", rberr);
		rc = -1;
	}
	if (rc == 2)
		return 0;
	if (rc == 0)
		snprintf(err, errlen, "no such job");
	else if (rc == -2)
		snprintf(err, errlen, "job is claimed under a live lease; try again later");
	else
		snprintf(err, errlen, "%s", dberr);
	return -1;
}
