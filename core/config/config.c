/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/config.c: relay.ini parsing and validation (see config.h and
 * docs/configuration.md).
 *
 * inih splits "key = value" and strips inline comments; our line reader
 * does the line-level structure: line numbers, section headers, over-long
 * lines and continuation lines.  The distribution's libinih is built
 * without INI_HANDLER_LINENO and truncates section names silently, so we
 * hand inih only left-trimmed key lines (everything else becomes an empty
 * line) and inih's own section and continuation logic never runs.  The
 * handler is called for the line the reader returned last, which is how
 * it knows its line number.
 */
#include "config/config.h"
#include "config/listen.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <strings.h>
#include <sys/stat.h>

#include "config/text.h"

enum cfg_type {
	CFG_T_STR,      /* any non-empty text */
	CFG_T_URL,      /* http:// or https:// URL */
	CFG_T_CONNINFO, /* a libpq conninfo string or URI */
	CFG_T_PLUGIN,   /* plugin name, [a-z0-9_]+; also sets plugin_line */
	CFG_T_INT,      /* decimal integer within [min, max] */
	CFG_T_PATHS,    /* colon-separated absolute directories */
	CFG_T_LISTEN,   /* HOST:PORT (config/listen.h) */
	CFG_T_BOOL,     /* on/off, true/false, yes/no, 1/0, as PostgreSQL; stored as int */
};

#define CFG_F_REQUIRED 0x1u
#define CFG_F_SECRET 0x2u /* the value never appears in a message */

/* Options of [destination:NAME] sections use this section name. */
#define CFG_DEST "destination"
#define CFG_DEST_PREFIX "destination:"
#define CFG_PLUGIN_PREFIX "plugin."
#define CFG_DEST_NAME_MAX 40

/*
 * Hard limits of the reader, so that "-c /dev/zero" or a runaway file can
 * never grow memory: a relay.ini is a few kilobytes.  Lines longer than
 * inih's limit are refused anyway; the buffer only needs to hold enough of
 * one to say so.
 */
#define CFG_MAX_FILE_BYTES (1024L * 1024L)
#define CFG_LINE_BUF (2 * INI_MAX_LINE)

struct cfg_opt {
	const char *section;
	const char *name;
	enum cfg_type type;
	unsigned flags;
	size_t offset; /* into struct cfg, or struct cfg_destination for CFG_DEST */
	const char *def_str;
	int def_int, min, max;
};

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

static const struct cfg_opt cfg_opts[] = {
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
	CFG_OPT_STR("destination", "queue_url", CFG_T_URL, CFG_F_REQUIRED, cfg_destination, queue_url, NULL),
	CFG_OPT_STR("destination", "dlq_url", CFG_T_URL, 0, cfg_destination, dlq_url, NULL),
	CFG_OPT_STR("destination", "plugin", CFG_T_PLUGIN, CFG_F_REQUIRED, cfg_destination, plugin, NULL),
	CFG_OPT_INT("destination", "max_receive_count", cfg_destination, max_receive_count, 5, 1, 1000),
	CFG_OPT_INT("destination", "message_retention_seconds", cfg_destination, message_retention_seconds, 345600, 60, 1209600),
	CFG_OPT_INT("destination", "dlq_message_retention_seconds", cfg_destination, dlq_message_retention_seconds, 1209600, 60, 1209600),
	CFG_OPT_INT("destination", "handler_timeout_seconds", cfg_destination, handler_timeout_seconds, 600, 0, 86400),
	CFG_OPT_INT("retention", "succeeded_jobs_seconds", cfg, retention.succeeded_jobs_seconds, 2592000, 0, 2147483647),
	CFG_OPT_INT("retention", "dead_jobs_seconds", cfg, retention.dead_jobs_seconds, 2592000, 0, 2147483647),
	CFG_OPT_INT("retention", "events_seconds", cfg, retention.events_seconds, 2592000, 0, 2147483647),
	CFG_OPT_INT("retention", "dlq_messages_seconds", cfg, retention.dlq_messages_seconds, 2592000, 0, 2147483647),
	CFG_OPT_INT("retention", "interval_seconds", cfg, retention.interval_seconds, 60, 1, 86400),
	CFG_OPT_INT("retention", "batch_size", cfg, retention.batch_size, 1000, 1, 100000),
	CFG_OPT_INT("sweeper", "horizon_seconds", cfg, sweeper.horizon_seconds, 0, 0, 86400),
	CFG_OPT_INT("sweeper", "interval_seconds", cfg, sweeper.interval_seconds, 30, 1, 86400),
	CFG_OPT_INT("sweeper", "batch_size", cfg, sweeper.batch_size, 500, 1, 100000),
};

