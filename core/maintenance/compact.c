/*
 * maintenance/compact.c: rebuild bloated indexes (see compact.h).
 */
#include "maintenance/compact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "db/db.h"

#define COMPACT_ERR_LEN 1024
/* Pruner runs between two estimates (the first run estimates). */
#define COMPACT_CHECK_RUNS 10
/* Indexes whose rebuilt size is remembered (the outbox schema has ~20). */
#define COMPACT_MAX_MEMO 64
#define NAME_LEN 64

/*
 * Every valid B-tree index of the outbox schema: its size, the rows it
 * indexes (the table's reltuples, or a partial index's own), the pg_stats
 * avg_width and the alignment of each of its columns in order ("65:c,8:d";
 * key and INCLUDE columns: a leaf tuple holds both; a varlena key is short
 * enough for the unaligned 1-byte header), whether every column has statistics, whether this role owns the
 * table (REINDEX needs it), its fillfactor and the block size.
 */
static const char estimate_sql[] =
	"SELECT i.relname, pg_catalog.pg_relation_size(i.oid)::bigint,"
	"       (CASE WHEN x.indpred IS NULL THEN t.reltuples ELSE i.reltuples END)::float8,"
	"       w.width, w.ncols > 0 AND w.ncols = w.nstats,"
	"       pg_catalog.pg_has_role(t.relowner, 'USAGE'), t.relname,"
	"       coalesce((SELECT o.option_value::integer"
	"                   FROM pg_catalog.pg_options_to_table(i.reloptions) o"
	"                  WHERE o.option_name = 'fillfactor'), 90),"
	"       pg_catalog.current_setting('block_size')::integer"
	"  FROM pg_catalog.pg_index x"
	"  JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid"
	"  JOIN pg_catalog.pg_class t ON t.oid = x.indrelid"
	"  JOIN pg_catalog.pg_namespace n ON n.oid = i.relnamespace"
	"  JOIN pg_catalog.pg_am a ON a.oid = i.relam"
	" CROSS JOIN LATERAL ("
	"   SELECT count(*) AS ncols, count(s.avg_width) AS nstats,"
	"          pg_catalog.string_agg(s.avg_width || ':' || CASE WHEN ty.typlen = -1 THEN 'c'"
	"                                ELSE ty.typalign::text END, ',' ORDER BY k.n) AS width"
	"     FROM pg_catalog.unnest(x.indkey::pg_catalog.int2[]) WITH ORDINALITY AS k(attnum, n)"
	"     LEFT JOIN pg_catalog.pg_attribute at ON at.attrelid = x.indrelid AND at.attnum = k.attnum"
	"     LEFT JOIN pg_catalog.pg_type ty ON ty.oid = at.atttypid"
	"     LEFT JOIN pg_catalog.pg_stats s ON s.schemaname = n.nspname AND s.tablename = t.relname"
	"                                    AND s.attname = at.attname AND NOT s.inherited) w"
	" WHERE n.nspname = 'outbox' AND a.amname = 'btree' AND x.indisvalid AND x.indisready"
	" ORDER BY i.relname";

/*
 * What an interrupted REINDEX CONCURRENTLY leaves: an invalid copy named
 * NAME_ccnew[N] (failed while building) or the invalid old index
 * NAME_ccold[N] (failed while dropping it).  One that an index build in
 * progress on its table may still be using is left alone.
 */
static const char leftovers_sql[] =
	"SELECT i.relname, t.relname FROM pg_catalog.pg_index x"
	"  JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid"
	"  JOIN pg_catalog.pg_class t ON t.oid = x.indrelid"
	"  JOIN pg_catalog.pg_namespace n ON n.oid = i.relnamespace"
	" WHERE n.nspname = 'outbox' AND NOT x.indisvalid"
	"   AND i.relname ~ '_cc(new|old)[0-9]*$'"
	"   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_progress_create_index p"
	"                    WHERE p.relid = x.indrelid)";

struct memo {
	char name[NAME_LEN];
	double bytes;  /* its size right after our last rebuild */
	double tuples; /* the rows it held then */
};

struct compact {
	int lock_class, lock_key;
	PGconn *rebuild;            /* owned; the REINDEX in flight, NULL when none */
	char index[NAME_LEN];       /* what it rebuilds */
	char table[NAME_LEN];       /* the index's table */
	double before_bytes, tuples;
	long long started_ms;
	int runs_to_check;          /* pruner runs until the next estimate */
	bool denied;                /* a rebuild was refused for lack of rights */
	struct memo memo[COMPACT_MAX_MEMO];
	size_t n_memo;
};

struct estimate {
	char name[NAME_LEN];
	char table[NAME_LEN];
	double bytes, tuples, compact_bytes;
	bool owned;
};

struct compact *compact_new(int lock_class, int lock_key)
{
	struct compact *c = calloc(1, sizeof(*c));

