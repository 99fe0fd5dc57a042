/*
 * test_producer_upgrade.c: jobs enqueued by the previous release keep
 * deduplicating after migration V4.
 *
 * A database is migrated to V3 and filled the way liboutbox did before V4
 * (its statements, verbatim, with ids from the jansson canonical form);
 * then it is migrated to V4 and the same jobs are enqueued again through
 * every new path (liboutbox's news, price and generic calls, and the SQL
 * functions): nothing new is written, and every call reports the old ids.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/migrate.h"
#include "outbox/producer.h"
#include "testdb.h"

/* liboutbox's enqueue statement up to V3 (core/producer/producer.c). */
static const char old_enqueue_sql[] =
	"WITH j AS ("
	"  INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload,"
	"                           window_symbol, window_start, window_generation)"
	"  VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7::timestamptz, $8::integer)"
	"  ON CONFLICT (job_id) DO NOTHING"
	"  RETURNING job_id)"
	" INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination,"
	"                                   redrive_generation, body)"
	" SELECT $9, $2, job_id, $3, 0, $10 FROM j"
	" ON CONFLICT (event_id) DO NOTHING"
	" RETURNING event_id";

/* Its price-window upsert. */
static const char old_window_sql[] =
	"INSERT INTO outbox.price_windows (symbol, window_start, artifact_key, artifact_sha256,"
	" backfill) VALUES ($1, $2::timestamptz, $3, $4, false)";

struct old_job {
	const char *type;
	const char *destination;
	const char *identity; /* as the old producer built it */
	const char *payload;
	const char *window_generation; /* price jobs only */
};

static const char sha[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static const struct old_job old_jobs[] = {
	{"news", "news",
	 "{\"type\":\"news\",\"source\":\"Yonhap \xec\x97\xb0\xed\x95\xa9\","
	 "\"url\":\"https://example.com/a?b=1&c=\\\"q\\\"\"}",
	 "{\"source\":\"Yonhap \xec\x97\xb0\xed\x95\xa9\",\"url\":\"https://example.com/a?b=1&c=\\\"q\\\"\","
	 "\"published_at\":\"2026-11-30T09:00:00Z\",\"title\":\"t\",\"body\":\"b\"}", NULL},
	{"price", "price",
	 "{\"type\":\"price\",\"symbol\":\"NVDA\",\"window_start\":\"2026-11-27T14:35:00Z\",\"generation\":1}",
	 "{\"symbol\":\"NVDA\",\"window_start\":\"2026-11-27T14:35:00Z\",\"generation\":1,"
	 "\"artifact_key\":\"bars/NVDA/1\",\"artifact_sha256\":\"0123456789abcdef0123456789abcdef"
	 "0123456789abcdef0123456789abcdef\"}", "1"},
	{"explanation", "explanation",
	 "{\"type\":\"explanation\",\"symbol\":\"NVDA\",\"window_start\":\"2026-11-27T14:35:00Z\",\"generation\":1}",
	 "{\"symbol\":\"NVDA\"}", NULL},
	/* a plugin's tx_enqueue: any identity, in its order */
	{"report", "news",
	 "{\"z\":1,\"a\":[0.1,-2.5e-7,1e300,true,null],\"m\":{\"\xc3\xa9\":\"tab\\there\\u001f\",\"n\":-9223372036854775808}}",
	 "{}", NULL},
};

#define N_OLD (sizeof(old_jobs) / sizeof(old_jobs[0]))

static char *conninfo;
static char old_ids[N_OLD][OUTBOX_JOB_ID_LEN + 1];

/* The old producer's event body (message_body() up to V3). */
static char *old_body(const struct old_job *o, const char *event_id, const char *job_id)
{
	json_t *b = json_pack("{s:s, s:s, s:s, s:s, s:i}", "event_id", event_id, "job_id", job_id,
	                      "job_type", o->type, "destination", o->destination,
	                      "redrive_generation", 0);
	char *text;

	if (o->window_generation)
		json_object_set_new(b, "window_generation", json_integer(strtol(o->window_generation, NULL, 10)));
	text = json_dumps(b, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(b);
	return text;
}

static void migrate_dir(PGconn *conn, const char *dir)
{
	struct migrate_report report;
	char err[1024];

	if (migrate_run(conn, dir, "core", &report, err, sizeof(err)) != MIGRATE_OK)
		fail_msg("migrate %s: %s", dir, err);
}

/* A database at V3: the core migrations up to V3__relay_registry.sql only. */
static void migrate_to_v3(PGconn *conn, char *tmpdir)
{
	static const char *const files[] = {"V1__core_schema.sql", "V2__relay_notify.sql",
	                                    "V3__relay_registry.sql"};
	char src[4096], dst[4096];

	testdb_exec(conn, "DROP SCHEMA outbox CASCADE");
	assert_non_null(mkdtemp(tmpdir));
	for (size_t i = 0; i < 3; i++) {
		snprintf(src, sizeof(src), "%s/migrations/%s", OUTBOX_SRCDIR, files[i]);
		snprintf(dst, sizeof(dst), "%s/%s", tmpdir, files[i]);
		assert_int_equal(symlink(src, dst), 0);
	}
	migrate_dir(conn, tmpdir);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM pg_proc p JOIN pg_namespace n"
	                                     " ON n.oid = p.pronamespace WHERE n.nspname = 'outbox'"
	                                     " AND p.proname = 'enqueue'"), 0);
}