#define CFG_N_OPTS (sizeof(cfg_opts) / sizeof(cfg_opts[0]))

/* Fixed sections; [database] is the only required one. */
static const char *const cfg_fixed_sections[] = { "database", "aws", "s3", "relay", "consumer", "outboxd",
						  "retention", "sweeper", "metrics" };
#define CFG_N_FIXED (sizeof(cfg_fixed_sections) / sizeof(cfg_fixed_sections[0]))

enum cfg_sect_kind {
	CFG_SECT_NONE,    /* before the first header */
	CFG_SECT_IGNORED, /* unknown, duplicate or malformed: already reported */
	CFG_SECT_FIXED,
	CFG_SECT_DEST,
};

struct cfg_parser {
	struct cfg *cfg;          /* being built; owned until handed out */
	struct cfg_errors *errs;  /* borrowed */
	FILE *fp;
	char buf[CFG_LINE_BUF];   /* the current line, cut at CFG_LINE_BUF - 1 bytes */
	long bytes_read;          /* of the whole file, for CFG_MAX_FILE_BYTES */
	bool too_large;           /* stopped reading at CFG_MAX_FILE_BYTES */
	long nul_at;              /* offset of the current line's first NUL byte, or -1 */
	int line;                 /* line the reader returned last */
	bool key_seen;            /* a key line since the last header */
	/* Only for messages; a key can never be longer than one inih line. */
	char prev_key[INI_MAX_LINE];
	enum cfg_sect_kind kind;
	char section[sizeof(CFG_DEST_PREFIX) + CFG_DEST_NAME_MAX]; /* as written between the brackets */
	int section_line;
	size_t dest_idx;          /* current destination when kind == CFG_SECT_DEST */
	int fixed_line[CFG_N_FIXED]; /* header line of each fixed section, 0 if absent */
	int opt_line[CFG_N_OPTS];    /* line each option was set on (destination: current one) */
	struct cfg_url_lines *url_lines; /* per destination, in file order; owned */
};

/* Where a destination set its queue URLs, for the checks across destinations. */
struct cfg_url_lines {
	int queue_url, dlq_url;
};

/* ---- error lists ---- */

void cfg_errors_add(struct cfg_errors *errs, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0) {
		errs->dropped++;
		return;
	}
	if (errs->n == errs->cap) {
		size_t cap = errs->cap ? errs->cap * 2 : 8;
		char **msgs = realloc(errs->msgs, cap * sizeof(*msgs));

		if (!msgs) {
			free(msg);
			errs->dropped++;
			return;
		}
		errs->msgs = msgs;
		errs->cap = cap;
	}
	errs->msgs[errs->n++] = msg;
}

size_t cfg_errors_count(const struct cfg_errors *errs)
{
	return errs->n + errs->dropped;
}

void cfg_errors_print(const struct cfg_errors *errs, FILE *out)
{
	for (size_t i = 0; i < errs->n; i++)
		fprintf(out, "%s\n", errs->msgs[i]);
	if (errs->dropped)
		fprintf(out, "%zu more errors lost: out of memory\n", errs->dropped);
}

void cfg_errors_free(struct cfg_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		free(errs->msgs[i]);
	free(errs->msgs);
	errs->msgs = NULL;
	errs->n = 0;
	errs->cap = 0;
	errs->dropped = 0;
}

/*
 * Appends "FILE[:LINE]: [[SECTION]][ KEY]: problem"; line 0 means the file
 * as a whole, and an empty or NULL section or key is left out.
 */
static void cfg_verror(struct cfg_errors *errs, const char *file, int line,
		       const char *section, const char *key, const char *fmt, va_list ap)
	OUTBOX_PRINTF(6, 0);

static void cfg_verror(struct cfg_errors *errs, const char *file, int line,
		       const char *section, const char *key, const char *fmt, va_list ap)
{
	char *msg = NULL;
	char at[24] = "";
	bool has_sect = section && *section;
	bool has_key = key && *key;

	if (vasprintf(&msg, fmt, ap) < 0) {
		errs->dropped++;
		return;
	}
	if (line > 0)
		snprintf(at, sizeof(at), ":%d", line); /* an int always fits */
	cfg_errors_add(errs, "%s%s: %s%s%s%s%s%s%s", file, at,
		       has_sect ? "[" : "", has_sect ? section : "", has_sect ? "]" : "",
		       has_sect && has_key ? " " : "", has_key ? key : "",
		       has_sect || has_key ? ": " : "", msg);
	free(msg);
}

static void cfg_error(struct cfg_parser *p, int line, const char *section,
		      const char *key, const char *fmt, ...) OUTBOX_PRINTF(5, 6);

static void cfg_error(struct cfg_parser *p, int line, const char *section,
		      const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_verror(p->errs, p->cfg->file, line, section, key, fmt, ap);
	va_end(ap);
}

