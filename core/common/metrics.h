/*
 * common/metrics.h: the process's metrics registry (docs/metrics.md).
 *
 * Counters, gauges and histograms per destination, kept in relaxed
 * atomics so that the relay and the consumer pay one atomic add per event
 * and never take a lock.  The destinations are registered once, before
 * any thread that records starts (metrics_init()); afterwards the table
 * is read-only and every call below is safe from any thread.  A call for a
 * destination that was never registered (tests, benches, outboxctl) does
 * nothing.
 *
 * The exposition (names, help, labels) is in common/metrics.c; the HTTP
 * server that serves it is daemon/http_server.c.
 */
#ifndef OUTBOX_CORE_METRICS_H
#define OUTBOX_CORE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Counters: the comment is the Prometheus series. */
enum metric_counter {
	METRIC_EVENTS_PUBLISHED,        /* outboxd_events_published_total */
	METRIC_EVENTS_DEAD,             /* outboxd_events_dead_total */
	METRIC_SEND_FAILED_TRANSIENT,   /* outboxd_send_failures_total{error_class="transient"} */
	METRIC_SEND_FAILED_PERMANENT,   /* outboxd_send_failures_total{error_class="permanent"} */
	METRIC_JOBS_CLAIMED,            /* outboxd_jobs_claimed_total */
	METRIC_JOBS_SUCCEEDED,          /* outboxd_jobs_succeeded_total */
	METRIC_JOBS_RETRIED,            /* outboxd_jobs_retried_total */
	METRIC_JOBS_DEAD_PERMANENT,     /* outboxd_jobs_dead_total{reason="PERMANENT"} */
	METRIC_JOBS_DEAD_STALE,         /* outboxd_jobs_dead_total{reason="STALE"} */
	METRIC_JOBS_DEAD_DLQ,           /* outboxd_jobs_dead_total{reason="DLQ"} */
	METRIC_JOBS_DEAD_UNROUTABLE,    /* outboxd_jobs_dead_total{reason="UNROUTABLE"}: the relay killed its event */
	METRIC_JOBS_DEAD_CRASHED,       /* outboxd_jobs_dead_total{reason="CRASHED"}: quarantined */
	METRIC_JOBS_DEAD_MAX_ATTEMPTS,  /* outboxd_jobs_dead_total{reason="MAX_ATTEMPTS"} */
	METRIC_JOBS_DEAD_CANCELLED,     /* outboxd_jobs_dead_total{reason="CANCELLED"} */
	METRIC_DUPLICATES_SKIPPED,      /* outboxd_duplicate_deliveries_skipped_total */
	METRIC_DB_RECONNECTS,           /* outboxd_database_reconnects_total */
	METRIC_HANDLERS_ABANDONED,      /* outboxd_handler_threads_abandoned_total */
	METRIC_N_COUNTERS
};

/* Gauges the threads move up and down.  The series were named *_up until
 * 0.2 (Prometheus keeps "up" for a target's 0/1 health); the old names are
 * written too, for one release (NEWS). */
enum metric_gauge {
	METRIC_LANES_UP,   /* outboxd_relay_lanes_connected: lanes connected to the database */
	METRIC_WORKERS_UP, /* outboxd_consumer_workers_connected: workers connected */
	METRIC_N_GAUGES
};

enum metric_histogram {
	METRIC_PUBLISH_BATCH_SIZE,   /* outboxd_publish_batch_size (entries) */
	METRIC_EXECUTE_SECONDS,      /* outboxd_handler_execute_duration_seconds */
	METRIC_COMMIT_SECONDS,       /* outboxd_handler_commit_duration_seconds */
	METRIC_START_LATENCY_SECONDS, /* outboxd_commit_to_handler_start_seconds */
	METRIC_N_HISTOGRAMS
};

/* Histograms of the whole process, one series per key (an SQS action, a
 * prepared statement's name) rather than per destination. */
enum metric_keyed_histogram {
	METRIC_SQS_REQUEST_SECONDS,  /* outboxd_sqs_request_duration_seconds{action} */
	METRIC_DB_STATEMENT_SECONDS, /* outboxd_db_statement_duration_seconds{statement} */
	METRIC_N_KEYED_HISTOGRAMS
};

