/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/config.h: relay.ini, parsed and validated into one immutable object.
 *
 * cfg_load() parses the whole file with inih, checks every key against the
 * option table in options.c, and collects every problem it finds (it never
 * stops at the first) as "FILE:LINE: [section] key: problem" messages.
 * Values of plugin.* keys are kept as text with their line; the plugin
 * loader validates them against the plugin's own option table.
 */
#ifndef OUTBOX_CORE_CONFIG_CONFIG_H
#define OUTBOX_CORE_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/compiler.h"
#include "common/cron.h"

/*
 * A list of error messages; each is a malloc'd, NUL-terminated line without
 * a trailing newline, owned by the list.  Initialise with {0}.
 */
struct cfg_errors {
	char **msgs;
	size_t n;
	size_t cap;
	size_t dropped;  /* messages lost to out-of-memory; still errors */
};

/* Appends one formatted line.  Never fails: on out-of-memory it counts the
 * message in dropped instead. */
void cfg_errors_add(struct cfg_errors *errs, const char *fmt, ...) OUTBOX_PRINTF(2, 3);
/* Total errors recorded, including dropped ones. */
size_t cfg_errors_count(const struct cfg_errors *errs);
/* Writes every message, one per line, to out (borrowed). */
void cfg_errors_print(const struct cfg_errors *errs, FILE *out);
/* Frees the messages and resets errs to empty; errs itself is the caller's. */
void cfg_errors_free(struct cfg_errors *errs);

/* One "plugin.KEY = VALUE" line of a destination; strings owned by cfg. */
struct cfg_plugin_option {
	char *key;   /* without the "plugin." prefix */
	char *value;
	int line;
};

/* All strings are owned by the cfg that holds the destination. */
struct cfg_destination {
	char *name;             /* NAME of [destination:NAME] */
	int line;               /* line of the section header */
	char *queue_url;        /* required */
	char *dlq_url;          /* optional; NULL if absent */
	char *plugin;           /* required; [a-z0-9_]+ */
	int plugin_line;
	int max_receive_count;  /* redrive policy for create-queues; default 5 */
	int message_retention_seconds;     /* the queue's MessageRetentionPeriod; default 4 days */
	int dlq_message_retention_seconds; /* the DLQ's; default 14 days */
	int handler_timeout_seconds; /* execute() time limit; 0: none; default 600 */
	int max_attempts;       /* a RETRY of attempt max_attempts ends DEAD 'MAX_ATTEMPTS'; 0: no limit */
	int max_in_flight;      /* execute() calls at once at most; 0 (default): workers */
	struct cfg_plugin_option *plugin_options;
	size_t n_plugin_options;
};

/* What a schedule does with the slots that passed while no instance ran it. */
enum cfg_catch_up {
	CFG_CATCH_UP_LAST = 0, /* enqueue the latest of them (the default) */
	CFG_CATCH_UP_NONE,     /* enqueue none: only slots from now on */
	CFG_CATCH_UP_ALL,      /* enqueue each, at most CFG_CATCH_UP_ALL_MAX (the latest) */
};

#define CFG_CATCH_UP_ALL_MAX 1000

/* [schedule:NAME]: a periodic job (docs/configuration.md); strings owned by the cfg. */
struct cfg_schedule {
	char *name;             /* NAME of [schedule:NAME] */
	int line;               /* line of the section header */
	char *cron;             /* "MIN HOUR DOM MON DOW"; NULL when every is set */
	struct cron cron_expr;  /* cron, parsed */
	int every_seconds;      /* 0 when cron is set */
	char *timezone;         /* cron's wall clock, e.g. "Europe/Berlin"; NULL: UTC */
	char *job_type;         /* required */
	char *destination;      /* required; a configured destination */
	int destination_line;
	char *payload;          /* JSON object or array; default "{}" */
	char *catch_up;         /* as written; default "last" */
	enum cfg_catch_up catch_up_mode;
};

struct cfg {
	char *file;  /* the path it was loaded from */

	struct {
		char *conninfo;          /* required */
		/* Session settings of outboxd's own connections; 0: the server's. */
		int lock_timeout_seconds;                /* default 10 */
		int statement_timeout_seconds;           /* default 60 */
		int idle_in_transaction_timeout_seconds; /* default 60 */
	} database;

	struct {
		char *region;            /* else AWS_REGION, else us-east-1 */
		char *endpoint_url;      /* optional */
	} aws;

	struct {
		char *bucket;            /* optional unless the price path is used */
		char *prefix;            /* default "prices/" */
		char *endpoint_url;      /* optional */
	} s3;

	struct {
		int batch_size;          /* 1..10, default 10 */
		int poll_interval_ms;    /* default 500 */
		int retry_base_seconds;  /* default 2 */
		int retry_max_seconds;   /* default 300 */
		int claim_lease_seconds; /* default 30: how long a relay owns a claimed event */
		int claim_max;           /* events per claim statement at most; default 500 */
		int send_concurrency;    /* SendMessageBatch requests in flight per lane; default 8 */
		int linger_max_ms;       /* bound of the adaptive linger; default 20 */
		int synchronous_commit;  /* 0/1: relay statements wait for the WAL flush; default 0 */
	} relay;

