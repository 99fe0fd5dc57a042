/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * price/artifact_store.c: the [s3] bucket and the artifact lock (see
 * artifact_store.h).
 */
#include "price/artifact_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "common/log.h"

int artifact_store_open(struct artifact_store *st, const struct cfg *cfg)
{
	memset(st, 0, sizeof(*st));
	if (cfg->s3.bucket == NULL || cfg->s3.bucket[0] == '\0') {
		log_error("no S3 bucket is configured in \"%s\"", cfg->file);
		log_error("hint: set \"bucket\" in the [s3] section");
		return -1;
	}
	if (aws_env_load(&st->env, cfg->aws.region, cfg->aws.endpoint_url,
	                 cfg->s3.endpoint_url) < 0)
		return -1;
	if (aws_http_new(&st->env, AWS_SERVICE_S3, &st->http) < 0) {
		log_error("could not create the S3 client");
		return -1;
	}
	st->bucket = (struct s3_bucket){st->http, cfg->s3.bucket, false};
	st->prefix = cfg->s3.prefix != NULL ? cfg->s3.prefix : "";
	return 0;
}

void artifact_store_close(struct artifact_store *st)
{
	aws_http_free(st->http);
	aws_env_free(&st->env);
	memset(st, 0, sizeof(*st));
}

int artifact_lock(PGconn *conn, const char *key, char *err, size_t errlen)
{
	const char *params[1] = {key};
	PGresult *res = db_query(conn, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
	                         1, params, err, errlen);

	if (res == NULL)
		return -1;
	PQclear(res);
	return 0;
}

int artifact_referenced(PGconn *conn, const char *key, bool *referenced,
                        char *err, size_t errlen)
{
	const char *params[1] = {key};
	PGresult *res = db_query(conn,
	                         "SELECT EXISTS (SELECT 1 FROM outbox.price_windows"
	                         " WHERE artifact_key = $1)", 1, params, err, errlen);

	if (res == NULL)
		return -1;
	*referenced = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return 0;
}

int artifact_list_page_size(int *out, char *err, size_t errlen)
{
	const char *v = getenv("OUTBOX_S3_LIST_PAGE_SIZE");
	char *end = NULL;
	long n;

	*out = 1000;
	if (v == NULL || v[0] == '\0')
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < 1 || n > 1000) {
		snprintf(err, errlen, "invalid OUTBOX_S3_LIST_PAGE_SIZE \"%s\": expected 1 to 1000", v);
		return -1;
	}
	*out = (int)n;
	return 0;
}

bool artifact_s3_conflict(const struct aws_result *res)
{
	return strcmp(res->code, "PreconditionFailed") == 0;
}
