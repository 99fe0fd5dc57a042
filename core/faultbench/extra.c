/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * faultbench/extra.c: the scenarios added to the four seed scenarios (see
 * docs/reliability.md): the relay killed after sending, the consumer
 * killed inside execute() and inside the completion transaction, a
 * redrive racing a late old-generation message, a price-window correction
 * racing the job of the window's old generation.
 */
#include "faultbench/faultbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "common/fault.h"
#include "consumer/ledger.h"
#include "common/log.h"
#include "outbox/producer.h"

/* In a child: every delivery in ds of the event of job i's message, then
 * death at the common point. */
static void deliver_child(struct fb *fb, struct fb_dest *d, const struct fb_deliveries *ds,
                          const char *event_id)
{
	const struct fb_delivery *dv[8];
	size_t n = 0;

	for (long j = fb_deliveries_find(ds, event_id, 0); j >= 0 && n < 8;
	     j = fb_deliveries_find(ds, event_id, (size_t)j + 1))
		dv[n++] = &ds->v[j];
	fault_arm("faultbench.consumer.after_deliveries", 1);
	fb_child_consume(fb, d, dv, n);
	FAULT_POINT("faultbench.consumer.after_deliveries");
}

/* The event ids of d's jobs of generation gen, in job order. */
static char **event_ids(struct fb *fb, const struct fb_dest *d, int gen, size_t *n)
{
	const char *params[1] = {d->name};
	char sql[256], err[512];
	PGresult *res;
	char **ids;

	snprintf(sql, sizeof(sql), "SELECT event_id FROM outbox.outbox_events WHERE destination = $1"
	                           " AND redrive_generation = %d ORDER BY created_at, event_id", gen);
	res = db_query(fb->conn, sql, 1, params, err, sizeof(err));
	*n = 0;
	if (res == NULL)
		return NULL;
	ids = calloc((size_t)PQntuples(res) + 1, sizeof(*ids));
	for (int i = 0; ids != NULL && i < PQntuples(res); i++)
		ids[(*n)++] = strdup(PQgetvalue(res, i, 0));
	PQclear(res);
	return ids;
}

static void free_ids(char **ids, size_t n)
{
	for (size_t i = 0; ids != NULL && i < n; i++)
		free(ids[i]);
	free(ids);
}

struct consume_arg {
	struct fb_deliveries *q;
	char **ids;
	size_t n;
	const char *point; /* armed before the deliveries; NULL: the common one */
};

static void consume_child(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	struct consume_arg *a = arg;

	if (i >= a->n)
		_exit(1);
	if (a->point != NULL) {
		const struct fb_delivery *dv[1];
		long j = fb_deliveries_find(a->q, a->ids[i], 0);

		if (j < 0)
			_exit(1);
		dv[0] = &a->q->v[j];
		fault_arm(a->point, 1);
		fb_child_consume(fb, d, dv, 1);
		_exit(1);
	}
	deliver_child(fb, d, a->q, a->ids[i]);
}

/* Fetches d's queue and delivers every message of each job in a child. */
static int consume_all(struct fb *fb, struct fb_dest *d, int gen, const char *point)
{
	struct fb_deliveries q = {0};
	struct consume_arg a = {&q, NULL, 0, point};
	int rc = -1;

	a.ids = event_ids(fb, d, gen, &a.n);
	if (a.ids == NULL || fb_queue_fetch(fb, d, &q) < 0)
		goto out;
	rc = fb_each(fb, consume_child, d, &a, a.n);
out:
	free_ids(a.ids, a.n);
	fb_deliveries_free(&q);
	return rc;
}

static int enqueue_all(struct fb *fb, struct fb_dest *d)
{
	for (size_t i = 0; i < (size_t)fb->reps; i++) {
		if (fb_enqueue(fb, fb->conn, d, i, true, NULL) < 0)
			return -1;
	}
	return 0;
}

static void relay_child(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	long batches, idle;

	(void)i;
	(void)arg;
	fault_arm("relay.after_send", 1);
	if (fb_relay_drain(fb, d, 1, &batches, &idle) < 0)
		_exit(1);
	/* Nothing was due: the previous claims are still live. */
	_exit(2);
}

int fb_scenario_relay_after_send(struct fb *fb, json_t *out)
{
	struct fb_dest d;
	struct fb_deliveries q = {0};
	long batches, idle;
	int rc = -1;

	if (fb_dest_init(fb, &d, "relay_after_send", 0) < 0 || enqueue_all(fb, &d) < 0 ||
	    fb_each(fb, relay_child, &d, NULL, (size_t)fb->reps) < 0 ||
	    fb_wait_leases(fb, &d) < 0 ||
	    fb_relay_drain(fb, &d, 10, &batches, &idle) < 0 || fb_queue_fetch(fb, &d, &q) < 0)
		goto out;
	json_object_set_new(out, "kill_point", json_string("relay.after_send"));
	json_object_set_new(out, "messages_sent", json_integer((json_int_t)q.n));
	json_object_set_new(out, "duplicates_sent",
	                    json_integer((json_int_t)(q.n - fb_deliveries_distinct(&q))));
	if (consume_all(fb, &d, 0, NULL) < 0 || fb_outcome(fb, &d, out) < 0)
		goto out;
	rc = 0;
out:
	fb_deliveries_free(&q);
	fb_dest_free(&d);
	return rc;
}

