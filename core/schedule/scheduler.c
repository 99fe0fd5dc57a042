/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * schedule/scheduler.c: the scheduler thread (see schedule/scheduler.h).
 */
#include "schedule/scheduler.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "db/db.h"
#include "schedule/slots.h"

#define SCHED_ERR_LEN 1024
#define LOCK_RETRY_MS 1000
#define RECONNECT_MAX_MS 10000L
/* Slots enqueued per schedule and wake-up at most (the latest ones). */
#define SLOTS_PER_TICK 1000

/* The slot's job and the schedule's last slot, in one statement. */
static const char enqueue_sql[] =
	"WITH j AS MATERIALIZED ("
	"  SELECT * FROM outbox.enqueue($2, $3, json_build_object('schedule', $1::text,"
	"                                                          'slot', $4::text), $5::jsonb))"
	" INSERT INTO outbox.schedules AS s (name, last_slot, last_job_id, instance_id)"
	" SELECT $1, $4::timestamptz, j.job_id, $6 FROM j"
	" ON CONFLICT (name) DO UPDATE"
	"   SET last_slot = greatest(s.last_slot, EXCLUDED.last_slot),"
	"       last_job_id = CASE WHEN EXCLUDED.last_slot >= s.last_slot THEN EXCLUDED.last_job_id"
	"                          ELSE s.last_job_id END,"
	"       instance_id = EXCLUDED.instance_id, updated_at = now()"
	" RETURNING (SELECT created FROM j), (SELECT job_id FROM j)";

struct scheduler {
	const struct cfg *cfg;     /* borrowed */
	char *instance_id;         /* owned */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* CLOCK_MONOTONIC; signalled by scheduler_stop() */
	bool stop;                 /* under mu */
	PGconn *conn;              /* owned by the thread; NULL while disconnected */
	bool down;                 /* an outage was logged */
	bool leader;               /* conn holds the lock */
	int64_t *done;             /* per schedule: the last slot handled (while leader); owned */
};

static void disconnect(struct scheduler *s, const char *err)
{
	if (!s->down)
		log_warning("the scheduler lost its database connection: %s; schedules wait until "
		            "it is back", err);
	s->down = true;
	s->leader = false;
	PQfinish(s->conn);
	s->conn = NULL;
}

static int ensure_connected(struct scheduler *s)
{
	char err[SCHED_ERR_LEN];

	if (s->conn != NULL)
		return 0;
	s->conn = db_connect(s->cfg->database.conninfo, "outboxd scheduler", err, sizeof(err));
	if (s->conn == NULL) {
		if (!s->down)
			log_warning("the scheduler could not connect to the database: %s", err);
		s->down = true;
		return -1;
	}
	if (s->down)
		log_info("the scheduler reconnected to the database");
	s->down = false;
	return 0;
}

/* The database's clock in milliseconds; -1 (disconnected) on failure. */
static int64_t db_now_ms(struct scheduler *s)
{
	char err[SCHED_ERR_LEN];
	PGresult *res = db_query(s->conn, "SELECT floor(extract(epoch FROM now()) * 1000)::bigint",
	                         0, NULL, err, sizeof(err));
	int64_t t;

	if (res == NULL) {
		disconnect(s, err);
		return -1;
	}
	t = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return t;
}

/* Enqueues slot t of schedule i.  0, or -1 (logged; disconnected if lost). */
static int enqueue_slot(struct scheduler *s, size_t i, int64_t t)
{
	const struct cfg_schedule *sc = &s->cfg->schedules[i];
	char slot[SCHEDULE_SLOT_TEXT_LEN], err[SCHED_ERR_LEN];
	const char *params[6] = {sc->name, sc->job_type, sc->destination, slot, sc->payload,
	                         s->instance_id};
	PGresult *res;

	schedule_slot_text(t, slot);
	res = db_query(s->conn, enqueue_sql, 6, params, err, sizeof(err));
	if (res == NULL) {
		log_warning("could not enqueue slot %s of schedule \"%s\": %s schedule=%s slot=%s",
		            slot, sc->name, err, sc->name, slot);
		if (db_connection_lost(s->conn))
			disconnect(s, err);
		return -1;
	}
	log_info("schedule slot enqueued schedule=%s slot=%s job_id=%s created=%s", sc->name, slot,
	         PQgetvalue(res, 0, 1), strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? "true" : "false");
	PQclear(res);
	return 0;
}

/* Enqueues the slots of schedule i in (done, now], at most max (the
 * latest), in order; done follows each one enqueued. */
static void run_slots(struct scheduler *s, size_t i, int64_t now, int max)
{
	char err[SCHED_ERR_LEN];
	int64_t *slots = malloc((size_t)max * sizeof(*slots));
	int n = 0;

	if (slots == NULL) {
		log_error("out of memory in the scheduler");
		return;
	}
	if (schedule_slots_between(s->conn, &s->cfg->schedules[i], s->done[i], now, slots, max, &n,
	                           err, sizeof(err)) < 0) {
		log_warning("could not compute the slots of schedule \"%s\": %s",
		            s->cfg->schedules[i].name, err);
		if (db_connection_lost(s->conn))
			disconnect(s, err);
		n = 0;
	}
	for (int k = 0; k < n && s->conn != NULL; k++) {
		if (enqueue_slot(s, i, slots[k]) < 0)
			break;
		s->done[i] = slots[k];
	}
	free(slots);
}