void cfg_plugin_option_error(struct cfg_errors *errs, const struct cfg *cfg,
			     const struct cfg_destination *d,
			     const struct cfg_plugin_option *opt, const char *fmt, ...)
{
	char section[sizeof(CFG_DEST_PREFIX) + CFG_DEST_NAME_MAX];
	char *key = NULL;
	va_list ap;
	int n;

	n = snprintf(section, sizeof(section), CFG_DEST_PREFIX "%s", d->name);
	if (n < 0 || (size_t)n >= sizeof(section)) {
		errs->dropped++;
		return;
	}
	/* No option: the plugin itself (the "plugin =" line); an option that
	 * is not in the file (line 0): the section's line. */
	if (opt && asprintf(&key, CFG_PLUGIN_PREFIX "%s", opt->key) < 0) {
		errs->dropped++;
		return;
	}
	int line = opt == NULL ? d->plugin_line : opt->line > 0 ? opt->line : d->line;
	va_start(ap, fmt);
	cfg_verror(errs, cfg->file, line, section, opt ? key : "plugin", fmt, ap);
	va_end(ap);
	free(key);
}

/* ---- values ---- */

static bool cfg_matches_charset(const char *s, const char *extra, size_t max)
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

static const char *cfg_check_listen(const char *v)
{
	struct cfg_listen l;

	return cfg_listen_parse(v, &l);
}

/* Returns what a valid value looks like, or NULL if v is valid. */
static const char *cfg_check_text(enum cfg_type type, const char *v)
{
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

static void cfg_set_opt(struct cfg_parser *p, size_t i, void *base, const char *v)
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

static bool cfg_opt_is_dest(const struct cfg_opt *o)
{
	return strcmp(o->section, CFG_DEST) == 0;
}

static int cfg_apply_defaults(void *base, bool dest)
{
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		char **slot = (char **)((char *)base + o->offset);

		if (cfg_opt_is_dest(o) != dest)
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

static void cfg_free_strings(void *base, bool dest)
{
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		const struct cfg_opt *o = &cfg_opts[i];

		if (cfg_opt_is_dest(o) == dest && !cfg_opt_is_int(o))
			free(*(char **)((char *)base + o->offset));
	}
}

static void cfg_destination_free(struct cfg_destination *d)
{
	cfg_free_strings(d, true);
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
	cfg_free_strings(cfg, false);
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

static void cfg_remember_url_lines(struct cfg_parser *p);

/* ---- sections ---- */

/* Reports required keys the section just ended did not set. */
static void cfg_section_finish(struct cfg_parser *p)
{
	bool dest = p->kind == CFG_SECT_DEST;

	if (p->kind != CFG_SECT_FIXED && !dest)
		return;
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		bool mine = dest ? cfg_opt_is_dest(o) : strcmp(o->section, p->section) == 0;

		if (mine && (o->flags & CFG_F_REQUIRED) && !p->opt_line[i])
			cfg_error(p, p->section_line, p->section, o->name, "missing required key");
	}
	if (dest)
		cfg_remember_url_lines(p);
}

static void cfg_destination_start(struct cfg_parser *p, const char *name)
{
	const struct cfg_destination *prev = cfg_find_destination(p->cfg, name);
	struct cfg *cfg = p->cfg;
	struct cfg_destination *ds, *d;
	char *copy;

	if (!cfg_matches_charset(name, "_-", CFG_DEST_NAME_MAX))
		cfg_error(p, p->line, p->section, NULL,
			  "invalid destination name \"%s\": must match [a-z0-9_-]{1,40}", name);
	if (prev)
		cfg_error(p, p->line, p->section, NULL,
			  "duplicate destination \"%s\" (first defined at line %d)", name, prev->line);
	copy = strdup(name);
	ds = copy ? realloc(cfg->destinations, (cfg->n_destinations + 1) * sizeof(*ds)) : NULL;
	if (!ds) {
		free(copy);
		goto oom;
	}
	cfg->destinations = ds;
	d = &ds[cfg->n_destinations];
	memset(d, 0, sizeof(*d));
	cfg->n_destinations++;
	d->line = p->line;
	d->name = copy;
	if (cfg_apply_defaults(d, true) < 0)
		goto oom;
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		if (cfg_opt_is_dest(&cfg_opts[i]))
			p->opt_line[i] = 0;
	}
	p->dest_idx = cfg->n_destinations - 1;
	p->kind = CFG_SECT_DEST;
	return;
oom:
	cfg_error(p, p->line, p->section, NULL, "out of memory");
}

