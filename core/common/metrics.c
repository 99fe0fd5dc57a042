/*
 * common/metrics.c: the metrics registry and its Prometheus text exposition
 * (see common/metrics.h).
 *
 * Every value is a relaxed atomic: a scrape may see one counter a few
 * increments ahead of another, which Prometheus tolerates, and recording
 * never waits.  Histogram sums are kept in millionths of the unit, so they
 * stay integers (atomic adds on doubles need a CAS loop).
 */
#include "common/metrics.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"

#define HIST_MAX_BUCKETS 16
#define SUM_SCALE 1e6

struct counter_def {
	const char *name;   /* family, without the _total suffix */
	const char *help;
	const char *label;  /* second label's name, or NULL */
	const char *value;  /* second label's value */
};

/* Members of one family are adjacent: the family's HELP/TYPE is written
 * before its first member. */
static const struct counter_def counter_defs[METRIC_N_COUNTERS] = {
	[METRIC_EVENTS_PUBLISHED] = {"outboxd_events_published", "Outbox events the relay published to SQS.", NULL, NULL},
	[METRIC_EVENTS_DEAD] = {"outboxd_events_dead", "Outbox events the relay marked DEAD (SQS can never accept them).", NULL, NULL},
	[METRIC_SEND_FAILED_TRANSIENT] = {"outboxd_send_failures", "SendMessageBatch entries or requests that failed, by error class.", "error_class", "transient"},
	[METRIC_SEND_FAILED_PERMANENT] = {"outboxd_send_failures", NULL, "error_class", "permanent"},
	[METRIC_JOBS_CLAIMED] = {"outboxd_jobs_claimed", "Jobs a consumer worker claimed (claim compare-and-set won).", NULL, NULL},
	[METRIC_JOBS_SUCCEEDED] = {"outboxd_jobs_succeeded", "Jobs whose completion committed as SUCCEEDED.", NULL, NULL},
	[METRIC_JOBS_RETRIED] = {"outboxd_jobs_retried", "Jobs given back to PENDING for a retry.", NULL, NULL},
	[METRIC_JOBS_DEAD_PERMANENT] = {"outboxd_jobs_dead", "Jobs this process marked DEAD, by dead_reason.", "reason", "PERMANENT"},
	[METRIC_JOBS_DEAD_STALE] = {"outboxd_jobs_dead", NULL, "reason", "STALE"},
	[METRIC_JOBS_DEAD_DLQ] = {"outboxd_jobs_dead", NULL, "reason", "DLQ"},
	[METRIC_JOBS_DEAD_UNROUTABLE] = {"outboxd_jobs_dead", NULL, "reason", "UNROUTABLE"},
	[METRIC_JOBS_DEAD_CRASHED] = {"outboxd_jobs_dead", NULL, "reason", "CRASHED"},
	[METRIC_JOBS_DEAD_MAX_ATTEMPTS] = {"outboxd_jobs_dead", NULL, "reason", "MAX_ATTEMPTS"},
	[METRIC_JOBS_DEAD_CANCELLED] = {"outboxd_jobs_dead", NULL, "reason", "CANCELLED"},
	[METRIC_DUPLICATES_SKIPPED] = {"outboxd_duplicate_deliveries_skipped", "Deliveries of a job already terminal or of an older redrive generation, deleted unrun.", NULL, NULL},
	[METRIC_DB_RECONNECTS] = {"outboxd_database_reconnects", "Database connections found lost and dropped (each is opened again).", NULL, NULL},
	[METRIC_HANDLERS_ABANDONED] = {"outboxd_handler_threads_abandoned", "Worker threads left inside a handler past its time limit and replaced.", NULL, NULL},
};

static const struct {
	const char *name;
	const char *old_name; /* deprecated, written too until the next release */
	const char *help;
} gauge_defs[METRIC_N_GAUGES] = {
	[METRIC_LANES_UP] = {"outboxd_relay_lanes_connected", "outboxd_relay_lanes_up", "Relay lanes connected to the database."},
	[METRIC_WORKERS_UP] = {"outboxd_consumer_workers_connected", "outboxd_consumer_workers_up", "Consumer workers (and DLQ readers) connected to the database."},
};

