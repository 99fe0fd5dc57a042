/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/reload.c: apply a new relay.ini without a restart (see reload.h).
 *
 * Validation first, completely, then the diff against what runs: a file
 * with an error changes nothing.  PgBouncer and nginx behave the same: a
 * failed reload keeps the old configuration whole, never half of it.
 */
#include "daemon/reload.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "daemon/plugins.h"

static bool level_pinned, format_pinned;

void daemon_logging_pin(bool level, bool format)
{
	level_pinned = level;
	format_pinned = format;
}

/*
 * Only the main thread writes these, at start and at SIGHUP; a worker
 * reading the level while it changes logs one line by the old one.
 */
void daemon_logging_apply(const struct cfg *cfg)
{
	enum log_level level;
	enum log_format format;

	if (!format_pinned && log_parse_format(cfg->logging.format, &format))
		log_set_format(format);
	if (level_pinned || !log_parse_level(cfg->logging.level, &level) || level == log_max_level)
		return;
	/* Said under the more verbose of the two levels, so that it is seen. */
	if (level > log_max_level)
		log_max_level = level;
	log_info("log level is now %s", cfg->logging.level);
	log_max_level = level;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool same_destination(const struct cfg_destination *a, const struct cfg_destination *b)
{
	if (!same_str(a->queue_url, b->queue_url) || !same_str(a->dlq_url, b->dlq_url) ||
	    !same_str(a->plugin, b->plugin) || a->max_receive_count != b->max_receive_count ||
	    a->handler_timeout_seconds != b->handler_timeout_seconds ||
	    a->max_attempts != b->max_attempts ||
	    a->n_plugin_options != b->n_plugin_options)
		return false;
	for (size_t i = 0; i < a->n_plugin_options; i++) {
		if (!same_str(a->plugin_options[i].key, b->plugin_options[i].key) ||
		    !same_str(a->plugin_options[i].value, b->plugin_options[i].value))
			return false;
	}
	return true;
}

/* Logs one key that needs a restart; never its value (conninfo is secret). */
static int needs_restart(const char *section, const char *key)
{
	log_warning("reload: [%s] %s changed; it needs a restart of outboxd, the running value"
	            " stays", section, key);
	return 1;
}

/* Every key is named as its field in struct cfg. */
#define CMP_STR(sect, field) \
	(same_str(run->sect.field, next->sect.field) ? 0 : needs_restart(#sect, #field))
#define CMP_INT(sect, field) \
	(run->sect.field == next->sect.field ? 0 : needs_restart(#sect, #field))

/* The maintenance thread keeps the settings it started with. */
static int compare_maintenance(const struct cfg *run, const struct cfg *next)
{
	return CMP_INT(retention, succeeded_jobs_seconds) +
	       CMP_INT(retention, dead_jobs_seconds) +
	       CMP_INT(retention, events_seconds) +
	       CMP_INT(retention, dlq_messages_seconds) +
	       CMP_INT(retention, interval_seconds) +
	       CMP_INT(retention, batch_size) +
	       CMP_INT(retention, reindex_bloat_ratio) +
	       CMP_INT(retention, reindex_min_bytes) +
	       CMP_INT(retention, vacuum_after_rows) +
	       CMP_INT(sweeper, horizon_seconds) +
	       CMP_INT(sweeper, interval_seconds) +
	       CMP_INT(sweeper, batch_size);
}

static bool same_schedule(const struct cfg_schedule *a, const struct cfg_schedule *b)
{
	return same_str(a->name, b->name) && same_str(a->cron, b->cron) &&
	       a->every_seconds == b->every_seconds && same_str(a->timezone, b->timezone) &&
	       same_str(a->job_type, b->job_type) && same_str(a->destination, b->destination) &&
	       same_str(a->payload, b->payload) && a->catch_up_mode == b->catch_up_mode;
}

/* The scheduler thread keeps the schedules it started with. */
static int compare_schedules(const struct cfg *run, const struct cfg *next)
{
	bool same = run->n_schedules == next->n_schedules;

	for (size_t i = 0; same && i < run->n_schedules; i++)
		same = same_schedule(&run->schedules[i], &next->schedules[i]);
	if (same)
		return 0;
	log_warning("reload: the [schedule:NAME] sections changed; they need a restart of outboxd,"
	            " the running schedules stay");
	return 1;
}

/* The sections a reload does not apply; returns how many keys differ. */
static int compare_sections(const struct cfg *run, const struct cfg *next)
{
	return CMP_STR(outboxd, plugin_path) +
	       CMP_STR(database, conninfo) +
	       /* Set once for every session of the process (db_set_session_timeouts). */
	       CMP_INT(database, lock_timeout_seconds) +
	       CMP_INT(database, statement_timeout_seconds) +
	       CMP_INT(database, idle_in_transaction_timeout_seconds) +
	       CMP_STR(metrics, listen) + CMP_STR(console, listen) +
	       CMP_STR(console, token_env) + CMP_STR(aws, region) +
	       CMP_STR(aws, endpoint_url) + CMP_STR(s3, bucket) +
	       CMP_STR(s3, prefix) + CMP_STR(s3, endpoint_url) +
	       CMP_INT(relay, batch_size) +
	       CMP_INT(relay, poll_interval_ms) +
	       CMP_INT(relay, retry_base_seconds) +
	       CMP_INT(relay, retry_max_seconds) +
	       CMP_INT(relay, claim_lease_seconds) +
	       CMP_INT(relay, claim_max) +
	       CMP_INT(relay, send_concurrency) +
	       CMP_INT(relay, linger_max_ms) +
	       CMP_INT(relay, synchronous_commit) +
	       CMP_INT(consumer, workers) +
	       CMP_INT(consumer, wait_time_seconds) +
	       CMP_INT(consumer, visibility_timeout_seconds) +
	       CMP_INT(consumer, lease_seconds) +
	       CMP_INT(consumer, shutdown_grace_seconds) +
	       CMP_INT(consumer, quarantine_after_crashes) +
	       CMP_INT(consumer, claim_max) +
	       CMP_INT(consumer, linger_max_ms) +
	       compare_maintenance(run, next) +
	       compare_schedules(run, next);
}

static void log_errors(const struct cfg_errors *errs, const char *path)
{
	for (size_t i = 0; i < errs->n; i++)
		log_error("%s", errs->msgs[i]);
	if (errs->dropped)
		log_error("%zu more errors lost: out of memory", errs->dropped);
	log_error("reload failed: configuration file \"%s\" test failed; the running"
	          " configuration stays", path);
}

/* Loads and checks path; NULL (every error logged) or the new cfg. */
static struct cfg *load_checked(const char *path, bool plugins)
{
	struct cfg_errors errs = {0};
	struct cfg *next = NULL;

	if (cfg_load(path, &next, &errs) < 0 || (plugins && daemon_plugins_check(next, &errs) < 0)) {
		log_errors(&errs, path);
		cfg_free(next);
		next = NULL;
	}
	cfg_errors_free(&errs);
	return next;
}

/* What changed between what runs and next. */
struct diff {
	const char **restart; /* borrowed names (next's), changed destinations */
	size_t n_restart, added, removed, kept;
	bool relay;           /* the set of destinations or a queue URL changed */
};

static int diff_destinations(const struct cfg *cur, const struct cfg *next, struct diff *d)
{
	d->restart = calloc(next->n_destinations + 1, sizeof(*d->restart));
	if (d->restart == NULL)
		return -1;
	for (size_t i = 0; i < next->n_destinations; i++) {
		const struct cfg_destination *n = &next->destinations[i];
		const struct cfg_destination *o = cfg_find_destination(cur, n->name);

		if (o == NULL) {
			d->added++;
			d->relay = true;
			log_info("reload: destination added dest=%s", n->name);
		} else if (!same_destination(o, n)) {
			d->restart[d->n_restart++] = n->name;
			d->relay |= !same_str(o->queue_url, n->queue_url);
			log_info("reload: destination changed, restarting it dest=%s", n->name);
		} else {
			d->kept++;
		}
	}
	for (size_t i = 0; i < cur->n_destinations; i++) {
		if (cfg_find_destination(next, cur->destinations[i].name) == NULL) {
			d->removed++;
			d->relay = true;
			log_info("reload: destination removed, draining it dest=%s",
			         cur->destinations[i].name);
		}
	}
	return 0;
}

int daemon_reload(struct daemon_units *du, const char *path)
{
	struct diff d = {0};
	struct cfg *next;
	int failures;

	log_info("reloading the configuration file \"%s\"", path);
	next = load_checked(path, daemon_units_runs_consumer(du));
	if (next == NULL)
		return -1;
	daemon_logging_apply(next);
	(void)compare_sections(daemon_units_base(du), next);
	if (diff_destinations(daemon_units_current(du), next, &d) < 0) {
		log_error("out of memory: the configuration was not reloaded");
		cfg_free(next);
		return -1;
	}
	if (d.added + d.removed + d.n_restart == 0) {
		log_info("configuration reloaded: no destination changed (%zu unchanged)", d.kept);
		cfg_free(next);
		free(d.restart);
		return 0;
	}
	failures = daemon_units_apply(du, next, d.restart, d.n_restart, d.relay);
	log_info("configuration reloaded: %zu added, %zu removed, %zu restarted, %zu unchanged"
	         "%s", d.added, d.removed, d.n_restart, d.kept,
	         failures > 0 ? " (with failures, see above)" : "");
	free(d.restart);
	return failures;
}
