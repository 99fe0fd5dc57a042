/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ops/pause.c: see ops/pause.h.
 */
#include "ops/pause.h"

#include <string.h>

#include "db/db.h"

static const char pause_sql[] =
	"INSERT INTO outbox.paused_destinations (destination) VALUES ($1)"
	" ON CONFLICT (destination) DO NOTHING";

/* The relays' lanes sleep up to poll_interval_ms: wake them at once, but
 * only when the destination was paused (a repeated resume, such as the
 * console's button pressed twice, sends nothing). */
static const char resume_sql[] =
	"WITH d AS (DELETE FROM outbox.paused_destinations WHERE destination = $1 RETURNING 1),"
	"     n AS (SELECT count(*) AS n FROM d)"
	" SELECT n, CASE WHEN n > 0 THEN pg_notify('outbox_new', $1) END FROM n";

json_t *ops_paused_destinations(PGconn *conn, char *err, size_t errlen)
{
	PGresult *res = db_query(conn, "SELECT destination FROM outbox.paused_destinations", 0,
	                         NULL, err, errlen);
	json_t *arr;

	if (res == NULL)
		return NULL;
	arr = json_array();
	for (int i = 0; arr != NULL && i < PQntuples(res); i++)
		json_array_append_new(arr, json_string(PQgetvalue(res, i, 0)));
	PQclear(res);
	return arr;
}

int ops_set_paused(const struct cfg *cfg, PGconn *conn, const char *dest, bool pause,
                   char *err, size_t errlen)
{
	const char *params[1] = {dest};
	PGresult *res;
	int rc;

	if (cfg_find_destination(cfg, dest) == NULL)
		return OPS_PAUSE_NOT_CONFIGURED;
	res = db_query(conn, pause ? pause_sql : resume_sql, 1, params, err, errlen);
	if (res == NULL)
		return OPS_PAUSE_FAILED;
	rc = pause ? strcmp(PQcmdTuples(res), "0") != 0 : strcmp(PQgetvalue(res, 0, 0), "0") != 0;
	PQclear(res);
	return rc;
}
