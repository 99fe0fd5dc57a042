/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * faultbench/pgcrash.c: the pg_crash scenario (docs/reliability.md).
 * PostgreSQL is killed with --pg-restart-command (pg_ctl -m immediate
 * restart) while producers, the relay and the consumer are all busy
 * (faultbench/pgload.c); then production stops, the pipeline drains, and
 * every job a producer saw committed must be SUCCEEDED with exactly one
 * business effect.
 */
#include "faultbench/pgload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "db/db.h"

#define PG_CRASH_PRODUCERS 2
#define PG_CRASH_RESTARTS 3
/* Committed jobs between two crashes (and after the last one, which proves
 * that the producers came back). */
#define PG_CRASH_JOBS_APART 200
#define PG_CRASH_WAIT_MS 30000
#define PG_CRASH_DRAIN_MS 60000

/* Every child of the scenario; pid 0: not started. */
struct pg_crash_children {
	pid_t producers[PG_CRASH_PRODUCERS];
	pid_t relay;
	pid_t consumer;
};

static void skipped(json_t *out, const char *why)
{
	log_info("scenario pg_crash skipped: %s", why);
	json_object_set_new(out, "skipped", json_string(why));
}

static int raise_flag(const char *path)
{
	return fb_append(path, "", 0);
}

/* Waits for pid; returns its exit status, or -1 when it did not exit. */
static int reap(pid_t pid)
{
	int status = 0;

	if (pid <= 0)
		return 0;
	while (waitpid(pid, &status, 0) < 0)
		continue;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int start_children(struct fb *fb, struct fb_dest *d, struct fb_load *load,
                          struct pg_crash_children *ch)
{
	for (size_t i = 0; i < PG_CRASH_PRODUCERS; i++) {
		if (fb_fork(fb, fb_load_producer, d, i, load, &ch->producers[i]) < 0)
			return -1;
	}
	if (fb_fork(fb, fb_load_relay, d, 0, load, &ch->relay) < 0 ||
	    fb_fork(fb, fb_load_consumer, d, 0, load, &ch->consumer) < 0)
		return -1;
	return 0;
}

/* Stops the producers, then (once drained) the rest; 0 when all exited 0. */
static int stop_producers(struct fb_load *load, struct pg_crash_children *ch)
{
	int bad = raise_flag(load->produce_stop) < 0;

	for (size_t i = 0; i < PG_CRASH_PRODUCERS; i++) {
		bad |= reap(ch->producers[i]) != 0;
		ch->producers[i] = 0;
	}
	return bad ? -1 : 0;
}

static int stop_all(struct fb_load *load, struct pg_crash_children *ch)
{
	int bad = stop_producers(load, ch) < 0 || raise_flag(load->stop) < 0;

	bad |= reap(ch->relay) != 0;
	bad |= reap(ch->consumer) != 0;
	ch->relay = ch->consumer = 0;
	return bad ? -1 : 0;
}

static long committed_count(const struct fb_load *load)
{
	struct stat st;

	return stat(load->committed, &st) == 0 ? (long)(st.st_size / FB_LOAD_LINE_LEN) : 0;
}

/* Waits until the producers have committed n jobs (deadline PG_CRASH_WAIT_MS). */
static int wait_committed(const struct fb_load *load, long n)
{
	int64_t deadline = now_ms() + PG_CRASH_WAIT_MS;
	struct timespec poll = {0, 5 * 1000000L};

	while (committed_count(load) < n) {
		if (now_ms() > deadline) {
			log_error("producers committed %ld of %ld jobs within %d s", committed_count(load),
			          n, PG_CRASH_WAIT_MS / 1000);
			return -1;
		}
		nanosleep(&poll, NULL);
	}
	return 0;
}

/* Runs the restart command; the parent's own connection comes back with it. */
static int restart_pg(struct fb *fb)
{
	int status;

	log_info("pg_crash: running \"%s\"", fb->pg_restart);
	fflush(NULL);
	status = system(fb->pg_restart);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		log_error("the restart command \"%s\" failed (status %d)", fb->pg_restart, status);
		return -1;
	}
	PQreset(fb->conn);
	if (PQstatus(fb->conn) != CONNECTION_OK) {
		log_error("could not reconnect after the restart: %s", PQerrorMessage(fb->conn));
		return -1;
	}
	return 0;
}

/* The committed log as a PostgreSQL text[] literal; NULL when out of memory. */
static char *committed_array(const struct fb_load *load)
{
	FILE *f = fopen(load->committed, "r");
	long n = committed_count(load);
	char *arr = malloc((size_t)n * FB_LOAD_LINE_LEN + 3);
	char line[FB_LOAD_LINE_LEN + 2];
	size_t len = 0;

	if (arr == NULL) {
		if (f != NULL)
			fclose(f);
		return NULL;
	}
	arr[len++] = '{';
	while (f != NULL && (long)len < n * FB_LOAD_LINE_LEN && fgets(line, sizeof(line), f)) {
		if (len > 1)
			arr[len++] = ',';
		memcpy(arr + len, line, FB_LOAD_LINE_LEN - 1);
		len += FB_LOAD_LINE_LEN - 1;
	}
	arr[len++] = '}';
	arr[len] = '\0';
	if (f != NULL)
		fclose(f);
	return arr;
}