static int consumer_crash(struct fb *fb, const char *name, const char *point, json_t *out)
{
	struct fb_dest d;
	struct fb_child_report sum;
	long batches, idle;
	int rc = -1;

	if (fb_dest_init(fb, &d, name, 0) < 0 || enqueue_all(fb, &d) < 0 ||
	    fb_relay_drain(fb, &d, 10, &batches, &idle) < 0 ||
	    consume_all(fb, &d, 0, point) < 0 || fb_wait_leases(fb, &d) < 0 ||
	    consume_all(fb, &d, 0, NULL) < 0 || fb_outcome(fb, &d, out) < 0)
		goto out;
	fb_reports_sum(&d, &sum);
	json_object_set_new(out, "kill_point", json_string(point));
	json_object_set_new(out, "reclaimed_after_lease_expiry",
	                    json_integer((json_int_t)sum.c.claims));
	rc = 0;
out:
	fb_dest_free(&d);
	return rc;
}

int fb_scenario_consumer_in_execute(struct fb *fb, json_t *out)
{
	return consumer_crash(fb, "consumer_in_execute", "consumer.in_execute", out);
}

int fb_scenario_consumer_in_commit(struct fb *fb, json_t *out)
{
	return consumer_crash(fb, "consumer_in_commit", "consumer.in_commit", out);
}

/* Redrives every job of d (each in its own transaction), as outboxctl does. */
static int redrive_all(struct fb *fb, const struct fb_dest *d)
{
	const char *params[1] = {d->name};
	char err[512], event_id[128];
	PGresult *res = db_query(fb->conn, "SELECT job_id FROM outbox.jobs WHERE destination = $1",
	                         1, params, err, sizeof(err));
	int rc = res != NULL ? 0 : -1;

	for (int i = 0; res != NULL && rc == 0 && i < PQntuples(res); i++) {
		int gen;

		if (db_exec(fb->conn, "BEGIN", err, sizeof(err)) < 0 ||
		    ledger_redrive(fb->conn, PQgetvalue(res, i, 0), &gen, event_id, sizeof(event_id),
		                   err, sizeof(err)) != 1 ||
		    db_exec(fb->conn, "COMMIT", err, sizeof(err)) < 0)
			rc = -1;
	}
	if (rc < 0)
		log_error("could not redrive: %s", err);
	PQclear(res);
	return rc;
}

/* Two children at once: the late generation-0 message and the new one. */
static void race_old_child(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	struct consume_arg *a = arg;

	deliver_child(fb, d, a->q, a->ids[i]);
}

static int redrive_deliver(struct fb *fb, struct fb_dest *d, struct consume_arg *old,
                           struct consume_arg *cur)
{
	for (size_t i = 0; i < old->n && i < cur->n; i++) {
		pid_t a, b;

		if (fb_fork(fb, race_old_child, d, i, old, &a) < 0)
			return -1;
		if (fb_fork(fb, race_old_child, d, i, cur, &b) < 0) {
			fb_wait(fb, a);
			return -1;
		}
		fb_wait(fb, a);
		fb_wait(fb, b);
	}
	return 0;
}

int fb_scenario_redrive_race(struct fb *fb, json_t *out)
{
	struct fb_dest d;
	struct fb_deliveries q = {0};
	struct consume_arg old = {&q, NULL, 0, NULL}, cur = {&q, NULL, 0, NULL};
	struct fb_child_report sum;
	long batches, idle;
	int rc = -1;

	if (fb_dest_init(fb, &d, "redrive_race", 0) < 0 || enqueue_all(fb, &d) < 0 ||
	    fb_relay_drain(fb, &d, 10, &batches, &idle) < 0 || redrive_all(fb, &d) < 0 ||
	    fb_relay_drain(fb, &d, 10, &batches, &idle) < 0 || fb_queue_fetch(fb, &d, &q) < 0)
		goto out;
	old.ids = event_ids(fb, &d, 0, &old.n);
	cur.ids = event_ids(fb, &d, 1, &cur.n);
	if (old.ids == NULL || cur.ids == NULL || redrive_deliver(fb, &d, &old, &cur) < 0 ||
	    fb_outcome(fb, &d, out) < 0)
		goto out;
	fb_reports_sum(&d, &sum);
	json_object_set_new(out, "old_generation_runs", json_integer(fb_runs(&d, 0)));
	json_object_set_new(out, "old_messages_deleted_obsolete",
	                    json_integer((json_int_t)sum.c.obsolete_deletes));
	json_object_set_new(out, "old_messages_deleted_terminal",
	                    json_integer((json_int_t)sum.c.terminal_skips));
	rc = 0;
out:
	free_ids(old.ids, old.n);
	free_ids(cur.ids, cur.n);
	fb_deliveries_free(&q);
	fb_dest_free(&d);
	return rc;
}