static void cfg_fixed_start(struct cfg_parser *p, size_t idx)
{
	if (p->fixed_line[idx]) {
		cfg_error(p, p->line, p->section, NULL,
			  "duplicate section (first defined at line %d)", p->fixed_line[idx]);
		return;
	}
	p->fixed_line[idx] = p->line;
	p->kind = CFG_SECT_FIXED;
}

static bool cfg_is_blank_or_comment(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0' || *s == ';' || *s == '#';
}

/*
 * We parse headers ourselves, so inih's truncation does not apply to them;
 * the 48-byte limit is kept for symmetry with keys, but a destination name
 * may have its full 40 bytes after "destination:".
 */
static size_t cfg_section_max(const char *name)
{
	if (strncmp(name, CFG_DEST_PREFIX, strlen(CFG_DEST_PREFIX)) == 0)
		return strlen(CFG_DEST_PREFIX) + CFG_DEST_NAME_MAX;
	return CFG_MAX_NAME_LEN;
}

/* t points at the '[' of a header line; it is modified. */
static void cfg_section_start(struct cfg_parser *p, char *t)
{
	char *end = strchr(t, ']');
	const char *name = t + 1;

	cfg_section_finish(p);
	p->key_seen = false;
	p->kind = CFG_SECT_IGNORED;
	p->section[0] = '\0';
	p->section_line = p->line;
	if (!end) {
		cfg_error(p, p->line, NULL, NULL, "invalid section header: missing \"]\"");
		return;
	}
	*end = '\0';
	if (strlen(name) > cfg_section_max(name)) {
		cfg_error(p, p->line, NULL, NULL, "section name \"%s\" is too long (at most %zu bytes)",
			  name, cfg_section_max(name));
		return;
	}
	snprintf(p->section, sizeof(p->section), "%s", name); /* length checked above */
	if (!cfg_is_blank_or_comment(end + 1)) {
		cfg_error(p, p->line, p->section, NULL, "unexpected text after \"]\"");
		return;
	}
	for (size_t i = 0; i < CFG_N_FIXED; i++) {
		if (strcmp(name, cfg_fixed_sections[i]) == 0) {
			cfg_fixed_start(p, i);
			return;
		}
	}
	if (strncmp(name, CFG_DEST_PREFIX, strlen(CFG_DEST_PREFIX)) == 0) {
		cfg_destination_start(p, name + strlen(CFG_DEST_PREFIX));
		return;
	}
	cfg_error(p, p->line, p->section, NULL, "unknown section");
}

/* ---- keys ---- */

/*
 * "name" or "name.SUFFIX": the suffix form serves a plugin's prefix options
 * (plugin.header.X-Request-Source), whose suffixes keep their case.
 */
static bool cfg_plugin_key_valid(const char *key)
{
	const char *dot = strchr(key, '.');
	char head[CFG_MAX_NAME_LEN + 1];
	size_t n = dot != NULL ? (size_t)(dot - key) : strlen(key);

	if (n == 0 || n > CFG_MAX_NAME_LEN)
		return false;
	memcpy(head, key, n);
	head[n] = '\0';
	if (!cfg_matches_charset(head, "_", CFG_MAX_NAME_LEN))
		return false;
	if (dot == NULL)
		return true;
	if (dot[1] == '\0' || strlen(dot + 1) > CFG_MAX_NAME_LEN)
		return false;
	for (const char *s = dot + 1; *s; s++) {
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
			return false;
	}
	return true;
}

static void cfg_add_plugin_option(struct cfg_parser *p, struct cfg_destination *d,
				  const char *name, const char *v)
{
	const char *key = name + strlen(CFG_PLUGIN_PREFIX);
	struct cfg_plugin_option *opts;
	char *k, *val;

	if (!cfg_plugin_key_valid(key)) {
		cfg_error(p, p->line, p->section, name,
			  "invalid plugin option name: must be \"plugin.\" followed by [a-z0-9_]+, "
			  "optionally with \".NAME\" of letters, digits, '-' and '_'");
		return;
	}
	for (size_t i = 0; i < d->n_plugin_options; i++) {
		if (strcmp(d->plugin_options[i].key, key) == 0) {
			cfg_error(p, p->line, p->section, name, "duplicate key (first set at line %d)",
				  d->plugin_options[i].line);
			return;
		}
	}
	if (*v == '\0') {
		cfg_error(p, p->line, p->section, name, "missing value");
		return;
	}
	k = strdup(key);
	val = strdup(v);
	opts = k && val ? realloc(d->plugin_options, (d->n_plugin_options + 1) * sizeof(*opts)) : NULL;
	if (!opts) {
		free(k);
		free(val);
		cfg_error(p, p->line, p->section, name, "out of memory");
		return;
	}
	d->plugin_options = opts;
	opts[d->n_plugin_options++] = (struct cfg_plugin_option){ k, val, p->line };
}

