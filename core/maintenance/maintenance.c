/*
 * maintenance/maintenance.c: the maintenance thread (see maintenance.h).
 */
#include "maintenance/maintenance.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/backoff.h"
#include "common/clock.h"
#include "common/log.h"
#include "db/db.h"
#include "db/registry.h"
#include "maintenance/compact.h"
#include "maintenance/pending_scan.h"
#include "maintenance/runs.h"
#include "maintenance/sweeper.h"
#include "maintenance/vacuum.h"

#define MAINT_ERR_LEN 1024
/* Statements per class and run: a run never holds the thread for long;
 * what is left is done by the next one. */
#define SWEEPER_MAX_BATCHES 20
#define PRUNER_MAX_BATCHES 50
#define RECONNECT_MAX_MS 10000L

enum task { TASK_SWEEPER, TASK_PRUNER, N_TASKS };

static const char *const task_names[N_TASKS] = {"sweeper", "pruner"};
static const int task_locks[N_TASKS] = {MAINTENANCE_LOCK_SWEEPER, MAINTENANCE_LOCK_PRUNER};

struct maintenance {
	const struct cfg *cfg;     /* borrowed */
	char *instance_id;         /* owned */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* CLOCK_MONOTONIC; signalled by maintenance_stop() */
	bool stop;                 /* under mu */
	struct maintenance_counters counters; /* under mu */
	PGconn *conn;              /* owned by the thread; NULL while disconnected */
	bool down;                 /* an outage was logged */
	bool leader[N_TASKS];      /* holds the task's lock on conn */
	long long next_ms[N_TASKS];
	/* What maintenance_register() asked for, under mu: the row this
	 * thread keeps in outbox.relay_instances (no row while reg_role is
	 * NULL); reg_changed asks for a beat now. */
	const char *reg_role;
	char **reg_names;
	size_t reg_n;
	bool reg_changed;
	bool reg_active;           /* the thread's: reg_role was set at the last look */
	long long reg_next_ms;     /* the thread's: when the next beat is due */
	bool reg_written;          /* the thread's: a beat succeeded since start */
	struct compact *compact;   /* owned; the index rebuilds, the pruner's step */
	struct table_vacuum *vacuum; /* owned; the pruner's VACUUMs */
	long long scan_next_ms;    /* the thread's: when pending_scan_run() is due */
	bool scan_failing;         /* the thread's: its failure was logged */
	atomic_bool reloaded;      /* set by maintenance_reloaded() */
};

static int task_interval(const struct maintenance *m, enum task t)
{
	return t == TASK_SWEEPER ? m->cfg->sweeper.interval_seconds
	                         : m->cfg->retention.interval_seconds;
}

static void set_leader(struct maintenance *m, enum task t, bool on)
{
	m->leader[t] = on;
	pthread_mutex_lock(&m->mu);
	if (t == TASK_SWEEPER)
		m->counters.sweeper_leader = on;
	else
		m->counters.pruner_leader = on;
	pthread_mutex_unlock(&m->mu);
}

static void disconnect(struct maintenance *m, const char *err)
{
	if (!m->down)
		log_warning(db_session_read_only(m->conn)
		                    ? "maintenance's database session is read-only: %s; the sweeper"
		                      " and the pruner wait for a writable one"
		                    : "maintenance lost its database connection: %s; the sweeper and"
		                      " the pruner wait until it is back",
		            err);
	m->down = true;
	PQfinish(m->conn);
	m->conn = NULL;
	for (int t = 0; t < N_TASKS; t++)
		set_leader(m, (enum task)t, false);
}

static int ensure_connected(struct maintenance *m)
{
	char err[MAINT_ERR_LEN];

	if (m->conn != NULL)
		return 0;
	m->conn = db_connect(m->cfg->database.conninfo, "outboxd maintenance", err, sizeof(err));
	if (m->conn == NULL) {
		if (!m->down)
			log_warning("maintenance could not connect to the database: %s", err);
		m->down = true;
		return -1;
	}
	if (m->down)
		log_info("maintenance reconnected to the database");
	m->down = false;
	return 0;
}

