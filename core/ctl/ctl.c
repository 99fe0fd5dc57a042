/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/ctl.c: configuration and database access for outboxctl's commands.
 */
#include "ctl/ctl.h"

#include <stdarg.h>
#include <stdio.h>

#include "db/db.h"

void ctl_error(const char *fmt, ...)
{
	va_list ap;

	fputs("outboxctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const struct cfg *ctl_config(struct ctl *ctl)
{
	struct cfg_errors errs = {0};

	if (ctl->cfg != NULL)
		return ctl->cfg;
	if (cfg_load(ctl->config_path, &ctl->cfg, &errs) < 0) {
		cfg_errors_print(&errs, stderr);
		cfg_errors_free(&errs);
		return NULL;
	}
	cfg_errors_free(&errs);
	return ctl->cfg;
}

PGconn *ctl_db(struct ctl *ctl, int *exit_code)
{
	const struct cfg *cfg;
	char err[1024];

	if (ctl->conn != NULL)
		return ctl->conn;
	cfg = ctl_config(ctl);
	if (cfg == NULL) {
		*exit_code = CTL_EXIT_CONFIG;
		return NULL;
	}
	ctl->conn = db_connect(cfg->database.conninfo, "outboxctl", err, sizeof(err));
	if (ctl->conn == NULL) {
		ctl_error("could not connect to the database: %s", err);
		*exit_code = CTL_EXIT_UNAVAILABLE;
	}
	return ctl->conn;
}