/* Committed jobs that are not SUCCEEDED (missing rows included) or, with
 * missing_only, whose row does not exist; -1 on error. */
static long committed_pending(struct fb *fb, const char *arr, bool missing_only)
{
	const char *params[1] = {arr};
	char err[512];
	PGresult *res = db_query(fb->conn, missing_only
	        ? "SELECT count(*) FROM unnest($1::text[]) AS c(job_id)"
	          " WHERE NOT EXISTS (SELECT 1 FROM outbox.jobs j WHERE j.job_id = c.job_id)"
	        : "SELECT count(*) FROM unnest($1::text[]) AS c(job_id)"
	          " LEFT JOIN outbox.jobs j USING (job_id)"
	          " WHERE j.status IS DISTINCT FROM 'SUCCEEDED'",
	        1, params, err, sizeof(err));
	long n = -1;

	if (res == NULL) {
		log_error("could not count committed jobs: %s", err);
		return -1;
	}
	n = strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return n;
}

/* Waits until every committed job is SUCCEEDED or PG_CRASH_DRAIN_MS passed;
 * returns the jobs still pending (the lost ones), or -1 on error. */
static long drain(struct fb *fb, const char *arr)
{
	int64_t deadline = now_ms() + PG_CRASH_DRAIN_MS;
	struct timespec poll = {0, 20 * 1000000L};
	long left;

	while ((left = committed_pending(fb, arr, false)) > 0 && now_ms() < deadline)
		nanosleep(&poll, NULL);
	return left;
}

/* The counters, once every child is gone. */
static int count(struct fb *fb, struct fb_dest *d, const struct fb_load *load, int restarts,
                 long lost, const char *arr, json_t *out)
{
	struct fb_deliveries sent = {0};
	long missing = committed_pending(fb, arr, true);
	size_t distinct;

	if (missing < 0 || fb_outcome(fb, d, out) < 0 || fb_queue_sent(d, &sent) < 0) {
		fb_deliveries_free(&sent);
		return -1;
	}
	distinct = fb_deliveries_distinct(&sent);
	json_object_set_new(out, "kill", json_string(fb->pg_restart));
	json_object_set_new(out, "producers", json_integer(PG_CRASH_PRODUCERS));
	json_object_set_new(out, "restarts", json_integer(restarts));
	json_object_set_new(out, "committed_jobs", json_integer(committed_count(load)));
	json_object_set_new(out, "committed_not_succeeded", json_integer(lost));
	json_object_set_new(out, "missing_job_rows", json_integer(missing));
	json_object_set_new(out, "messages_sent", json_integer((json_int_t)sent.n));
	json_object_set_new(out, "resent_events", json_integer((json_int_t)(sent.n - distinct)));
	json_object_set_new(out, "relay_synchronous_commit",
	                    json_boolean(fb->run_cfg.relay.synchronous_commit));
	fb_deliveries_free(&sent);
	return 0;
}

int fb_scenario_pg_crash(struct fb *fb, json_t *out)
{
	struct fb_dest d;
	struct fb_load load;
	struct pg_crash_children ch;
	char *arr = NULL;
	int restarts = 0, rc = -1;
	long lost = -1;

	if (fb->pg_restart == NULL) {
		skipped(out, "no --pg-restart-command: the scenario kills PostgreSQL");
		return 0;
	}
	if (strcmp(fb->publisher, "fake") != 0) {
		skipped(out, "runs with --publisher fake only");
		return 0;
	}
	memset(&ch, 0, sizeof(ch));
	snprintf(load.produce_stop, sizeof(load.produce_stop), "%.300s/pg_crash.produce.stop",
	         fb->dir);
	snprintf(load.stop, sizeof(load.stop), "%.300s/pg_crash.stop", fb->dir);
	snprintf(load.committed, sizeof(load.committed), "%.300s/pg_crash.committed", fb->dir);
	if (fb_dest_init(fb, &d, "pg_crash", 0) < 0)
		return -1;
	if (start_children(fb, &d, &load, &ch) < 0)
		goto out;
	for (; restarts < PG_CRASH_RESTARTS; restarts++) {
		if (wait_committed(&load, (long)(restarts + 1) * PG_CRASH_JOBS_APART) < 0 ||
		    restart_pg(fb) < 0)
			goto out;
	}
	if (wait_committed(&load, (long)(restarts + 1) * PG_CRASH_JOBS_APART) < 0 ||
	    stop_producers(&load, &ch) < 0)
		goto out;
	arr = committed_array(&load);
	if (arr == NULL || (lost = drain(fb, arr)) < 0)
		goto out;
	if (stop_all(&load, &ch) < 0) {
		log_error("a pg_crash child did not end cleanly");
		goto out;
	}
	rc = count(fb, &d, &load, restarts, lost, arr, out);
out:
	if (stop_all(&load, &ch) < 0 && rc == 0)
		rc = -1;
	free(arr);
	fb_dest_free(&d);
	return rc;
}
