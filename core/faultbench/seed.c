/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * faultbench/seed.c: the four seed scenarios (see
 * docs/reliability.md for what is killed where).
 */
#include "faultbench/faultbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "common/fault.h"

/* The naive design without an outbox: commit the job, then publish. */
static const char direct_insert_sql[] =
	"INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload)"
	" VALUES (encode(sha256(convert_to($1, 'UTF8')), 'hex'), 'faultbench', $2, $1::jsonb,"
	"         '{}') RETURNING job_id";

/* Scenario 1, in the child: job committed, then death before the send. */
static void direct_child(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	PGconn *conn = fb_child_connect(fb);
	struct publisher *pub = NULL;
	char identity[256], err[512], body[160];
	const char *params[2] = {identity, d->name};
	struct sqs_send_entry e = {"e0", body, 0, NULL};
	struct sqs_entry_result result;
	struct aws_result res;
	PGresult *r;

	(void)arg;
	snprintf(identity, sizeof(identity), "{\"run\":\"%s\",\"dest\":\"%s\",\"n\":%zu}", fb->run,
	         d->name, i);
	fault_arm("faultbench.direct.before_publish", 1);
	r = db_query(conn, direct_insert_sql, 2, params, err, sizeof(err));
	if (r == NULL || fb_publisher(fb, d, &pub) < 0)
		_exit(1);
	e.body_len = (size_t)snprintf(body, sizeof(body), "{\"job_id\":\"%s\"}",
	                              PQgetvalue(r, 0, 0));
	FAULT_POINT("faultbench.direct.before_publish");
	/* Not reached while the fault point is armed: the direct publish. */
	if (publisher_send_batch(pub, d->queue_url, &e, 1, &result, &res) < 0)
		_exit(1);
}

int fb_scenario_direct_publish(struct fb *fb, json_t *out)
{
	struct fb_dest d;
	struct fb_deliveries q = {0};
	long jobs;
	int rc = -1;

	if (fb_dest_init(fb, &d, "direct_publish", 0) < 0 ||
	    fb_each(fb, direct_child, &d, NULL, (size_t)fb->reps) < 0)
		goto out;
	jobs = fb_count(fb, &d, "SELECT count(*) FROM outbox.jobs WHERE destination = $1");
	if (jobs < 0 || fb_queue_fetch(fb, &d, &q) < 0)
		goto out;
	json_object_set_new(out, "kill_point", json_string("faultbench.direct.before_publish"));
	json_object_set_new(out, "jobs_committed", json_integer(jobs));
	json_object_set_new(out, "messages_in_queue", json_integer((json_int_t)q.n));
	json_object_set_new(out, "missing_publish_intents",
	                    json_integer(jobs > (long)q.n ? jobs - (long)q.n : 0));
	rc = 0;
out:
	fb_deliveries_free(&q);
	fb_dest_free(&d);
	return rc;
}

/* Scenario 2, in the child: job + event written, death before COMMIT. */
static void in_tx_child(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	PGconn *conn = fb_child_connect(fb);

	(void)arg;
	fault_arm("faultbench.producer.before_commit", 1);
	if (fb_enqueue(fb, conn, d, i, true, NULL) < 0)
		_exit(1);
}

int fb_scenario_in_transaction(struct fb *fb, json_t *out)
{
	struct fb_dest d;
	long jobs, events, partial;
	int rc = -1;

	if (fb_dest_init(fb, &d, "in_transaction", 0) < 0 ||
	    fb_each(fb, in_tx_child, &d, NULL, (size_t)fb->reps) < 0 ||
	    fb_wait_leases(fb, &d) < 0)
		goto out;
	jobs = fb_count(fb, &d, "SELECT count(*) FROM outbox.jobs WHERE destination = $1");
	events = fb_count(fb, &d, "SELECT count(*) FROM outbox.outbox_events WHERE destination = $1");
	partial = fb_count(fb, &d,
	                   "SELECT (SELECT count(*) FROM outbox.jobs j WHERE destination = $1"
	                   "   AND NOT EXISTS (SELECT 1 FROM outbox.outbox_events e"
	                   "                    WHERE e.job_id = j.job_id))"
	                   " + (SELECT count(*) FROM outbox.outbox_events e WHERE destination = $1"
	                   "   AND NOT EXISTS (SELECT 1 FROM outbox.jobs j WHERE j.job_id = e.job_id))");
	if (jobs < 0 || events < 0 || partial < 0)
		goto out;
	json_object_set_new(out, "kill_point", json_string("faultbench.producer.before_commit"));
	json_object_set_new(out, "jobs_committed", json_integer(jobs));
	json_object_set_new(out, "events_committed", json_integer(events));
	json_object_set_new(out, "partial_commits", json_integer(partial));
	rc = 0;
out:
	fb_dest_free(&d);
	return rc;
}