static void enqueue_old(PGconn *conn, size_t i)
{
	const struct old_job *o = &old_jobs[i];
	json_t *identity = json_loads(o->identity, JSON_REJECT_DUPLICATES, NULL);
	char *canonical = outbox_canonical_json(identity);
	char event_id[OUTBOX_EVENT_ID_MAX];
	char *body;

	assert_non_null(canonical);
	outbox_job_id(canonical, old_ids[i]);
	assert_int_equal(outbox_event_id(o->type, old_ids[i], 0, event_id, sizeof(event_id)), 0);
	body = old_body(o, event_id, old_ids[i]);
	if (o->window_generation) {
		const char *wp[4] = {"NVDA", "2026-11-27T14:35:00Z", "bars/NVDA/1", sha};
		PQclear(PQexecParams(conn, old_window_sql, 4, NULL, wp, NULL, NULL, 0));
	}
	const char *params[10] = {old_ids[i], o->type, o->destination, canonical, o->payload,
	                          o->window_generation ? "NVDA" : NULL,
	                          o->window_generation ? "2026-11-27T14:35:00Z" : NULL,
	                          o->window_generation, event_id, body};
	PGresult *res = PQexecParams(conn, old_enqueue_sql, 10, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		fail_msg("old enqueue of %s: %s", o->type, PQresultErrorMessage(res));
	PQclear(res);
	free(body);
	free(canonical);
	json_decref(identity);
}

static void expect_existing(const struct outbox_enqueued *e, size_t i)
{
	char event_id[OUTBOX_EVENT_ID_MAX];

	snprintf(event_id, sizeof(event_id), "%s:%s:0", old_jobs[i].type, old_ids[i]);
	assert_int_equal(e->created, 0);
	assert_string_equal(e->job_id, old_ids[i]);
	assert_string_equal(e->event_id, event_id);
}

static void enqueue_new_c(PGconn *conn)
{
	struct outbox_enqueued e;
	struct outbox_price_enqueued pe;
	char err[512];
	json_t *item = json_loads(old_jobs[0].payload, 0, NULL);

	if (outbox_enqueue_news_job(conn, "news", item, &e, err, sizeof(err)) != 0)
		fail_msg("news: %s", err);
	expect_existing(&e, 0);
	json_decref(item);

	struct outbox_price_window w = {"NVDA", "2026-11-27 23:35:00+09:00", "bars/NVDA/1", sha, 0};
	if (outbox_enqueue_price_job(conn, "price", &w, &pe, err, sizeof(err)) != 0)
		fail_msg("price: %s", err);
	assert_int_equal(pe.generation, 1);
	assert_int_equal(pe.corrected, 0);
	assert_int_equal(pe.job_written, 1);
	expect_existing(&pe.job, 1);

	for (size_t i = 2; i < N_OLD; i++) {
		json_t *identity = json_loads(old_jobs[i].identity, 0, NULL);
		json_t *payload = json_loads(old_jobs[i].payload, 0, NULL);
		if (outbox_enqueue_job(conn, old_jobs[i].type, old_jobs[i].destination, identity,
		                       payload, &e, err, sizeof(err)) != 0)
			fail_msg("%s: %s", old_jobs[i].type, err);
		expect_existing(&e, i);
		json_decref(identity);
		json_decref(payload);
	}
}

static void enqueue_new_sql(PGconn *conn)
{
	for (size_t i = 0; i < N_OLD; i++) {
		const char *params[4] = {old_jobs[i].type, old_jobs[i].destination, old_jobs[i].identity,
		                         old_jobs[i].payload};
		PGresult *res = PQexecParams(conn,
		                             "SELECT job_id, created FROM outbox.enqueue(job_type => $1,"
		                             " destination => $2, identity => $3, payload => $4)",
		                             4, NULL, params, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			fail_msg("SQL %s: %s", old_jobs[i].type, PQresultErrorMessage(res));
		assert_string_equal(PQgetvalue(res, 0, 0), old_ids[i]);
		assert_string_equal(PQgetvalue(res, 0, 1), "f");
		PQclear(res);
	}
	PGresult *res = PQexec(conn, "SELECT job_id, created, generation FROM"
	                       " outbox.confirm_price_window(destination => 'price', symbol => 'NVDA',"
	                       " window_start => '2026-11-27T14:35:00Z', artifact_key => 'bars/NVDA/1',"
	                       " artifact_sha256 => '" "0123456789abcdef0123456789abcdef"
	                       "0123456789abcdef0123456789abcdef')");
	assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(res, 0, 0), old_ids[1]);
	assert_string_equal(PQgetvalue(res, 0, 1), "f");
	assert_string_equal(PQgetvalue(res, 0, 2), "1");
	PQclear(res);
}

static void test_old_jobs_deduplicate_after_v4(void **state)
{
	PGconn *conn = testdb_connect(conninfo);
	char tmpdir[] = "/tmp/outbox-upgrade.XXXXXX";
	char path[4096];

	migrate_to_v3(conn, tmpdir);
	for (size_t i = 0; i < N_OLD; i++)
		enqueue_old(conn, i);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.jobs"), N_OLD);

	migrate_dir(conn, OUTBOX_SRCDIR "/migrations");
	/* V4 applied (later migrations may follow it). */
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.schema_migrations"
	                                     " WHERE component = 'core' AND version = 4"), 1);
	testdb_exec(conn, "BEGIN");
	enqueue_new_c(conn);
	enqueue_new_sql(conn);
	testdb_exec(conn, "COMMIT");
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.jobs"), N_OLD);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.outbox_events"), N_OLD);
	assert_int_equal(testdb_scalar(conn, "SELECT count(*) FROM outbox.price_windows"), 1);
	/* the bodies the SQL would write now are the bodies the old code wrote */
	assert_int_equal(testdb_scalar(conn,
		"SELECT count(*) FROM outbox.outbox_events e JOIN outbox.jobs j USING (job_id)"
		" WHERE e.body = '{\"event_id\":' || outbox.json_quote(e.event_id) || ',\"job_id\":'"
		"  || outbox.json_quote(j.job_id) || ',\"job_type\":' || outbox.json_quote(j.job_type)"
		"  || ',\"destination\":' || outbox.json_quote(j.destination) || ',\"redrive_generation\":0'"
		"  || coalesce(',\"window_generation\":' || j.window_generation, '') || '}'"), N_OLD);
	for (size_t i = 0; i < 3; i++) {
		static const char *const files[] = {"V1__core_schema.sql", "V2__relay_notify.sql",
		                                    "V3__relay_registry.sql"};
		snprintf(path, sizeof(path), "%s/%s", tmpdir, files[i]);
		unlink(path);
	}
	rmdir(tmpdir);
	PQfinish(conn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_jobs_deduplicate_after_v4),
	};

	testdb_require();
	conninfo = testdb_create("outbox_test_producer_upgrade");
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(conninfo);
	return rc;
}
