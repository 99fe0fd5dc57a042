/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_reconcile.c: outboxctl reconcile-artifacts (docs/price-path.md)
 *
 *   reconcile-artifacts [--grace SECONDS] [--dry-run] [--json]
 *
 * Removes artifacts that no price window references: what an ingest-window
 * left behind when it died between its S3 write and its commit, and the
 * artifacts of corrected windows' earlier generations.
 *
 *   1. list the whole [s3] prefix, every page (ListObjectsV2; the page size
 *      is $OUTBOX_S3_LIST_PAGE_SIZE or 1000);
 *   2. keep only keys shaped like artifact keys (PREFIX/SYMBOL/TIME/SHA.json);
 *      anything else under the prefix is counted as "ignored", never touched,
 *      except that a PREFIX/SYMBOL/....json key that is not that shape (an
 *      artifact this code could not have made, or an older one whose window
 *      start did not format) is reported as "unparseable", never touched;
 *   3. one query per page finds the keys no outbox.price_windows row names
 *      (orphans); orphans whose LastModified is less than --grace seconds
 *      old (default 3600) are kept ("too_recent");
 *   4. for each remaining orphan: BEGIN, the artifact lock
 *      (pg_advisory_xact_lock on the key's hash, as ingest-window takes it),
 *      re-check that no window references the key, DELETE the object,
 *      COMMIT.  An ingest whose commit is in flight holds the lock until it
 *      commits, so the re-check sees its window; an ingest that takes the
 *      lock after us HEADs the object and writes it again.
 *
 * --dry-run lists what would be deleted and deletes nothing.
 * Exit codes: 0, 64 usage, 78 configuration, 69 S3 or the database
 * unavailable (also when a delete failed), 1 other failures.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "price/artifact.h"
#include "price/artifact_store.h"
#include "common/clock.h"
#include "ctl/commands.h"
#include "db/db.h"
#include "common/fault.h"

struct reconcile_args {
	long grace_seconds;
	bool dry_run;
};

struct reconcile_report {
	long pages, listed, ignored, referenced, orphans, too_recent;
	long kept_referenced; /* orphans a window named by the time we held the lock */
	long failed;          /* deletes that failed */
	long unparseable;     /* PREFIX/SYMBOL/....json keys of no artifact shape */
	json_t *unparseable_keys; /* [{"key", "problem"}...], in listing order */
	json_t *candidates;   /* orphans old enough, in listing order */
	json_t *too_recent_keys;
	json_t *deleted_keys;
};

static int parse_args(int argc, char **argv, struct reconcile_args *a)
{
	static const struct option longopts[] = {
		{"grace", required_argument, NULL, 'g'},
		{"dry-run", no_argument, NULL, 'n'},
		{NULL, 0, NULL, 0},
	};
	char *end = NULL;
	int opt;

	*a = (struct reconcile_args){.grace_seconds = 3600};
	optind = 1;
	for (opt = getopt_long(argc, argv, "", longopts, NULL); opt != -1;
	     opt = getopt_long(argc, argv, "", longopts, NULL)) {
		if (opt == 'n') {
			a->dry_run = true;
		} else if (opt == 'g') {
			errno = 0;
			a->grace_seconds = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || a->grace_seconds < 0) {
				ctl_error("invalid --grace \"%s\": expected a number of seconds >= 0", optarg);
				return -1;
			}
		} else {
			return -1;
		}
	}
	if (optind != argc) {
		ctl_error("usage: reconcile-artifacts [--grace SECONDS] [--dry-run] [--json]");
		return -1;
	}
	return 0;
}

/* LastModified ("2026-01-02T03:04:05.123Z") in ms since the epoch; -1 if bad. */
static long long last_modified_ms(const char *text)
{
	char whole[32];
	const char *dot = strchr(text, '.');
	long long ms = 0;
	int64_t t;

	if (dot == NULL) {
		snprintf(whole, sizeof(whole), "%s", text);
	} else {
		size_t digits = strspn(dot + 1, "0123456789");
		for (size_t i = 0; i < 3; i++)
			ms = ms * 10 + (i < digits ? dot[1 + i] - '0' : 0);
		snprintf(whole, sizeof(whole), "%.*s%s", (int)(dot - text), text, dot + 1 + digits);
	}
	if (artifact_parse_time(whole, &t) < 0)
		return -1;
	return (long long)t * 1000 + ms;
}