/* Takes the task's lock if nobody holds it.  1 leader, 0 not, -1 error. */
static int try_lead(struct maintenance *m, enum task t)
{
	char err[MAINT_ERR_LEN];
	int got = db_try_advisory_lock(m->conn, MAINTENANCE_LOCK_CLASS, task_locks[t], err,
	                               sizeof(err));

	if (got < 0) {
		disconnect(m, err);
		return -1;
	}
	if (got) {
		log_info("this instance runs the %s instance=%s", task_names[t], m->instance_id);
		set_leader(m, t, true);
	}
	return got;
}

static void count_sweep(struct maintenance *m, const struct sweeper_result *r, bool ok)
{
	pthread_mutex_lock(&m->mu);
	m->counters.sweeper_runs++;
	m->counters.sweeper_rearmed_total += (unsigned long)r->rearmed;
	m->counters.sweeper_last_rearmed = r->rearmed;
	if (!ok)
		m->counters.failed_runs++;
	pthread_mutex_unlock(&m->mu);
}

static void count_prune(struct maintenance *m, const struct prune_counts *c, bool ok)
{
	struct prune_counts *t = &m->counters.pruned_total;

	pthread_mutex_lock(&m->mu);
	m->counters.pruner_runs++;
	m->counters.pruned_last = *c;
	t->succeeded_jobs += c->succeeded_jobs;
	t->dead_jobs += c->dead_jobs;
	t->events += c->events;
	t->dlq_messages += c->dlq_messages;
	if (!ok)
		m->counters.failed_runs++;
	pthread_mutex_unlock(&m->mu);
}

/* counts (JSON text, freed) with key: value (a reference taken) when value
 * is not NULL; the text to record (caller frees). */
static char *with_member(char *counts, const char *key, json_t *value)
{
	json_t *o = value != NULL && counts != NULL ? json_loads(counts, 0, NULL) : NULL;
	char *text;

	if (o == NULL || json_object_set_new(o, key, value) < 0) {
		if (o == NULL)
			json_decref(value);
		json_decref(o);
		return counts;
	}
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (text == NULL)
		return counts;
	free(counts);
	return text;
}

/* One run of task t; the counts as JSON (caller frees) and ok in *ok. */
static char *run_task(struct maintenance *m, enum task t, bool *ok, char *err, size_t errlen)
{
	char buf[128];

	if (t == TASK_SWEEPER) {
		struct sweeper_result r;

		*ok = sweeper_run(m->conn, m->cfg, SWEEPER_MAX_BATCHES, &r, err, errlen) == 0;
		count_sweep(m, &r, *ok);
		snprintf(buf, sizeof(buf), "{\"rearmed\": %ld, \"destinations\": %ld, \"horizon_seconds\": %d}",
		         r.rearmed, r.destinations, cfg_sweeper_horizon_seconds(m->cfg));
		return strdup(buf);
	}
	struct prune_counts c;
	int64_t t0 = now_ms();

	*ok = pruner_run(m->conn, m->cfg, false, PRUNER_MAX_BATCHES, &c, err, errlen) == 0;
	count_prune(m, &c, *ok);
	if (c.succeeded_jobs + c.dead_jobs + c.events + c.dlq_messages > 0)
		log_info("pruner deleted succeeded_jobs=%ld dead_jobs=%ld events=%ld dlq_messages=%ld "
		         "in %lld ms", c.succeeded_jobs, c.dead_jobs, c.events, c.dlq_messages,
		         (long long)(now_ms() - t0));
	if (atomic_exchange(&m->reloaded, false)) {
		compact_reset(m->compact);
		table_vacuum_reset(m->vacuum);
	}
	/* Rows a failed run deleted before it failed count too. */
	json_t *vacuum = table_vacuum_step(m->vacuum, m->conn, m->cfg,
	                                   c.succeeded_jobs + c.dead_jobs, c.events);

	return with_member(with_member(prune_counts_json(&c), "indexes",
	                               *ok ? compact_step(m->compact, m->conn, m->cfg) : NULL),
	                   "vacuum", vacuum);
}

static void run_and_record(struct maintenance *m, enum task t)
{
	char err[MAINT_ERR_LEN] = "", rec_err[MAINT_ERR_LEN];
	double started = (double)wall_clock_ms() / 1000.0;
	bool ok = false;
	char *counts;

	counts = run_task(m, t, &ok, err, sizeof(err));
	if (!ok)
		log_warning("%s run failed: %s", task_names[t], err);
	if (!ok && db_connection_lost(m->conn)) {
		disconnect(m, err);
		free(counts);
		return;
	}
	struct maintenance_run run = {task_names[t], m->instance_id, started, ok, counts,
	                              ok ? NULL : err};
	if (maintenance_record_run(m->conn, &run, rec_err, sizeof(rec_err)) < 0) {
		log_warning("could not record the %s run in outbox.maintenance_runs: %s",
		            task_names[t], rec_err);
		if (db_connection_lost(m->conn))
			disconnect(m, rec_err);
	}
	free(counts);
}