/* Scenario 3, in the child: death right after the job+event COMMIT. */
static void after_commit_child(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	PGconn *conn = fb_child_connect(fb);

	(void)arg;
	fault_arm("faultbench.producer.after_commit", 1);
	if (fb_enqueue(fb, conn, d, i, true, NULL) < 0)
		_exit(1);
	FAULT_POINT("faultbench.producer.after_commit");
}

int fb_scenario_after_commit(struct fb *fb, json_t *out)
{
	struct fb_dest d;
	struct fb_deliveries q = {0};
	long jobs, published, batches = 0, idle = -1;
	size_t arrived;
	int rc = -1;

	if (fb_dest_init(fb, &d, "after_commit", 0) < 0 ||
	    fb_each(fb, after_commit_child, &d, NULL, (size_t)fb->reps) < 0 ||
	    fb_relay_drain(fb, &d, 10, &batches, &idle) < 0 || fb_queue_fetch(fb, &d, &q) < 0)
		goto out;
	jobs = fb_count(fb, &d, "SELECT count(*) FROM outbox.jobs WHERE destination = $1");
	published = fb_count(fb, &d, "SELECT count(*) FROM outbox.outbox_events"
	                             " WHERE destination = $1 AND status = 'PUBLISHED'");
	if (jobs < 0 || published < 0)
		goto out;
	arrived = fb_deliveries_distinct(&q);
	json_object_set_new(out, "kill_point", json_string("faultbench.producer.after_commit"));
	json_object_set_new(out, "jobs_committed", json_integer(jobs));
	json_object_set_new(out, "events_published", json_integer(published));
	json_object_set_new(out, "messages_in_queue", json_integer((json_int_t)q.n));
	json_object_set_new(out, "missing_messages",
	                    json_integer(jobs > (long)arrived ? jobs - (long)arrived : 0));
	json_object_set_new(out, "relay_batches", json_integer(batches));
	json_object_set_new(out, "idle_pass_claimed", json_integer(idle));
	rc = 0;
out:
	fb_deliveries_free(&q);
	fb_dest_free(&d);
	return rc;
}

/* Two deliveries of every message: first[i] and the same event in second. */
struct twice {
	struct fb_deliveries first;
	struct fb_deliveries second;
};

static void twice_child(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	struct twice *t = arg;
	const struct fb_delivery *dv[2];
	long j;

	if (i >= t->first.n)
		_exit(1);
	j = fb_deliveries_find(&t->second, t->first.v[i].event_id, 0);
	if (j < 0)
		_exit(1);
	dv[0] = &t->first.v[i];
	dv[1] = &t->second.v[j];
	fault_arm("faultbench.consumer.after_deliveries", 1);
	fb_child_consume(fb, d, dv, 2);
	FAULT_POINT("faultbench.consumer.after_deliveries");
}

/* Enqueues reps jobs from the parent and relays them. */
static int enqueue_and_relay(struct fb *fb, struct fb_dest *d)
{
	long batches, idle;

	for (size_t i = 0; i < (size_t)fb->reps; i++) {
		if (fb_enqueue(fb, fb->conn, d, i, true, NULL) < 0)
			return -1;
	}
	return fb_relay_drain(fb, d, 10, &batches, &idle);
}

int fb_scenario_delivered_twice(struct fb *fb, json_t *out)
{
	struct fb_dest d;
	struct twice t = {{0}, {0}};
	struct fb_child_report sum;
	int rc = -1;

	if (fb_dest_init(fb, &d, "delivered_twice", 0) < 0 || enqueue_and_relay(fb, &d) < 0 ||
	    fb_queue_fetch(fb, &d, &t.first) < 0 || fb_queue_fetch(fb, &d, &t.second) < 0 ||
	    fb_each(fb, twice_child, &d, &t, (size_t)fb->reps) < 0)
		goto out;
	fb_reports_sum(&d, &sum);
	if (fb_outcome(fb, &d, out) < 0)
		goto out;
	json_object_set_new(out, "kill_point", json_string("faultbench.consumer.after_deliveries"));
	json_object_set_new(out, "deliveries", json_integer((json_int_t)sum.c.deliveries));
	json_object_set_new(out, "duplicate_terminal_skips",
	                    json_integer((json_int_t)sum.c.terminal_skips));
	json_object_set_new(out, "message_deletes", json_integer((json_int_t)sum.port_deletes));
	rc = 0;
out:
	fb_deliveries_free(&t.first);
	fb_deliveries_free(&t.second);
	fb_dest_free(&d);
	return rc;
}
