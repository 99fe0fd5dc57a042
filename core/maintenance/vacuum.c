/*
 * maintenance/vacuum.c: the pruner's VACUUM of the outbox tables (see vacuum.h).
 */
#include "maintenance/vacuum.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "db/db.h"

#define VACUUM_ERR_LEN 1024

enum vacuum_table { VT_JOBS, VT_EVENTS, N_VACUUM_TABLES };

static const char *const table_names[N_VACUUM_TABLES] = {"jobs", "outbox_events"};

struct table_vacuum {
	PGconn *conn;                   /* owned; the VACUUM in flight, NULL when none */
	bool running[N_VACUUM_TABLES];  /* the tables it vacuums */
	long deleted[N_VACUUM_TABLES];  /* rows pruned since their table's VACUUM was sent */
	long long started_ms;
	char skipped[256];              /* the VACUUM's first WARNING: a table it skipped */
	int rights;                     /* -1 not known yet, 0 may not vacuum (said once), 1 may */
};

/*
 * True when this role may vacuum both tables: PostgreSQL 15 lets the
 * table's owner and the database's owner (and a superuser, whom
 * pg_has_role always answers true) vacuum a table; anyone else's VACUUM
 * skips it with a warning and succeeds.
 */
static const char rights_sql[] =
	"SELECT pg_catalog.bool_and(pg_catalog.pg_has_role(c.relowner, 'USAGE')"
	"                           OR pg_catalog.pg_has_role(d.datdba, 'USAGE'))"
	"  FROM pg_catalog.pg_class c"
	"  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
	" CROSS JOIN pg_catalog.pg_database d"
	" WHERE n.nspname = 'outbox' AND c.relname IN ('jobs', 'outbox_events')"
	"   AND d.datname = pg_catalog.current_database()";

struct table_vacuum *table_vacuum_new(void)
{
	struct table_vacuum *v = calloc(1, sizeof(*v));

	if (v != NULL)
		v->rights = -1;
	return v;
}

static void close_vacuum(struct table_vacuum *v)
{
	PQfinish(v->conn);
	v->conn = NULL;
	memset(v->running, 0, sizeof(v->running));
}

void table_vacuum_free(struct table_vacuum *v)
{
	if (v == NULL)
		return;
	PQfinish(v->conn);
	free(v);
}

void table_vacuum_reset(struct table_vacuum *v)
{
	if (v != NULL && v->rights == 0)
		v->rights = -1;
}

/* "outbox.jobs, outbox.outbox_events": the tables flagged in which[]. */
static void list_tables(const bool which[N_VACUUM_TABLES], char *out, size_t outlen)
{
	size_t len = 0;

	out[0] = '\0';
	for (int t = 0; t < N_VACUUM_TABLES; t++) {
		if (!which[t] || len >= outlen)
			continue;
		len += (size_t)snprintf(out + len, outlen - len, "%soutbox.%s", len > 0 ? ", " : "",
		                        table_names[t]);
	}
}

/* 1 may vacuum, 0 may not (logged once, until a reload), -1 unknown. */
static int check_rights(struct table_vacuum *v, PGconn *conn)
{
	char err[VACUUM_ERR_LEN];
	PGresult *res = db_query(conn, rights_sql, 0, NULL, err, sizeof(err));

	if (res == NULL) {
		log_warning("could not check this role's right to vacuum the outbox tables: %s", err);
		return -1;
	}
	v->rights = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (!v->rights)
		log_warning("cannot vacuum tables \"outbox.jobs\" and \"outbox.outbox_events\": this "
		            "role owns neither them nor the database; run outboxd as the role that owns "
		            "the outbox tables, or set [retention] vacuum_after_rows = 0; autovacuum "
		            "alone vacuums them until a reload, and their time-ordered indexes grow "
		            "with its longest interval (docs/maintenance.md)");
	return v->rights;
}

/* Keeps the first WARNING, a table the VACUUM skipped ("lock not available"). */
static void note_warning(void *arg, const PGresult *res)
{
	struct table_vacuum *v = arg;
	const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	if (v->skipped[0] == '\0' && severity != NULL && strcmp(severity, "WARNING") == 0)
		snprintf(v->skipped, sizeof(v->skipped), "%s", msg != NULL ? msg : "(no message)");
}