struct hist_def {
	const char *name;
	const char *help;
	size_t n;
	double bounds[HIST_MAX_BUCKETS]; /* upper bounds, ascending; +Inf implied */
};

static const struct hist_def hist_defs[METRIC_N_HISTOGRAMS] = {
	[METRIC_PUBLISH_BATCH_SIZE] = {"outboxd_publish_batch_size", "Entries per SendMessageBatch request.",
	                               10, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
	[METRIC_EXECUTE_SECONDS] = {"outboxd_handler_execute_duration_seconds", "Time in the handler's execute().",
	                            14, {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120}},
	[METRIC_COMMIT_SECONDS] = {"outboxd_handler_commit_duration_seconds", "Time in the handler's commit(), inside the completion transaction.",
	                           12, {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5}},
	[METRIC_START_LATENCY_SECONDS] = {"outboxd_commit_to_handler_start_seconds", "From the producer's commit (the outbox event's created_at) to the handler's start.",
	                                  14, {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 600}},
};

struct hist {
	atomic_uint_fast64_t buckets[HIST_MAX_BUCKETS + 1]; /* not cumulative; last: +Inf */
	atomic_uint_fast64_t sum_scaled;
};

struct keyed_def {
	struct hist_def hist;
	const char *label; /* the key's label name */
};

static const struct keyed_def keyed_defs[METRIC_N_KEYED_HISTOGRAMS] = {
	/* ReceiveMessage long-polls for up to wait_time_seconds (20 s). */
	[METRIC_SQS_REQUEST_SECONDS] = {{"outboxd_sqs_request_duration_seconds", "SQS requests from sending to the whole answer, by action (a set of concurrent SendMessageBatch requests counts the set's time for each).",
	                                 14, {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 20, 30}}, "action"},
	[METRIC_DB_STATEMENT_SECONDS] = {{"outboxd_db_statement_duration_seconds", "Prepared statements of the relay and the consumer, from sending to the result, by statement name.",
	                                  13, {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30}}, "statement"},
};

/* A slot's key is set once (compare-and-swap from NULL) and never freed:
 * slots fill in order, so two threads adding one key meet on one slot. */
static _Atomic(char *) keyed_keys[METRIC_N_KEYED_HISTOGRAMS][METRICS_MAX_KEYS];
static struct hist keyed_hists[METRIC_N_KEYED_HISTOGRAMS][METRICS_MAX_KEYS];

static const struct {
	const char *name;
	const char *help;
	const char *label;
} keyed_counter_defs[METRIC_N_KEYED_COUNTERS] = {
	[METRIC_INDEX_REBUILDS] = {"outboxd_index_rebuilds_total", "Indexes of the outbox schema the pruner rebuilt with REINDEX CONCURRENTLY, by index.", "index"},
	[METRIC_TABLE_VACUUMS] = {"outboxd_table_vacuums_total", "VACUUMs of an outbox table the pruner ran after vacuum_after_rows deleted rows, by table.", "table"},
};

static _Atomic(char *) counter_keys[METRIC_N_KEYED_COUNTERS][METRICS_MAX_KEYS];
static atomic_uint_fast64_t counter_values[METRIC_N_KEYED_COUNTERS][METRICS_MAX_KEYS];

static const struct {
	const char *name;
	const char *help;
} process_counter_defs[METRIC_N_PROCESS_COUNTERS] = {
	[METRIC_CREDENTIAL_REFRESHES] = {"outboxd_aws_credential_refreshes_total", "Refreshes of expiring AWS credentials that succeeded."},
	[METRIC_CREDENTIAL_REFRESH_FAILURES] = {"outboxd_aws_credential_refresh_failures_total", "Refreshes of AWS credentials that failed (each is retried with backoff)."},
};

static atomic_uint_fast64_t process_counters[METRIC_N_PROCESS_COUNTERS];

struct dest_metrics {
	char *name;
	atomic_uint_fast64_t counters[METRIC_N_COUNTERS];
	atomic_long gauges[METRIC_N_GAUGES];
	atomic_int_fast64_t progress_ms[METRIC_N_THREAD_KINDS];
	struct hist hists[METRIC_N_HISTOGRAMS];
	atomic_bool retired; /* a reload removed it: no thread runs for it */
};

static struct dest_metrics *dests;
static size_t n_dests;

int metrics_init(const char *const *names, size_t n)
{
	if (dests != NULL)
		return -1;
	dests = calloc(n ? n : 1, sizeof(*dests));
	if (dests == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		dests[i].name = strdup(names[i]);
		if (dests[i].name == NULL) {
			n_dests = i;
			metrics_shutdown();
			return -1;
		}
	}
	n_dests = n;
	return 0;
}

void metrics_shutdown(void)
{
	for (size_t i = 0; i < n_dests; i++)
		free(dests[i].name);
	free(dests);
	dests = NULL;
	n_dests = 0;
}

/* Linear: a daemon has a handful of destinations, and strcmp of short
 * names costs less than the atomic add that follows. */
static struct dest_metrics *find(const char *destination)
{
	if (destination == NULL)
		return NULL;
	for (size_t i = 0; i < n_dests; i++) {
		if (strcmp(dests[i].name, destination) == 0)
			return &dests[i];
	}
	return NULL;
}

void metrics_add(enum metric_counter c, const char *destination, uint64_t n)
{
	struct dest_metrics *d = find(destination);

	if (d != NULL && c < METRIC_N_COUNTERS)
		atomic_fetch_add_explicit(&d->counters[c], n, memory_order_relaxed);
}

void metrics_gauge_add(enum metric_gauge g, const char *destination, int delta)
{
	struct dest_metrics *d = find(destination);

	if (d != NULL && g < METRIC_N_GAUGES)
		atomic_fetch_add_explicit(&d->gauges[g], delta, memory_order_relaxed);
}

static void hist_add(struct hist *h, const struct hist_def *def, double value)
{
	size_t b = 0;

	if (value < 0)
		value = 0; /* clock skew between hosts: count it, at zero */
	while (b < def->n && value > def->bounds[b])
		b++;
	atomic_fetch_add_explicit(&h->buckets[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_scaled, (uint_fast64_t)llround(value * SUM_SCALE),
	                          memory_order_relaxed);
}

void metrics_observe(enum metric_histogram h, const char *destination, double value)
{
	struct dest_metrics *d = find(destination);

	if (d == NULL || h >= METRIC_N_HISTOGRAMS || isnan(value))
		return;
	hist_add(&d->hists[h], &hist_defs[h], value);
}

/* The slot of key in keys (METRICS_MAX_KEYS of them), claimed if new; -1
 * when the table is full or out of memory. */
static int keyed_slot(_Atomic(char *) *keys, const char *key)
{
	char *copy = NULL;

	for (int i = 0; i < METRICS_MAX_KEYS; i++) {
		char *k = atomic_load_explicit(&keys[i], memory_order_acquire);

		if (k == NULL) {
			if (copy == NULL)
				copy = strdup(key);
			if (copy == NULL)
				return -1;
			if (atomic_compare_exchange_strong(&keys[i], &k, copy))
				return i;
			/* k now holds the key another thread put there. */
		}
		if (strcmp(k, key) == 0) {
			free(copy);
			return i;
		}
	}
	free(copy);
	return -1;
}

void metrics_observe_keyed(enum metric_keyed_histogram h, const char *key, double value)
{
	int i;

	if (h >= METRIC_N_KEYED_HISTOGRAMS || key == NULL || isnan(value))
		return;
	i = keyed_slot(keyed_keys[h], key);
	if (i >= 0)
		hist_add(&keyed_hists[h][i], &keyed_defs[h].hist, value);
}

void metrics_inc_keyed(enum metric_keyed_counter c, const char *key)
{
	int i;

	if (c >= METRIC_N_KEYED_COUNTERS || key == NULL)
		return;
	i = keyed_slot(counter_keys[c], key);
	if (i >= 0)
		atomic_fetch_add_explicit(&counter_values[c][i], 1, memory_order_relaxed);
}

void metrics_process_inc(enum metric_process_counter c)
{
	if (c < METRIC_N_PROCESS_COUNTERS)
		atomic_fetch_add_explicit(&process_counters[c], 1, memory_order_relaxed);
}

double metrics_now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void metrics_progress(enum metric_thread_kind k, const char *destination)
{
	struct dest_metrics *d = find(destination);

	if (d != NULL && k < METRIC_N_THREAD_KINDS)
		atomic_store_explicit(&d->progress_ms[k], now_ms(), memory_order_relaxed);
}

void metrics_set_retired(const char *destination, bool retired)
{
	struct dest_metrics *d = find(destination);

	if (d != NULL)
		atomic_store(&d->retired, retired);
}

bool metrics_destination_retired(size_t i)
{
	return i < n_dests && atomic_load(&dests[i].retired);
}

size_t metrics_n_destinations(void)
{
	return n_dests;
}

const char *metrics_destination(size_t i)
{
	return i < n_dests ? dests[i].name : NULL;
}

uint64_t metrics_counter_value(enum metric_counter c, size_t dest)
{
	return dest < n_dests ? atomic_load_explicit(&dests[dest].counters[c], memory_order_relaxed) : 0;
}

long metrics_gauge_value(enum metric_gauge g, size_t dest)
{
	return dest < n_dests ? atomic_load_explicit(&dests[dest].gauges[g], memory_order_relaxed) : 0;
}

int64_t metrics_last_progress_ms(enum metric_thread_kind k, size_t dest)
{
	return dest < n_dests ? atomic_load_explicit(&dests[dest].progress_ms[k], memory_order_relaxed)
	                      : 0;
}

/* ---- exposition ---- */

void metrics_write_label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void write_dest_label(FILE *out, const char *dest)
{
	fputs("destination=\"", out);
	metrics_write_label_value(out, dest);
	fputc('"', out);
}

static void write_counters(FILE *out)
{
	for (int c = 0; c < METRIC_N_COUNTERS; c++) {
		const struct counter_def *def = &counter_defs[c];

		if (def->help != NULL)
			fprintf(out, "# HELP %s_total %s\n# TYPE %s_total counter\n", def->name, def->help,
			        def->name);
		for (size_t i = 0; i < n_dests; i++) {
			fprintf(out, "%s_total{", def->name);
			write_dest_label(out, dests[i].name);
			if (def->label != NULL)
				fprintf(out, ",%s=\"%s\"", def->label, def->value);
			fprintf(out, "} %llu\n", (unsigned long long)metrics_counter_value(c, i));
		}
	}
}

static void write_gauge(FILE *out, int g, const char *name, const char *deprecated)
{
	fprintf(out, "# HELP %s %s%s\n# TYPE %s gauge\n", name, gauge_defs[g].help, deprecated,
	        name);
	for (size_t i = 0; i < n_dests; i++) {
		fprintf(out, "%s{", name);
		write_dest_label(out, dests[i].name);
		fprintf(out, "} %ld\n", metrics_gauge_value(g, i));
	}
}

static void write_gauges(FILE *out)
{
	for (int g = 0; g < METRIC_N_GAUGES; g++) {
		write_gauge(out, g, gauge_defs[g].name, "");
		write_gauge(out, g, gauge_defs[g].old_name, " Deprecated: use the *_connected name.");
	}
}

/* One series' label: label="value" (destination="news", action="..."). */
struct series_label {
	const char *name;
	const char *value;
};

static void write_label(FILE *out, struct series_label l)
{
	fprintf(out, "%s=\"", l.name);
	metrics_write_label_value(out, l.value);
	fputc('"', out);
}

static void write_bucket(FILE *out, const char *name, struct series_label l, const char *le,
                         uint64_t cumulative)
{
	fprintf(out, "%s_bucket{", name);
	write_label(out, l);
	fprintf(out, ",le=\"%s\"} %llu\n", le, (unsigned long long)cumulative);
}

static void write_histogram(FILE *out, const struct hist_def *def, struct series_label l,
                            const struct hist *h)
{
	uint64_t cumulative = 0, count;
	char le[32];

	for (size_t b = 0; b < def->n; b++) {
		cumulative += atomic_load_explicit(&h->buckets[b], memory_order_relaxed);
		snprintf(le, sizeof(le), "%g", def->bounds[b]);
		write_bucket(out, def->name, l, le, cumulative);
	}
	cumulative += atomic_load_explicit(&h->buckets[def->n], memory_order_relaxed);
	/* _count equals the +Inf bucket even when a recording raced the read. */
	count = cumulative;
	write_bucket(out, def->name, l, "+Inf", cumulative);
	fprintf(out, "%s_sum{", def->name);
	write_label(out, l);
	fprintf(out, "} %.6f\n%s_count{", (double)atomic_load_explicit(&h->sum_scaled,
	        memory_order_relaxed) / SUM_SCALE, def->name);
	write_label(out, l);
	fprintf(out, "} %llu\n", (unsigned long long)count);
}

static void write_histograms(FILE *out)
{
	for (int h = 0; h < METRIC_N_HISTOGRAMS; h++) {
		fprintf(out, "# HELP %s %s\n# TYPE %s histogram\n", hist_defs[h].name, hist_defs[h].help,
		        hist_defs[h].name);
		for (size_t i = 0; i < n_dests; i++)
			write_histogram(out, &hist_defs[h], (struct series_label){"destination", dests[i].name},
			                &dests[i].hists[h]);
	}
	for (int h = 0; h < METRIC_N_KEYED_HISTOGRAMS; h++) {
		const struct keyed_def *def = &keyed_defs[h];

		fprintf(out, "# HELP %s %s\n# TYPE %s histogram\n", def->hist.name, def->hist.help,
		        def->hist.name);
		for (size_t i = 0; i < METRICS_MAX_KEYS; i++) {
			const char *key = atomic_load_explicit(&keyed_keys[h][i], memory_order_acquire);

			if (key == NULL)
				break;
			write_histogram(out, &def->hist, (struct series_label){def->label, key},
			                &keyed_hists[h][i]);
		}
	}
}

static void write_process_counters(FILE *out)
{
	for (int c = 0; c < METRIC_N_PROCESS_COUNTERS; c++)
		fprintf(out, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", process_counter_defs[c].name,
		        process_counter_defs[c].help, process_counter_defs[c].name,
		        process_counter_defs[c].name, (unsigned long long)atomic_load_explicit(
		        &process_counters[c], memory_order_relaxed));
}

static void write_keyed_counters(FILE *out)
{
	for (int c = 0; c < METRIC_N_KEYED_COUNTERS; c++) {
		const char *name = keyed_counter_defs[c].name;

		fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, keyed_counter_defs[c].help,
		        name);
		for (int i = 0; i < METRICS_MAX_KEYS; i++) {
			const char *key = atomic_load_explicit(&counter_keys[c][i], memory_order_acquire);

			if (key == NULL)
				break;
			fprintf(out, "%s{%s=\"", name, keyed_counter_defs[c].label);
			metrics_write_label_value(out, key);
			fprintf(out, "\"} %llu\n", (unsigned long long)atomic_load_explicit(
			        &counter_values[c][i], memory_order_relaxed));
		}
	}
}

int metrics_write_prometheus(FILE *out)
{
	write_counters(out);
	write_process_counters(out);
	write_keyed_counters(out);
	write_gauges(out);
	write_histograms(out);
	return ferror(out) ? -1 : 0;
}

int metrics_write_gauge_family(FILE *out, const char *name, const char *help,
                               const char *const *destinations, const double *values, size_t n)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (size_t i = 0; i < n; i++) {
		if (isnan(values[i]))
			continue;
		fprintf(out, "%s{", name);
		write_dest_label(out, destinations[i]);
		fprintf(out, "} %.3f\n", values[i]);
	}
	return ferror(out) ? -1 : 0;
}
