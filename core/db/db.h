/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * db/db.h: small helpers around libpq used by every part of the core.
 *
 * They log nothing themselves: each returns the server's message in err so
 * the caller can say what it was trying to do.
 */
#ifndef OUTBOX_CORE_DB_DB_H
#define OUTBOX_CORE_DB_DB_H

#include <stddef.h>

#include <libpq-fe.h>

#include "common/compiler.h"

/*
 * Connect and check the connection; sets application_name so operators can
 * tell outboxd's sessions apart in pg_stat_activity.  Returns a connection
 * the caller closes with PQfinish(), or NULL with the reason in err.
 */
PGconn *db_connect(const char *conninfo, const char *application_name,
                   char *err, size_t errlen);

/*
 * Session settings for every later db_connect() of this process, in
 * seconds (0: leave the server's setting): lock_timeout, statement_timeout
 * and idle_in_transaction_session_timeout.  outboxd calls it once, before
 * it starts any thread, so that a hung plugin cannot hold locks (or a
 * statement stall) past the limit; outboxctl does not (a migration may
 * legitimately wait).
 */
void db_set_session_timeouts(int lock_timeout, int statement_timeout,
                             int idle_in_transaction_timeout);

/* Run one or more statements without parameters (the simple protocol);
 * rows are discarded.  Returns 0 or -1 with err set. */
int db_exec(PGconn *conn, const char *sql, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Run a parameterised statement.  Returns the result (caller frees with
 * PQclear()) when its status is COMMAND_OK or TUPLES_OK, else NULL with err
 * set.
 */
PGresult *db_query(PGconn *conn, const char *sql, int nparams,
                   const char *const *params, char *err, size_t errlen);

/*
 * pg_try_advisory_lock(key1, key2) on conn: a session-level lock, held
 * until it is unlocked or the session ends (how outboxd picks one instance
 * for a task).  Returns 1 if taken, 0 if another session holds it, -1 with
 * err set.
 */
int db_try_advisory_lock(PGconn *conn, int key1, int key2, char *err, size_t errlen)
	OUTBOX_MUSTCHECK;

/*
 * Copy the result's or the connection's error into err, without the
 * newline.  An error that says the session is read-only (SQLSTATE 25006)
 * also marks a connection of db_connect() for db_connection_lost().
 */
void db_error(PGconn *conn, const PGresult *res, char *err, size_t errlen);

/*
 * True if the caller should reconnect: the connection is gone, or its
 * session refused a write as read-only (after a failover it may still be
 * on the old node, now a standby; a new session reaches the primary).
 */
int db_connection_lost(PGconn *conn);

/* True if the session refused a write as read-only (see db_error()). */
int db_session_read_only(PGconn *conn);

#endif
