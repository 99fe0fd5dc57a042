/*
 * daemon/observe.c: readiness, liveness, the database gauges of /metrics
 * and the systemd notifications (see daemon/observe.h).
 *
 * Readiness (/readyz, READY=1) is "the database answers and every lane and
 * worker is connected", read from the registry's gauges that the threads
 * move.  Liveness (/healthz, WATCHDOG=1) is "every lane, and some worker of
 * each destination, went round its loop recently": a thread blocked
 * forever (a database that stopped answering mid-statement) makes it fail.
 *
 * The oldest-NEW-event and oldest-due-PENDING-job ages come from one query
 * for all destinations, run by the HTTP thread on its own connection at
 * most every AGES_CACHE_MS; scrapes in between get the cached values.
 */
#include "daemon/observe.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "aws/http.h"
#include "aws/sqs.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/process_metrics.h"
#include "config/listen.h"
#include "daemon/http_server.h"
#include "daemon/sd_notify.h"
#include "db/db.h"
#include "outbox/plugin.h"

/* A scrape re-reads the ages at most this often. */
#define AGES_CACHE_MS 5000
/* /readyz re-checks the database at most this often. */
#define PROBE_CACHE_MS 1000
/* ... and whether it can still write at most this often (write_sql). */
#define WRITE_PROBE_MS 10000
/* The main thread's tick: READY=1 and WATCHDOG=1 are sent from it. */
#define TICK_MS 500

struct observe {
	const struct cfg *cfg; /* borrowed */
	bool relay, consumer;
	int64_t started_ms;
	int64_t lane_stuck_ms, worker_stuck_ms;
	uint64_t watchdog_usec;
	int64_t last_watchdog_ms;
	bool watchdog_withheld; /* logged once per stuck spell */
	bool ready_sent;
	_Atomic bool stopping;
	struct http_server *http;

	pthread_mutex_t db_lock; /* guards everything below */
	PGconn *conn;            /* the HTTP thread's; NULL while disconnected */
	int64_t probed_ms;       /* last query; 0 never */
	bool db_ok;
	char db_err[256];
	int64_t write_probed_ms; /* last write_sql; 0 never */
	bool write_ok;
	char write_err[256];
	double *oldest_new, *oldest_pending; /* per registry destination */
};

static const char ages_sql[] =
	"SELECT 'n', destination, extract(epoch FROM now() - min(created_at))::float8"
	"  FROM outbox.outbox_events WHERE status = 'NEW' GROUP BY destination"
	" UNION ALL"
	" SELECT 'p', destination, extract(epoch FROM now() - min(created_at))::float8"
	"  FROM outbox.jobs WHERE finished_at IS NULL AND status = 'PENDING'"
	"   AND next_attempt_at <= now() GROUP BY destination";

/*
 * A database that answers may still be unable to write: on a full disk
 * every read works while no relation can grow, so enqueues and
 * completions fail.  A read-only query cannot tell, so the write check makes
 * the server write a small temporary file (a sort of 5,000 rows over a
 * 64 kB work_mem spills a few dozen kB), on the disk where the database
 * keeps its data unless temp_tablespaces names another.  It needs no table
 * and leaves nothing behind.
 */
static const char write_sql[] =
	"BEGIN;"
	" SET LOCAL work_mem = '64kB';"
	" SELECT count(*) FROM (SELECT g FROM pg_catalog.generate_series(1, 5000) g"
	"  ORDER BY g DESC OFFSET 0) s;"
	" COMMIT";

static size_t registry_index(const char *name)
{
	size_t n = metrics_n_destinations();

	for (size_t i = 0; i < n; i++) {
		if (strcmp(metrics_destination(i), name) == 0)
			return i;
	}
	return n;
}

static void store_ages(struct observe *o, PGresult *res)
{
	size_t n = metrics_n_destinations();

	/* No row: nothing waits, age 0. */
	for (size_t i = 0; i < n; i++)
		o->oldest_new[i] = o->oldest_pending[i] = 0;
	for (int r = 0; r < PQntuples(res); r++) {
		size_t i = registry_index(PQgetvalue(res, r, 1));
		double v = strtod(PQgetvalue(res, r, 2), NULL);

		if (i == n)
			continue;
		if (PQgetvalue(res, r, 0)[0] == 'n')
			o->oldest_new[i] = v;
		else
			o->oldest_pending[i] = v;
	}
}

