/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ops/job_actions.c: cancel and retry-now (see ops/job_actions.h).
 */
#include "ops/job_actions.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "db/db.h"
#include "ops/jobs.h"

/* How often cancel --wait looks again: a retry's backoff is seconds, so a
 * job that ends its attempt in PENDING is cancelled long before it is due. */
#define WAIT_POLL_MS 100

static const char cancel_sql[] =
	"SELECT outcome, status, dead_reason FROM outbox.cancel($1, $2)";

static const char retry_sql[] =
	"SELECT outcome, status,"
	"       to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
	"  FROM outbox.retry_now($1)";

static json_t *cell_json(const PGresult *res, int col)
{
	return PQgetisnull(res, 0, col) ? json_null() : json_string(PQgetvalue(res, 0, col));
}

/* Runs sql for the job; *out gets the job id and the row as an object with
 * these keys. */
static int call(PGconn *conn, const char *sql, int nparams, const char *job_id,
                const char *actor, const char *const keys[4], json_t **out, char *err,
                size_t errlen)
{
	const char *params[2] = {job_id, actor};
	PGresult *res = db_query(conn, sql, nparams, params, err, errlen);

	if (res == NULL)
		return OPS_DB;
	if (PQntuples(res) != 1) {
		snprintf(err, errlen, "the database returned %d rows, not 1", PQntuples(res));
		PQclear(res);
		return OPS_DB;
	}
	*out = json_pack("{s:s}", keys[0], job_id);
	for (int i = 1; i < 4; i++)
		json_object_set_new(*out, keys[i], cell_json(res, i - 1));
	PQclear(res);
	return OPS_OK;
}

static const char *outcome_of(const json_t *doc)
{
	return json_string_value(json_object_get(doc, "outcome"));
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The error code and message for an outcome that is not a success. */
static int refusal(const json_t *doc, const char *job_id, const char *verb, char *err,
                   size_t errlen)
{
	const char *outcome = outcome_of(doc);
	const char *status = json_string_value(json_object_get(doc, "status"));
	const char *reason = json_string_value(json_object_get(doc, "dead_reason"));

	if (strcmp(outcome, "not_found") == 0) {
		snprintf(err, errlen, "no job \"%s\"", job_id);
		return OPS_NOT_FOUND;
	}
	if (strcmp(outcome, "claimed") == 0) {
		snprintf(err, errlen, "job \"%s\" is CLAIMED: an attempt is running%s", job_id,
		         strcmp(verb, "cancel") == 0 ? " (--wait cancels it once the attempt ends)"
		                                    : "");
		return OPS_REFUSED;
	}
	if (status != NULL && strcmp(status, "SUCCEEDED") == 0)
		snprintf(err, errlen, "job \"%s\" has already succeeded", job_id);
	else if (reason != NULL)
		snprintf(err, errlen, "job \"%s\" is already DEAD (%s)", job_id, reason);
	else
		snprintf(err, errlen, "job \"%s\" is already DEAD; outboxctl redrive sends it again",
		         job_id);
	return OPS_REFUSED;
}

int ops_cancel(PGconn *conn, const char *job_id, long wait_ms, const char *actor,
               json_t **out, char *err, size_t errlen)
{
	static const char *const keys[4] = {"job_id", "outcome", "status", "dead_reason"};
	int64_t deadline = wait_ms > 0 ? now_ms() + wait_ms : 0;
	int rc;

	*out = NULL;
	if (!ops_is_job_id(job_id)) {
		snprintf(err, errlen, "invalid job id \"%.80s\": must be 64 lower-case hex digits", job_id);
		return OPS_INVALID;
	}
	for (;;) {
		rc = call(conn, cancel_sql, 2, job_id, actor, keys, out, err, errlen);
		if (rc != OPS_OK)
			return rc;
		if (strcmp(outcome_of(*out), "claimed") != 0 || wait_ms == 0
		    || (wait_ms > 0 && now_ms() >= deadline))
			break;
		json_decref(*out);
		*out = NULL;
		sleep_ms(WAIT_POLL_MS);
	}
	if (strcmp(outcome_of(*out), "cancelled") == 0)
		log_info("job cancelled job_id=%s actor=\"%s\"", job_id, actor);
	if (strcmp(outcome_of(*out), "cancelled") == 0
	    || strcmp(outcome_of(*out), "already_cancelled") == 0)
		return OPS_OK;
	return refusal(*out, job_id, "cancel", err, errlen);
}

int ops_retry_now(PGconn *conn, const char *job_id, const char *actor,
                  json_t **out, char *err, size_t errlen)
{
	static const char *const keys[4] = {"job_id", "outcome", "status", "next_attempt_at"};
	int rc;

	*out = NULL;
	if (!ops_is_job_id(job_id)) {
		snprintf(err, errlen, "invalid job id \"%.80s\": must be 64 lower-case hex digits", job_id);
		return OPS_INVALID;
	}
	rc = call(conn, retry_sql, 1, job_id, actor, keys, out, err, errlen);
	if (rc != OPS_OK)
		return rc;
	if (strcmp(outcome_of(*out), "due_now") == 0)
		log_info("job made due now job_id=%s actor=\"%s\"", job_id, actor);
	if (strcmp(outcome_of(*out), "due_now") == 0 || strcmp(outcome_of(*out), "already_due") == 0)
		return OPS_OK;
	return refusal(*out, job_id, "retry", err, errlen);
}
