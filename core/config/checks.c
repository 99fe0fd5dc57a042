/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/checks.c: the checks that need more than one line of relay.ini:
 * queue URLs across destinations, retention against the deduplication
 * horizon, required sections and bounds that depend on each other.
 */
#include "config/config.h"
#include "config/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- queue URLs across destinations ---- */

void cfg_remember_url_lines(struct cfg_parser *p)
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

void cfg_check_file(struct cfg_parser *p)
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
	cfg_check_schedules(p);
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

