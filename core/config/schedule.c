/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/schedule.c: [schedule:NAME] sections (docs/configuration.md,
 * "[schedule:NAME]"): a new schedule at its header, the checks of its keys
 * together at its end (cron or every, the cron expression, the time zone,
 * the payload, catch_up), and at the end of the file that its destination
 * is configured (it may be defined further down).
 */
#include "config/config.h"
#include "config/internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The system's zone files, as the C library and PostgreSQL read them. */
#define CFG_ZONEINFO_DIR "/usr/share/zoneinfo"
#define CFG_JOB_TYPE_MAX 50 /* outbox.enqueue() refuses longer ones */

/* The line option name of the current schedule was set on, 0 if not. */
static int cfg_sched_line(const struct cfg_parser *p, const char *name)
{
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		if (cfg_opt_base(&cfg_opts[i]) == CFG_BASE_SCHED && strcmp(cfg_opts[i].name, name) == 0)
			return p->opt_line[i];
	}
	return 0;
}

void cfg_schedule_start(struct cfg_parser *p, const char *name)
{
	const struct cfg_schedule *prev = cfg_find_schedule(p->cfg, name);
	struct cfg *cfg = p->cfg;
	struct cfg_schedule *ss, *s;
	char *copy;

	if (!cfg_matches_charset(name, "_-", CFG_SCHED_NAME_MAX))
		cfg_error(p, p->line, p->section, NULL,
			  "invalid schedule name \"%s\": must match [a-z0-9_-]{1,40}", name);
	if (prev)
		cfg_error(p, p->line, p->section, NULL,
			  "duplicate schedule \"%s\" (first defined at line %d)", name, prev->line);
	copy = strdup(name);
	ss = copy ? realloc(cfg->schedules, (cfg->n_schedules + 1) * sizeof(*ss)) : NULL;
	if (!ss) {
		free(copy);
		cfg_error(p, p->line, p->section, NULL, "out of memory");
		return;
	}
	cfg->schedules = ss;
	s = &ss[cfg->n_schedules++];
	memset(s, 0, sizeof(*s));
	s->line = p->line;
	s->name = copy;
	if (cfg_apply_defaults(s, CFG_BASE_SCHED) < 0)
		cfg_error(p, p->line, p->section, NULL, "out of memory");
	for (size_t i = 0; i < CFG_N_OPTS; i++) {
		if (cfg_opt_base(&cfg_opts[i]) == CFG_BASE_SCHED)
			p->opt_line[i] = 0;
	}
	p->sched_idx = cfg->n_schedules - 1;
	p->kind = CFG_SECT_SCHED;
}

/* "Area/City" of the zone files: a relative path of safe characters that
 * names a TZif file.  Returns what is wrong, or NULL. */
static const char *cfg_zone_problem(const char *zone)
{
	char path[512], magic[4];
	FILE *f;
	size_t n;

	if (zone[0] == '/' || strstr(zone, "..") != NULL
	    || strspn(zone, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-")
	           != strlen(zone))
		return "must be a zone name such as Europe/Berlin";
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", CFG_ZONEINFO_DIR, zone) >= sizeof(path))
		return "is too long";
	f = fopen(path, "rb");
	if (f == NULL)
		return "is not a time zone of " CFG_ZONEINFO_DIR;
	n = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	return n == sizeof(magic) && memcmp(magic, "TZif", 4) == 0
	       ? NULL : "is not a time zone file of " CFG_ZONEINFO_DIR;
}

static void cfg_check_when(struct cfg_parser *p, struct cfg_schedule *s)
{
	int cron_line = cfg_sched_line(p, "cron"), every_line = cfg_sched_line(p, "every");
	int tz_line = cfg_sched_line(p, "timezone");
	const char *problem;
	char err[256];

	if (!cron_line && !every_line) {
		cfg_error(p, p->section_line, p->section, NULL, "needs cron or every");
	} else if (cron_line && every_line) {
		cfg_error(p, every_line, p->section, "every",
			  "cron (line %d) and every exclude each other", cron_line);
	} else if (s->cron != NULL && cron_parse(s->cron, &s->cron_expr, err, sizeof(err)) < 0) {
		cfg_error(p, cron_line, p->section, "cron", "invalid cron expression \"%s\": %s",
			  s->cron, err);
	}
	if (s->timezone != NULL && every_line) {
		cfg_error(p, tz_line, p->section, "timezone",
			  "applies to cron only: every counts seconds, in no time zone");
	} else if (s->timezone != NULL) {
		problem = cfg_zone_problem(s->timezone);
		if (problem != NULL)
			cfg_error(p, tz_line, p->section, "timezone", "invalid time zone \"%s\": %s",
				  s->timezone, problem);
	}
}

void cfg_schedule_finish(struct cfg_parser *p)
{
	struct cfg_schedule *s = &p->cfg->schedules[p->sched_idx];
	json_error_t jerr;
	json_t *payload;

	cfg_check_when(p, s);
	s->destination_line = cfg_sched_line(p, "destination");
	if (s->job_type != NULL && strlen(s->job_type) > CFG_JOB_TYPE_MAX)
		cfg_error(p, cfg_sched_line(p, "job_type"), p->section, "job_type",
			  "is longer than %d bytes", CFG_JOB_TYPE_MAX);
	payload = s->payload != NULL ? json_loads(s->payload, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	if (s->payload != NULL && payload == NULL)
		cfg_error(p, cfg_sched_line(p, "payload"), p->section, "payload",
			  "invalid JSON at column %d: %s", jerr.column, jerr.text);
	else if (payload != NULL && !json_is_object(payload) && !json_is_array(payload))
		cfg_error(p, cfg_sched_line(p, "payload"), p->section, "payload",
			  "must be a JSON object or array");
	json_decref(payload);
	if (s->catch_up == NULL || strcmp(s->catch_up, "last") == 0)
		s->catch_up_mode = CFG_CATCH_UP_LAST;
	else if (strcmp(s->catch_up, "none") == 0)
		s->catch_up_mode = CFG_CATCH_UP_NONE;
	else if (strcmp(s->catch_up, "all") == 0)
		s->catch_up_mode = CFG_CATCH_UP_ALL;
	else
		cfg_error(p, cfg_sched_line(p, "catch_up"), p->section, "catch_up",
			  "invalid value \"%s\": must be none, last or all", s->catch_up);
}

void cfg_check_schedules(struct cfg_parser *p)
{
	for (size_t i = 0; i < p->cfg->n_schedules; i++) {
		const struct cfg_schedule *s = &p->cfg->schedules[i];
		char section[sizeof(CFG_SCHED_PREFIX) + CFG_SCHED_NAME_MAX];

		if (s->destination == NULL || cfg_find_destination(p->cfg, s->destination) != NULL)
			continue;
		snprintf(section, sizeof(section), CFG_SCHED_PREFIX "%.40s", s->name);
		cfg_error(p, s->destination_line, section, "destination",
			  "unknown destination \"%s\": no [destination:%s] in this file",
			  s->destination, s->destination);
	}
}

const struct cfg_schedule *cfg_find_schedule(const struct cfg *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_schedules; i++) {
		if (strcmp(cfg->schedules[i].name, name) == 0)
			return &cfg->schedules[i];
	}
	return NULL;
}