/* The keys of keys (a JSON array) that no window references, as a set. */
static int unreferenced_keys(PGconn *conn, const json_t *keys, json_t **set,
                             char *err, size_t errlen)
{
	char *text = json_dumps(keys, JSON_COMPACT);
	const char *params[1] = {text};
	PGresult *res = NULL;

	*set = json_object();
	if (text == NULL || *set == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	res = db_query(conn, "SELECT k FROM jsonb_array_elements_text($1::jsonb) AS k"
	               " WHERE NOT EXISTS (SELECT 1 FROM outbox.price_windows w"
	               "                   WHERE w.artifact_key = k)", 1, params, err, errlen);
	if (res == NULL)
		goto fail;
	for (int i = 0; i < PQntuples(res); i++)
		json_object_set_new(*set, PQgetvalue(res, i, 0), json_true());
	PQclear(res);
	free(text);
	return 0;
fail:
	free(text);
	json_decref(*set);
	*set = NULL;
	return -1;
}

/*
 * A key in our namespace that we cannot parse is never deleted (it might be
 * a window's artifact this version does not understand) but never passed
 * over in silence either: an operator has to look at it.
 */
static void note_unparseable(struct reconcile_report *r, const char *key, const char *problem)
{
	r->unparseable++;
	ctl_error("warning: cannot parse artifact key \"%s\": %s (kept; check it and remove it "
	          "by hand if no window needs it)", key, problem);
	json_array_append_new(r->unparseable_keys,
	                      json_pack("{s:s, s:s}", "key", key, "problem", problem));
}

/* Sorts one page's entries into the report's counters and lists. */
static int classify_page(PGconn *conn, const struct artifact_store *st,
                         const struct s3_list_page *page, long long cutoff_ms,
                         struct reconcile_report *r, char *err, size_t errlen)
{
	json_t *keys = json_array();
	json_t *orphans = NULL;
	int rc = -1;

	if (keys == NULL)
		return -1;
	for (size_t i = 0; i < page->n; i++)
		if (artifact_key_is_artifact(st->prefix, page->entries[i].key))
			json_array_append_new(keys, json_string(page->entries[i].key));
	if (unreferenced_keys(conn, keys, &orphans, err, errlen) < 0)
		goto out;
	for (size_t i = 0; i < page->n; i++) {
		const struct s3_list_entry *e = &page->entries[i];
		const char *problem;
		enum artifact_key_kind kind = artifact_key_classify(st->prefix, e->key, &problem);

		r->listed++;
		if (kind == ARTIFACT_KEY_UNPARSEABLE) {
			note_unparseable(r, e->key, problem);
		} else if (kind == ARTIFACT_KEY_FOREIGN) {
			r->ignored++;
		} else if (json_object_get(orphans, e->key) == NULL) {
			r->referenced++;
		} else {
			long long lm = last_modified_ms(e->last_modified);
			r->orphans++;
			/* An unreadable date is treated as new: never delete on a guess. */
			bool old_enough = lm >= 0 && lm <= cutoff_ms;
			json_array_append_new(old_enough ? r->candidates : r->too_recent_keys,
			                      json_string(e->key));
			r->too_recent += !old_enough;
		}
	}
	rc = 0;
out:
	json_decref(orphans);
	json_decref(keys);
	return rc;
}

/* Lists every page of the prefix; returns an exit code. */
static int list_all(PGconn *conn, const struct artifact_store *st, long long cutoff_ms,
                    struct reconcile_report *r)
{
	struct s3_list_page page = {0};
	struct s3_list_request req = {.prefix = st->prefix};
	struct aws_result res;
	char *token = NULL;
	char err[1024];
	int exit_code = CTL_EXIT_FAILURE;

	if (artifact_list_page_size(&req.max_keys, err, sizeof(err)) < 0) {
		ctl_error("%s", err);
		return CTL_EXIT_CONFIG;
	}
	do {
		req.continuation_token = token;
		if (s3_list_objects_v2(&st->bucket, &req, &page, &res) < 0) {
			ctl_error("could not list bucket \"%s\": %s %s", st->bucket.name, res.code,
			          res.message);
			exit_code = CTL_EXIT_UNAVAILABLE;
			goto out;
		}
		r->pages++;
		if (classify_page(conn, st, &page, cutoff_ms, r, err, sizeof(err)) < 0) {
			ctl_error("could not look up artifact references: %s", err);
			exit_code = db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
			goto out;
		}
		free(token);
		token = page.is_truncated ? page.next_token : NULL;
		page.next_token = NULL; /* now owned by token */
		s3_list_page_free(&page);
	} while (token != NULL);
	exit_code = CTL_EXIT_OK;
out:
	free(token);
	s3_list_page_free(&page);
	return exit_code;
}

/* Lock, re-check, delete, commit one orphan; returns an exit code. */
static int delete_orphan(PGconn *conn, const struct artifact_store *st, const char *key,
                         struct reconcile_report *r)
{
	struct aws_result res;
	char err[1024];
	bool referenced = true;

	if (db_exec(conn, "BEGIN", err, sizeof(err)) < 0 ||
	    artifact_lock(conn, key, err, sizeof(err)) < 0 ||
	    artifact_referenced(conn, key, &referenced, err, sizeof(err)) < 0) {
		ctl_error("could not check artifact \"%s\": %s", key, err);
		PQclear(PQexec(conn, "ROLLBACK"));
		return db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
	}
	if (referenced) {
		r->kept_referenced++;
		PQclear(PQexec(conn, "ROLLBACK"));
		return CTL_EXIT_OK;
	}
	FAULT_POINT("reconcile.before_delete");
	if (s3_delete_object(&st->bucket, key, &res) < 0) {
		ctl_error("could not delete artifact \"%s\" from bucket \"%s\": %s %s", key,
		          st->bucket.name, res.code, res.message);
		r->failed++;
		PQclear(PQexec(conn, "ROLLBACK"));
		return CTL_EXIT_UNAVAILABLE;
	}
	if (db_exec(conn, "COMMIT", err, sizeof(err)) < 0) {
		/* The object is gone and nothing referenced it: still a deletion. */
		ctl_error("could not release the lock of artifact \"%s\": %s", key, err);
	}
	json_array_append_new(r->deleted_keys, json_string(key));
	return CTL_EXIT_OK;
}

static int delete_candidates(PGconn *conn, const struct artifact_store *st,
                             struct reconcile_report *r)
{
	size_t i;
	json_t *key;
	int exit_code = CTL_EXIT_OK;

	json_array_foreach(r->candidates, i, key) {
		int rc = delete_orphan(conn, st, json_string_value(key), r);
		if (rc != CTL_EXIT_OK)
			exit_code = rc;
		if (db_connection_lost(conn))
			break;
	}
	return exit_code;
}

static void print_report(const struct ctl *ctl, const struct artifact_store *st,
                         const struct reconcile_args *args, const struct reconcile_report *r)
{
	size_t i;
	json_t *key;

	if (ctl->json) {
		json_t *would = args->dry_run ? json_incref(r->candidates) : json_array();
		json_t *doc = json_pack(
			"{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:O, s:o, s:O}",
			"bucket", st->bucket.name, "prefix", st->prefix, "dry_run", args->dry_run,
			"grace_seconds", (json_int_t)args->grace_seconds, "pages", (json_int_t)r->pages,
			"listed", (json_int_t)r->listed, "ignored", (json_int_t)r->ignored,
			"referenced", (json_int_t)r->referenced, "orphans", (json_int_t)r->orphans,
			"too_recent", (json_int_t)r->too_recent,
			"kept_referenced", (json_int_t)r->kept_referenced, "failed", (json_int_t)r->failed,
			"deleted", (json_int_t)json_array_size(r->deleted_keys),
			"deleted_keys", r->deleted_keys,
			"would_delete", would,
			"too_recent_keys", r->too_recent_keys);
		if (doc != NULL) {
			json_object_set_new(doc, "unparseable", json_integer(r->unparseable));
			json_object_set(doc, "unparseable_keys", r->unparseable_keys);
		}
		if (doc == NULL) {
			ctl_error("out of memory");
			return;
		}
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
		return;
	}
	json_array_foreach(args->dry_run ? r->candidates : r->deleted_keys, i, key)
		printf("%s %s\n", args->dry_run ? "would delete" : "deleted", json_string_value(key));
	json_array_foreach(r->unparseable_keys, i, key)
		printf("unparseable %s: %s\n", json_string_value(json_object_get(key, "key")),
		       json_string_value(json_object_get(key, "problem")));
	printf("listed %ld objects in %ld pages: %ld referenced, %ld orphans (%ld too recent), "
	       "%ld ignored, %ld unparseable; %s %zu\n", r->listed, r->pages, r->referenced,
	       r->orphans, r->too_recent, r->ignored, r->unparseable,
	       args->dry_run ? "would delete" : "deleted",
	       json_array_size(args->dry_run ? r->candidates : r->deleted_keys));
}

static int reconcile(struct ctl *ctl, const struct reconcile_args *args)
{
	struct artifact_store st = {0};
	struct reconcile_report r = {
		.candidates = json_array(), .too_recent_keys = json_array(),
		.deleted_keys = json_array(), .unparseable_keys = json_array(),
	};
	int exit_code = CTL_EXIT_CONFIG;
	const struct cfg *cfg = ctl_config(ctl);
	PGconn *conn;

	if (r.candidates == NULL || r.too_recent_keys == NULL || r.deleted_keys == NULL ||
	    r.unparseable_keys == NULL) {
		ctl_error("out of memory");
		exit_code = CTL_EXIT_FAILURE;
		goto out;
	}
	if (cfg == NULL || artifact_store_open(&st, cfg) < 0)
		goto out;
	conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		goto out;
	exit_code = list_all(conn, &st, wall_clock_ms() - (long long)args->grace_seconds * 1000, &r);
	if (exit_code != CTL_EXIT_OK)
		goto out;
	if (!args->dry_run)
		exit_code = delete_candidates(conn, &st, &r);
	print_report(ctl, &st, args, &r);
out:
	json_decref(r.candidates);
	json_decref(r.too_recent_keys);
	json_decref(r.deleted_keys);
	json_decref(r.unparseable_keys);
	artifact_store_close(&st);
	return exit_code;
}

int cmd_reconcile_artifacts(struct ctl *ctl, int argc, char **argv)
{
	struct reconcile_args args;

	if (parse_args(argc, argv, &args) < 0)
		return CTL_EXIT_USAGE;
	return reconcile(ctl, &args);
}
