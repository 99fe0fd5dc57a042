/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * price/artifact_store.h: what ingest-window and reconcile-artifacts share: the
 * [s3] bucket of relay.ini, the per-key advisory lock and the "does any
 * window reference this key?" check (docs/price-path.md).
 */
#ifndef OUTBOX_CORE_PRICE_ARTIFACT_STORE_H
#define OUTBOX_CORE_PRICE_ARTIFACT_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "aws/env.h"
#include "config/config.h"
#include "common/compiler.h"
#include "aws/s3.h"

/* The configured bucket.  env and http are owned; prefix and
 * bucket.name are borrowed from the cfg, which must outlive the store. */
struct artifact_store {
	struct aws_env env;
	struct aws_http *http;
	struct s3_bucket bucket;
	const char *prefix;
};

/*
 * Opens the [s3] bucket of cfg (borrowed).  Returns 0, or -1 after
 * printing why (no bucket configured, no credentials): a configuration
 * error.  Close with artifact_store_close() in either case.
 */
int artifact_store_open(struct artifact_store *st, const struct cfg *cfg) OUTBOX_MUSTCHECK;
void artifact_store_close(struct artifact_store *st);

/*
 * Inside the caller's transaction: pg_advisory_xact_lock on the key's
 * 64-bit hash, held until that transaction ends.  Every writer of a
 * window's artifact reference (ingest-window) and every deleter
 * (reconcile-artifacts) takes it.  Returns 0 or -1 with err set.
 */
int artifact_lock(PGconn *conn, const char *key, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* *referenced: does a committed price window name key?  0 or -1 with err. */
int artifact_referenced(PGconn *conn, const char *key, bool *referenced,
                        char *err, size_t errlen) OUTBOX_MUSTCHECK;

/*
 * Page size for ListObjectsV2: $OUTBOX_S3_LIST_PAGE_SIZE (1..1000; for
 * tests) or 1000.  Returns -1 with err set for a bad value.
 */
int artifact_list_page_size(int *out, char *err, size_t errlen) OUTBOX_MUSTCHECK;

/* Does a failed create-only write say the object exists with other
 * content (a conflict, not an outage)? */
bool artifact_s3_conflict(const struct aws_result *res);

#endif