/* Runs the ages query unless the last one is younger than max_age_ms.
 * Call with db_lock held. */
static void probe(struct observe *o, int64_t max_age_ms)
{
	int64_t now = now_ms();
	PGresult *res;

	if (o->probed_ms != 0 && now - o->probed_ms < max_age_ms)
		return;
	o->probed_ms = now;
	if (o->conn == NULL)
		o->conn = db_connect(o->cfg->database.conninfo, "outboxd metrics", o->db_err,
		                     sizeof(o->db_err));
	if (o->conn == NULL) {
		o->db_ok = false;
		return;
	}
	res = db_query(o->conn, ages_sql, 0, NULL, o->db_err, sizeof(o->db_err));
	o->db_ok = res != NULL;
	if (res != NULL)
		store_ages(o, res);
	PQclear(res);
	if (!o->db_ok && db_connection_lost(o->conn)) {
		PQfinish(o->conn);
		o->conn = NULL;
	}
}

/* Runs write_sql unless the last one is younger than WRITE_PROBE_MS; the
 * connection must be up (probe() first).  Call with db_lock held. */
static void probe_write(struct observe *o)
{
	int64_t now = now_ms();
	char rberr[64];

	if (o->conn == NULL || (o->write_probed_ms != 0 && now - o->write_probed_ms < WRITE_PROBE_MS))
		return;
	o->write_probed_ms = now;
	o->write_ok = db_exec(o->conn, write_sql, o->write_err, sizeof(o->write_err)) == 0;
	/* A failed statement leaves the explicit transaction aborted. */
	if (!o->write_ok && PQtransactionStatus(o->conn) != PQTRANS_IDLE &&
	    db_exec(o->conn, "ROLLBACK", rberr, sizeof(rberr)) < 0)
		log_debug("could not roll back the write check: %s", rberr);
}

/* ---- readiness and liveness ---- */

static long expected_workers(const struct observe *o, const struct cfg_destination *d)
{
	return o->consumer ? o->cfg->consumer.workers + (d->dlq_url != NULL ? 1 : 0) : 0;
}

/* Every lane and worker connected?  Else why. */
static bool all_connected(const struct observe *o, char *why, size_t whylen)
{
	for (size_t i = 0; i < metrics_n_destinations(); i++) {
		const char *name = metrics_destination(i);
		const struct cfg_destination *d = cfg_find_destination(o->cfg, name);
		long lanes = metrics_gauge_value(METRIC_LANES_UP, i);
		long workers = metrics_gauge_value(METRIC_WORKERS_UP, i);

		if (d == NULL || metrics_destination_retired(i))
			continue;
		if (o->relay && lanes < 1) {
			snprintf(why, whylen, "relay lane of destination \"%s\" is not connected to the"
			         " database", name);
			return false;
		}
		if (workers < expected_workers(o, d)) {
			snprintf(why, whylen, "%ld of %ld consumer workers of destination \"%s\" are"
			         " connected to the database", workers, expected_workers(o, d), name);
			return false;
		}
	}
	return true;
}

static bool check_ready(void *arg, char *why, size_t whylen)
{
	struct observe *o = arg;
	bool ok;

	if (o->stopping) {
		snprintf(why, whylen, "shutting down");
		return false;
	}
	pthread_mutex_lock(&o->db_lock);
	probe(o, PROBE_CACHE_MS);
	if (o->db_ok)
		probe_write(o);
	ok = o->db_ok && o->write_ok;
	if (!o->db_ok)
		snprintf(why, whylen, "database unreachable: %s", o->db_err);
	else if (!ok)
		snprintf(why, whylen, "database cannot write: %s", o->write_err);
	pthread_mutex_unlock(&o->db_lock);
	return ok && all_connected(o, why, whylen);
}

/* How long since a thread of kind k of destination i went round its loop. */
static int64_t idle_ms(const struct observe *o, enum metric_thread_kind k, size_t i)
{
	int64_t last = metrics_last_progress_ms(k, i);

	return now_ms() - (last != 0 ? last : o->started_ms);
}

