/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_migrate.c: outboxctl migrate [--dir DIR]
 *
 * Applies the core's migrations, then those each configured plugin ships
 * in DIR/plugins/<plugin>/ (component = the plugin's name), each set with
 * its own version numbers.  Exit 78 when an applied migration changed (the
 * database and the files disagree about history: a configuration problem,
 * not a transient one).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl/commands.h"
#include "db/migrate.h"

/* Applies one component's files and adds its counts to total; returns an exit code. */
static int migrate_component(PGconn *conn, const char *dir, const char *component,
                             struct migrate_report *total)
{
	struct migrate_report report;
	char err[1024];

	switch (migrate_run(conn, dir, component, &report, err, sizeof(err))) {
	case MIGRATE_OK:
		total->applied += report.applied;
		total->current += report.current;
		return CTL_EXIT_OK;
	case MIGRATE_CHANGED:
		ctl_error("%s", err);
		return CTL_EXIT_CONFIG;
	default:
		ctl_error("%s", err);
		return CTL_EXIT_FAILURE;
	}
}

/* True if an earlier destination uses the same plugin (migrate it once). */
static int plugin_seen_before(const struct cfg *cfg, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(cfg->destinations[j].plugin, cfg->destinations[i].plugin) == 0)
			return 1;
	return 0;
}

int cmd_migrate(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"dir", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	const char *dir = migrate_default_dir();
	struct migrate_report report = {0, 0};
	PGconn *conn;
	int opt, exit_code = CTL_EXIT_OK;

	optind = 1;
	for (opt = getopt_long(argc, argv, "", longopts, NULL); opt != -1;
	     opt = getopt_long(argc, argv, "", longopts, NULL)) {
		if (opt != 'd')
			return CTL_EXIT_USAGE;
		dir = optarg;
	}
	if (optind != argc) {
		ctl_error("migrate takes no arguments");
		return CTL_EXIT_USAGE;
	}
	conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	exit_code = migrate_component(conn, dir, "core", &report);
	for (size_t i = 0; exit_code == CTL_EXIT_OK && i < ctl->cfg->n_destinations; i++) {
		const char *plugin = ctl->cfg->destinations[i].plugin;
		char plugin_dir[4096];
		struct stat st;

		if (plugin_seen_before(ctl->cfg, i))
			continue;
		snprintf(plugin_dir, sizeof(plugin_dir), "%s/plugins/%s", dir, plugin);
		if (stat(plugin_dir, &st) == 0 && S_ISDIR(st.st_mode))
			exit_code = migrate_component(conn, plugin_dir, plugin, &report);
	}
	if (exit_code != CTL_EXIT_OK)
		return exit_code;
	if (ctl->json)
		printf("{\"applied\": %d, \"current\": %d}\n", report.applied, report.current);
	else if (report.applied == 0)
		printf("schema is up to date (%d migrations applied earlier)\n", report.current);
	else
		printf("applied %d migrations (%d were already applied)\n", report.applied, report.current);
	return CTL_EXIT_OK;
}