static void cfg_set_key(struct cfg_parser *p, const char *name, const char *v)
{
	bool dest = p->kind == CFG_SECT_DEST;
	void *base = p->cfg;

	if (dest) {
		base = &p->cfg->destinations[p->dest_idx];
		if (strncmp(name, CFG_PLUGIN_PREFIX, strlen(CFG_PLUGIN_PREFIX)) == 0) {
			cfg_add_plugin_option(p, base, name, v);
			return;
		}
	}
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		bool mine = dest ? cfg_opt_is_dest(o) : strcmp(o->section, p->section) == 0;

		if (mine && strcmp(o->name, name) == 0) {
			cfg_set_opt(p, i, base, v);
			return;
		}
	}
	cfg_error(p, p->line, p->section, name, "unknown key");
}

/* inih handler; section is always "" because the reader keeps headers away. */
static int cfg_on_key(void *user, const char *section, const char *name, const char *value)
{
	struct cfg_parser *p = user;

	(void)section;
	/* Cannot truncate: name comes from one line of at most INI_MAX_LINE bytes. */
	snprintf(p->prev_key, sizeof(p->prev_key), "%s", name);
	if (*name == '\0') {
		cfg_error(p, p->line, p->section, NULL, "missing key name before \"=\"");
		return 1;
	}
	if (strlen(name) > CFG_MAX_NAME_LEN) {
		cfg_error(p, p->line, p->section, name, "key name is too long (at most %d bytes)",
			  CFG_MAX_NAME_LEN);
		return 1;
	}
	switch (p->kind) {
	case CFG_SECT_NONE:
		cfg_error(p, p->line, NULL, name, "key outside any section");
		break;
	case CFG_SECT_IGNORED:
		break;
	case CFG_SECT_FIXED:
	case CFG_SECT_DEST:
		cfg_set_key(p, name, value);
		break;
	}
	return 1; /* errors are collected here, never counted by inih */
}

/* ---- lines ---- */

/* Mirrors inih's search for "=" or ":" that stops at an inline " ;" comment. */
static bool cfg_has_separator(const char *s)
{
	bool was_space = false;

	for (; *s; s++) {
		if (*s == '=' || *s == ':')
			return true;
		if (was_space && *s == ';')
			return false;
		was_space = isspace((unsigned char)*s);
	}
	return false;
}

/* Returns the line's content without its end-of-line characters or BOM. */
static char *cfg_line_content(struct cfg_parser *p, size_t len)
{
	char *s = p->buf;

	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = '\0';
	if (p->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3;
	return s;
}

/* Bytes of a line of length len that the buffer holds. */
static size_t cfg_stored_len(ssize_t len)
{
	return (size_t)len < CFG_LINE_BUF - 1 ? (size_t)len : CFG_LINE_BUF - 1;
}

/*
 * Reads one line, its newline included, into p->buf (cut at CFG_LINE_BUF - 1
 * bytes, NUL-terminated) and returns its whole length, or -1 at the end of
 * the file, on a read error, or once the file passed CFG_MAX_FILE_BYTES.
 * Unlike getline() it never allocates: a file without newlines costs
 * nothing but the time to read CFG_MAX_FILE_BYTES.  NUL bytes are kept
 * (p->nul_at) so that the caller can refuse them: inih would silently cut
 * the value at the first one.
 */
static ssize_t cfg_next_line(struct cfg_parser *p)
{
	ssize_t len = 0;
	int c = EOF;

	p->nul_at = -1;
	while (!p->too_large && (c = getc(p->fp)) != EOF) {
		if (++p->bytes_read > CFG_MAX_FILE_BYTES) {
			p->too_large = true;
			break;
		}
		if (c == '\0' && p->nul_at < 0)
			p->nul_at = (long)len;
		if ((size_t)len < CFG_LINE_BUF - 1)
			p->buf[len] = (char)c;
		len++;
		if (c == '\n')
			break;
	}
	p->buf[cfg_stored_len(len)] = '\0';
	if (p->too_large || (len == 0 && c == EOF))
		return -1;
	return len;
}

/* Refuses a line with a NUL byte or bytes that are not UTF-8, by column. */
static bool cfg_line_bytes_ok(struct cfg_parser *p, size_t len)
{
	long bad;

	if (p->nul_at >= 0) {
		cfg_error(p, p->line, p->section, NULL,
			  "line contains a NUL byte (column %ld)", p->nul_at + 1);
		return false;
	}
	if (len >= CFG_LINE_BUF - 1)
		return true; /* too long: refused as such, and its end is not in buf */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p->buf[i];

		/* Tab is white space, CR and LF end the line; the rest has no
		 * place in a value and would only fail later, far from here. */
		if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f) {
			cfg_error(p, p->line, p->section, NULL,
				  "line contains the control character 0x%02x (column %zu)", c, i + 1);
			return false;
		}
	}
	bad = cfg_text_utf8_error(p->buf, len);
	if (bad < 0)
		return true;
	/* As PostgreSQL says it, but with the first offending byte only: the
	 * bytes after it may be part of a secret. */
	cfg_error(p, p->line, p->section, NULL,
		  "invalid byte sequence for encoding \"UTF8\": 0x%02x (column %ld)",
		  (unsigned char)p->buf[bad], bad + 1);
	return false;
}