	if (c != NULL) {
		c->lock_class = lock_class;
		c->lock_key = lock_key;
	}
	return c;
}

void compact_free(struct compact *c)
{
	if (c == NULL)
		return;
	PQfinish(c->rebuild);
	free(c);
}

void compact_reset(struct compact *c)
{
	if (c != NULL && c->denied) {
		c->denied = false;
		c->runs_to_check = 0;
	}
}

static double mib(double bytes)
{
	return bytes / (1024.0 * 1024.0);
}

/* The bytes of a leaf tuple: the 8-byte header, then each column
 * ("WIDTH:ALIGN,...") at its alignment, MAXALIGNed. */
static double tuple_bytes(const char *columns)
{
	double off = 8;
	const char *p = columns;

	while (*p != '\0') {
		char *end;
		double w = strtod(p, &end);
		int align = 1;

		if (end == p)
			break; /* not a width */
		if (end[0] == ':' && end[1] != '\0') {
			align = end[1] == 'd' ? 8 : end[1] == 'i' ? 4 : end[1] == 's' ? 2 : 1;
			end += 2;
		}
		off = ceil(off / align) * align + w;
		if (*end != ',')
			break;
		p = end + 1;
	}
	return ceil(off / 8.0) * 8.0;
}

/* See compact.h: a leaf tuple (tuple_bytes()) plus a 4-byte line pointer;
 * a leaf page holds (block - 24 - 16) bytes of them (its header and the
 * B-tree special space taken away), filled to the fillfactor; the inner
 * pages add about 1 %, the metapage and the root a block each. */
double compact_size(double tuples, const char *columns, int fillfactor, int block)
{
	double tuple = tuple_bytes(columns) + 4.0;
	double per_page = floor((block - 40) * fillfactor / 100.0 / tuple);

	if (per_page < 1)
		per_page = 1;
	return (ceil(tuples / per_page) * 1.01 + 2.0) * block;
}

static const struct memo *memo_of(const struct compact *c, const char *name)
{
	for (size_t i = 0; i < c->n_memo; i++)
		if (strcmp(c->memo[i].name, name) == 0)
			return &c->memo[i];
	return NULL;
}

static void memo_set(struct compact *c, const char *name, double bytes, double tuples)
{
	struct memo *m = (struct memo *)memo_of(c, name);

	if (m == NULL && c->n_memo < COMPACT_MAX_MEMO)
		m = &c->memo[c->n_memo++];
	if (m == NULL)
		return;
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->bytes = bytes;
	m->tuples = tuples;
}

/*
 * The size it should have.  An index this code rebuilt before counts its
 * measured size then, scaled to the rows it holds now, when that is more
 * than the estimate: an estimate that is too low for one index (unusual
 * alignment, wide keys pg_stats averages badly) must not make it rebuilt
 * at every check.
 */
static double expected_size(const struct compact *c, const struct estimate *e)
{
	const struct memo *m = memo_of(c, e->name);
	double floor_bytes = 0;

	if (m != NULL && m->tuples > 0)
		floor_bytes = m->bytes * (e->tuples / m->tuples);
	return e->compact_bytes > floor_bytes ? e->compact_bytes : floor_bytes;
}

static bool bloated(const struct compact *c, const struct cfg *cfg, const struct estimate *e)
{
	double expected = expected_size(c, e);

	return expected > 0 && e->bytes >= (double)cfg->retention.reindex_min_bytes &&
	       e->bytes > cfg->retention.reindex_bloat_ratio * expected;
}

/* Row i of estimate_sql into *e; false when it cannot be estimated (never
 * analyzed: no reltuples or no statistics). */
static bool read_estimate(PGresult *res, int i, struct estimate *e)
{
	snprintf(e->name, sizeof(e->name), "%s", PQgetvalue(res, i, 0));
	snprintf(e->table, sizeof(e->table), "%s", PQgetvalue(res, i, 6));
	e->bytes = strtod(PQgetvalue(res, i, 1), NULL);
	e->tuples = strtod(PQgetvalue(res, i, 2), NULL);
	e->owned = strcmp(PQgetvalue(res, i, 5), "t") == 0;
	if (e->tuples < 0 || strcmp(PQgetvalue(res, i, 4), "t") != 0)
		return false;
	e->compact_bytes = compact_size(e->tuples, PQgetvalue(res, i, 3),
	                                (int)strtol(PQgetvalue(res, i, 7), NULL, 10),
	                                (int)strtol(PQgetvalue(res, i, 8), NULL, 10));
	return true;
}

/*
 * Estimates every index; the most bloated one (the most bytes to give
 * back) in *worst.  Returns the number of indexes estimated, -1 on error
 * (logged); *n_bloated how many passed the threshold.
 */
