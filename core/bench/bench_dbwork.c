/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench_dbwork.c: what the database did for the jobs of a phase (see
 * bench.h): WAL bytes (pg_current_wal_lsn() before and after), row
 * versions written (heap tuples inserted or updated in the outbox schema,
 * from pg_stat_user_tables), the share of HOT updates of outbox.jobs and
 * outbox.outbox_events, and outboxd's round trips and statements (its
 * statistics file, db/traffic.h).
 *
 * A backend reports its table counters when it goes idle (at most once a
 * second) and when it exits, so a sample first waits until no other
 * session of outbox-bench or outboxd is connected to the database: the
 * counters then hold everything the phase did.
 */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "db/db.h"

#define DBWORK_QUIET_TIMEOUT_S 30

static const char others_sql[] =
	"SELECT count(*) FROM pg_catalog.pg_stat_activity"
	" WHERE datname = pg_catalog.current_database() AND pid <> pg_catalog.pg_backend_pid()"
	"   AND (application_name LIKE 'outbox-bench%' OR application_name LIKE 'outboxd%')";

/* $1 = relname: that table's n_tup_upd, n_tup_hot_upd. */
static const char sample_sql[] =
	"SELECT pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), '0/0')::bigint,"
	"       coalesce(sum(n_tup_ins + n_tup_upd), 0)::bigint,"
	"       coalesce(sum(n_tup_upd) FILTER (WHERE relname = 'jobs'), 0)::bigint,"
	"       coalesce(sum(n_tup_hot_upd) FILTER (WHERE relname = 'jobs'), 0)::bigint,"
	"       coalesce(sum(n_tup_upd) FILTER (WHERE relname = 'outbox_events'), 0)::bigint,"
	"       coalesce(sum(n_tup_hot_upd) FILTER (WHERE relname = 'outbox_events'), 0)::bigint"
	"  FROM pg_catalog.pg_stat_user_tables WHERE schemaname = 'outbox'";

int bench_db_sample(struct bench *b, struct bench_db_sample *s)
{
	char err[512];
	PGresult *res;

	memset(s, 0, sizeof(*s));
	if (bench_wait_count(b, others_sql, 0, true, DBWORK_QUIET_TIMEOUT_S) < 0) {
		log_error("the sessions of the last phase did not end within %d s",
		          DBWORK_QUIET_TIMEOUT_S);
		return -1;
	}
	res = db_query(b->conn, sample_sql, 0, NULL, err, sizeof(err));
	if (res == NULL) {
		log_error("could not read the WAL position and the table counters: %s", err);
		return -1;
	}
	s->wal_bytes = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	s->row_versions = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	s->jobs_upd = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	s->jobs_hot = strtoll(PQgetvalue(res, 0, 3), NULL, 10);
	s->events_upd = strtoll(PQgetvalue(res, 0, 4), NULL, 10);
	s->events_hot = strtoll(PQgetvalue(res, 0, 5), NULL, 10);
	PQclear(res);
	s->have = true;
	return 0;
}

static double share(long long hot, long long upd)
{
	return upd > 0 ? (double)hot / (double)upd : -1;
}

int bench_db_work(const struct bench_db_sample *s0,
                  const struct bench_db_sample *s1, const struct daemon *d, int jobs,
                  struct bench_db_work *out)
{
	memset(out, 0, sizeof(*out));
	if (!s0->have || !s1->have || jobs <= 0)
		return -1;
	out->wal_bytes_per_job = (double)(s1->wal_bytes - s0->wal_bytes) / jobs;
	out->row_versions_per_job = (double)(s1->row_versions - s0->row_versions) / jobs;
	out->jobs_hot_share = share(s1->jobs_hot - s0->jobs_hot, s1->jobs_upd - s0->jobs_upd);
	out->events_hot_share = share(s1->events_hot - s0->events_hot,
	                              s1->events_upd - s0->events_upd);
	out->statements_per_job = d->db_statements >= 0 ? (double)d->db_statements / jobs : -1;
	out->round_trips_per_job = d->db_round_trips >= 0 ? (double)d->db_round_trips / jobs : -1;
	out->have = true;
	return 0;
}