/* ini_reader: see the comment at the top of this file. */
static char *cfg_read_line(char *str, int num, void *stream)
{
	struct cfg_parser *p = stream;
	ssize_t len = cfg_next_line(p);
	char *s, *t;

	if (len < 0)
		return NULL;
	p->line++;
	str[0] = '\0';
	if (!cfg_line_bytes_ok(p, (size_t)len))
		return str; /* reported; the line is skipped */
	s = cfg_line_content(p, cfg_stored_len(len));
	t = s + strspn(s, " \t\v\f\r");
	if ((len < CFG_LINE_BUF ? strlen(s) : (size_t)len) + 2 > (size_t)num) {
		cfg_error(p, p->line, NULL, NULL, "line is too long (at most %d bytes)", num - 2);
	} else if (*t == '\0' || *t == ';' || *t == '#') {
		/* blank line or comment */
	} else if (t > s && p->key_seen) {
		cfg_error(p, p->line, p->section, p->prev_key,
			  "indented line: continuation lines are not supported");
	} else if (*t == '[') {
		cfg_section_start(p, t);
	} else if (!cfg_has_separator(t)) {
		cfg_error(p, p->line, p->section, NULL, "syntax error: expected \"key = value\"");
	} else {
		p->key_seen = true;
		memcpy(str, t, strlen(t) + 1); /* fits: checked against num above */
	}
	return str;
}

/* ---- queue URLs across destinations ---- */

static void cfg_remember_url_lines(struct cfg_parser *p)
{
	size_t n = p->cfg->n_destinations;
	struct cfg_url_lines *ul = realloc(p->url_lines, n * sizeof(*ul));

	if (!ul) {
		cfg_error(p, p->section_line, p->section, NULL, "out of memory");
		return;
	}
	p->url_lines = ul;
	ul[p->dest_idx] = (struct cfg_url_lines){ 0, 0 };
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		if (!cfg_opt_is_dest(&cfg_opts[i]))
			continue;
		if (strcmp(cfg_opts[i].name, "queue_url") == 0)
			ul[p->dest_idx].queue_url = p->opt_line[i];
		else if (strcmp(cfg_opts[i].name, "dlq_url") == 0)
			ul[p->dest_idx].dlq_url = p->opt_line[i];
	}
}

/*
 * Whether two URLs name the same queue: the scheme and host compare without
 * case (DNS does), the path exactly (SQS queue names are case-sensitive),
 * and a trailing "/" does not count.
 */
static bool cfg_same_queue(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	const char *pa, *pb;
	size_t ha, hb;

	while (la > 0 && a[la - 1] == '/')
		la--;
	while (lb > 0 && b[lb - 1] == '/')
		lb--;
	pa = strstr(a, "://");
	pb = strstr(b, "://");
	ha = pa ? (size_t)(pa - a) + 3 + strcspn(pa + 3, "/") : la;
	hb = pb ? (size_t)(pb - b) + 3 + strcspn(pb + 3, "/") : lb;
	if (ha > la)
		ha = la;
	if (hb > lb)
		hb = lb;
	return ha == hb && la - ha == lb - hb && strncasecmp(a, b, ha) == 0 &&
	       strncmp(a + ha, b + hb, la - ha) == 0;
}

static int cfg_url_line(const struct cfg_parser *p, size_t d, bool dlq)
{
	if (!p->url_lines)
		return p->cfg->destinations[d].line;
	return dlq ? p->url_lines[d].dlq_url : p->url_lines[d].queue_url;
}

static void cfg_url_error(struct cfg_parser *p, size_t d, const char *key, const char *fmt, ...)
	OUTBOX_PRINTF(4, 5);

static void cfg_url_error(struct cfg_parser *p, size_t d, const char *key, const char *fmt, ...)
{
	char section[sizeof(CFG_DEST_PREFIX) + CFG_DEST_NAME_MAX];
	va_list ap;

	snprintf(section, sizeof(section), CFG_DEST_PREFIX "%s", p->cfg->destinations[d].name);
	va_start(ap, fmt);
	cfg_verror(p->errs, p->cfg->file, cfg_url_line(p, d, strcmp(key, "dlq_url") == 0),
		   section, key, fmt, ap);
	va_end(ap);
}

