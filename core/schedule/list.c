/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * schedule/list.c: see schedule/list.h.
 */
#include "schedule/list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "schedule/slots.h"

static const char state_sql[] =
	"SELECT name,"
	"       to_char(last_slot AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), last_job_id,"
	"       instance_id, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
	"       floor(extract(epoch FROM now()))::bigint"
	"  FROM outbox.schedules RIGHT JOIN (SELECT 1) AS one ON true";

static json_t *str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

/* The row of res for name, or -1. */
static int row_of(const PGresult *res, const char *name)
{
	for (int r = 0; r < PQntuples(res); r++) {
		if (!PQgetisnull(res, r, 0) && strcmp(PQgetvalue(res, r, 0), name) == 0)
			return r;
	}
	return -1;
}

static json_t *cell(const PGresult *res, int row, int col)
{
	return row < 0 || PQgetisnull(res, row, col) ? json_null()
	                                             : json_string(PQgetvalue(res, row, col));
}

int schedule_list(PGconn *conn, const struct cfg *cfg, json_t **out, char *err, size_t errlen)
{
	static const char *const modes[] = {"last", "none", "all"};
	PGresult *res = db_query(conn, state_sql, 0, NULL, err, errlen);
	int64_t now;

	*out = NULL;
	if (res == NULL)
		return -1;
	now = strtoll(PQgetvalue(res, 0, 5), NULL, 10);
	*out = json_array();
	for (size_t i = 0; i < cfg->n_schedules; i++) {
		const struct cfg_schedule *s = &cfg->schedules[i];
		char next_text[SCHEDULE_SLOT_TEXT_LEN];
		int r = row_of(res, s->name);
		int64_t next;

		if (schedule_next_slot(conn, s, now, &next, err, errlen) < 0) {
			json_decref(*out);
			*out = NULL;
			PQclear(res);
			return -1;
		}
		schedule_slot_text(next, next_text);
		json_array_append_new(*out, json_pack(
			"{s:s, s:o, s:o, s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o}",
			"name", s->name, "cron", str_or_null(s->cron),
			"every", s->every_seconds > 0 ? json_integer(s->every_seconds) : json_null(),
			"timezone", str_or_null(s->timezone), "job_type", s->job_type,
			"destination", s->destination, "catch_up", modes[s->catch_up_mode],
			"last_slot", cell(res, r, 1), "last_job_id", cell(res, r, 2),
			"last_enqueued_by", cell(res, r, 3), "last_enqueued_at", cell(res, r, 4),
			"next_slot", next >= 0 ? json_string(next_text) : json_null()));
	}
	PQclear(res);
	return 0;
}