	struct {
		int workers;                    /* default 4 */
		int wait_time_seconds;          /* 0..20, default 20 */
		int visibility_timeout_seconds; /* default 60 */
		int lease_seconds;              /* default 60 */
		int shutdown_grace_seconds;     /* default 30 */
		int quarantine_after_crashes;   /* default 3: crashed runs before DEAD 'CRASHED' */
		int claim_max;                  /* messages per claim statement at most; default 100 */
		int linger_max_ms;              /* bound of the receive linger; default 20 */
	} consumer;

	struct {
		char *plugin_path;       /* optional: "DIR:DIR..." searched in order; NULL: PLUGINDIR */
	} outboxd;

	/* How long finished rows are kept (docs/maintenance.md); 0 = for ever. */
	struct {
		int succeeded_jobs_seconds;  /* default 30 days */
		int dead_jobs_seconds;       /* default 30 days */
		int events_seconds;          /* PUBLISHED/DEAD events; default 30 days */
		int dlq_messages_seconds;    /* dead-letter evidence; default 30 days */
		int interval_seconds;        /* between pruner runs; default 60 */
		int batch_size;              /* rows per delete statement; default 1000 */
		int reindex_bloat_ratio;     /* rebuild an index this many times its estimate; 0 = never */
		int reindex_min_bytes;       /* ... and at least this large; default 8 MiB */
		int vacuum_after_rows;       /* VACUUM a table after this many pruned rows; 0 = never */
	} retention;

	/* Re-arms the events of due jobs nothing will wake (docs/maintenance.md). */
	struct {
		int horizon_seconds;         /* 0 (default): cfg_sweeper_horizon_seconds() derives it */
		int interval_seconds;        /* between sweeps; default 30 */
		int batch_size;              /* events re-armed per statement; default 500 */
	} sweeper;

	struct {
		char *listen;                   /* HOST:PORT; NULL: no HTTP server */
	} metrics;

	/* outboxd's logging; --log-level / --log-format override them. */
	struct {
		char *level;                    /* error, warning, info (default), debug */
		char *format;                   /* text (default) or json */
	} logging;
	/* The web console (docs/console.md). */
	struct {
		char *listen;                   /* HOST:PORT; NULL (default): no console */
		char *token_env;                /* the variable holding the token; NULL: read-only */
	} console;

	struct cfg_destination *destinations;  /* in file order */
	size_t n_destinations;
	struct cfg_schedule *schedules;        /* in file order */
	size_t n_schedules;
};

/*
 * Longest key or section name accepted: inih silently truncates at 49.
 * [destination:NAME] headers may be longer (NAME has up to 40 bytes).
 */
#define CFG_MAX_NAME_LEN 48

/*
 * Parse and validate path.  On success returns 0 and *out (free with
 * cfg_free()).  On failure returns -1, leaves *out NULL and appends every
 * problem to errs.  A file that cannot be read is one error.
 */
int cfg_load(const char *path, struct cfg **out, struct cfg_errors *errs) OUTBOX_MUSTCHECK;
void cfg_free(struct cfg *cfg);

/*
 * The same checks as cfg_load(), for a report of every problem at once
 * (--check-config): *out is the parsed file even when it has errors, so
 * that its destinations' plugins can be checked in the same pass; it is
 * NULL only when the file could not be read.  In a file with errors, a key
 * that was refused keeps its default (NULL for a string without one).
 * Returns 0 when errs got nothing new, else -1.  Free *out with cfg_free().
 */
int cfg_load_partial(const char *path, struct cfg **out, struct cfg_errors *errs) OUTBOX_MUSTCHECK;

/*
 * The deduplication horizon: the longest a message of a job can still
 * arrive, MessageRetentionPeriod of a destination's queue plus its DLQ's
 * (when it has one), the largest over the destinations.  A job row kept at
 * least that long makes a repeated enqueue a no-op and a late message a
 * terminal skip.
 */
int cfg_dedup_horizon_seconds(const struct cfg *cfg);

/*
 * How long a due job may go untouched before the sweeper re-arms its event:
 * [sweeper] horizon_seconds, or when 0, 2 x visibility_timeout_seconds +
 * wait_time_seconds + lease_seconds (docs/maintenance.md).
 */
int cfg_sweeper_horizon_seconds(const struct cfg *cfg);

/* Borrowed pointer into cfg, or NULL. */
const struct cfg_destination *cfg_find_destination(const struct cfg *cfg, const char *name);

/* Borrowed pointer into cfg, or NULL. */
const struct cfg_schedule *cfg_find_schedule(const struct cfg *cfg, const char *name);

/*
 * For the plugin loader: appends "FILE:LINE: [destination:NAME] plugin.KEY:
 * problem" to errs, using opt's line, or "FILE:LINE: [destination:NAME]:
 * problem" on the section header's line when opt is NULL.  All pointers
 * are borrowed.  Never put a plugin option's value in fmt if the plugin
 * declares it secret.
 */
void cfg_plugin_option_error(struct cfg_errors *errs, const struct cfg *cfg,
			     const struct cfg_destination *d,
			     const struct cfg_plugin_option *opt, const char *fmt, ...)
	OUTBOX_PRINTF(5, 6);

#endif
