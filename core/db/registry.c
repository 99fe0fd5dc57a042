/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * db/registry.c: the process registry's statements (see registry.h).
 */
#include "db/registry.h"

#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "db/db.h"

/*
 * Register or refresh, and forget the idle marks (migrations/V7) of
 * instances whose registry row went stale (they crashed): producers would
 * otherwise notify for a lane that no longer listens.  Role and
 * destinations are written on every beat: a reload changes the
 * destinations, and a later process that reuses a dead one's "host:pid"
 * takes its row over.
 */
static const char beat_sql[] =
	"WITH r AS ("
	"  INSERT INTO outbox.relay_instances (instance_id, role, destinations)"
	"  VALUES ($1, $2, $3::jsonb)"
	"  ON CONFLICT (instance_id) DO UPDATE"
	"    SET role = EXCLUDED.role, destinations = EXCLUDED.destinations,"
	"        heartbeat_at = now()"
	"  RETURNING 1)"
	" DELETE FROM outbox.relay_idle i"
	"  WHERE i.instance_id <> $1 AND NOT EXISTS ("
	"    SELECT 1 FROM outbox.relay_instances ri WHERE ri.instance_id = i.instance_id"
	"       AND ri.heartbeat_at > now() - $4::integer * interval '1 second')";

/* ["a","b"] as compact JSON text; caller frees; NULL when out of memory. */
static char *names_json(const char *const *names, size_t n)
{
	json_t *arr = json_array();
	char *text;

	for (size_t i = 0; arr != NULL && i < n; i++) {
		if (json_array_append_new(arr, json_string(names[i])) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	text = arr != NULL ? json_dumps(arr, JSON_COMPACT) : NULL;
	json_decref(arr);
	return text;
}

int db_registry_beat(PGconn *conn, const char *instance_id, const char *role,
                     const char *const *names, size_t n, char *err, size_t errlen)
{
	char *json = names_json(names, n);
	char fresh_s[16];
	PGresult *res;

	if (json == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(fresh_s, sizeof(fresh_s), "%d", DB_REGISTRY_FRESH_SECONDS);
	const char *params[4] = {instance_id, role, json, fresh_s};
	res = db_query(conn, beat_sql, 4, params, err, errlen);
	free(json);
	if (res == NULL)
		return -1;
	PQclear(res);
	return 0;
}

int db_registry_leave(PGconn *conn, const char *instance_id, char *err, size_t errlen)
{
	const char *params[1] = {instance_id};
	PGresult *res = db_query(conn,
	                         "WITH i AS (DELETE FROM outbox.relay_idle WHERE instance_id = $1)"
	                         " DELETE FROM outbox.relay_instances WHERE instance_id = $1",
	                         1, params, err, errlen);

	if (res == NULL)
		return -1;
	PQclear(res);
	return 0;
}