#define SHA_FIRST "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_CORRECTED "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* Window i of the run: symbol and start; sha SHA_FIRST or SHA_CORRECTED. */
static int confirm_window(struct fb *fb, PGconn *conn, const struct fb_dest *d, size_t i,
                          const char *sha)
{
	struct outbox_price_window w;
	struct outbox_price_enqueued e;
	char start[32], err[512];
	int rc;

	snprintf(start, sizeof(start), "2026-01-01T%02zu:%02zu:00Z", (i / 60) % 24, i % 60);
	w = (struct outbox_price_window){fb->run, start, "faultbench/key", sha, 0};
	if (db_exec(conn, "BEGIN", err, sizeof(err)) < 0)
		return -1;
	rc = outbox_enqueue_price_job((struct pg_conn *)conn, d->name, &w, &e, err, sizeof(err));
	if (rc < 0 || db_exec(conn, "COMMIT", err, sizeof(err)) < 0) {
		log_error("could not confirm a price window: %s", err);
		return -1;
	}
	return 0;
}

static void correction_child(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	PGconn *conn = fb_child_connect(fb);
	struct timespec pause = {0, (long)(i % 5) * 1000000L};

	(void)arg;
	nanosleep(&pause, NULL);
	fault_arm("faultbench.correction.after_commit", 1);
	if (confirm_window(fb, conn, d, i, SHA_CORRECTED) < 0)
		_exit(1);
	FAULT_POINT("faultbench.correction.after_commit");
}

static int correction_race_run(struct fb *fb, struct fb_dest *d, struct consume_arg *old)
{
	for (size_t i = 0; i < old->n; i++) {
		pid_t a, b;

		if (fb_fork(fb, race_old_child, d, i, old, &a) < 0)
			return -1;
		if (fb_fork(fb, correction_child, d, i, NULL, &b) < 0) {
			fb_wait(fb, a);
			return -1;
		}
		fb_wait(fb, a);
		fb_wait(fb, b);
	}
	return 0;
}

int fb_scenario_correction_race(struct fb *fb, json_t *out)
{
	struct fb_dest d;
	struct fb_deliveries q = {0};
	struct consume_arg old = {&q, NULL, 0, NULL};
	long batches, idle, both, stale, ok;
	int rc = -1;

	if (fb_dest_init(fb, &d, "correction_race", 2) < 0)
		goto out;
	for (size_t i = 0; i < (size_t)fb->reps; i++) {
		if (confirm_window(fb, fb->conn, &d, i, SHA_FIRST) < 0)
			goto out;
	}
	if (fb_relay_drain(fb, &d, 10, &batches, &idle) < 0 || fb_queue_fetch(fb, &d, &q) < 0)
		goto out;
	old.ids = event_ids(fb, &d, 0, &old.n);
	if (old.ids == NULL || correction_race_run(fb, &d, &old) < 0 || fb_wait_leases(fb, &d) < 0 ||
	    fb_relay_drain(fb, &d, 10, &batches, &idle) < 0)
		goto out;
	/* Whatever is left (old jobs whose success CAS lost, the new jobs). */
	free_ids(old.ids, old.n);
	old.ids = event_ids(fb, &d, 0, &old.n);
	if (old.ids == NULL || consume_all(fb, &d, 0, NULL) < 0 || fb_outcome(fb, &d, out) < 0)
		goto out;
	both = fb_count(fb, &d, "SELECT count(*) FROM outbox.jobs j WHERE destination = $1"
	                        " AND status = 'DEAD' AND EXISTS (SELECT 1 FROM"
	                        " public.faultbench_effects e WHERE e.job_id = j.job_id)");
	stale = fb_count(fb, &d, "SELECT count(*) FROM outbox.jobs WHERE destination = $1"
	                         " AND dead_reason = 'STALE'");
	ok = fb_count(fb, &d, "SELECT count(*) FROM outbox.jobs WHERE destination = $1"
	                      " AND window_generation = 1 AND status = 'SUCCEEDED'");
	json_object_set_new(out, "old_jobs_succeeded", json_integer(ok));
	json_object_set_new(out, "old_jobs_stale", json_integer(stale));
	json_object_set_new(out, "stale_and_effect", json_integer(both));
	rc = both < 0 || stale < 0 || ok < 0 ? -1 : 0;
out:
	free_ids(old.ids, old.n);
	fb_deliveries_free(&q);
	fb_dest_free(&d);
	return rc;
}