/* The sweeper's instance reads jobs_unfinished_due every
 * PENDING_SCAN_INTERVAL_MS (pending_scan.h); a failure is logged once until
 * a scan succeeds again. */
static void pending_scan(struct maintenance *m)
{
	char err[MAINT_ERR_LEN];

	if (!m->leader[TASK_SWEEPER] || now_ms() < m->scan_next_ms)
		return;
	m->scan_next_ms = now_ms() + PENDING_SCAN_INTERVAL_MS;
	if (pending_scan_run(m->conn, m->cfg, err, sizeof(err)) == 0) {
		m->scan_failing = false;
		return;
	}
	if (db_connection_lost(m->conn)) {
		disconnect(m, err);
		return;
	}
	if (!m->scan_failing)
		log_warning("the scan of outbox.jobs_unfinished_due failed: %s; the index grows until"
		            " VACUUM", err);
	m->scan_failing = true;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
}

/* Copies of the n names (free with free_names()); NULL when out of memory. */
static char **copy_names(const char *const *names, size_t n)
{
	char **out = calloc(n ? n : 1, sizeof(*out));

	for (size_t i = 0; out != NULL && i < n; i++) {
		out[i] = strdup(names[i]);
		if (out[i] == NULL) {
			free_names(out, i);
			return NULL;
		}
	}
	return out;
}

/*
 * The registry beat, when one is due: the row is refreshed every
 * DB_REGISTRY_BEAT_SECONDS like a relay's, from a copy of the names so
 * that maintenance_register() and the metrics never wait for a statement.
 */
static void registry_beat(struct maintenance *m)
{
	char err[MAINT_ERR_LEN];
	const char *role;
	char **names = NULL;
	size_t n = 0;

	pthread_mutex_lock(&m->mu);
	role = m->reg_role;
	m->reg_active = role != NULL;
	if (role != NULL && (m->reg_changed || now_ms() >= m->reg_next_ms)) {
		n = m->reg_n;
		names = copy_names((const char *const *)m->reg_names, n);
		m->reg_changed = false;
	}
	pthread_mutex_unlock(&m->mu);
	if (names == NULL)
		return;
	m->reg_next_ms = now_ms() + 1000LL * DB_REGISTRY_BEAT_SECONDS;
	if (db_registry_beat(m->conn, m->instance_id, role, (const char *const *)names, n, err,
	                     sizeof(err)) == 0) {
		m->reg_written = true;
	} else if (db_connection_lost(m->conn)) {
		disconnect(m, err);
		m->reg_next_ms = 0; /* at once when connected again */
	} else {
		log_warning("could not register this instance in outbox.relay_instances: %s", err);
	}
	free_names(names, n);
}

/* Sleeps until deadline_ms (now_ms() clock), a stop or, when on_register,
 * a registry change (not while reconnecting: the beat needs the
 * connection, and the backoff must hold); true when stopping. */
static bool sleep_until(struct maintenance *m, long long deadline_ms, bool on_register)
{
	struct timespec ts;
	long long wait = deadline_ms - now_ms();
	bool stop;

	monotonic_deadline(&ts, wait < 0 ? 0 : wait);
	pthread_mutex_lock(&m->mu);
	while (!m->stop && !(on_register && m->reg_changed) &&
	       pthread_cond_timedwait(&m->cv, &m->mu, &ts) == 0)
		;
	stop = m->stop;
	pthread_mutex_unlock(&m->mu);
	return stop;
}