static bool check_alive(void *arg, char *why, size_t whylen)
{
	struct observe *o = arg;

	for (size_t i = 0; i < metrics_n_destinations(); i++) {
		int64_t lane = idle_ms(o, METRIC_THREAD_LANE, i);
		int64_t worker = idle_ms(o, METRIC_THREAD_WORKER, i);

		if (metrics_destination_retired(i))
			continue;
		if (o->relay && lane > o->lane_stuck_ms) {
			snprintf(why, whylen, "relay lane of destination \"%s\" made no progress for"
			         " %lld s", metrics_destination(i), (long long)(lane / 1000));
			return false;
		}
		if (o->consumer && worker > o->worker_stuck_ms) {
			snprintf(why, whylen, "no consumer worker of destination \"%s\" made progress"
			         " for %lld s", metrics_destination(i), (long long)(worker / 1000));
			return false;
		}
	}
	return true;
}

/* ---- /metrics ---- */

static void write_sqs_requests(FILE *out)
{
	json_t *counts = sqs_request_counts();
	const char *key;
	json_t *v;

	fputs("# HELP outboxd_sqs_requests_total SQS requests sent, by action.\n"
	      "# TYPE outboxd_sqs_requests_total counter\n", out);
	json_object_foreach(counts, key, v) {
		if (strcmp(key, "empty_receives") == 0 || strcmp(key, "messages_received") == 0)
			continue;
		fprintf(out, "outboxd_sqs_requests_total{action=\"%s\"} %lld\n", key,
		        (long long)json_integer_value(v));
	}
	fprintf(out, "# HELP outboxd_sqs_messages_received_total Messages ReceiveMessage returned.\n"
	        "# TYPE outboxd_sqs_messages_received_total counter\n"
	        "outboxd_sqs_messages_received_total %lld\n",
	        (long long)json_integer_value(json_object_get(counts, "messages_received")));
	fprintf(out, "# HELP outboxd_sqs_reconnects_total New connections SQS clients opened after"
	        " their first.\n# TYPE outboxd_sqs_reconnects_total counter\n"
	        "outboxd_sqs_reconnects_total %lu\n", aws_http_sqs_reconnects());
	json_decref(counts);
}