/*
 * One queue per destination, and a dead-letter queue that is nobody's main
 * queue: a consumer reading its DLQ as a main queue (or the DLQ reader a
 * main queue) marks jobs DEAD 'DLQ' that never ran, and two destinations on
 * one queue receive each other's messages.  URLs are never echoed: the
 * other destination and its line say enough.
 */
static void cfg_check_destination_urls(struct cfg_parser *p)
{
	const struct cfg *cfg = p->cfg;

	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const struct cfg_destination *d = &cfg->destinations[i];

		for (size_t j = 0; j < i && d->queue_url; j++) {
			const struct cfg_destination *e = &cfg->destinations[j];

			if (e->queue_url && cfg_same_queue(d->queue_url, e->queue_url))
				cfg_url_error(p, i, "queue_url", "queue is also the queue_url of destination "
					      "\"%s\" (line %d): each destination needs its own queue",
					      e->name, cfg_url_line(p, j, false));
		}
		for (size_t j = 0; j < cfg->n_destinations && d->dlq_url; j++) {
			const struct cfg_destination *e = &cfg->destinations[j];

			if (!e->queue_url || !cfg_same_queue(d->dlq_url, e->queue_url))
				continue;
			if (j == i)
				cfg_url_error(p, i, "dlq_url", "dead-letter queue is the destination's own "
					      "queue_url (line %d)", cfg_url_line(p, j, false));
			else
				cfg_url_error(p, i, "dlq_url", "dead-letter queue is the queue_url of "
					      "destination \"%s\" (line %d)", e->name,
					      cfg_url_line(p, j, false));
		}
	}
}

/* ---- opening ---- */

/*
 * Opens path for reading, refusing anything but a regular file of at most
 * CFG_MAX_FILE_BYTES: a device or a FIFO never ends, and a relay.ini that
 * large is a mistake.
 */
static FILE *cfg_open(struct cfg_parser *p, const char *path)
{
	struct stat st;
	FILE *fp = fopen(path, "r");

	if (!fp) {
		cfg_error(p, 0, NULL, NULL, "could not open file: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fileno(fp), &st) < 0) {
		cfg_error(p, 0, NULL, NULL, "could not stat file: %s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		cfg_error(p, 0, NULL, NULL, "could not read file: it is %s, not a regular file",
			  S_ISDIR(st.st_mode) ? "a directory" : S_ISCHR(st.st_mode) ? "a character device"
			  : S_ISBLK(st.st_mode) ? "a block device" : S_ISFIFO(st.st_mode) ? "a FIFO"
			  : "a special file");
	} else if (st.st_size > CFG_MAX_FILE_BYTES) {
		cfg_error(p, 0, NULL, NULL, "file is too large (%lld bytes, at most %ld)",
			  (long long)st.st_size, CFG_MAX_FILE_BYTES);
	} else {
		return fp;
	}
	fclose(fp);
	return NULL;
}

/* ---- retention and the deduplication horizon ---- */

int cfg_dedup_horizon_seconds(const struct cfg *cfg)
{
	int longest = 0;

	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const struct cfg_destination *d = &cfg->destinations[i];
		int h = d->message_retention_seconds + (d->dlq_url ? d->dlq_message_retention_seconds : 0);

		if (h > longest)
			longest = h;
	}
	return longest;
}

int cfg_sweeper_horizon_seconds(const struct cfg *cfg)
{
	if (cfg->sweeper.horizon_seconds > 0)
		return cfg->sweeper.horizon_seconds;
	return 2 * cfg->consumer.visibility_timeout_seconds + cfg->consumer.wait_time_seconds +
	       cfg->consumer.lease_seconds;
}

/* One of the [retention] keys that say how long a class of rows is kept. */
static bool cfg_is_retention_period(const struct cfg_opt *o)
{
	static const char *const periods[] = {"succeeded_jobs_seconds", "dead_jobs_seconds",
					      "events_seconds", "dlq_messages_seconds"};

	if (strcmp(o->section, "retention") != 0)
		return false;
	for (size_t i = 0; i < sizeof(periods) / sizeof(periods[0]); i++) {
		if (strcmp(o->name, periods[i]) == 0)
			return true;
	}
	return false;
}

/* The destination whose queue and DLQ make the horizon; NULL without any. */
static const struct cfg_destination *cfg_horizon_destination(const struct cfg *cfg)
{
	int h = cfg_dedup_horizon_seconds(cfg);

	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const struct cfg_destination *d = &cfg->destinations[i];

		if (d->message_retention_seconds + (d->dlq_url ? d->dlq_message_retention_seconds : 0) == h)
			return d;
	}
	return NULL;
}

