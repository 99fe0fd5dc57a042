/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/checks.c: the checks that need more than one line of relay.ini:
 * queue URLs across destinations, retention against the deduplication
 * horizon, required sections and bounds that depend on each other.
 */
#include "config/config.h"
#include "config/internal.h"
#include "config/listen.h"

#include <ctype.h>
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
 * A dead-letter queue of its own for each destination: the DLQ reader of
 * one destination would take the other's messages and mark that job DEAD
 * under the wrong destination's rules, and the evidence of which
 * destination failed is lost.
 */
static void cfg_check_shared_dlqs(struct cfg_parser *p)
{
	const struct cfg *cfg = p->cfg;

	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const struct cfg_destination *d = &cfg->destinations[i];

		for (size_t j = 0; j < i && d->dlq_url; j++) {
			const struct cfg_destination *e = &cfg->destinations[j];

			if (e->dlq_url && cfg_same_queue(d->dlq_url, e->dlq_url))
				cfg_url_error(p, i, "dlq_url", "dead-letter queue is also the dlq_url of "
					      "destination \"%s\" (line %d): each destination needs its own "
					      "dead-letter queue", e->name, cfg_url_line(p, j, true));
		}
	}
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
	cfg_check_shared_dlqs(p);
}

/* ---- the region of the queues ---- */

#define CFG_REGION_MAX 32

/*
 * The region an SQS queue URL's host names: sqs.REGION.amazonaws.com (and
 * .amazonaws.com.cn, VPC endpoints ...sqs.REGION.vpce.amazonaws.com) or the
 * legacy REGION.queue.amazonaws.com.  False for any other host, such as an
 * emulator's 127.0.0.1 or a proxy: it says nothing about the region.
 */
static bool cfg_url_region(const char *url, char *out, size_t size)
{
	const char *h = strstr(url, "://");
	char host[256];
	char *label[16];
	size_t n, nl = 0;

	if (h == NULL)
		return false;
	h += 3;
	n = strcspn(h, "/:?#");
	if (n == 0 || n >= sizeof(host))
		return false;
	for (size_t i = 0; i < n; i++)
		host[i] = (char)tolower((unsigned char)h[i]);
	host[n] = '\0';
	if (strstr(host, ".amazonaws.com") == NULL)
		return false;
	for (char *save = NULL, *t = strtok_r(host, ".", &save); t != NULL && nl < 16;
	     t = strtok_r(NULL, ".", &save))
		label[nl++] = t;
	for (size_t i = 0; i + 2 < nl; i++) {
		const char *r = strcmp(label[i], "sqs") == 0 ? label[i + 1]
		                : strcmp(label[i + 1], "queue") == 0 ? label[i] : NULL;

		if (r != NULL && strcmp(r, "amazonaws") != 0 && cfg_matches_charset(r, "-", size - 1)) {
			snprintf(out, size, "%s", r);
			return true;
		}
	}
	return false;
}

/* The line [aws] region was set on; 0 when it was not. */
static int cfg_region_line(const struct cfg_parser *p)
{
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		if (strcmp(cfg_opts[i].section, "aws") == 0 && strcmp(cfg_opts[i].name, "region") == 0)
			return p->opt_line[i];
	}
	return 0;
}

/*
 * Requests are signed for one region, and SQS refuses a signature for
 * another one: every queue URL that names a region must name [aws]
 * region, and when that is unset the queues' region becomes it (before
 * AWS_REGION, which a shell may have set for something else).
 */
static void cfg_check_regions(struct cfg_parser *p)
{
	struct cfg *cfg = p->cfg;
	char first[CFG_REGION_MAX] = "", r[CFG_REGION_MAX];
	size_t first_d = 0;
	bool first_dlq = false;

	for (size_t i = 0; i < cfg->n_destinations; i++) {
		for (int k = 0; k < 2; k++) {
			const char *url = k ? cfg->destinations[i].dlq_url : cfg->destinations[i].queue_url;
			const char *key = k ? "dlq_url" : "queue_url";

			if (url == NULL || !cfg_url_region(url, r, sizeof(r)))
				continue;
			if (cfg->aws.region != NULL && strcmp(r, cfg->aws.region) != 0)
				cfg_url_error(p, i, key, "queue is in region \"%s\", but [aws] region is "
					      "\"%s\" (line %d)", r, cfg->aws.region, cfg_region_line(p));
			else if (cfg->aws.region == NULL && first[0] == '\0') {
				snprintf(first, sizeof(first), "%s", r);
				first_d = i;
				first_dlq = k;
			} else if (cfg->aws.region == NULL && strcmp(r, first) != 0)
				cfg_url_error(p, i, key, "queue is in region \"%s\", but the %s of destination "
					      "\"%s\" (line %d) is in \"%s\": all queues must be in one "
					      "region, [aws] region", r, first_dlq ? "dlq_url" : "queue_url",
					      cfg->destinations[first_d].name,
					      cfg_url_line(p, first_d, first_dlq), first);
		}
	}
	if (cfg->aws.region == NULL && first[0] != '\0' &&
	    (cfg->aws.region = strdup(first)) == NULL)
		cfg_error(p, 0, NULL, NULL, "out of memory");
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

/* ---- the console ---- */

static int cfg_opt_line(const struct cfg_parser *p, const char *section, const char *name)
{
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		if (strcmp(cfg_opts[i].section, section) == 0 && strcmp(cfg_opts[i].name, name) == 0)
			return p->opt_line[i];
	}
	return 0;
}

/*
 * Without a token anyone who reaches the console can read the ledger
 * (payloads, errors): only this host may, so the listen address must be a
 * loopback one.  A named variable that is not set would start a console
 * nobody can sign in to; say so now rather than at the first request.
 */
static void cfg_check_console(struct cfg_parser *p)
{
	const struct cfg *cfg = p->cfg;
	struct cfg_listen l;
	const char *token;

	if (cfg->console.token_env != NULL) {
		token = getenv(cfg->console.token_env);
		if (token == NULL || token[0] == '\0')
			cfg_error(p, cfg_opt_line(p, "console", "token_env"), "console", "token_env",
				  "environment variable \"%s\" is not set or empty",
				  cfg->console.token_env);
	}
	if (cfg->console.listen == NULL || cfg->console.token_env != NULL ||
	    cfg_listen_parse(cfg->console.listen, &l) != NULL || cfg_listen_is_loopback(&l))
		return;
	cfg_error(p, cfg_opt_line(p, "console", "listen"), "console", "listen",
		  "\"%s\" is not a loopback address, and without token_env the console has no"
		  " access control: set token_env, or listen on 127.0.0.1 or [::1]",
		  cfg->console.listen);
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
	cfg_check_regions(p);
	cfg_check_retention(p);
	cfg_check_console(p);
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

