/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/ctl.c: configuration and database access for outboxctl's commands.
 */
#include "ctl/ctl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "db/migrate.h"

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

int ctl_schema_check(struct ctl *ctl, PGconn *conn, char *err, size_t errlen)
{
	const struct cfg *cfg = ctl->cfg;
	const char **plugins = calloc(cfg->n_destinations + 1, sizeof(*plugins));
	int rc;

	if (plugins == NULL) {
		snprintf(err, errlen, "out of memory");
		return MIGRATE_FAILED;
	}
	for (size_t i = 0; i < cfg->n_destinations; i++)
		plugins[i] = cfg->destinations[i].plugin;
	rc = migrate_check(conn, migrate_default_dir(), plugins, cfg->n_destinations, err, errlen);
	free(plugins);
	return rc;
}

PGconn *ctl_db(struct ctl *ctl, int *exit_code)
{
	char err[2048];
	PGconn *conn;

	if (ctl->conn != NULL)
		return ctl->conn;
	conn = ctl_db_unchecked(ctl, exit_code);
	if (conn == NULL)
		return NULL;
	switch (ctl_schema_check(ctl, conn, err, sizeof(err))) {
	case MIGRATE_OK:
		return conn;
	case MIGRATE_BEHIND:
		*exit_code = CTL_EXIT_CONFIG;
		break;
	default:
		*exit_code = db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
		break;
	}
	ctl_error("%s", err);
	PQfinish(conn);
	ctl->conn = NULL;
	return NULL;
}

PGconn *ctl_db_unchecked(struct ctl *ctl, int *exit_code)
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
