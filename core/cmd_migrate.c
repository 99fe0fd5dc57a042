/*
 * cmd_migrate.c: outboxctl migrate [--dir DIR]
 *
 * Exit 78 when an applied migration changed (the database and the files
 * disagree about history: a configuration problem, not a transient one).
 */
#include <getopt.h>
#include <stdio.h>

#include "ctl.h"
#include "migrate.h"

int cmd_migrate(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"dir", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	const char *dir = migrate_default_dir();
	struct migrate_report report;
	char err[1024];
	PGconn *conn;
	int opt, exit_code = CTL_EXIT_OK;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
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
	switch (migrate_run(conn, dir, "core", &report, err, sizeof(err))) {
	case MIGRATE_OK:
		break;
	case MIGRATE_CHANGED:
		ctl_error("%s", err);
		return CTL_EXIT_CONFIG;
	default:
		ctl_error("%s", err);
		return CTL_EXIT_FAILURE;
	}
	if (ctl->json)
		printf("{\"applied\": %d, \"current\": %d}\n", report.applied, report.current);
	else if (report.applied == 0)
		printf("schema is up to date (%d migrations applied earlier)\n", report.current);
	else
		printf("applied %d migrations (%d were already applied)\n", report.applied, report.current);
	return CTL_EXIT_OK;
}