static void *maintenance_main(void *arg)
{
	struct maintenance *m = arg;
	int failures = 0;

	for (;;) {
		long long next = now_ms() + 1000LL * 86400;

		if (ensure_connected(m) < 0) {
			if (sleep_until(m, now_ms() + backoff_doubling(250, RECONNECT_MAX_MS, ++failures),
			                false))
				break;
			continue;
		}
		for (int t = 0; t < N_TASKS && m->conn != NULL; t++) {
			if (now_ms() < m->next_ms[t])
				continue;
			m->next_ms[t] = now_ms() + 1000LL * task_interval(m, (enum task)t);
			if (m->leader[t] || try_lead(m, (enum task)t) == 1)
				run_and_record(m, (enum task)t);
		}
		if (m->conn != NULL)
			pending_scan(m);
		if (m->conn != NULL)
			registry_beat(m);
		/* A statement lost the session (gone, or read-only): the backoff
		 * of a failed connect, so that a session that refuses at once
		 * (a standby accepts connections) is not reopened in a loop. */
		if (m->conn == NULL) {
			if (sleep_until(m, now_ms() + backoff_doubling(250, RECONNECT_MAX_MS, ++failures),
			                false))
				break;
			continue;
		}
		failures = 0;
		for (int t = 0; t < N_TASKS; t++)
			next = m->next_ms[t] < next ? m->next_ms[t] : next;
		if (m->leader[TASK_SWEEPER] && m->scan_next_ms < next)
			next = m->scan_next_ms;
		if (m->reg_active && m->reg_next_ms < next)
			next = m->reg_next_ms;
		if (sleep_until(m, next, m->conn != NULL))
			break;
	}
	return NULL;
}

int maintenance_start(const struct cfg *cfg, const char *instance_id, struct maintenance **out)
{
	struct maintenance *m = calloc(1, sizeof(*m));
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	if (m == NULL || (m->instance_id = strdup(instance_id)) == NULL) {
		free(m);
		log_error("out of memory starting the maintenance thread");
		return -1;
	}
	m->cfg = cfg;
	m->compact = compact_new(MAINTENANCE_LOCK_CLASS, MAINTENANCE_LOCK_REINDEX);
	m->vacuum = table_vacuum_new();
	if (m->compact == NULL || m->vacuum == NULL) {
		compact_free(m->compact);
		table_vacuum_free(m->vacuum);
		free(m->instance_id);
		free(m);
		log_error("out of memory starting the maintenance thread");
		return -1;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* The pruner's first run a little after the sweeper's, not at the same instant. */
	m->next_ms[TASK_SWEEPER] = now_ms();
	m->next_ms[TASK_PRUNER] = now_ms() + 1000;
	err = pthread_create(&m->thread, NULL, maintenance_main, m);
	if (err != 0) {
		log_error("could not start the maintenance thread: %s", strerror(err));
		pthread_cond_destroy(&m->cv);
		pthread_mutex_destroy(&m->mu);
		compact_free(m->compact);
		table_vacuum_free(m->vacuum);
		free(m->instance_id);
		free(m);
		return -1;
	}
	*out = m;
	return 0;
}

void maintenance_counters_read(struct maintenance *m, struct maintenance_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	*out = m->counters;
	pthread_mutex_unlock(&m->mu);
}

int maintenance_register(struct maintenance *m, const char *role, const char *const *names,
                         size_t n)
{
	char **copy = copy_names(names, n), **old;
	size_t old_n;

	if (copy == NULL)
		return -1;
	pthread_mutex_lock(&m->mu);
	old = m->reg_names;
	old_n = m->reg_n;
	m->reg_role = role;
	m->reg_names = copy;
	m->reg_n = n;
	m->reg_changed = true;
	pthread_cond_signal(&m->cv);
	pthread_mutex_unlock(&m->mu);
	free_names(old, old_n);
	return 0;
}

void maintenance_stop(struct maintenance *m)
{
	char err[MAINT_ERR_LEN];

	if (m == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	m->stop = true;
	pthread_cond_signal(&m->cv);
	pthread_mutex_unlock(&m->mu);
	pthread_join(m->thread, NULL);
	/* Best effort, as a relay's: a row left behind goes stale. */
	if (m->reg_written && m->conn != NULL &&
	    db_registry_leave(m->conn, m->instance_id, err, sizeof(err)) < 0)
		log_debug("could not remove this instance from outbox.relay_instances: %s", err);
	free_names(m->reg_names, m->reg_n);
	/* Closing the session releases its advisory locks at once. */
	PQfinish(m->conn);
	compact_free(m->compact);
	table_vacuum_free(m->vacuum);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m->instance_id);
	free(m);
}

void maintenance_reloaded(struct maintenance *m)
{
	if (m != NULL)
		atomic_store(&m->reloaded, true);
}
