/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_pause.c: outboxctl pause DEST / outboxctl resume DEST
 * (docs/outboxd.md, "Pausing a destination").
 *
 * A row in outbox.paused_destinations pauses DEST for every instance that
 * shares the database: relays claim none of its events, consumers receive
 * and claim nothing for it (each reads the row at most a second old).
 * resume deletes the row and wakes the relays (NOTIFY outbox_new, DEST).
 * Prints what changed: `destination "D" paused` (or `... was already
 * paused`, `... resumed`, `... was not paused`); with --json
 * {"destination": D, "paused": BOOL, "changed": BOOL}.  DEST must be
 * configured in the file, as for enqueue-news.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ctl/commands.h"
#include "db/db.h"

static const char pause_sql[] =
	"INSERT INTO outbox.paused_destinations (destination) VALUES ($1)"
	" ON CONFLICT (destination) DO NOTHING";

/* The relays' lanes sleep up to poll_interval_ms: wake them at once. */
static const char resume_sql[] =
	"WITH d AS (DELETE FROM outbox.paused_destinations WHERE destination = $1 RETURNING 1)"
	" SELECT count(*), pg_notify('outbox_new', $1) FROM d";

static void report(bool json, const char *dest, bool paused, bool changed)
{
	if (json) {
		json_t *doc = json_pack("{s:s, s:b, s:b}", "destination", dest, "paused", paused,
		                        "changed", changed);

		json_dumpf(doc, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(doc);
		return;
	}
	printf("destination \"%s\" %s\n", dest,
	       paused ? (changed ? "paused" : "was already paused")
	              : (changed ? "resumed" : "was not paused"));
}

/* Returns 1 if the row changed, 0 if not, -1 with err. */
static int set_paused(PGconn *conn, const char *dest, bool pause, char *err, size_t errlen)
{
	const char *params[1] = {dest};
	PGresult *res = db_query(conn, pause ? pause_sql : resume_sql, 1, params, err, errlen);
	int rc;

	if (res == NULL)
		return -1;
	rc = pause ? strcmp(PQcmdTuples(res), "0") != 0 : strcmp(PQgetvalue(res, 0, 0), "0") != 0;
	PQclear(res);
	return rc;
}

static int run(struct ctl *ctl, int argc, char **argv, bool pause)
{
	int exit_code = CTL_EXIT_OK;
	char err[1024];
	int rc;

	if (argc != 2 || argv[1][0] == '-') {
		ctl_error("usage: %s DEST", pause ? "pause" : "resume");
		return CTL_EXIT_USAGE;
	}
	const struct cfg *cfg = ctl_config(ctl);
	if (cfg == NULL)
		return CTL_EXIT_CONFIG;
	if (cfg_find_destination(cfg, argv[1]) == NULL) {
		ctl_error("destination \"%s\" is not configured in \"%s\"", argv[1], cfg->file);
		return CTL_EXIT_USAGE;
	}
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	rc = set_paused(conn, argv[1], pause, err, sizeof(err));
	if (rc < 0) {
		ctl_error("could not %s destination \"%s\": %s", pause ? "pause" : "resume", argv[1],
		          err);
		return db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
	}
	report(ctl->json, argv[1], pause, rc == 1);
	return CTL_EXIT_OK;
}

int cmd_pause(struct ctl *ctl, int argc, char **argv)
{
	return run(ctl, argc, argv, true);
}

int cmd_resume(struct ctl *ctl, int argc, char **argv)
{
	return run(ctl, argc, argv, false);
}
