/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/services.c: query, tx_exec, tx_enqueue and artifact_get for
 * plugins (see consumer/services.h).
 *
 * Per-thread resources (the read-only connection and the S3 client) hang
 * off a pthread key; its destructor frees them when a worker thread exits,
 * and consumer_services_free() frees what is left (the main thread's).
 */
#include "consumer/services.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <outbox/producer.h>

#include "aws/env.h"
#include "aws/http.h"
#include "db/db.h"
#include "db/traffic.h"
#include "common/log.h"
#include "aws/s3.h"

struct thread_res {
	struct consumer_services *svc;
	PGconn *query_conn;
	struct aws_http *s3;
	struct thread_res *next;
};

struct consumer_services {
	const struct cfg *cfg;
	struct plugin_host_services table;
	pthread_key_t key;
	pthread_mutex_t lock; /* guards list */
	struct thread_res *list;
};

static void thread_res_free(struct thread_res *r)
{
	if (r == NULL)
		return;
	PQfinish(r->query_conn);
	aws_http_free(r->s3);
	free(r);
}

static void unlink_res(struct consumer_services *svc, struct thread_res *r)
{
	pthread_mutex_lock(&svc->lock);
	for (struct thread_res **p = &svc->list; *p != NULL; p = &(*p)->next) {
		if (*p == r) {
			*p = r->next;
			break;
		}
	}
	pthread_mutex_unlock(&svc->lock);
}

static void thread_res_destructor(void *arg)
{
	struct thread_res *r = arg;

	unlink_res(r->svc, r);
	thread_res_free(r);
}

static struct thread_res *thread_res_get(struct consumer_services *svc)
{
	struct thread_res *r = pthread_getspecific(svc->key);

	if (r != NULL)
		return r;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->svc = svc;
	if (pthread_setspecific(svc->key, r) != 0) {
		free(r);
		return NULL;
	}
	pthread_mutex_lock(&svc->lock);
	r->next = svc->list;
	svc->list = r;
	pthread_mutex_unlock(&svc->lock);
	return r;
}

/* Rows of res as a JSON array of objects (column -> text or null). */
static json_t *rows_to_json(const PGresult *res)
{
	json_t *rows = json_array();
	int nrows = PQntuples(res), ncols = PQnfields(res);

	for (int i = 0; rows != NULL && i < nrows; i++) {
		json_t *row = json_object();

		for (int j = 0; row != NULL && j < ncols; j++) {
			json_t *v = PQgetisnull(res, i, j) ? json_null()
			                                   : json_string(PQgetvalue(res, i, j));
			if (v == NULL || json_object_set_new(row, PQfname(res, j), v) < 0) {
				json_decref(row);
				row = NULL;
			}
		}
		if (row == NULL || json_array_append_new(rows, row) < 0) {
			json_decref(rows);
			rows = NULL;
		}
	}
	return rows;
}

static int exec_rows(PGconn *conn, const char *sql, int nparams, const char *const *params,
                     json_t **rows, char *err, size_t errlen)
{
	PGresult *res;
	int rc = -1;

	if (rows != NULL)
		*rows = NULL;
	if (sql == NULL || nparams < 0 || (nparams > 0 && params == NULL)) {
		snprintf(err, errlen, "invalid statement or parameters");
		return -1;
	}
	res = db_query(conn, sql, nparams, params, err, errlen);
	if (res == NULL)
		return -1;
	if (rows != NULL) {
		*rows = rows_to_json(res);
		if (*rows == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	PQclear(res);
	return rc;
}

static PGconn *query_conn(struct consumer_services *svc, char *err, size_t errlen)
{
	struct thread_res *r = thread_res_get(svc);

	if (r == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* Not db_connection_lost(): this session is read-only on purpose, and
	 * a plugin's write refused by it is no reason to reconnect. */
	if (r->query_conn != NULL && PQstatus(r->query_conn) != CONNECTION_OK) {
		PQfinish(r->query_conn);
		r->query_conn = NULL;
	}
	if (r->query_conn == NULL) {
		r->query_conn = db_connect(svc->cfg->database.conninfo, "outboxd plugin query",
		                           err, errlen);
		if (r->query_conn == NULL)
			return NULL;
		if (db_exec(r->query_conn, "SET default_transaction_read_only = on", err,
		            errlen) < 0) {
			PQfinish(r->query_conn);
			r->query_conn = NULL;
			return NULL;
		}
	}
	return r->query_conn;
}

static int svc_query(void *opaque, const struct outbox_ctx *ctx, const char *sql,
                     int nparams, const char *const *params, json_t **rows,
                     char *err, size_t errlen)
{
	PGconn *conn = query_conn(opaque, err, errlen);

	(void)ctx;
	if (conn == NULL)
		return -1;
	return exec_rows(conn, sql, nparams, params, rows, err, errlen);
}

int consumer_tx_prepare(struct outbox_tx *tx, char *err, size_t errlen)
{
	bool begin = tx->lazy && !tx->began;
	bool savepoint = tx->savepoint && !tx->savepoint_taken;
	const char *sql = begin && savepoint ? "BEGIN; SAVEPOINT outbox_job"
	                  : begin            ? "BEGIN"
	                                     : "SAVEPOINT outbox_job";
	PGresult *res;
	int rc = 0;

	if (!begin && !savepoint)
		return 0;
	res = PQexec(tx->conn, sql);
	db_traffic_note_simple(sql);
	/* A BEGIN that ran is the caller's transaction to end, even when the
	 * SAVEPOINT after it failed. */
	tx->began = tx->began || (begin && PQtransactionStatus(tx->conn) != PQTRANS_IDLE);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		snprintf(err, errlen, "could not %s: %s",
		         begin && !tx->began ? "begin the transaction" : "set a savepoint",
		         PQerrorMessage(tx->conn));
		rc = -1;
	} else {
		tx->savepoint_taken = tx->savepoint_taken || savepoint;
	}
	PQclear(res);
	return rc;
}

/* Skips one SQL comment at p ("--" to the end of the line, or a nested
 * slash-star comment as the server reads it); returns p when none. */
static const char *skip_comment(const char *p)
{
	int depth = 0;

	if (p[0] == '-' && p[1] == '-')
		return p + strcspn(p, "\n");
	if (p[0] != '/' || p[1] != '*')
		return p;
	while (*p != '\0') {
		if (p[0] == '/' && p[1] == '*') {
			depth++;
			p += 2;
		} else if (p[0] == '*' && p[1] == '/') {
			p += 2;
			if (--depth == 0)
				return p;
		} else {
			p++;
		}
	}
	return p;
}

/* Skips white space, '(', ';' (empty statements) and SQL comments. */
static const char *skip_blank(const char *p)
{
	for (;;) {
		const char *q;

		while (isspace((unsigned char)*p) || *p == '(' || *p == ';')
			p++;
		q = skip_comment(p);
		if (q == p)
			return p;
		p = q;
	}
}

/* After a quoted token opened at p ('...' with '' escapes, or with
 * backslash escapes when escapes is true; "..." with "" escapes). */
static const char *skip_quoted(const char *p, bool escapes)
{
	char quote = *p++;

	while (*p != '\0') {
		if (escapes && *p == '\\' && p[1] != '\0') {
			p += 2;
		} else if (*p == quote && p[1] == quote) {
			p += 2;
		} else if (*p == quote) {
			return p + 1;
		} else {
			p++;
		}
	}
	return p;
}

/* After a dollar-quoted string opened at p ($tag$...$tag$), or p when p
 * does not open one. */
static const char *skip_dollar(const char *p)
{
	size_t n = 1;
	const char *end;

	while (isalnum((unsigned char)p[n]) || p[n] == '_' || (unsigned char)p[n] >= 0x80)
		n++;
	if (p[n] != '$' || isdigit((unsigned char)p[1]))
		return p;
	n++; /* the tag, both dollars included */
	for (end = p + n; *end != '\0'; end++) {
		if (strncmp(end, p, n) == 0)
			return end + n;
	}
	return end;
}

/* After the token at p that may hide a ';' (string, identifier, comment,
 * dollar quote), or p + 1.  bs: whether '...' takes backslash escapes
 * (standard_conforming_strings off). */
static const char *skip_token(const char *sql, const char *p, bool bs)
{
	bool word_before = p > sql && (isalnum((unsigned char)p[-1]) || p[-1] == '_' ||
	                               p[-1] == '$');
	const char *q;

	if ((*p == 'E' || *p == 'e') && p[1] == '\'' && !word_before)
		return skip_quoted(p + 1, true);
	if (*p == '\'')
		return skip_quoted(p, bs);
	if (*p == '"')
		return skip_quoted(p, false);
	if (*p == '$' && !word_before) {
		q = skip_dollar(p);
		if (q != p)
			return q;
	}
	q = skip_comment(p);
	return q != p ? q : p + 1;
}

/* Whether sql, read with or without backslash escapes in '...' (bs),
 * has a ';' outside strings, quoted identifiers, dollar quotes and
 * comments with anything but blanks, comments and ';' after it. */
static bool separated(const char *sql, bool bs)
{
	const char *p = sql;

	while (*p != '\0') {
		if (*p == ';')
			return *skip_blank(p) != '\0';
		p = skip_token(sql, p, bs);
	}
	return false;
}

/* Whether sql may hold more than one statement, whatever the session's
 * standard_conforming_strings (the plugin may change it). */
static bool many_statements(const char *sql)
{
	return separated(sql, false) || separated(sql, true);
}

/* Copies the next word (letters and _) of p, upper-cased; returns after it. */
static const char *next_word(const char *p, char *word, size_t len)
{
	size_t n = 0;

	p = skip_blank(p);
	while ((isalpha((unsigned char)*p) || *p == '_') && n + 1 < len)
		word[n++] = (char)toupper((unsigned char)*p++);
	word[n] = '\0';
	return p;
}

/* The transaction-control keyword sql starts with, or NULL. */
static const char *tx_control(const char *sql)
{
	static const char *const verbs[] = {"BEGIN", "START", "COMMIT", "END", "ROLLBACK",
	                                    "ABORT", "SAVEPOINT", "RELEASE"};
	char first[16], second[16];
	const char *rest = next_word(sql, first, sizeof(first));

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(first, verbs[i]) == 0)
			return verbs[i];
	}
	next_word(rest, second, sizeof(second));
	if (strcmp(first, "PREPARE") == 0 && strcmp(second, "TRANSACTION") == 0)
		return "PREPARE TRANSACTION";
	return NULL;
}

bool consumer_tx_violated(struct outbox_tx *tx)
{
	PGTransactionStatusType st = PQtransactionStatus(tx->conn);
	bool open = tx->lazy && !tx->began ? st == PQTRANS_IDLE
	                                   : st == PQTRANS_INTRANS || st == PQTRANS_INERROR;

	if (!tx->ended && !open) {
		tx->ended = true;
		/* A lost connection (the server ended the session, a restart) is
		 * not the plugin's doing, and nothing of it was committed. */
		snprintf(tx->why, sizeof(tx->why), "%s",
		         st == PQTRANS_UNKNOWN || PQstatus(tx->conn) == CONNECTION_BAD
		             ? "the connection to PostgreSQL was lost during commit()"
		             : "the plugin ended the transaction");
	}
	return tx->ended;
}

/* Refuses a statement once tx is not the host's transaction any more. */
static int tx_refused(struct outbox_tx *tx, char *err, size_t errlen)
{
	if (!consumer_tx_violated(tx))
		return 0;
	snprintf(err, errlen, "%s", tx->why);
	return -1;
}

static int svc_tx_exec(void *opaque, const struct outbox_ctx *ctx, struct outbox_tx *tx,
                       const char *sql, int nparams, const char *const *params,
                       json_t **rows, char *err, size_t errlen)
{
	const char *verb = sql != NULL ? tx_control(sql) : NULL;
	int rc;

	(void)opaque;
	(void)ctx;
	if (rows != NULL)
		*rows = NULL;
	if (tx_refused(tx, err, errlen) < 0)
		return -1;
	if (verb == NULL && sql != NULL && many_statements(sql))
		verb = "more than one statement";
	if (verb != NULL) {
		tx->ended = true;
		snprintf(tx->why, sizeof(tx->why),
		         "the plugin tried to end the transaction: tx_exec refuses %s", verb);
		snprintf(err, errlen, "%s", tx->why);
		return -1;
	}
	if (consumer_tx_prepare(tx, err, errlen) < 0)
		return -1;
	rc = exec_rows(tx->conn, sql, nparams, params, rows, err, errlen);
	if (tx_refused(tx, err, errlen) < 0) {
		if (rows != NULL) {
			json_decref(*rows);
			*rows = NULL;
		}
		return -1;
	}
	return rc;
}

static int svc_tx_enqueue(void *opaque, const struct outbox_ctx *ctx, struct outbox_tx *tx,
                          const char *job_type, const char *destination,
                          const json_t *identity, const json_t *payload,
                          char *job_id_out, char *err, size_t errlen)
{
	struct outbox_enqueued out;

	(void)opaque;
	(void)ctx;
	if (job_type == NULL || destination == NULL || identity == NULL || payload == NULL) {
		snprintf(err, errlen, "job_type, destination, identity and payload are required");
		return -1;
	}
	if (tx_refused(tx, err, errlen) < 0)
		return -1;
	if (consumer_tx_prepare(tx, err, errlen) < 0)
		return -1;
	if (outbox_enqueue_job((struct pg_conn *)tx->conn, job_type, destination, identity,
	                       payload, &out, err, errlen) < 0)
		return -1;
	if (job_id_out != NULL)
		memcpy(job_id_out, out.job_id, sizeof(out.job_id));
	return 0;
}

static struct aws_http *s3_client(struct consumer_services *svc, char *err, size_t errlen)
{
	struct thread_res *r = thread_res_get(svc);
	struct aws_env env = {0};
	const struct cfg *cfg = svc->cfg;

	if (r == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (r->s3 != NULL)
		return r->s3;
	if (aws_env_load(&env, cfg->aws.region, cfg->aws.endpoint_url, cfg->s3.endpoint_url) < 0 ||
	    aws_http_new(&env, AWS_SERVICE_S3, &r->s3) < 0) {
		snprintf(err, errlen, "could not create the S3 client");
		r->s3 = NULL;
	}
	aws_env_free(&env);
	return r->s3;
}

static int svc_artifact_get(void *opaque, const struct outbox_ctx *ctx, const char *key,
                            char **data, size_t *len, char *err, size_t errlen)
{
	struct consumer_services *svc = opaque;
	struct aws_result res;
	struct aws_http *http;

	(void)ctx;
	*data = NULL;
	*len = 0;
	if (svc->cfg->s3.bucket == NULL || key == NULL || key[0] == '\0') {
		snprintf(err, errlen, "no [s3] bucket configured or empty key");
		return -2;
	}
	http = s3_client(svc, err, errlen);
	if (http == NULL)
		return -1;
	const struct s3_bucket b = {http, svc->cfg->s3.bucket, false};
	if (s3_get_object(&b, key, data, len, &res) == 0)
		return 0;
	snprintf(err, errlen, "could not read artifact \"%s\": %s %s", key, res.code, res.message);
	return res.klass == AWS_ERR_PERMANENT ? -2 : -1;
}

int consumer_services_create(const struct cfg *cfg, struct consumer_services **out)
{
	struct consumer_services *svc = calloc(1, sizeof(*svc));

	*out = NULL;
	if (svc == NULL) {
		log_error("out of memory");
		return -1;
	}
	if (pthread_key_create(&svc->key, thread_res_destructor) != 0) {
		log_error("could not create the plugin services' thread key");
		free(svc);
		return -1;
	}
	pthread_mutex_init(&svc->lock, NULL);
	svc->cfg = cfg;
	svc->table.opaque = svc;
	svc->table.artifact_get = svc_artifact_get;
	svc->table.query = svc_query;
	svc->table.tx_exec = svc_tx_exec;
	svc->table.tx_enqueue = svc_tx_enqueue;
	*out = svc;
	return 0;
}

const struct plugin_host_services *consumer_services_table(struct consumer_services *svc)
{
	return svc != NULL ? &svc->table : NULL;
}

void consumer_services_free(struct consumer_services *svc)
{
	struct thread_res *r, *next;

	if (svc == NULL)
		return;
	/* The calling thread's resources (the others' were freed at their exit). */
	pthread_setspecific(svc->key, NULL);
	pthread_key_delete(svc->key);
	for (r = svc->list; r != NULL; r = next) {
		next = r->next;
		thread_res_free(r);
	}
	pthread_mutex_destroy(&svc->lock);
	free(svc);
}
