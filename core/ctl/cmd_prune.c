/*
 * ctl/cmd_prune.c: outboxctl prune [--dry-run] [--json]
 *
 * Deletes what [retention] allows, with the daemon's pruner
 * (maintenance/pruner.h), until nothing is left; --dry-run counts what
 * would go.  It does not take the pruner's advisory lock (a running
 * outboxd holds it for good): every delete skips rows someone else holds,
 * so it can run beside the daemon's pruner.  A real run is recorded as
 * the pruner's last run (outboxctl status).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/clock.h"
#include "ctl/commands.h"
#include "db/db.h"
#include "maintenance/pruner.h"
#include "maintenance/runs.h"

static void print_result(const struct ctl *ctl, const struct cfg *cfg, bool dry_run,
                         const struct prune_counts *c)
{
	if (ctl->json) {
		json_t *doc = json_pack(
			"{s:b, s:{s:I, s:I, s:I, s:I}, s:{s:i, s:i, s:i, s:i}, s:i}", "dry_run", dry_run,
			dry_run ? "would_delete" : "deleted",
			"succeeded_jobs", (json_int_t)c->succeeded_jobs, "dead_jobs", (json_int_t)c->dead_jobs,
			"events", (json_int_t)c->events, "dlq_messages", (json_int_t)c->dlq_messages,
			"retention_seconds", "succeeded_jobs", cfg->retention.succeeded_jobs_seconds,
			"dead_jobs", cfg->retention.dead_jobs_seconds, "events", cfg->retention.events_seconds,
			"dlq_messages", cfg->retention.dlq_messages_seconds,
			"dedup_horizon_seconds", cfg_dedup_horizon_seconds(cfg));

		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
		return;
	}
	printf("%s: %ld succeeded jobs, %ld dead jobs, %ld outbox events, %ld dead-letter messages\n",
	       dry_run ? "would delete" : "deleted", c->succeeded_jobs, c->dead_jobs, c->events,
	       c->dlq_messages);
}

/* Records a real run as the pruner's last; a failure is only reported. */
static void record(PGconn *conn, double started, bool ok, const struct prune_counts *c,
                   const char *error)
{
	char host[256], id[300], err[512];
	char *counts = prune_counts_json(c);

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	snprintf(id, sizeof(id), "outboxctl:%s:%ld", host, (long)getpid());
	struct maintenance_run run = {"pruner", id, started, ok, counts, error};
	if (maintenance_record_run(conn, &run, err, sizeof(err)) < 0)
		ctl_error("warning: could not record the run in outbox.maintenance_runs: %s", err);
	free(counts);
}

int cmd_prune(struct ctl *ctl, int argc, char **argv)
{
	bool dry_run = false;
	struct prune_counts c;
	int exit_code = CTL_EXIT_OK;
	char err[1024];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0) {
			dry_run = true;
		} else {
			ctl_error("unexpected argument \"%s\"", argv[i]);
			ctl_error("usage: prune [--dry-run] [--json]");
			return CTL_EXIT_USAGE;
		}
	}
	const struct cfg *cfg = ctl_config(ctl);
	if (cfg == NULL)
		return CTL_EXIT_CONFIG;
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	double started = (double)wall_clock_ms() / 1000.0;
	if (pruner_run(conn, cfg, dry_run, -1, &c, err, sizeof(err)) < 0) {
		ctl_error("could not prune: %s", err);
		exit_code = db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
		if (!dry_run && exit_code == CTL_EXIT_FAILURE)
			record(conn, started, false, &c, err);
		return exit_code;
	}
	if (!dry_run)
		record(conn, started, true, &c, NULL);
	print_result(ctl, cfg, dry_run, &c);
	return CTL_EXIT_OK;
}
