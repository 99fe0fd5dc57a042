/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/options.c: the option table of relay.ini and what it drives:
 * checking and storing a value, the defaults, and freeing a cfg.
 *
 * Every key of every section is one row of cfg_opts; adding a key is adding
 * a row here (see docs/hacking.md).
 */
#include "config/config.h"
#include "config/internal.h"
#include "config/listen.h"

#include <ctype.h>
#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "config/text.h"

/*
 * One option per line, so tests/check-options-documented.sh can extract the
 * names with a regular expression: keep CFG_OPT_*("section", "key", ... on
 * one line.
 */
#define CFG_OPT_STR(sect, key, type, flags, base, member, def) \
	{ sect, key, type, flags, offsetof(struct base, member), def, 0, 0, 0 }
#define CFG_OPT_INT(sect, key, base, member, def, lo, hi) \
	{ sect, key, CFG_T_INT, 0, offsetof(struct base, member), NULL, def, lo, hi }
#define CFG_OPT_BOOL(sect, key, base, member, def) \
	{ sect, key, CFG_T_BOOL, 0, offsetof(struct base, member), NULL, def, 0, 1 }

const struct cfg_opt cfg_opts[] = {
	CFG_OPT_STR("outboxd", "plugin_path", CFG_T_PATHS, 0, cfg, outboxd.plugin_path, NULL),
	CFG_OPT_STR("database", "conninfo", CFG_T_CONNINFO, CFG_F_REQUIRED | CFG_F_SECRET, cfg, database.conninfo, NULL),
	CFG_OPT_INT("database", "lock_timeout_seconds", cfg, database.lock_timeout_seconds, 10, 0, 3600),
	CFG_OPT_INT("database", "statement_timeout_seconds", cfg, database.statement_timeout_seconds, 60, 0, 86400),
	CFG_OPT_INT("database", "idle_in_transaction_timeout_seconds", cfg, database.idle_in_transaction_timeout_seconds, 60, 0, 86400),
	CFG_OPT_STR("aws", "region", CFG_T_STR, 0, cfg, aws.region, NULL),
	CFG_OPT_STR("aws", "endpoint_url", CFG_T_URL, 0, cfg, aws.endpoint_url, NULL),
	CFG_OPT_STR("s3", "bucket", CFG_T_STR, 0, cfg, s3.bucket, NULL),
	CFG_OPT_STR("s3", "prefix", CFG_T_STR, 0, cfg, s3.prefix, "prices/"),
	CFG_OPT_STR("s3", "endpoint_url", CFG_T_URL, 0, cfg, s3.endpoint_url, NULL),
	CFG_OPT_INT("relay", "batch_size", cfg, relay.batch_size, 10, 1, 10),
	CFG_OPT_INT("relay", "poll_interval_ms", cfg, relay.poll_interval_ms, 500, 10, 60000),
	CFG_OPT_INT("relay", "retry_base_seconds", cfg, relay.retry_base_seconds, 2, 1, 3600),
	CFG_OPT_INT("relay", "retry_max_seconds", cfg, relay.retry_max_seconds, 300, 1, 86400),
	CFG_OPT_INT("relay", "claim_lease_seconds", cfg, relay.claim_lease_seconds, 30, 5, 3600),
	CFG_OPT_INT("relay", "claim_max", cfg, relay.claim_max, 500, 1, 10000),
	CFG_OPT_INT("relay", "send_concurrency", cfg, relay.send_concurrency, 8, 1, 64),
	CFG_OPT_INT("relay", "linger_max_ms", cfg, relay.linger_max_ms, 20, 0, 1000),
	CFG_OPT_BOOL("relay", "synchronous_commit", cfg, relay.synchronous_commit, 0),
	CFG_OPT_INT("consumer", "workers", cfg, consumer.workers, 4, 1, 64),
	CFG_OPT_INT("consumer", "wait_time_seconds", cfg, consumer.wait_time_seconds, 20, 0, 20),
	CFG_OPT_INT("consumer", "visibility_timeout_seconds", cfg, consumer.visibility_timeout_seconds, 60, 1, 43200),
	CFG_OPT_INT("consumer", "lease_seconds", cfg, consumer.lease_seconds, 60, 5, 43200),
	CFG_OPT_INT("consumer", "shutdown_grace_seconds", cfg, consumer.shutdown_grace_seconds, 30, 0, 3600),
	CFG_OPT_INT("consumer", "quarantine_after_crashes", cfg, consumer.quarantine_after_crashes, 3, 1, 1000),
	CFG_OPT_INT("consumer", "claim_max", cfg, consumer.claim_max, 100, 1, 1000),
	CFG_OPT_INT("consumer", "linger_max_ms", cfg, consumer.linger_max_ms, 20, 0, 1000),
	CFG_OPT_STR("metrics", "listen", CFG_T_LISTEN, 0, cfg, metrics.listen, NULL),
	CFG_OPT_STR("logging", "level", CFG_T_LOG_LEVEL, 0, cfg, logging.level, "info"),
	CFG_OPT_STR("logging", "format", CFG_T_LOG_FORMAT, 0, cfg, logging.format, "text"),
	CFG_OPT_STR("console", "listen", CFG_T_LISTEN, 0, cfg, console.listen, NULL),
	CFG_OPT_STR("console", "token_env", CFG_T_ENV, 0, cfg, console.token_env, NULL),
	CFG_OPT_STR("destination", "queue_url", CFG_T_URL, CFG_F_REQUIRED, cfg_destination, queue_url, NULL),
	CFG_OPT_STR("destination", "dlq_url", CFG_T_URL, 0, cfg_destination, dlq_url, NULL),
	CFG_OPT_STR("destination", "plugin", CFG_T_PLUGIN, CFG_F_REQUIRED, cfg_destination, plugin, NULL),
	CFG_OPT_INT("destination", "max_receive_count", cfg_destination, max_receive_count, 5, 1, 1000),
	CFG_OPT_INT("destination", "message_retention_seconds", cfg_destination, message_retention_seconds, 345600, 60, 1209600),
	CFG_OPT_INT("destination", "dlq_message_retention_seconds", cfg_destination, dlq_message_retention_seconds, 1209600, 60, 1209600),
	CFG_OPT_INT("destination", "handler_timeout_seconds", cfg_destination, handler_timeout_seconds, 600, 0, 86400),
	CFG_OPT_INT("destination", "max_attempts", cfg_destination, max_attempts, 0, 0, 1000000),
	CFG_OPT_INT("destination", "max_in_flight", cfg_destination, max_in_flight, 0, 0, 64),
	CFG_OPT_INT("retention", "succeeded_jobs_seconds", cfg, retention.succeeded_jobs_seconds, 2592000, 0, 2147483647),
	CFG_OPT_INT("retention", "dead_jobs_seconds", cfg, retention.dead_jobs_seconds, 2592000, 0, 2147483647),
	CFG_OPT_INT("retention", "events_seconds", cfg, retention.events_seconds, 2592000, 0, 2147483647),
	CFG_OPT_INT("retention", "dlq_messages_seconds", cfg, retention.dlq_messages_seconds, 2592000, 0, 2147483647),
	CFG_OPT_INT("retention", "interval_seconds", cfg, retention.interval_seconds, 60, 1, 86400),
	CFG_OPT_INT("retention", "batch_size", cfg, retention.batch_size, 1000, 1, 100000),
	CFG_OPT_INT("retention", "reindex_bloat_ratio", cfg, retention.reindex_bloat_ratio, 2, 0, 100),
	CFG_OPT_INT("retention", "reindex_min_bytes", cfg, retention.reindex_min_bytes, 8388608, 0, 2147483647),
	CFG_OPT_INT("retention", "vacuum_after_rows", cfg, retention.vacuum_after_rows, 10000, 0, 2147483647),
	CFG_OPT_INT("sweeper", "horizon_seconds", cfg, sweeper.horizon_seconds, 0, 0, 86400),
	CFG_OPT_INT("sweeper", "interval_seconds", cfg, sweeper.interval_seconds, 30, 1, 86400),
	CFG_OPT_INT("sweeper", "batch_size", cfg, sweeper.batch_size, 500, 1, 100000),
	CFG_OPT_STR("schedule", "cron", CFG_T_STR, 0, cfg_schedule, cron, NULL),
	CFG_OPT_INT("schedule", "every", cfg_schedule, every_seconds, 0, 1, 31622400),
	CFG_OPT_STR("schedule", "timezone", CFG_T_STR, 0, cfg_schedule, timezone, NULL),
	CFG_OPT_STR("schedule", "job_type", CFG_T_STR, CFG_F_REQUIRED, cfg_schedule, job_type, NULL),
	CFG_OPT_STR("schedule", "destination", CFG_T_STR, CFG_F_REQUIRED, cfg_schedule, destination, NULL),
	CFG_OPT_STR("schedule", "payload", CFG_T_STR, 0, cfg_schedule, payload, "{}"),
	CFG_OPT_STR("schedule", "catch_up", CFG_T_STR, 0, cfg_schedule, catch_up, "last"),
};

