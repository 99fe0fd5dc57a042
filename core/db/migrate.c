/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * db/migrate.c: apply V<n>__<name>.sql files in order, exactly once each.
 */
#include "db/migrate.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db/db.h"
#include "common/hexdigest.h"
#include "common/log.h"

#define MIGRATE_LOCK_KEY "7346010542"  /* arbitrary, constant advisory lock key */

struct migration {
	int version;
	char *file;     /* "V1__core_schema.sql" */
	char *path;
	char *sql;      /* file content */
	char checksum[65];
	int applied;    /* already recorded in schema_migrations */
};

struct migration_set {
	struct migration *items;
	size_t n;
};

static const char bootstrap_sql[] =
	"CREATE SCHEMA IF NOT EXISTS outbox;"
	"CREATE TABLE IF NOT EXISTS outbox.schema_migrations ("
	"  component  text        NOT NULL,"
	"  version    integer     NOT NULL,"
	"  name       text        NOT NULL,"
	"  checksum   text        NOT NULL,"
	"  applied_at timestamptz NOT NULL DEFAULT now(),"
	"  PRIMARY KEY (component, version))";

const char *migrate_default_dir(void)
{
	const char *dir = getenv("OUTBOX_MIGRATIONS_DIR");

	return dir && *dir ? dir : PKGDATADIR "/migrations";
}

static void set_free(struct migration_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->items[i].file);
		free(set->items[i].path);
		free(set->items[i].sql);
	}
	free(set->items);
	set->items = NULL;
	set->n = 0;
}

/* Returns the version of a "V<n>__<name>.sql" file name, or -1. */
static int parse_file_name(const char *name)
{
	char *end;
	long v;
	size_t len = strlen(name);

	if (name[0] != 'V' || len < 9 || strcmp(name + len - 4, ".sql") != 0)
		return -1;
	errno = 0;
	v = strtol(name + 1, &end, 10);
	if (errno != 0 || end == name + 1 || v < 1 || v > 1000000 || strncmp(end, "__", 2) != 0 ||
	    end + 2 >= name + len - 4)
		return -1;
	return (int)v;
}

static int read_file(const char *path, char **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;

	if (f == NULL) {
		snprintf(err, errlen, "could not open migration \"%s\": %s", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		goto fail;
	buf = malloc((size_t)size + 1);
	if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size)
		goto fail;
	buf[size] = '\0';
	fclose(f);
	*out = buf;
	return 0;
fail:
	snprintf(err, errlen, "could not read migration \"%s\": %s", path, strerror(errno));
	free(buf);
	fclose(f);
	return -1;
}

static int compare_version(const void *a, const void *b)
{
	const struct migration *x = a, *y = b;

	return (x->version > y->version) - (x->version < y->version);
}

static int add_file(struct migration_set *set, const char *dir, const char *name,
                    int version, char *err, size_t errlen)
{
	struct migration *items = realloc(set->items, (set->n + 1) * sizeof(*items));
	struct migration *m;

	if (items == NULL)
		goto oom;
	set->items = items;
	m = &items[set->n];
	memset(m, 0, sizeof(*m));
	m->version = version;
	m->file = strdup(name);
	if (m->file == NULL || asprintf(&m->path, "%s/%s", dir, name) < 0) {
		free(m->file);
		goto oom;
	}
	set->n++;
	if (read_file(m->path, &m->sql, err, errlen) < 0)
		return -1;
	(void)sha256_hex(m->sql, strlen(m->sql), m->checksum);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int scan_dir(const char *dir, struct migration_set *set, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		snprintf(err, errlen, "could not open migrations directory \"%s\": %s", dir,
		         strerror(errno));
		return -1;
	}
	for (de = readdir(d); rc == 0 && de != NULL; de = readdir(d)) {
		int version = parse_file_name(de->d_name);

		if (version > 0)
			rc = add_file(set, dir, de->d_name, version, err, errlen);
	}
	closedir(d);
	if (rc < 0)
		return -1;
	if (set->n > 1)
		qsort(set->items, set->n, sizeof(set->items[0]), compare_version);
	for (size_t i = 1; i < set->n; i++) {
		if (set->items[i].version == set->items[i - 1].version) {
			snprintf(err, errlen, "migrations \"%s\" and \"%s\" have the same version %d",
			         set->items[i - 1].file, set->items[i].file, set->items[i].version);
			return -1;
		}
	}
	return 0;
}

static struct migration *find_version(struct migration_set *set, int version)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->items[i].version == version)
			return &set->items[i];
	return NULL;
}

