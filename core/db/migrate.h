/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * db/migrate.h: Flyway-style schema migrations.
 *
 * A migration is a file V<n>__<name>.sql in a directory.  Files are applied
 * in order of n, each in its own transaction together with its row in
 * outbox.schema_migrations (component, version, name, SHA-256 checksum).
 * A "component" keeps the core's and each plugin's version numbers apart.
 * One migrator runs at a time (a session advisory lock).
 */
#ifndef OUTBOX_CORE_DB_MIGRATE_H
#define OUTBOX_CORE_DB_MIGRATE_H

#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"

enum migrate_status {
	MIGRATE_OK = 0,
	MIGRATE_FAILED = -1,  /* database or I/O failure */
	MIGRATE_CHANGED = -2, /* an applied file changed or vanished: refuse */
	MIGRATE_BEHIND = -3,  /* migrate_check(): files not applied yet */
};

struct migrate_report {
	int applied; /* files applied by this run */
	int current; /* files that were already applied */
};

/*
 * Apply the pending migrations of dir under component ("core", or a plugin
 * name).  On MIGRATE_CHANGED nothing is applied and err names the file.
 * Progress ("applied V1__core_schema.sql") is logged at info level.
 */
int migrate_run(PGconn *conn, const char *dir, const char *component,
                struct migrate_report *report, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Whether the database has every migration this binary ships: the core's
 * files in dir and, for each name in plugins (borrowed; repeats are fine),
 * those of dir/plugins/NAME when that folder exists.  Read-only (no lock,
 * nothing created), so it works on an empty database too.
 *
 * MIGRATE_BEHIND: err names every missing file and says to run outboxctl
 * migrate.  Versions recorded that dir has no file for come from a newer
 * release; migrations keep the previous release working (docs/schema.md,
 * "Schema check"), so that is accepted with one warning logged.
 * MIGRATE_FAILED: the directory or the database could not be read.
 */
int migrate_check(PGconn *conn, const char *dir, const char *const *plugins, size_t n_plugins,
                  char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* The directory holding the core's migrations: $OUTBOX_MIGRATIONS_DIR if set,
 * else the installed one.  Borrowed. */
const char *migrate_default_dir(void);

#endif