/* Adding a row means raising CFG_N_OPTS in internal.h. */
_Static_assert(sizeof(cfg_opts) / sizeof(cfg_opts[0]) == CFG_N_OPTS,
	       "CFG_N_OPTS does not match the option table");

/* ---- values ---- */

bool cfg_matches_charset(const char *s, const char *extra, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (; *s; s++) {
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && !strchr(extra, *s))
			return false;
	}
	return true;
}

static bool cfg_is_url(const char *v)
{
	size_t scheme;

	if (strncmp(v, "http://", 7) == 0)
		scheme = 7;
	else if (strncmp(v, "https://", 8) == 0)
		scheme = 8;
	else
		return false;
	if (v[scheme] == '\0')
		return false;
	for (; *v; v++) {
		if (isspace((unsigned char)*v))
			return false;
	}
	return true;
}

static bool cfg_is_conninfo(const char *v)
{
	char *err = NULL;
	PQconninfoOption *opts = PQconninfoParse(v, &err);

	/* err may quote parts of the string, which may hold a password. */
	PQfreemem(err);
	if (!opts)
		return false;
	PQconninfoFree(opts);
	return true;
}

/*
 * An URL is printable ASCII (RFC 3986): other bytes must be percent-encoded,
 * and a raw one makes every request fail later, far from its cause.
 */
