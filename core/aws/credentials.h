/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/credentials.h: AWS credentials as every signed request sees them.
 *
 * A struct aws_creds is an immutable, reference-counted snapshot of one key
 * set (key id, secret, session token, expiry).  A request takes a reference
 * to the current snapshot, signs with it and drops it: it can never see a
 * key id from one key set and a secret from the next.
 *
 * A struct aws_credentials is the provider every client of the process
 * shares: it holds the current snapshot and the source that produced it
 * (the environment, a profile, STS, the container endpoint, IMDS, ...;
 * aws/credential_chain.h picks it).  Temporary credentials are refreshed
 * ahead of their expiry by exactly one thread while every other thread keeps
 * signing with the still valid snapshot; threads wait only when no valid
 * snapshot is left.  A request refused because its key was rotated away
 * calls aws_credentials_invalidate() with the snapshot it used, and the next
 * aws_credentials_get() fetches a new one (once, however many threads saw
 * the refusal).
 *
 * Secrets never reach a log line: sources report errors without them.
 */
#ifndef OUTBOX_CORE_AWS_CREDENTIALS_H
#define OUTBOX_CORE_AWS_CREDENTIALS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/compiler.h"

/* Enough for any source's error text; never holds a secret. */
#define AWS_CREDS_ERR_LEN 512

/* All members are owned by the snapshot and read-only once it is made. */
struct aws_creds {
	char *access_key_id;
	char *secret_access_key; /* never logged; wiped when freed */
	char *session_token;     /* NULL for long-term keys; never logged */
	long long expires_at;    /* seconds since the epoch; 0: does not expire */
	atomic_int refs;
};

/*
 * A new snapshot with one reference (copies of the strings; token may be
 * NULL or "").  NULL when key or secret is NULL or empty, or out of memory.
 */
struct aws_creds *aws_creds_new(const char *key, const char *secret, const char *token,
                                long long expires_at) OUTBOX_MUSTCHECK;
/* Adds a reference; returns c. */
struct aws_creds *aws_creds_ref(struct aws_creds *c);
/* Drops a reference (NULL is fine); the last one wipes and frees. */
void aws_creds_unref(struct aws_creds *c);

/*
 * One link of the chain, able to fetch credentials again.  fetch() stores a
 * new snapshot in *out and returns 0, or returns -1 with a reason in err
 * (NUL-terminated, no secret).  It is called by one thread at a time, without
 * the provider's lock held.  free_ctx(ctx) releases ctx; may be NULL.
 */
struct aws_credential_source {
	char *name; /* e.g. "web identity (role \"arn:...\")"; owned */
	int (*fetch)(void *ctx, struct aws_creds **out, char *err, size_t err_size);
	void (*free_ctx)(void *ctx);
	void *ctx;
	/* false for keys that never change (environment, static profile
	 * keys): a refused request is then not retried with "new" keys. */
	bool refreshable;
};

struct aws_credentials;

/*
 * A provider over src (taken over: the provider frees it, also on failure)
 * starting with first (its reference is taken over).  One reference; NULL
 * when out of memory.
 */
struct aws_credentials *aws_credentials_new(struct aws_credential_source *src,
                                            struct aws_creds *first) OUTBOX_MUSTCHECK;
struct aws_credentials *aws_credentials_ref(struct aws_credentials *p);
/* The last reference frees the provider and its source; NULL is fine. */
void aws_credentials_unref(struct aws_credentials *p);

/*
 * A reference to the snapshot to sign with (caller aws_creds_unref()s it).
 * Refreshes first when the snapshot is due (see docs/aws.md, "Refresh") and
 * no other thread is already doing it.  NULL when no valid snapshot is left
 * (expired and the refresh failed), with the reason in err.
 */
struct aws_creds *aws_credentials_get(struct aws_credentials *p, char *err,
                                      size_t err_size) OUTBOX_MUSTCHECK;

/*
 * The service refused a request signed with used as expired or unknown:
 * when used is still the current snapshot, it is not handed out again and
 * the next aws_credentials_get() fetches new credentials.  A used that was
 * already replaced changes nothing.  Returns true when a retry with a fresh
 * snapshot can help (the source is refreshable).
 */
bool aws_credentials_invalidate(struct aws_credentials *p, const struct aws_creds *used);

/* The source's name, for logs and --check-config; borrowed from p. */
const char *aws_credentials_source(const struct aws_credentials *p);

/* Successful fetches since the provider was made (first one included). */
unsigned long aws_credentials_fetches(const struct aws_credentials *p);

/*
 * When a snapshot that expires at expires_at and was fetched at fetched_at
 * is due for refresh: five minutes before expiry, or halfway through its
 * life when that is shorter (keys that live only minutes).
 */
long long aws_credentials_refresh_at(long long fetched_at, long long expires_at);

/*
 * Parses an ISO 8601 UTC time as AWS sends it ("2026-12-01T10:00:00Z",
 * fractional seconds and "+00:00" allowed) into seconds since the epoch.
 * Returns 0 ok, -1 when malformed.
 */
int aws_parse_iso8601(const char *s, long long *out) OUTBOX_MUSTCHECK;

#endif