static int estimate_all(struct compact *c, PGconn *conn, const struct cfg *cfg,
                        struct estimate *worst, int *n_bloated)
{
	char err[COMPACT_ERR_LEN];
	PGresult *res = db_query(conn, estimate_sql, 0, NULL, err, sizeof(err));
	int n = 0;

	*n_bloated = 0;
	if (res == NULL) {
		log_warning("could not estimate the sizes of the outbox indexes: %s", err);
		return -1;
	}
	for (int i = 0; i < PQntuples(res); i++) {
		struct estimate e;

		if (!read_estimate(res, i, &e))
			continue;
		n++;
		log_debug("index size estimate index=outbox.%s bytes=%.0f compact_bytes=%.0f "
		          "tuples=%.0f", e.name, e.bytes, expected_size(c, &e), e.tuples);
		if (!bloated(c, cfg, &e))
			continue;
		if (++*n_bloated == 1 ||
		    e.bytes - expected_size(c, &e) > worst->bytes - expected_size(c, worst))
			*worst = e;
	}
	PQclear(res);
	return n;
}

/* Said once, then nothing is rebuilt until a reload. */
static void deny(struct compact *c, const char *index, const char *table, const char *why)
{
	log_warning("cannot rebuild index \"outbox.%s\": %s; REINDEX needs the owner of table "
	            "\"outbox.%s\": run outboxd as the role that owns the outbox tables, rebuild "
	            "it by hand (REINDEX INDEX CONCURRENTLY outbox.%s), or set [retention] "
	            "reindex_bloat_ratio = 0 (a restart applies it); no index is rebuilt until "
	            "a reload index=outbox.%s",
	            index, why, table, index, index);
	c->denied = true;
}

/* insufficient_privilege: "must be owner of index ..." */
static bool is_denied(const PGresult *res)
{
	const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	return state != NULL && strcmp(state, "42501") == 0;
}

/* DROP INDEX CONCURRENTLY of every leftover; -1 when one could not be dropped. */
static int drop_leftovers(struct compact *c)
{
	char err[COMPACT_ERR_LEN];
	PGresult *res = db_query(c->rebuild, leftovers_sql, 0, NULL, err, sizeof(err));
	int rc = 0;

	if (res == NULL) {
		log_warning("could not look for invalid indexes left by a rebuild: %s", err);
		return -1;
	}
	for (int i = 0; rc == 0 && i < PQntuples(res); i++) {
		const char *name = PQgetvalue(res, i, 0);
		char *quoted = PQescapeIdentifier(c->rebuild, name, strlen(name));
		char sql[256];
		PGresult *r;

		if (quoted == NULL) {
			rc = -1;
			break;
		}
		snprintf(sql, sizeof(sql), "DROP INDEX CONCURRENTLY IF EXISTS outbox.%s", quoted);
		PQfreemem(quoted);
		r = PQexec(c->rebuild, sql);
		if (PQresultStatus(r) == PGRES_COMMAND_OK) {
			log_info("dropped the invalid index \"outbox.%s\" left by an interrupted rebuild",
			         name);
		} else {
			db_error(c->rebuild, r, err, sizeof(err));
			if (is_denied(r))
				deny(c, name, PQgetvalue(res, i, 1), err);
			else
				log_warning("could not drop the invalid index \"outbox.%s\": %s", name, err);
			rc = -1;
		}
		PQclear(r);
	}
	PQclear(res);
	return rc;
}

static void close_rebuild(struct compact *c)
{
	PQfinish(c->rebuild);
	c->rebuild = NULL;
}

/*
 * Opens the rebuild's session, takes the lock, drops leftovers and sends
 * the REINDEX without waiting.  0 when it was sent.
 */