static const char *cfg_url_ascii_problem(const char *v)
{
	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;

		if (c < 0x21 || c > 0x7e)
			return "an URL may contain printable ASCII characters only "
			       "(percent-encode anything else)";
	}
	return NULL;
}

/*
 * A plugin search path: directories separated by ":", each absolute (a
 * relative one would depend on the daemon's working directory), none empty.
 */
static bool cfg_is_path_list(const char *v)
{
	for (const char *p = v;;) {
		size_t len = strcspn(p, ":");

		if (len == 0 || *p != '/')
			return false;
		for (size_t i = 0; i < len; i++) {
			if (isspace((unsigned char)p[i]))
				return false;
		}
		if (p[len] == '\0')
			return true;
		p += len + 1;
	}
}

/* An environment variable's name as a shell can set it. */
static bool cfg_is_env_name(const char *v)
{
	if (!(isalpha((unsigned char)*v) || *v == '_'))
		return false;
	for (const char *p = v; *p != '\0'; p++) {
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return false;
	}
	return strlen(v) <= CFG_MAX_NAME_LEN;
}

static const char *cfg_check_listen(const char *v)
{
	struct cfg_listen l;

	return cfg_listen_parse(v, &l);
}

/* Returns what a valid value looks like, or NULL if v is valid. */
static const char *cfg_check_text(enum cfg_type type, const char *v)
{
	enum log_level level;
	enum log_format format;

	switch (type) {
	case CFG_T_URL:
		if (!cfg_is_url(v))
			return "must be an URL starting with \"http://\" or \"https://\"";
		return cfg_url_ascii_problem(v);
	case CFG_T_CONNINFO:
		return cfg_is_conninfo(v) ? NULL : "not a valid libpq connection string";
	case CFG_T_PLUGIN:
		return cfg_matches_charset(v, "_", CFG_MAX_NAME_LEN) ? NULL : "must match [a-z0-9_]+";
	case CFG_T_PATHS:
		return cfg_is_path_list(v) ? NULL
		       : "must be absolute directories separated by \":\", without white space";
	case CFG_T_LISTEN:
		return cfg_check_listen(v);
	case CFG_T_LOG_LEVEL:
		return log_parse_level(v, &level) ? NULL : "must be error, warning, info or debug";
	case CFG_T_LOG_FORMAT:
		return log_parse_format(v, &format) ? NULL : "must be text or json";
	case CFG_T_ENV:
		return cfg_is_env_name(v) ? NULL
		       : "must be the name of an environment variable ([A-Za-z_][A-Za-z0-9_]*)";
	case CFG_T_STR:
	case CFG_T_INT:
	case CFG_T_BOOL:
		break;
	}
	return NULL;
}

static void cfg_set_int(struct cfg_parser *p, const struct cfg_opt *o, void *base,
			const char *v)
{
	char *end = NULL;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (end == v || *end != '\0' || errno == ERANGE) {
		if (cfg_text_looks_like_secret(v))
			cfg_error(p, p->line, p->section, o->name, "invalid integer (not shown)");
		else
			cfg_error(p, p->line, p->section, o->name, "invalid integer \"%s\"", v);
		return;
	}
	if (n < o->min || n > o->max) {
		cfg_error(p, p->line, p->section, o->name,
			  "value \"%s\" is out of range (%d..%d)", v, o->min, o->max);
		return;
	}
	*(int *)((char *)base + o->offset) = (int)n;
}

