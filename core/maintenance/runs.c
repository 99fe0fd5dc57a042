/*
 * maintenance/runs.c: outbox.maintenance_runs (see runs.h).
 */
#include "maintenance/runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

static const char record_sql[] =
	"INSERT INTO outbox.maintenance_runs (task, instance_id, started_at, finished_at, ok,"
	"                                     counts, error)"
	" VALUES ($1, $2, to_timestamp($3::float8), now(), $4::boolean, $5::jsonb, $6)"
	" ON CONFLICT (task) DO UPDATE SET instance_id = EXCLUDED.instance_id,"
	"       started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at,"
	"       ok = EXCLUDED.ok, counts = EXCLUDED.counts, error = EXCLUDED.error,"
	"       runs = outbox.maintenance_runs.runs + 1";

static const char load_sql[] =
	"SELECT task, json_build_object('instance_id', instance_id,"
	"         'started_at', to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
	"         'finished_at', to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
	"         'age_seconds', round(extract(epoch FROM now() - finished_at)::numeric, 3),"
	"         'ok', ok, 'counts', counts, 'error', error, 'runs', runs)::text"
	"  FROM outbox.maintenance_runs";

int maintenance_record_run(PGconn *conn, const struct maintenance_run *run,
                           char *err, size_t errlen)
{
	char started[32];
	const char *params[6] = {run->task, run->instance_id, started, run->ok ? "true" : "false",
	                         run->counts_json != NULL ? run->counts_json : "{}", run->error};
	PGresult *res;

	snprintf(started, sizeof(started), "%.3f", run->started_at);
	res = db_query(conn, record_sql, 6, params, err, errlen);
	PQclear(res);
	return res != NULL ? 0 : -1;
}

json_t *maintenance_runs_load(PGconn *conn, char *err, size_t errlen)
{
	PGresult *res = db_query(conn, load_sql, 0, NULL, err, errlen);
	json_t *out;

	if (res == NULL)
		return NULL;
	out = json_pack("{s:n, s:n}", "sweeper", "pruner");
	for (int i = 0; out != NULL && i < PQntuples(res); i++) {
		json_t *run = json_loads(PQgetvalue(res, i, 1), 0, NULL);

		if (run != NULL)
			json_object_set_new(out, PQgetvalue(res, i, 0), run);
	}
	PQclear(res);
	if (out == NULL)
		snprintf(err, errlen, "out of memory");
	return out;
}