/*
 * A job row deleted while one of its messages may still arrive turns a
 * repeated enqueue into a second run: every retention that is not 0
 * ("for ever") must cover the deduplication horizon.
 */
static void cfg_check_retention(struct cfg_parser *p)
{
	const struct cfg *cfg = p->cfg;
	const struct cfg_destination *d = cfg_horizon_destination(cfg);
	int horizon = cfg_dedup_horizon_seconds(cfg);

	if (d == NULL)
		return;
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		int v;

		if (!cfg_is_retention_period(o))
			continue;
		v = *(const int *)((const char *)cfg + o->offset);
		if (v == 0 || v >= horizon)
			continue;
		cfg_error(p, p->opt_line[i], "retention", o->name,
			  "value %d is shorter than the deduplication horizon of %d seconds "
			  "(message_retention_seconds%s of [destination:%s])",
			  v, horizon, d->dlq_url ? " + dlq_message_retention_seconds" : "", d->name);
	}
}

/* ---- whole file ---- */

static void cfg_check_file(struct cfg_parser *p)
{
	const struct cfg *cfg = p->cfg;
	int line = 0;

	if (!p->fixed_line[0])
		cfg_error(p, 0, "database", NULL, "missing required section");
	if (cfg->n_destinations == 0)
		cfg_error(p, 0, CFG_DEST_PREFIX "NAME", NULL,
			  "missing required section: at least one destination is required");
	cfg_check_destination_urls(p);
	cfg_check_retention(p);
	if (cfg->relay.retry_max_seconds >= cfg->relay.retry_base_seconds)
		return;
	for (size_t i = 0; i < CFG_N_OPTS && !line; i++) {
		if (strcmp(cfg_opts[i].name, "retry_max_seconds") == 0)
			line = p->opt_line[i];
	}
	cfg_error(p, line, "relay", "retry_max_seconds",
		  "value %d is less than retry_base_seconds (%d)",
		  cfg->relay.retry_max_seconds, cfg->relay.retry_base_seconds);
}

static struct cfg *cfg_new(const char *path)
{
	struct cfg *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return NULL;
	cfg->file = strdup(path);
	if (!cfg->file || cfg_apply_defaults(cfg, false) < 0) {
		cfg_free(cfg);
		return NULL;
	}
	return cfg;
}

/*
 * Parses and checks path.  Returns the cfg it built, whatever errors it
 * appended to errs, or NULL when the file could not be opened or memory
 * ran out (both reported to errs).
 */
static struct cfg *cfg_parse(const char *path, struct cfg_errors *errs)
{
	struct cfg_parser p = { .errs = errs, .kind = CFG_SECT_NONE };
	struct cfg *cfg = NULL;
	size_t before = cfg_errors_count(errs);
	int irc;

	p.cfg = cfg_new(path);
	if (!p.cfg) {
		cfg_errors_add(errs, "%s: out of memory", path);
		return NULL;
	}
	p.fp = cfg_open(&p, path);
	if (!p.fp)
		goto out;
	irc = ini_parse_stream(cfg_read_line, &p, cfg_on_key, &p);
	if (ferror(p.fp))
		cfg_error(&p, 0, NULL, NULL, "could not read file");
	else if (p.too_large)
		cfg_error(&p, 0, NULL, NULL, "file is too large (more than %ld bytes)",
			  CFG_MAX_FILE_BYTES);
	else if (irc == -2)
		cfg_error(&p, 0, NULL, NULL, "out of memory");
	else if (irc > 0 && cfg_errors_count(errs) == before)
		cfg_error(&p, irc, NULL, NULL, "syntax error"); /* not expected: see cfg_read_line */
	cfg_section_finish(&p);
	if (!ferror(p.fp) && !p.too_large) {
		cfg_check_file(&p);
		cfg = p.cfg;
		p.cfg = NULL;
	}
out:
	if (p.fp)
		fclose(p.fp);
	free(p.url_lines);
	cfg_free(p.cfg);
	return cfg;
}

int cfg_load(const char *path, struct cfg **out, struct cfg_errors *errs)
{
	size_t before = cfg_errors_count(errs);
	struct cfg *cfg = cfg_parse(path, errs);

	*out = NULL;
	if (cfg == NULL || cfg_errors_count(errs) != before) {
		cfg_free(cfg);
		return -1;
	}
	*out = cfg;
	return 0;
}

int cfg_load_partial(const char *path, struct cfg **out, struct cfg_errors *errs)
{
	size_t before = cfg_errors_count(errs);

	*out = cfg_parse(path, errs);
	return *out != NULL && cfg_errors_count(errs) == before ? 0 : -1;
}
