/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_schedules.c: outboxctl schedules [--json] (docs/outboxctl.md).
 *
 * Each [schedule:NAME] of the file with its last slot (what outboxd
 * enqueued last, from outbox.schedules) and its next one (schedule_list()).
 * Text: one line per schedule; --json the array of schedule/list.h.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ctl/commands.h"
#include "ctl/job_text.h"
#include "ops/ops.h"
#include "schedule/list.h"

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "-";
}

static void print_text(const json_t *list)
{
	printf("%-24s %-32s %-20s %-20s %s\n", "NAME", "WHEN", "LAST_SLOT", "NEXT_SLOT", "JOBS");
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *s = json_array_get(list, i);
		char when[128];

		if (json_is_integer(json_object_get(s, "every")))
			snprintf(when, sizeof(when), "every %lld s",
			         (long long)json_integer_value(json_object_get(s, "every")));
		else
			snprintf(when, sizeof(when), "cron \"%s\"%s%s", str(s, "cron"),
			         json_is_string(json_object_get(s, "timezone")) ? " " : "",
			         json_is_string(json_object_get(s, "timezone")) ? str(s, "timezone") : "");
		printf("%-24s %-32s %-20s %-20s %s -> %s (catch_up %s)\n", str(s, "name"), when,
		       str(s, "last_slot"), str(s, "next_slot"), str(s, "job_type"),
		       str(s, "destination"), str(s, "catch_up"));
	}
}

int cmd_schedules(struct ctl *ctl, int argc, char **argv)
{
	int exit_code = CTL_EXIT_OK;
	json_t *list = NULL;
	char err[1024];

	(void)argv;
	if (argc != 1) {
		ctl_error("usage: schedules [--json]");
		return CTL_EXIT_USAGE;
	}
	const struct cfg *cfg = ctl_config(ctl);
	if (cfg == NULL)
		return CTL_EXIT_CONFIG;
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	if (schedule_list(conn, cfg, &list, err, sizeof(err)) < 0) {
		ctl_error("could not list the schedules: %s", err);
		return ctl_ops_exit(OPS_DB, conn);
	}
	if (ctl->json)
		ctl_print_json(list);
	else
		print_text(list);
	json_decref(list);
	return CTL_EXIT_OK;
}