/*
 * Marks the files already applied, and refuses if any of them changed or
 * disappeared: applying newer files on top of an edited history would leave
 * a schema nobody can reproduce.
 */
static int check_applied(PGconn *conn, const char *dir, const char *component,
                         struct migration_set *set, struct migrate_report *report,
                         char *err, size_t errlen)
{
	const char *params[1] = {component};
	PGresult *res = db_query(conn,
		"SELECT version, name, checksum FROM outbox.schema_migrations"
		" WHERE component = $1 ORDER BY version", 1, params, err, errlen);
	int rc = MIGRATE_OK;

	if (res == NULL)
		return MIGRATE_FAILED;
	for (int i = 0; i < PQntuples(res) && rc == MIGRATE_OK; i++) {
		int version = (int)strtol(PQgetvalue(res, i, 0), NULL, 10);
		struct migration *m = find_version(set, version);

		if (m == NULL) {
			snprintf(err, errlen, "applied migration \"%s\" is missing from \"%s\"",
			         PQgetvalue(res, i, 1), dir);
			rc = MIGRATE_CHANGED;
		} else if (strcmp(m->checksum, PQgetvalue(res, i, 2)) != 0) {
			snprintf(err, errlen,
			         "migration \"%s\" has changed since it was applied (checksum %.12s..., "
			         "recorded %.12s...); add a new migration instead of editing an applied one",
			         m->path, m->checksum, PQgetvalue(res, i, 2));
			rc = MIGRATE_CHANGED;
		} else {
			m->applied = 1;
			report->current++;
		}
	}
	PQclear(res);
	return rc;
}

/*
 * A pending file numbered below an applied one (a branch merged late) would
 * run after newer migrations it was never written against: refuse, as
 * Flyway does, and ask for a new number.
 */
static int check_order(const struct migration_set *set, char *err, size_t errlen)
{
	const struct migration *newest = NULL;

	for (size_t i = 0; i < set->n; i++)
		if (set->items[i].applied)
			newest = &set->items[i];
	for (size_t i = 0; newest != NULL && i < set->n; i++) {
		const struct migration *m = &set->items[i];

		if (!m->applied && m->version < newest->version) {
			snprintf(err, errlen, "migration \"%s\" is numbered below \"%s\", which is already "
			         "applied; give it a version above %d", m->path, newest->file, newest->version);
			return MIGRATE_CHANGED;
		}
	}
	return MIGRATE_OK;
}

static int apply_one(PGconn *conn, const char *component, const struct migration *m,
                     char *err, size_t errlen)
{
	char version[16];
	const char *params[4] = {component, version, m->file, m->checksum};
	PGresult *res;
	char why[512];

	snprintf(version, sizeof(version), "%d", m->version);
	if (db_exec(conn, "BEGIN", err, errlen) < 0)
		return MIGRATE_FAILED;
	/* PQexec: a migration file may hold several statements. */
	res = PQexec(conn, m->sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK) {
		db_error(conn, res, why, sizeof(why));
		snprintf(err, errlen, "migration \"%s\" failed: %s", m->file, why);
		goto fail;
	}
	PQclear(res);
	/* A file with its own COMMIT would make the file and its row separate. */
	if (PQtransactionStatus(conn) != PQTRANS_INTRANS) {
		snprintf(err, errlen, "migration \"%s\" ended the transaction itself: remove its "
		         "BEGIN/COMMIT/ROLLBACK (each file already runs in its own transaction)", m->file);
		goto fail_noclear;
	}
	res = db_query(conn, "INSERT INTO outbox.schema_migrations (component, version, name, checksum)"
	               " VALUES ($1, $2::integer, $3, $4)", 4, params, err, errlen);
	if (res == NULL)
		goto fail_noclear;
	PQclear(res);
	if (db_exec(conn, "COMMIT", err, errlen) < 0)
		return MIGRATE_FAILED;
	log_info("applied migration \"%s\" (component %s)", m->file, component);
	return MIGRATE_OK;
fail:
	PQclear(res);
fail_noclear:
	res = PQexec(conn, "ROLLBACK");
	PQclear(res);
	return MIGRATE_FAILED;
}

int migrate_run(PGconn *conn, const char *dir, const char *component,
                struct migrate_report *report, char *err, size_t errlen)
{
	struct migration_set set = {NULL, 0};
	int rc = MIGRATE_FAILED;
	int locked = 0;