/* The spellings PostgreSQL accepts for a boolean setting. */
static void cfg_set_bool(struct cfg_parser *p, const struct cfg_opt *o, void *base,
			 const char *v)
{
	static const char *const yes[] = { "on", "true", "yes", "1" };
	static const char *const no[] = { "off", "false", "no", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(v, yes[i]) == 0 || strcasecmp(v, no[i]) == 0) {
			*(int *)((char *)base + o->offset) = strcasecmp(v, yes[i]) == 0;
			return;
		}
	}
	cfg_error(p, p->line, p->section, o->name,
		  "invalid boolean \"%s\" (use on or off)", v);
}

/* Options stored as an int rather than a string. */
static bool cfg_opt_is_int(const struct cfg_opt *o)
{
	return o->type == CFG_T_INT || o->type == CFG_T_BOOL;
}

void cfg_set_opt(struct cfg_parser *p, size_t i, void *base, const char *v)
{
	const struct cfg_opt *o = &cfg_opts[i];
	bool secret = (o->flags & CFG_F_SECRET) || cfg_text_looks_like_secret(v);
	const char *problem;
	char **slot;
	char *copy;

	if (p->opt_line[i]) {
		cfg_error(p, p->line, p->section, o->name,
			  "duplicate key (first set at line %d)", p->opt_line[i]);
		return;
	}
	p->opt_line[i] = p->line;
	if (*v == '\0') {
		cfg_error(p, p->line, p->section, o->name, "missing value");
		return;
	}
	if (o->type == CFG_T_INT) {
		cfg_set_int(p, o, base, v);
		return;
	}
	if (o->type == CFG_T_BOOL) {
		cfg_set_bool(p, o, base, v);
		return;
	}
	problem = cfg_check_text(o->type, v);
	if (problem) {
		cfg_error(p, p->line, p->section, o->name, "invalid value %s%s%s: %s",
			  secret ? "(not shown)" : "\"", secret ? "" : v, secret ? "" : "\"",
			  problem);
		return;
	}
	copy = strdup(v);
	if (!copy) {
		cfg_error(p, p->line, p->section, o->name, "out of memory");
		return;
	}
	slot = (char **)((char *)base + o->offset);
	free(*slot); /* a default such as s3.prefix */
	*slot = copy;
	if (o->type == CFG_T_PLUGIN)
		((struct cfg_destination *)base)->plugin_line = p->line;
}

/* ---- defaults and freeing, driven by the table ---- */

bool cfg_opt_is_dest(const struct cfg_opt *o)
{
	return strcmp(o->section, CFG_DEST) == 0;
}

enum cfg_base cfg_opt_base(const struct cfg_opt *o)
{
	if (cfg_opt_is_dest(o))
		return CFG_BASE_DEST;
	return strcmp(o->section, CFG_SCHED) == 0 ? CFG_BASE_SCHED : CFG_BASE_CFG;
}

int cfg_apply_defaults(void *base, enum cfg_base kind)
{
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		char **slot = (char **)((char *)base + o->offset);

		if (cfg_opt_base(o) != kind)
			continue;
		if (cfg_opt_is_int(o)) {
			*(int *)((char *)base + o->offset) = o->def_int;
		} else if (o->def_str) {
			*slot = strdup(o->def_str);
			if (!*slot)
				return -1;
		}
	}
	return 0;
}

void cfg_free_strings(void *base, enum cfg_base kind)
{
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		const struct cfg_opt *o = &cfg_opts[i];

		if (cfg_opt_base(o) == kind && !cfg_opt_is_int(o))
			free(*(char **)((char *)base + o->offset));
	}
}

static void cfg_destination_free(struct cfg_destination *d)
{
	cfg_free_strings(d, CFG_BASE_DEST);
	free(d->name);
	for (size_t i = 0; i < d->n_plugin_options; i++) {
		free(d->plugin_options[i].key);
		free(d->plugin_options[i].value);
	}
	free(d->plugin_options);
}

void cfg_free(struct cfg *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->n_destinations; i++)
		cfg_destination_free(&cfg->destinations[i]);
	free(cfg->destinations);
	for (size_t i = 0; i < cfg->n_schedules; i++) {
		cfg_free_strings(&cfg->schedules[i], CFG_BASE_SCHED);
		free(cfg->schedules[i].name);
	}
	free(cfg->schedules);
	cfg_free_strings(cfg, CFG_BASE_CFG);
	free(cfg->file);
	free(cfg);
}

const struct cfg_destination *cfg_find_destination(const struct cfg *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_destinations; i++) {
		if (strcmp(cfg->destinations[i].name, name) == 0)
			return &cfg->destinations[i];
	}
	return NULL;
}
