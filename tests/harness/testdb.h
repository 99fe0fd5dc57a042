/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * testdb.h: throwaway databases for integration tests.
 *
 * The cluster comes from OUTBOX_TEST_PG_CONNINFO / OUTBOX_TEST_PG_PORT
 * (tests/harness/services.sh).  Without them testdb_require() exits 77, the
 * automake code for a skipped test.
 */
#ifndef OUTBOX_TESTS_TESTDB_H
#define OUTBOX_TESTS_TESTDB_H

#include <libpq-fe.h>

/* Exit 77 unless the PostgreSQL test cluster is configured. */
void testdb_require(void);

/*
 * Drop and create database `name`, apply the core migrations, and return
 * its conninfo (caller frees with free()).  Aborts the test on failure.
 */
char *testdb_create(const char *name);

/* Connect or abort the test.  Caller closes with PQfinish(). */
PGconn *testdb_connect(const char *conninfo);

/* Run sql (one statement, no parameters) and return the first column of
 * the first row as a long; aborts the test on error. */
long testdb_scalar(PGconn *conn, const char *sql);

/* Run sql or abort. */
void testdb_exec(PGconn *conn, const char *sql);

#endif