	memset(report, 0, sizeof(*report));
	if (scan_dir(dir, &set, err, errlen) < 0)
		goto out;
	if (db_exec(conn, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", err, errlen) < 0)
		goto out;
	locked = 1;
	/* Concurrent CREATE ... IF NOT EXISTS can still collide: the lock comes first. */
	if (db_exec(conn, bootstrap_sql, err, errlen) < 0)
		goto out;
	rc = check_applied(conn, dir, component, &set, report, err, errlen);
	if (rc == MIGRATE_OK)
		rc = check_order(&set, err, errlen);
	for (size_t i = 0; i < set.n && rc == MIGRATE_OK; i++) {
		if (set.items[i].applied)
			continue;
		rc = apply_one(conn, component, &set.items[i], err, errlen);
		if (rc == MIGRATE_OK)
			report->applied++;
	}
out:
	if (locked) {
		PGresult *res = PQexec(conn, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")");
		PQclear(res);
	}
	set_free(&set);
	return rc;
}

/* Appends ", \"FILE\" (COMPONENT)" to buf (no comma first); marks a full buffer. */
static void list_add(char *buf, size_t size, const char *file, const char *component)
{
	size_t used = strlen(buf);
	int n;

	if (used + 4 >= size)
		return;
	n = snprintf(buf + used, size - used, "%s", used > 0 ? ", " : "");
	if (n > 0)
		used += (size_t)n;
	n = snprintf(buf + used, size - used, "\"%s\" (%s)", file, component);
	if (n < 0 || (size_t)n >= size - used)
		memcpy(buf + size - 4, "...", 4);
}

/* Lists a component's files with no row (missing) and its rows with no file (newer). */
static int check_component(PGconn *conn, bool have_table, const char *dir, const char *component,
                           char *missing, char *newer, size_t size, char *err, size_t errlen)
{
	struct migration_set set = {NULL, 0};
	const char *params[1] = {component};
	PGresult *res = NULL;

	if (scan_dir(dir, &set, err, errlen) < 0)
		return MIGRATE_FAILED;
	if (have_table) {
		res = db_query(conn, "SELECT version, name FROM outbox.schema_migrations"
		               " WHERE component = $1 ORDER BY version", 1, params, err, errlen);
		if (res == NULL) {
			set_free(&set);
			return MIGRATE_FAILED;
		}
	}
	for (int i = 0; res != NULL && i < PQntuples(res); i++) {
		struct migration *m = find_version(&set, (int)strtol(PQgetvalue(res, i, 0), NULL, 10));

		if (m != NULL)
			m->applied = 1;
		else
			list_add(newer, size, PQgetvalue(res, i, 1), component);
	}
	for (size_t i = 0; i < set.n; i++)
		if (!set.items[i].applied)
			list_add(missing, size, set.items[i].file, component);
	PQclear(res);
	set_free(&set);
	return MIGRATE_OK;
}

static bool seen_before(const char *const *names, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(names[j], names[i]) == 0)
			return true;
	return false;
}

static int schema_table_exists(PGconn *conn, bool *exists, char *err, size_t errlen)
{
	PGresult *res = db_query(conn, "SELECT pg_catalog.to_regclass('outbox.schema_migrations')"
	                         " IS NOT NULL", 0, NULL, err, errlen);

	if (res == NULL)
		return -1;
	*exists = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return 0;
}

int migrate_check(PGconn *conn, const char *dir, const char *const *plugins, size_t n_plugins,
                  char *err, size_t errlen)
{
	char missing[1024] = "", newer[1024] = "", plugin_dir[4096];
	bool have_table;
	struct stat st;
	int rc;

	if (schema_table_exists(conn, &have_table, err, errlen) < 0)
		return MIGRATE_FAILED;
	rc = check_component(conn, have_table, dir, "core", missing, newer, sizeof(missing), err,
	                     errlen);
	for (size_t i = 0; rc == MIGRATE_OK && i < n_plugins; i++) {
		if (seen_before(plugins, i))
			continue;
		snprintf(plugin_dir, sizeof(plugin_dir), "%s/plugins/%s", dir, plugins[i]);
		if (stat(plugin_dir, &st) == 0 && S_ISDIR(st.st_mode))
			rc = check_component(conn, have_table, plugin_dir, plugins[i], missing, newer,
			                     sizeof(missing), err, errlen);
	}
	if (rc != MIGRATE_OK)
		return rc;
	if (newer[0] != '\0')
		log_warning("the database has migrations this binary does not know, applied by a newer "
		            "release: %s; running on it, as a newer schema keeps older releases working",
		            newer);
	if (missing[0] == '\0')
		return MIGRATE_OK;
	snprintf(err, errlen, "the database schema is behind this binary: migrations %s are not "
	         "applied; run outboxctl migrate", missing);
	return MIGRATE_BEHIND;
}
