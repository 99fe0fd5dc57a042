/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/liveness.c: the process's liveness key and lock (see liveness.h).
 */
#include "consumer/liveness.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/traffic.h"

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_value;

static void make_key(void)
{
	uint32_t v = 0;

	/* Without getrandom() (never expected): time and pid still differ
	 * between the restarts of one host. */
	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = (uint32_t)time(NULL) * 2654435761u ^ (uint32_t)getpid();
	v &= 0x7fffffffu;
	key_value = v == 0 ? 1 : (int)v;
}

int liveness_key(void)
{
	pthread_once(&key_once, make_key);
	return key_value;
}

int liveness_hold(PGconn *conn, char *err, size_t errlen)
{
	char key[16];
	const char *params[1] = {key};
	PGresult *res;
	int rc = 0;

	snprintf(key, sizeof(key), "%d", liveness_key());
	res = PQexecParams(conn, "SELECT pg_advisory_lock_shared(" LIVENESS_LOCK_SPACE_SQL
	                   ", $1::integer)", 1, NULL, params, NULL, NULL, 0);
	db_traffic_note(1);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		db_error(conn, res, err, errlen);
		rc = -1;
	}
	PQclear(res);
	return rc;
}
