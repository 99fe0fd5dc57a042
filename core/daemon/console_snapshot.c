/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/console_snapshot.c: see daemon/console_snapshot.h.
 */
#include "daemon/console_snapshot.h"

#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "db/db.h"
#include "ops/status.h"

#define SNAPSHOT_MIN_INTERVAL_MS 5000
/* Nobody asked for this long: stop counting. */
#define SNAPSHOT_IDLE_MS 60000

/* One status document and the jobs per minute; drops a lost connection. */
static json_t *compute(struct console_snapshot *s)
{
	char err[1024] = "", why[1100] = "";
	json_t *status, *pm = NULL;
	bool unavailable = false;
	int rc;

	if (s->conn == NULL)
		s->conn = db_connect(s->cfg->database.conninfo, "outboxd-console", err, sizeof(err));
	if (s->conn == NULL)
		snprintf(why, sizeof(why), "could not connect to the database: %s", err);
	status = ops_status(s->cfg, s->conn, why, true, &rc, &unavailable);
	if (status == NULL)
		return NULL;
	if (rc != OPS_STATUS_NO_COUNTS) {
		pm = ops_jobs_per_minute(s->conn, err, sizeof(err));
		if (pm == NULL)
			json_array_append_new(json_object_get(status, "errors"),
			                      json_sprintf("could not read the jobs per minute: %s", err));
	}
	if (s->conn != NULL && (unavailable || PQstatus(s->conn) != CONNECTION_OK)) {
		PQfinish(s->conn);
		s->conn = NULL;
	}
	return json_pack("{s:o, s:o}", "status", status, "per_minute", pm != NULL ? pm : json_null());
}

static void *run(void *arg)
{
	struct console_snapshot *s = arg;

	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		int64_t now = now_ms();
		bool wanted = s->wanted_ms > 0 && now - s->wanted_ms < SNAPSHOT_IDLE_MS;
		bool due = s->doc == NULL || now - s->at_ms >= s->interval_ms;
		struct timespec deadline;

		if (wanted && due) {
			json_t *doc;

			pthread_mutex_unlock(&s->mu);
			doc = compute(s);
			pthread_mutex_lock(&s->mu);
			if (doc != NULL) {
				int64_t took = now_ms() - now;

				json_decref(s->doc);
				s->doc = doc;
				s->at_ms = now_ms();
				s->interval_ms = took * 10 > SNAPSHOT_MIN_INTERVAL_MS
				                 ? took * 10 : SNAPSHOT_MIN_INTERVAL_MS;
			}
			pthread_cond_broadcast(&s->cv);
			continue;
		}
		monotonic_deadline(&deadline, 500);
		pthread_cond_timedwait(&s->cv, &s->mu, &deadline);
	}
	pthread_mutex_unlock(&s->mu);
	if (s->conn != NULL)
		PQfinish(s->conn);
	s->conn = NULL;
	return NULL;
}

int console_snapshot_start(struct console_snapshot *s, const struct cfg *cfg)
{
	pthread_condattr_t ca;

	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->interval_ms = SNAPSHOT_MIN_INTERVAL_MS;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&s->thread, NULL, run, s) != 0) {
		log_error("console: could not start the overview's thread");
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		return -1;
	}
	s->started = true;
	return 0;
}

void console_snapshot_stop(struct console_snapshot *s)
{
	if (!s->started)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	json_decref(s->doc);
	s->doc = NULL;
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	s->started = false;
}

json_t *console_snapshot_get(struct console_snapshot *s, int wait_ms, double *age_seconds)
{
	struct timespec deadline;
	json_t *doc;

	monotonic_deadline(&deadline, wait_ms);
	pthread_mutex_lock(&s->mu);
	s->wanted_ms = now_ms();
	pthread_cond_broadcast(&s->cv);
	while (s->doc == NULL && !s->stop) {
		if (pthread_cond_timedwait(&s->cv, &s->mu, &deadline) != 0)
			break;
	}
	doc = json_incref(s->doc);
	*age_seconds = doc != NULL ? (double)(now_ms() - s->at_ms) / 1000.0 : 0;
	pthread_mutex_unlock(&s->mu);
	return doc;
}