static int start_rebuild(struct compact *c, const struct cfg *cfg, const struct estimate *e)
{
	char err[COMPACT_ERR_LEN], sql[256];
	char *quoted;
	int got;

	c->rebuild = db_connect(cfg->database.conninfo, "outboxd reindex", err, sizeof(err));
	if (c->rebuild == NULL) {
		log_warning("could not connect to rebuild index \"outbox.%s\": %s", e->name, err);
		return -1;
	}
	got = db_try_advisory_lock(c->rebuild, c->lock_class, c->lock_key, err, sizeof(err));
	if (got <= 0) {
		if (got < 0)
			log_warning("could not take the index rebuild lock: %s", err);
		goto fail;
	}
	/* The drops run on the maintenance thread and wait for every
	 * transaction on their table: under outboxd's session timeouts, so a
	 * long transaction makes them fail (tried again at the next check)
	 * instead of holding the sweeper and the pruner. */
	if (drop_leftovers(c) < 0)
		goto fail;
	/* A rebuild waits for older transactions at each phase and may run for
	 * minutes on a large index: neither timeout of outboxd's sessions fits
	 * (it is sent without waiting, so the thread goes on). */
	if (db_exec(c->rebuild, "SET statement_timeout = 0; SET lock_timeout = 0", err,
	            sizeof(err)) < 0) {
		log_warning("could not prepare the rebuild of index \"outbox.%s\": %s", e->name, err);
		goto fail;
	}
	quoted = PQescapeIdentifier(c->rebuild, e->name, strlen(e->name));
	if (quoted == NULL)
		goto fail;
	snprintf(sql, sizeof(sql), "REINDEX INDEX CONCURRENTLY outbox.%s", quoted);
	PQfreemem(quoted);
	if (!PQsendQuery(c->rebuild, sql)) {
		db_error(c->rebuild, NULL, err, sizeof(err));
		log_warning("could not start the rebuild of index \"outbox.%s\": %s", e->name, err);
		goto fail;
	}
	snprintf(c->index, sizeof(c->index), "%s", e->name);
	snprintf(c->table, sizeof(c->table), "%s", e->table);
	c->before_bytes = e->bytes;
	c->tuples = e->tuples;
	c->started_ms = now_ms();
	log_info("rebuilding index \"outbox.%s\" (%.1f MiB, about %.1f MiB when compact) with "
	         "REINDEX INDEX CONCURRENTLY", e->name, mib(e->bytes), mib(expected_size(c, e)));
	return 0;
fail:
	close_rebuild(c);
	return -1;
}

static double index_bytes(PGconn *conn, const char *name)
{
	char err[COMPACT_ERR_LEN];
	const char *params[1] = {name};
	PGresult *res = db_query(conn,
	                         "SELECT pg_catalog.pg_relation_size(c.oid)::bigint"
	                         "  FROM pg_catalog.pg_class c"
	                         "  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
	                         " WHERE n.nspname = 'outbox' AND c.relname = $1",
	                         1, params, err, sizeof(err));
	double bytes = -1;

	if (res != NULL && PQntuples(res) == 1)
		bytes = strtod(PQgetvalue(res, 0, 0), NULL);
	PQclear(res);
	return bytes;
}

/* The REINDEX's outcome, once it has answered. */
static void finish_rebuild(struct compact *c, PGconn *conn)
{
	char err[COMPACT_ERR_LEN] = "";
	bool ok = true, denied = false;
	PGresult *res;
	double secs = (double)(now_ms() - c->started_ms) / 1000.0;

	while ((res = PQgetResult(c->rebuild)) != NULL) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			ok = false;
			denied = denied || is_denied(res);
			db_error(c->rebuild, res, err, sizeof(err));
		}
		PQclear(res);
	}
	close_rebuild(c);
	if (denied) {
		deny(c, c->index, c->table, err);
	} else if (!ok) {
		log_warning("the rebuild of index \"outbox.%s\" failed: %s; what it left is dropped "
		            "before the next try", c->index, err);
	} else {
		double after = index_bytes(conn, c->index);

		log_info("rebuilt index \"outbox.%s\": %.1f MiB to %.1f MiB in at most %.1f s "
		         "index=outbox.%s before_bytes=%.0f after_bytes=%.0f", c->index,
		         mib(c->before_bytes), mib(after), secs, c->index, c->before_bytes, after);
		metrics_inc_keyed(METRIC_INDEX_REBUILDS, c->index);
		if (after > 0)
			memo_set(c, c->index, after, c->tuples);
	}
	/* The next bloated index, if any, at the next run. */
	c->runs_to_check = 0;
}

/* True while the rebuild runs; collects its result when it has finished. */
static bool rebuild_running(struct compact *c, PGconn *conn)
{
	if (c->rebuild == NULL)
		return false;
	if (PQconsumeInput(c->rebuild) && PQisBusy(c->rebuild))
		return true;
	finish_rebuild(c, conn);
	return false;
}

json_t *compact_step(struct compact *c, PGconn *conn, const struct cfg *cfg)
{
	struct estimate worst;
	int n, n_bloated;

	if (c == NULL || cfg->retention.reindex_bloat_ratio == 0 || c->denied ||
	    rebuild_running(c, conn))
		return NULL;
	if (c->runs_to_check-- > 0)
		return NULL;
	c->runs_to_check = COMPACT_CHECK_RUNS - 1;
	memset(&worst, 0, sizeof(worst));
	n = estimate_all(c, conn, cfg, &worst, &n_bloated);
	if (n < 0)
		return NULL;
	if (n_bloated > 0 && !worst.owned)
		deny(c, worst.name, worst.table, "this role does not own its table");
	else if (n_bloated > 0)
		(void)start_rebuild(c, cfg, &worst); /* logged; tried again at the next check */
	return json_pack("{s:i, s:i, s:s?}", "checked", n, "bloated", n_bloated, "rebuilding",
	                 c->rebuild != NULL ? c->index : NULL);
}