/* Opens the VACUUM's session and sends it without waiting; 0 when sent. */
static int start_vacuum(struct table_vacuum *v, const struct cfg *cfg,
                        const bool due[N_VACUUM_TABLES])
{
	char err[VACUUM_ERR_LEN], tables[64], sql[128];

	list_tables(due, tables, sizeof(tables));
	v->conn = db_connect(cfg->database.conninfo, "outboxd vacuum", err, sizeof(err));
	if (v->conn == NULL) {
		log_warning("could not connect to vacuum %s: %s", tables, err);
		return -1;
	}
	PQsetNoticeReceiver(v->conn, note_warning, v);
	/* A large table's VACUUM outlasts outboxd's statement timeout; SKIP_LOCKED
	 * never waits for a lock; throttled as autovacuum is by default. */
	if (db_exec(v->conn, "SET statement_timeout = 0; SET vacuum_cost_delay = '2ms'", err,
	            sizeof(err)) < 0) {
		log_warning("could not prepare the VACUUM of %s: %s", tables, err);
		close_vacuum(v);
		return -1;
	}
	/* TRUNCATE false: giving back an empty tail takes an ACCESS EXCLUSIVE
	 * lock that holds the producers' inserts, and new rows would extend the
	 * file again within the interval (a soak saw the heaps swing ±30 %). */
	snprintf(sql, sizeof(sql), "VACUUM (SKIP_LOCKED, TRUNCATE false) %s", tables);
	if (!PQsendQuery(v->conn, sql)) {
		db_error(v->conn, NULL, err, sizeof(err));
		log_warning("could not start the VACUUM of %s: %s", tables, err);
		close_vacuum(v);
		return -1;
	}
	for (int t = 0; t < N_VACUUM_TABLES; t++) {
		v->running[t] = due[t];
		if (due[t])
			v->deleted[t] = 0;
	}
	v->skipped[0] = '\0';
	v->started_ms = now_ms();
	log_debug("vacuuming %s after [retention] vacuum_after_rows=%d deleted rows", tables,
	          cfg->retention.vacuum_after_rows);
	return 0;
}

/* The VACUUM's outcome, once it has answered. */
static void finish_vacuum(struct table_vacuum *v)
{
	char err[VACUUM_ERR_LEN] = "", tables[64];
	double secs = (double)(now_ms() - v->started_ms) / 1000.0;
	bool ok = true;
	PGresult *res;

	while ((res = PQgetResult(v->conn)) != NULL) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			ok = false;
			db_error(v->conn, res, err, sizeof(err));
		}
		PQclear(res);
	}
	list_tables(v->running, tables, sizeof(tables));
	if (!ok) {
		log_warning("the VACUUM of %s failed: %s; tried again after vacuum_after_rows more "
		            "deleted rows", tables, err);
	} else if (v->skipped[0] != '\0') {
		log_info("the VACUUM of %s skipped a table: %s; autovacuum is at it, or tried again "
		         "after vacuum_after_rows more deleted rows", tables, v->skipped);
	} else {
		log_info("vacuumed %s in %.1f s", tables, secs);
		for (int t = 0; t < N_VACUUM_TABLES; t++)
			if (v->running[t])
				metrics_inc_keyed(METRIC_TABLE_VACUUMS, table_names[t]);
	}
	close_vacuum(v);
}

/* True while a VACUUM runs; collects its result when it has finished. */
static bool vacuum_running(struct table_vacuum *v)
{
	if (v->conn == NULL)
		return false;
	if (PQconsumeInput(v->conn) && PQisBusy(v->conn))
		return true;
	finish_vacuum(v);
	return false;
}

json_t *table_vacuum_step(struct table_vacuum *v, PGconn *conn, const struct cfg *cfg,
                          long jobs_deleted, long events_deleted)
{
	const long after = cfg->retention.vacuum_after_rows;
	bool due[N_VACUUM_TABLES];
	json_t *started;

	if (v == NULL || after == 0)
		return NULL;
	v->deleted[VT_JOBS] += jobs_deleted;
	v->deleted[VT_EVENTS] += events_deleted;
	if (vacuum_running(v))
		return NULL;
	for (int t = 0; t < N_VACUUM_TABLES; t++)
		due[t] = v->deleted[t] >= after;
	if (!due[VT_JOBS] && !due[VT_EVENTS])
		return NULL;
	if (v->rights < 0 && check_rights(v, conn) < 0)
		return NULL;
	if (v->rights == 0 || start_vacuum(v, cfg, due) < 0)
		return NULL;
	started = json_array();
	for (int t = 0; started != NULL && t < N_VACUUM_TABLES; t++)
		if (due[t] && json_array_append_new(started, json_string(table_names[t])) < 0)
			break;
	return json_pack("{s:o?}", "started", started);
}