/* Counters of the whole process, one series per key (a name in the code
 * or in the schema, never data). */
enum metric_keyed_counter {
	METRIC_INDEX_REBUILDS, /* outboxd_index_rebuilds_total{index} */
	METRIC_TABLE_VACUUMS,  /* outboxd_table_vacuums_total{table} */
	METRIC_N_KEYED_COUNTERS
};

/* Counters of the whole process, without a label. */
enum metric_process_counter {
	METRIC_CREDENTIAL_REFRESHES,         /* outboxd_aws_credential_refreshes_total */
	METRIC_CREDENTIAL_REFRESH_FAILURES,  /* outboxd_aws_credential_refresh_failures_total */
	METRIC_N_PROCESS_COUNTERS
};

/* Threads whose progress /healthz and the systemd watchdog watch. */
enum metric_thread_kind {
	METRIC_THREAD_LANE,
	METRIC_THREAD_WORKER,
	METRIC_N_THREAD_KINDS
};

/*
 * Registers the destinations (names copied).  Call once, before the
 * threads start; a second call is refused.  Returns 0, or -1 out of memory.
 */
int metrics_init(const char *const *names, size_t n);
/* Frees the registry; only after every recording thread stopped. */
void metrics_shutdown(void);

void metrics_add(enum metric_counter c, const char *destination, uint64_t n);
#define metrics_inc(c, destination) metrics_add((c), (destination), 1)
void metrics_gauge_add(enum metric_gauge g, const char *destination, int delta);
/* value in the histogram's unit (seconds, or entries). */
void metrics_observe(enum metric_histogram h, const char *destination, double value);
/*
 * value (seconds) under key (borrowed; copied the first time it is seen).
 * At most METRICS_MAX_KEYS keys per histogram: the keys are names in the
 * code, not data; others are dropped.  Needs no metrics_init().
 */
#define METRICS_MAX_KEYS 48
void metrics_observe_keyed(enum metric_keyed_histogram h, const char *key, double value);
/* One more under key (borrowed; copied), at most METRICS_MAX_KEYS keys. */
void metrics_inc_keyed(enum metric_keyed_counter c, const char *key);
/* Needs no metrics_init() either. */
void metrics_process_inc(enum metric_process_counter c);
/* CLOCK_MONOTONIC in seconds, for the duration histograms. */
double metrics_now_seconds(void);
/* A thread of this kind for the destination made progress just now. */
void metrics_progress(enum metric_thread_kind k, const char *destination);
/* A reload stopped the destination's threads (retired) or started them
 * again: readiness and liveness skip a retired destination, whose
 * threads make no progress because there are none. */
void metrics_set_retired(const char *destination, bool retired);

/* ---- readers (the HTTP server, readiness, tests) ---- */

size_t metrics_n_destinations(void);
/* Borrowed, valid until metrics_shutdown(); i < metrics_n_destinations(). */
const char *metrics_destination(size_t i);
/* metrics_set_retired() of destination i; false for i out of range. */
bool metrics_destination_retired(size_t i);
uint64_t metrics_counter_value(enum metric_counter c, size_t dest);
long metrics_gauge_value(enum metric_gauge g, size_t dest);
/* Milliseconds (CLOCK_MONOTONIC) of the freshest progress; 0 if never. */
int64_t metrics_last_progress_ms(enum metric_thread_kind k, size_t dest);

/*
 * Writes every counter, gauge and histogram in the Prometheus text format
 * (version 0.0.4) to out.  Returns 0, or -1 if a write failed.
 */
int metrics_write_prometheus(FILE *out);

/*
 * Writes one gauge family with a value per destination: "# HELP", "# TYPE"
 * and one line per value; NaN values are left out (no such row).  For the
 * families the daemon computes at scrape time.  Returns 0 or -1.
 */
int metrics_write_gauge_family(FILE *out, const char *name, const char *help,
                               const char *const *destinations, const double *values,
                               size_t n);

/* Writes s escaped as a Prometheus label value (\\, \", \n). */
void metrics_write_label_value(FILE *out, const char *s);

#endif