static void write_database_gauges(struct observe *o, FILE *out)
{
	size_t n = metrics_n_destinations();
	const char **names = calloc(n ? n : 1, sizeof(*names));

	if (names == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		names[i] = metrics_destination(i);
	pthread_mutex_lock(&o->db_lock);
	probe(o, AGES_CACHE_MS);
	fprintf(out, "# HELP outboxd_database_up Whether the last database query of the metrics"
	        " succeeded.\n# TYPE outboxd_database_up gauge\noutboxd_database_up %d\n",
	        o->db_ok ? 1 : 0);
	if (o->db_ok) {
		metrics_write_gauge_family(out, "outboxd_oldest_new_event_age_seconds",
		                           "Age of the oldest NEW outbox event (0 when none).", names,
		                           o->oldest_new, n);
		metrics_write_gauge_family(out, "outboxd_oldest_due_pending_job_age_seconds",
		                           "Age of the oldest due PENDING job (0 when none).", names,
		                           o->oldest_pending, n);
	}
	pthread_mutex_unlock(&o->db_lock);
	free(names);
}

/* /readyz as a series, so that an alert needs no HTTP probe. */
static void write_ready(struct observe *o, FILE *out)
{
	char why[512];

	fprintf(out, "# HELP outboxd_ready 1 when /readyz answers 200: the database answers and"
	        " every lane and worker is connected.\n# TYPE outboxd_ready gauge\noutboxd_ready %d\n",
	        check_ready(o, why, sizeof(why)) ? 1 : 0);
}

static int write_metrics(void *arg, FILE *out)
{
	struct observe *o = arg;

	fprintf(out, "# HELP outboxd_build_info The running version and plugin ABI.\n"
	        "# TYPE outboxd_build_info gauge\n"
	        "outboxd_build_info{version=\"%s\",plugin_abi=\"%d.%d\"} 1\n",
	        PACKAGE_VERSION, OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR);
	write_sqs_requests(out);
	write_database_gauges(o, out);
	write_ready(o, out);
	if (process_metrics_write(out) < 0)
		return -1;
	return metrics_write_prometheus(out);
}

/* ---- lifecycle ---- */

static int start_http(struct observe *o)
{
	struct cfg_listen l;
	const struct http_server_hooks hooks = {write_metrics, check_alive, check_ready, o};

	if (o->cfg->metrics.listen == NULL)
		return 0;
	/* Validated at load; parsed again here rather than stored twice. */
	if (cfg_listen_parse(o->cfg->metrics.listen, &l) != NULL)
		return -1;
	if (http_server_start(&l, &hooks, &o->http) < 0)
		return -1;
	log_info("serving /metrics, /healthz and /readyz on %s", o->cfg->metrics.listen);
	return 0;
}

static int register_destinations(const struct cfg *cfg)
{
	const char **names = calloc(cfg->n_destinations ? cfg->n_destinations : 1, sizeof(*names));
	int rc;

	if (names == NULL)
		return -1;
	for (size_t i = 0; i < cfg->n_destinations; i++)
		names[i] = cfg->destinations[i].name;
	rc = metrics_init(names, cfg->n_destinations);
	free(names);
	return rc;
}

static void set_thresholds(struct observe *o)
{
	const struct cfg *c = o->cfg;
	int lane_sleep_s = c->relay.retry_max_seconds > c->relay.poll_interval_ms / 1000
	                   ? c->relay.retry_max_seconds : c->relay.poll_interval_ms / 1000;

	/* The longest sleep a healthy thread takes, plus its requests' and
	 * statements' time, plus a margin. */
	o->lane_stuck_ms = ((int64_t)lane_sleep_s + c->relay.claim_lease_seconds + 120) * 1000;
	o->worker_stuck_ms = ((int64_t)c->consumer.wait_time_seconds + 2 * c->consumer.lease_seconds +
	                      120) * 1000;
}

int observe_start(const struct cfg *cfg, bool relay, bool consumer, struct observe **out)
{
	struct observe *o = calloc(1, sizeof(*o));
	size_t n = cfg->n_destinations ? cfg->n_destinations : 1;

	*out = NULL;
	if (o == NULL)
		goto oom;
	o->cfg = cfg;
	o->relay = relay;
	o->consumer = consumer;
	o->started_ms = now_ms();
	o->watchdog_usec = sd_watchdog_usec();
	pthread_mutex_init(&o->db_lock, NULL);
	o->oldest_new = calloc(n, sizeof(double));
	o->oldest_pending = calloc(n, sizeof(double));
	if (o->oldest_new == NULL || o->oldest_pending == NULL || register_destinations(cfg) < 0)
		goto oom;
	set_thresholds(o);
	if (start_http(o) < 0) {
		observe_stop(o);
		return -1;
	}
	*out = o;
	return 0;
oom:
	log_error("out of memory starting the metrics");
	observe_stop(o);
	return -1;
}

static void tick(struct observe *o)
{
	char why[512];
	int64_t now = now_ms();

	if (!o->ready_sent && all_connected(o, why, sizeof(why))) {
		o->ready_sent = true;
		if (sd_notify_send("READY=1\nSTATUS=every lane and worker is connected") < 0)
			log_warning("could not notify systemd: %s", strerror(errno));
	}
	if (o->watchdog_usec == 0 || (now - o->last_watchdog_ms) * 2000 < (int64_t)o->watchdog_usec)
		return;
	/* Silence when stuck: systemd then restarts the service. */
	if (!check_alive(o, why, sizeof(why))) {
		if (!o->watchdog_withheld)
			log_error("not sending the watchdog keep-alive: %s", why);
		o->watchdog_withheld = true;
		return;
	}
	o->watchdog_withheld = false;
	o->last_watchdog_ms = now;
	(void)sd_notify_send("WATCHDOG=1");
}

int observe_sigwait(struct observe *o, const sigset_t *set)
{
	const struct timespec timeout = {0, TICK_MS * 1000000L};

	for (;;) {
		int sig;

		tick(o);
		sig = sigtimedwait(set, NULL, &timeout);
		if (sig > 0)
			return sig;
	}
}

void observe_stopping(struct observe *o)
{
	if (o == NULL)
		return;
	o->stopping = true;
	(void)sd_notify_send("STOPPING=1");
}

void observe_stop(struct observe *o)
{
	if (o == NULL)
		return;
	http_server_stop(o->http);
	PQfinish(o->conn);
	pthread_mutex_destroy(&o->db_lock);
	free(o->oldest_new);
	free(o->oldest_pending);
	metrics_shutdown();
	free(o);
}
