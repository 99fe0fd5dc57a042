/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_ingest_window.c: outboxctl ingest-window (docs/price-path.md)
 *
 *   ingest-window --symbol S --window-start ISO8601 --bars FILE|-
 *                 [--backfill] [--destination D] [--window-seconds N]
 *
 * The protocol (docs/price-path.md):
 *   1. validate the bars and build the canonical artifact and its
 *      content-addressed key;
 *   2. PUT it with If-None-Match: * (already present and identical counts
 *      as success) -- S3 first, so a committed window always has its bars;
 *   3. FAULT_POINT("ingest.after_put");
 *   4. one transaction: the artifact lock (pg_advisory_xact_lock on the
 *      key's hash), outbox_enqueue_price_job() (window + job + event), a
 *      HEAD of the object, and a second PUT if a reconcile-artifacts run
 *      removed it in the meantime; then COMMIT.
 * Because reconcile takes the same lock and re-checks the reference before
 * it deletes, either it deleted before our HEAD (and we put the object
 * back) or it sees our committed window (and keeps the object).
 *
 * Exit codes: 0, 64 usage, 78 configuration, 69 S3 or the database
 * unavailable, 1 bad bars or another failure.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price/artifact.h"
#include "price/artifact_store.h"
#include "ctl/commands.h"
#include "db/db.h"
#include "common/fault.h"
#include "outbox/producer.h"

#define MAX_BARS_FILE ((size_t)16 * 1024 * 1024)

struct ingest_args {
	const char *symbol;
	const char *window_start;
	const char *bars_path;
	const char *destination;
	long window_seconds;
	bool backfill;
};

struct ingest_report {
	enum s3_put_outcome put;
	bool reuploaded; /* the HEAD re-check found the object gone */
	struct outbox_price_enqueued win;
};

static int parse_window_seconds(const char *text, long *out)
{
	char *end = NULL;

	errno = 0;
	*out = strtol(text, &end, 10);
	if (errno != 0 || *end != '\0' || *out < 60 || *out > 86400 || *out % 60 != 0) {
		ctl_error("invalid --window-seconds \"%s\": expected a multiple of 60 from 60 to 86400",
		          text);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct ingest_args *a)
{
	static const struct option longopts[] = {
		{"symbol", required_argument, NULL, 's'},
		{"window-start", required_argument, NULL, 'w'},
		{"bars", required_argument, NULL, 'b'},
		{"backfill", no_argument, NULL, 'f'},
		{"destination", required_argument, NULL, 'd'},
		{"window-seconds", required_argument, NULL, 'n'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	*a = (struct ingest_args){.destination = "price",
	                          .window_seconds = ARTIFACT_DEFAULT_WINDOW_SECONDS};
	optind = 1;
	for (opt = getopt_long(argc, argv, "", longopts, NULL); opt != -1;
	     opt = getopt_long(argc, argv, "", longopts, NULL)) {
		switch (opt) {
		case 's': a->symbol = optarg; break;
		case 'w': a->window_start = optarg; break;
		case 'b': a->bars_path = optarg; break;
		case 'f': a->backfill = true; break;
		case 'd': a->destination = optarg; break;
		case 'n':
			if (parse_window_seconds(optarg, &a->window_seconds) < 0)
				return -1;
			break;
		default: return -1;
		}
	}
	if (optind != argc || a->symbol == NULL || a->window_start == NULL || a->bars_path == NULL) {
		ctl_error("usage: ingest-window --symbol S --window-start ISO8601 --bars FILE|- "
		          "[--backfill] [--destination D] [--window-seconds N]");
		return -1;
	}
	return 0;
}

/* Reads the bars file ("-": stdin) into *text (caller frees). */
static int read_bars(const char *path, char **text, size_t *len)
{
	FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	size_t cap = 0;
	int rc = -1;

	*text = NULL;
	*len = 0;
	if (in == NULL) {
		ctl_error("could not open bars file \"%s\": %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (*len == cap) {
			char *p = cap < MAX_BARS_FILE ? realloc(*text, cap + 65536) : NULL;
			if (p == NULL) {
				ctl_error("bars file \"%s\" is too large (more than %zu bytes)", path,
				          MAX_BARS_FILE);
				goto out;
			}
			*text = p;
			cap += 65536;
		}
		size_t n = fread(*text + *len, 1, cap - *len, in);
		*len += n;
		if (n == 0)
			break;
	}
	if (ferror(in)) {
		ctl_error("could not read bars file \"%s\": %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (in != stdin)
		fclose(in);
	if (rc < 0) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

/* PutObject create-only; returns an exit code. */
static int put_artifact(const struct artifact_store *st, const struct artifact *a,
                        enum s3_put_outcome *outcome)
{
	struct aws_result res;

	if (s3_put_object_create_only(&st->bucket, a->key, a->body, a->len, "application/json",
	                              outcome, &res) == 0)
		return CTL_EXIT_OK;
	ctl_error("could not write artifact \"%s\" to bucket \"%s\": %s%s%s", a->key,
	          st->bucket.name, res.code, res.code[0] != '\0' ? ": " : "",
	          res.message[0] != '\0' ? res.message : aws_error_class_name(res.klass));
	/* A conflict will not go away by retrying; anything else may. */
	return artifact_s3_conflict(&res) ? CTL_EXIT_FAILURE : CTL_EXIT_UNAVAILABLE;
}

/*
 * Under the artifact lock: is the object still there?  If a reconcile run
 * removed it between our PUT and now, put it back before committing.
 */
static int recheck_artifact(const struct artifact_store *st, const struct artifact *a,
                            struct ingest_report *r)
{
	struct s3_object_info info;
	struct aws_result res;
	enum s3_put_outcome again;

	if (s3_head_object(&st->bucket, a->key, &info, &res) == 0)
		return CTL_EXIT_OK;
	if (res.status != 404) {
		ctl_error("could not check artifact \"%s\" in bucket \"%s\": %s %s", a->key,
		          st->bucket.name, res.code, res.message);
		return CTL_EXIT_UNAVAILABLE;
	}
	r->reuploaded = true;
	return put_artifact(st, a, &again);
}

/* A failed statement: 69 if the connection is gone, else 1. */
static int db_failure(PGconn *conn, const char *what, const char *err)
{
	ctl_error("could not %s: %s", what, err);
	PQclear(PQexec(conn, "ROLLBACK"));
	return db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
}

/* The transaction: lock, window + job + event, HEAD re-check, commit. */
static int commit_window(PGconn *conn, const struct artifact_store *st,
                         const struct artifact *a, const struct ingest_args *args,
                         struct ingest_report *r)
{
	const struct outbox_price_window w = {
		.symbol = a->symbol, .window_start = a->window_start_text,
		.artifact_key = a->key, .artifact_sha256 = a->sha256, .backfill = args->backfill,
	};
	char err[1024];
	int rc;

	if (db_exec(conn, "BEGIN", err, sizeof(err)) < 0)
		return db_failure(conn, "begin a transaction", err);
	if (artifact_lock(conn, a->key, err, sizeof(err)) < 0)
		return db_failure(conn, "lock the artifact", err);
	if (outbox_enqueue_price_job(conn, args->destination, &w, &r->win, err, sizeof(err)) < 0)
		return db_failure(conn, "confirm the price window", err);
	rc = recheck_artifact(st, a, r);
	if (rc != CTL_EXIT_OK) {
		PQclear(PQexec(conn, "ROLLBACK"));
		return rc;
	}
	if (db_exec(conn, "COMMIT", err, sizeof(err)) < 0)
		return db_failure(conn, "commit the price window", err);
	return CTL_EXIT_OK;
}

static void print_json(const struct artifact_store *st, const struct artifact *a,
                       const struct ingest_args *args, const struct ingest_report *r)
{
	const struct outbox_enqueued *job = &r->win.job;
	json_t *doc = json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:i, s:b, s:b, s:o, s:o, s:o, s:b}",
		"symbol", a->symbol, "window_start", a->window_start_text,
		"bucket", st->bucket.name, "artifact_key", a->key, "artifact_sha256", a->sha256,
		"artifact", r->put == S3_PUT_CREATED ? "created" : "already_present",
		"reuploaded", r->reuploaded, "generation", r->win.generation,
		"corrected", r->win.corrected, "backfill", args->backfill,
		"destination", args->backfill ? json_null() : json_string(args->destination),
		"job_id", r->win.job_written ? json_string(job->job_id) : json_null(),
		"event_id", r->win.job_written ? json_string(job->event_id) : json_null(),
		"job_created", r->win.job_written && job->created);

	if (doc == NULL) {
		ctl_error("out of memory");
		return;
	}
	json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
}

static void print_text(const struct artifact_store *st, const struct artifact *a,
                       const struct ingest_args *args, const struct ingest_report *r)
{
	printf("artifact: s3://%s/%s (%s%s)\n", st->bucket.name, a->key,
	       r->put == S3_PUT_CREATED ? "created" : "already present",
	       r->reuploaded ? "; written again after a concurrent removal" : "");
	printf("window: %s %s generation %d%s\n", a->symbol, a->window_start_text,
	       r->win.generation, r->win.corrected ? " (correction)" : "");
	if (!r->win.job_written)
		printf("backfill: no job\n");
	else
		printf("job: %s event: %s (%s)\n", r->win.job.job_id, r->win.job.event_id,
		       r->win.job.created ? "created" : "already enqueued");
}

/* Everything after the arguments: config, bars, S3, database. */
static int ingest(struct ctl *ctl, const struct ingest_args *args)
{
	struct artifact_store st = {0};
	struct artifact a = {0};
	struct ingest_report r = {0};
	char *text = NULL;
	size_t len = 0;
	char err[1024];
	int exit_code = CTL_EXIT_CONFIG;
	const struct cfg *cfg = ctl_config(ctl);
	PGconn *conn;

	if (cfg == NULL || artifact_store_open(&st, cfg) < 0)
		goto out;
	exit_code = CTL_EXIT_USAGE;
	if (!args->backfill && cfg_find_destination(cfg, args->destination) == NULL) {
		ctl_error("destination \"%s\" is not configured in \"%s\"", args->destination, cfg->file);
		goto out;
	}
	exit_code = CTL_EXIT_FAILURE;
	if (read_bars(args->bars_path, &text, &len) < 0)
		goto out;
	if (artifact_build(args->symbol, args->window_start, args->window_seconds, text, len,
	                   st.prefix, &a, err, sizeof(err)) < 0) {
		ctl_error("bad bars in \"%s\": %s", args->bars_path, err);
		goto out;
	}
	conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		goto out;
	exit_code = put_artifact(&st, &a, &r.put);
	if (exit_code != CTL_EXIT_OK)
		goto out;
	FAULT_POINT("ingest.after_put");
	exit_code = commit_window(conn, &st, &a, args, &r);
	if (exit_code != CTL_EXIT_OK)
		goto out;
	if (ctl->json)
		print_json(&st, &a, args, &r);
	else
		print_text(&st, &a, args, &r);
out:
	free(text);
	artifact_free(&a);
	artifact_store_close(&st);
	return exit_code;
}

int cmd_ingest_window(struct ctl *ctl, int argc, char **argv)
{
	struct ingest_args args;

	if (parse_args(argc, argv, &args) < 0)
		return CTL_EXIT_USAGE;
	return ingest(ctl, &args);
}
