/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_redrive.c: outboxctl redrive JOB_ID... (docs/outboxctl.md).
 *
 * One transaction per job (ledger_redrive): lock the job, refuse it under
 * a live lease, raise redrive_generation, reset it to PENDING (attempt_count
 * 0, due now, no claim, no dead_reason) and insert the outbox event of the
 * new generation, which the relay then publishes.  Messages of older
 * generations can no longer claim the job (docs/consumer.md).  Unknown ids
 * and leased jobs are reported and skipped; the exit code is then 1.
 * Prints "JOB_ID EVENT_ID" per redriven job, or with --json
 * {"redriven": [{"job_id","redrive_generation","event_id"}...],
 *  "failed": [{"job_id","error"}...]}.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ctl/commands.h"
#include "db/db.h"
#include "consumer/ledger.h"

/* Returns 0, or -1 with err set (a message for the operator). */
static int redrive_one(PGconn *conn, const char *job_id, int *gen, char *event_id,
                       size_t event_id_len, char *err, size_t errlen)
{
	char dberr[512], rberr[256];
	int rc;

	if (db_exec(conn, "BEGIN", dberr, sizeof(dberr)) < 0) {
		snprintf(err, errlen, "could not begin: %s", dberr);
		return -1;
	}
	rc = ledger_redrive(conn, job_id, gen, event_id, event_id_len, dberr, sizeof(dberr));
	if (rc == 1 && db_exec(conn, "COMMIT", dberr, sizeof(dberr)) == 0)
		return 0;
	if (db_exec(conn, "ROLLBACK", rberr, sizeof(rberr)) < 0 && rc >= 0) {
		snprintf(dberr, sizeof(dberr), "%s", rberr);
		rc = -1;
	}
	if (rc == 0)
		snprintf(err, errlen, "no such job");
	else if (rc == -2)
		snprintf(err, errlen, "job is claimed under a live lease; try again later");
	else
		snprintf(err, errlen, "%s", dberr);
	return -1;
}

static void report(bool json, json_t *redriven, json_t *failed, const char *job_id, int rc,
                   int gen, const char *event_id, const char *err)
{
	if (rc < 0) {
		ctl_error("could not redrive job \"%s\": %s", job_id, err);
		json_array_append_new(failed, json_pack("{s:s, s:s}", "job_id", job_id, "error", err));
		return;
	}
	if (json)
		json_array_append_new(redriven, json_pack("{s:s, s:i, s:s}", "job_id", job_id,
		                                          "redrive_generation", gen,
		                                          "event_id", event_id));
	else
		printf("%s %s\n", job_id, event_id);
}

int cmd_redrive(struct ctl *ctl, int argc, char **argv)
{
	int exit_code = CTL_EXIT_OK;
	char err[1024], dberr[512];

	if (argc < 2 || argv[1][0] == '-') {
		ctl_error("usage: redrive JOB_ID...");
		return CTL_EXIT_USAGE;
	}
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	if (ledger_prepare(conn, dberr, sizeof(dberr)) < 0) {
		ctl_error("could not prepare statements: %s", dberr);
		return db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
	}
	json_t *redriven = json_array(), *failed = json_array();
	for (int i = 1; i < argc; i++) {
		char event_id[256] = "";
		int gen = 0;
		int rc = redrive_one(conn, argv[i], &gen, event_id, sizeof(event_id), err, sizeof(err));

		report(ctl->json, redriven, failed, argv[i], rc, gen, event_id, err);
		if (rc < 0)
			exit_code = db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
	}
	if (ctl->json) {
		json_t *doc = json_pack("{s:o, s:o}", "redriven", redriven, "failed", failed);

		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	} else {
		json_decref(redriven);
		json_decref(failed);
	}
	return exit_code;
}