/* The last slot each schedule reached, from outbox.schedules; -1: none. */
static int load_last(struct scheduler *s, int64_t *last)
{
	char err[SCHED_ERR_LEN];
	PGresult *res = db_query(s->conn, "SELECT name, floor(extract(epoch FROM last_slot))::bigint"
	                                  "  FROM outbox.schedules", 0, NULL, err, sizeof(err));

	if (res == NULL) {
		log_warning("could not read outbox.schedules: %s", err);
		disconnect(s, err);
		return -1;
	}
	for (size_t i = 0; i < s->cfg->n_schedules; i++) {
		last[i] = -1;
		for (int r = 0; r < PQntuples(res); r++) {
			if (strcmp(PQgetvalue(res, r, 0), s->cfg->schedules[i].name) == 0)
				last[i] = strtoll(PQgetvalue(res, r, 1), NULL, 10);
		}
	}
	PQclear(res);
	return 0;
}

/* This instance has just taken the lock: catch_up decides what happens to
 * the slots that passed since each schedule's last one. */
static void take_over(struct scheduler *s, int64_t now)
{
	static const char *const modes[] = {"last", "none", "all"};

	if (load_last(s, s->done) < 0)
		return;
	for (size_t i = 0; i < s->cfg->n_schedules && s->conn != NULL; i++) {
		const struct cfg_schedule *sc = &s->cfg->schedules[i];
		int64_t last = s->done[i];

		if (last < 0 || sc->catch_up_mode == CFG_CATCH_UP_NONE) {
			/* the slots from now on (a slot due this very second included) */
			s->done[i] = now - 1 > last ? now - 1 : last;
		} else {
			run_slots(s, i, now, sc->catch_up_mode == CFG_CATCH_UP_ALL ? CFG_CATCH_UP_ALL_MAX : 1);
			if (s->done[i] < now - 1 && s->conn != NULL)
				s->done[i] = now - 1; /* a slot that could not be enqueued is retried below */
		}
		log_info("this instance runs schedule \"%s\" schedule=%s catch_up=%s instance=%s",
		         sc->name, sc->name, modes[sc->catch_up_mode], s->instance_id);
	}
}

/* Takes the lock if nobody holds it.  1 leader, 0 not, -1 error. */
static int try_lead(struct scheduler *s)
{
	char err[SCHED_ERR_LEN];
	int got = db_try_advisory_lock(s->conn, SCHEDULE_LOCK_CLASS, SCHEDULE_LOCK_OBJECT, err,
	                               sizeof(err));

	if (got < 0) {
		disconnect(s, err);
		return -1;
	}
	s->leader = got == 1;
	return got;
}

/* Milliseconds from now_ms until the next slot of any schedule, at most
 * LOCK_RETRY_MS. */
static long next_wait_ms(struct scheduler *s, int64_t db_ms)
{
	char err[SCHED_ERR_LEN];
	int64_t now = db_ms / 1000, next = now + LOCK_RETRY_MS / 1000;

	for (size_t i = 0; i < s->cfg->n_schedules && s->conn != NULL; i++) {
		int64_t t;

		if (schedule_next_slot(s->conn, &s->cfg->schedules[i], s->done[i], &t, err,
		                       sizeof(err)) == 0 && t >= 0 && t < next)
			next = t;
	}
	/* a little after the slot, so that the database's clock has passed it */
	return next <= now ? 10 : (long)(next * 1000 - db_ms) + 20;
}

/* Sleeps ms or until a stop; true when stopping. */
static bool sleep_ms(struct scheduler *s, long ms)
{
	struct timespec ts;
	bool stop;

	monotonic_deadline(&ts, ms < 0 ? 0 : ms);
	pthread_mutex_lock(&s->mu);
	while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &ts) == 0)
		;
	stop = s->stop;
	pthread_mutex_unlock(&s->mu);
	return stop;
}

static void *scheduler_main(void *arg)
{
	struct scheduler *s = arg;
	long backoff = 250, wait;

	for (;;) {
		int64_t db_ms, now;

		if (ensure_connected(s) < 0) {
			if (sleep_ms(s, backoff))
				break;
			backoff = backoff * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : backoff * 2;
			continue;
		}
		backoff = 250;
		wait = LOCK_RETRY_MS;
		db_ms = db_now_ms(s);
		now = db_ms / 1000;
		if (db_ms >= 0 && !s->leader && try_lead(s) == 1)
			take_over(s, now);
		for (size_t i = 0; s->leader && s->conn != NULL && i < s->cfg->n_schedules; i++)
			run_slots(s, i, now, SLOTS_PER_TICK);
		if (s->leader && s->conn != NULL)
			wait = next_wait_ms(s, db_ms);
		if (sleep_ms(s, wait))
			break;
	}
	return NULL;
}

int scheduler_start(const struct cfg *cfg, const char *instance_id, struct scheduler **out)
{
	struct scheduler *s;
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	if (cfg->n_schedules == 0)
		return 0;
	s = calloc(1, sizeof(*s));
	if (s == NULL || (s->instance_id = strdup(instance_id)) == NULL
	    || (s->done = calloc(cfg->n_schedules, sizeof(*s->done))) == NULL) {
		if (s != NULL)
			free(s->instance_id);
		free(s);
		log_error("out of memory starting the scheduler");
		return -1;
	}
	s->cfg = cfg;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&s->thread, NULL, scheduler_main, s);
	if (err != 0) {
		log_error("could not start the scheduler thread: %s", strerror(err));
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		free(s->done);
		free(s->instance_id);
		free(s);
		return -1;
	}
	*out = s;
	return 0;
}

void scheduler_stop(struct scheduler *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	/* Closing the session releases the lock at once: another instance takes over. */
	PQfinish(s->conn);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s->done);
	free(s->instance_id);
	free(s);
}
