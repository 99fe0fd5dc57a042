/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * testdb.c: throwaway databases for integration tests.
 */
#include "testdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/migrate.h"

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "testdb: %s: %s\n", what, detail ? detail : "");
	exit(99); /* automake: a hard error, not a test failure */
}

void testdb_require(void)
{
	if (getenv("OUTBOX_TEST_PG_CONNINFO") == NULL || getenv("OUTBOX_TEST_PG_PORT") == NULL) {
		fprintf(stderr, "SKIP: OUTBOX_TEST_PG_CONNINFO is not set (run tests/run.sh)\n");
		exit(77);
	}
}

PGconn *testdb_connect(const char *conninfo)
{
	PGconn *conn = PQconnectdb(conninfo);

	if (PQstatus(conn) != CONNECTION_OK)
		die("could not connect", PQerrorMessage(conn));
	PQclear(PQexec(conn, "SET client_min_messages = warning"));
	return conn;
}

void testdb_exec(PGconn *conn, const char *sql)
{
	PGresult *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		die(sql, PQresultErrorMessage(res));
	PQclear(res);
}

long testdb_scalar(PGconn *conn, const char *sql)
{
	PGresult *res = PQexec(conn, sql);
	long v;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) < 1)
		die(sql, PQresultErrorMessage(res));
	v = strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return v;
}

char *testdb_create(const char *name)
{
	char sql[256], err[1024], *conninfo = NULL;
	struct migrate_report report;
	PGconn *admin, *conn;

	testdb_require();
	admin = testdb_connect(getenv("OUTBOX_TEST_PG_CONNINFO"));
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", name);
	testdb_exec(admin, sql);
	snprintf(sql, sizeof(sql), "CREATE DATABASE \"%s\"", name);
	testdb_exec(admin, sql);
	PQfinish(admin);
	if (asprintf(&conninfo, "host=127.0.0.1 port=%s user=postgres dbname=%s",
	             getenv("OUTBOX_TEST_PG_PORT"), name) < 0)
		die("asprintf", NULL);
	conn = testdb_connect(conninfo);
	if (migrate_run(conn, OUTBOX_SRCDIR "/migrations", "core", &report, err, sizeof(err)) != MIGRATE_OK)
		die("migrate", err);
	PQfinish(conn);
	return conninfo;
}
