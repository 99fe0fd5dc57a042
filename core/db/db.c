/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * db/db.c: libpq helpers shared by the core.
 */
#include "db/db.h"
#include "db/traffic.h"

#include <stdio.h>
#include <string.h>

#include <libpq-events.h>

/*
 * A session that refused a write as read-only (SQLSTATE 25006: a hot
 * standby, default_transaction_read_only) stays so for as long as it lives,
 * while a new one may reach the new primary of a failover or a reset
 * setting.  db_error() marks such a session through libpq's per-connection
 * instance data, and db_connection_lost() then tells its caller to
 * reconnect, as every caller does for a connection that is gone.
 */
static char read_only_mark;

static int session_event(PGEventId id, void *info, void *pass_through)
{
	(void)pass_through;
	/* PQreset() keeps the connection's events: its new session starts
	 * unmarked. */
	if (id == PGEVT_CONNRESET)
		(void)PQsetInstanceData(((PGEventConnReset *)info)->conn, session_event, NULL);
	return 1;
}

static void mark_if_read_only(PGconn *conn, const PGresult *res)
{
	const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	/* A connection db_connect() did not make has no event procedure:
	 * PQsetInstanceData() then fails and nothing is marked. */
	if (conn != NULL && state != NULL && strcmp(state, "25006") == 0)
		(void)PQsetInstanceData(conn, session_event, &read_only_mark);
}

void db_error(PGconn *conn, const PGresult *res, char *err, size_t errlen)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	size_t n;

	mark_if_read_only(conn, res);

	/* The server's primary message (and detail) without "ERROR:" or the LINE context. */
	if (msg != NULL && detail != NULL) {
		snprintf(err, errlen, "%s (%s)", msg, detail);
		return;
	}
	if (msg == NULL || *msg == '\0')
		msg = res ? PQresultErrorMessage(res) : NULL;
	if (msg == NULL || *msg == '\0')
		msg = conn ? PQerrorMessage(conn) : "no connection";
	if (msg == NULL || *msg == '\0')
		msg = "unknown error";
	snprintf(err, errlen, "%s", msg);
	n = strlen(err);
	while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '))
		err[--n] = '\0';
	/* libpq's connection messages span lines ("...\n\tThis probably means"):
	 * one log line per message. */
	for (char *p = err; *p != '\0'; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
}

static void ignore_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Set once by db_set_session_timeouts() before any thread starts. */
static int session_timeouts[3];

void db_set_session_timeouts(int lock_timeout, int statement_timeout,
                             int idle_in_transaction_timeout)
{
	session_timeouts[0] = lock_timeout;
	session_timeouts[1] = statement_timeout;
	session_timeouts[2] = idle_in_transaction_timeout;
}

/* The SET statements of the session settings, one round trip. */
static int apply_session_timeouts(PGconn *conn, char *err, size_t errlen)
{
	static const char *const names[3] = {"lock_timeout", "statement_timeout",
	                                     "idle_in_transaction_session_timeout"};
	char sql[256];
	size_t len = 0;

	for (int i = 0; i < 3; i++) {
		if (session_timeouts[i] > 0)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, "SET %s = '%ds';",
			                        names[i], session_timeouts[i]);
	}
	return len == 0 ? 0 : db_exec(conn, sql, err, errlen);
}

PGconn *db_connect(const char *conninfo, const char *application_name,
                   char *err, size_t errlen)
{
	const char *keys[] = {"dbname", "application_name", "connect_timeout", NULL};
	const char *values[] = {conninfo, application_name, "10", NULL};
	/* expand_dbname=1: conninfo may be a URI or key=value string. */
	PGconn *conn = PQconnectdbParams(keys, values, 1);

	if (conn == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (PQstatus(conn) != CONNECTION_OK) {
		db_error(conn, NULL, err, errlen);
		PQfinish(conn);
		return NULL;
	}
	/* Notices ("relation already exists, skipping") are not for operators. */
	PQsetNoticeProcessor(conn, ignore_notice, NULL);
	if (!PQregisterEventProc(conn, session_event, "outboxd session", NULL)) {
		snprintf(err, errlen, "out of memory");
		PQfinish(conn);
		return NULL;
	}
	if (apply_session_timeouts(conn, err, errlen) < 0) {
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

PGresult *db_query(PGconn *conn, const char *sql, int nparams,
                   const char *const *params, char *err, size_t errlen)
{
	PGresult *res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);

	db_traffic_note(1);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return res;
	db_error(conn, res, err, errlen);
	PQclear(res);
	return NULL;
}

int db_try_advisory_lock(PGconn *conn, int key1, int key2, char *err, size_t errlen)
{
	char k1[16], k2[16];
	const char *params[2] = {k1, k2};
	PGresult *res;
	int got;

	snprintf(k1, sizeof(k1), "%d", key1);
	snprintf(k2, sizeof(k2), "%d", key2);
	res = db_query(conn, "SELECT pg_try_advisory_lock($1::integer, $2::integer)", 2, params,
	               err, errlen);
	if (res == NULL)
		return -1;
	got = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return got;
}

int db_exec(PGconn *conn, const char *sql, char *err, size_t errlen)
{
	/* The simple protocol: sql may hold several statements. */
	PGresult *res = PQexec(conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = 0;

	db_traffic_note_simple(sql);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		db_error(conn, res, err, errlen);
		rc = -1;
	}
	PQclear(res);
	return rc;
}

int db_connection_lost(PGconn *conn)
{
	return conn == NULL || PQstatus(conn) != CONNECTION_OK || db_session_read_only(conn);
}

int db_session_read_only(PGconn *conn)
{
	return conn != NULL && PQinstanceData(conn, session_event) == &read_only_mark;
}
