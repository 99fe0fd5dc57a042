/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * outbox/producer.h: liboutbox, the producer side of outboxd.
 *
 * Every enqueue function works inside the CALLER's open transaction: the
 * caller runs BEGIN, calls one or more of these, and COMMITs (or rolls back,
 * and then nothing was written).  A job row and its outbox event are always
 * written by the same statement sequence in that transaction, so they commit
 * together or not at all.  Enqueueing a job that already exists is a silent
 * no-op (INSERT ... ON CONFLICT DO NOTHING).
 *
 * The functions call the SQL producer API of migration V4 (outbox.enqueue(),
 * outbox.confirm_price_window(); docs/producers.md), so the database must be
 * migrated (outboxctl migrate) and a job gets the same ids whichever
 * language enqueued it.
 *
 * Identifiers (docs/identifiers.md):
 *   job_id   = lower-case hex SHA-256 of the job's canonical JSON: a JSON
 *              object of the job type's identity fields in a fixed order,
 *              UTF-8, no insignificant white space.
 *   event_id = "{event_type}:{job_id}:{redrive_generation}"
 *
 * Thread safety: the functions keep no state; a PGconn must not be shared
 * between threads, as libpq requires.
 */
#ifndef OUTBOX_INCLUDE_PRODUCER_H
#define OUTBOX_INCLUDE_PRODUCER_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pg_conn; /* libpq's PGconn */

#define OUTBOX_JOB_ID_LEN 64
#define OUTBOX_EVENT_ID_MAX 128

/* What an enqueue wrote (or found). */
struct outbox_enqueued {
	char job_id[OUTBOX_JOB_ID_LEN + 1];
	char event_id[OUTBOX_EVENT_ID_MAX];
	int created; /* 1: new job and event rows; 0: the job already existed */
};

/*
 * Canonical JSON of an identity object: its members in the order given,
 * compact, UTF-8 (no \u escapes for non-ASCII); byte for byte what
 * outbox.canonical_json() computes in SQL (tests/integration/test_identity.c).
 * Returns a string the caller frees with free(), or NULL if identity is not
 * an object or allocation failed.
 */
char *outbox_canonical_json(const json_t *identity);

/*
 * Checks the numbers of a JSON text (an identity as read, before jansson
 * turns its numbers into doubles): a number with a fraction or an exponent
 * must read back from its double as written, at its own number of
 * significant digits, or two identities would be one job
 * (9007199254740993.0 is read as 9007199254740992).  outbox.enqueue()
 * applies the same rule.  Returns 0, or -1 naming the first such number
 * in err.
 */
int outbox_check_identity_numbers(const char *json_text, char *err, size_t errlen);

/* job_id of a canonical JSON text into out (65 bytes). */
void outbox_job_id(const char *canonical, char out[OUTBOX_JOB_ID_LEN + 1]);

/*
 * event_id into out; returns 0, or -1 if it does not fit in outlen.
 */
int outbox_event_id(const char *event_type, const char *job_id,
                    int redrive_generation, char *out, size_t outlen);

/*
 * The generic API: any job type, any destination.
 */

/*
 * Enqueue a generic job: job row + outbox event in the caller's
 * transaction.  identity and payload are borrowed.  event_type is the job
 * type.  Returns 0, or -1 with the reason in err (the caller should then
 * roll back).
 */
int outbox_enqueue_job(struct pg_conn *conn, const char *job_type,
                       const char *destination, const json_t *identity,
                       const json_t *payload, struct outbox_enqueued *out,
                       char *err, size_t errlen);

/*
 * outbox_enqueue_job() with the producer's W3C trace context: traceparent
 * ("00-<trace id>-<parent id>-<flags>", borrowed, may be NULL) is stored
 * with the event and sent as the SQS message attribute "traceparent".
 */
int outbox_enqueue_job_traced(struct pg_conn *conn, const char *job_type,
                              const char *destination, const json_t *identity,
                              const json_t *payload, const char *traceparent,
                              struct outbox_enqueued *out, char *err, size_t errlen);

/*
 * Normalise an ISO 8601 timestamp ("2026-11-30T09:01:00Z",
 * "2026-11-30 18:01+09:00", ...) to "YYYY-MM-DDTHH:MM:SSZ" in out (21
 * bytes).  Returns 0 or -1 if it is not a timestamp.
 */
int outbox_normalize_timestamp(const char *in, char out[21]);

/*
 * The sample market-data domain (docs/price-path.md, conf/sample/): news
 * items and price windows, with the identities and the price_windows
 * table its plugins (news_llm, price_trigger, explanation) expect.  A
 * producer of other work needs none of this.
 */

/*
 * Identity of a news item: {"type":"news","source":S,"url":U}.  item
 * (borrowed) must be an object with non-empty string members source, url,
 * published_at, title and body, and optionally symbols (an array of
 * strings).  Returns a new reference, or NULL with the reason in err.
 */
json_t *outbox_news_identity(const json_t *item, char *err, size_t errlen);

/* enqueue a news item (see outbox_news_identity) to destination. */
int outbox_enqueue_news_job(struct pg_conn *conn, const char *destination,
                            const json_t *item, struct outbox_enqueued *out,
                            char *err, size_t errlen);

/* A confirmed price window.  All strings borrowed. */
struct outbox_price_window {
	const char *symbol;          /* e.g. "AAPL" */
	const char *window_start;    /* ISO 8601; normalised to UTC "...Z" */
	const char *artifact_key;    /* S3 key of the window's bars */
	const char *artifact_sha256; /* lower-case hex of the artifact body */
	int backfill;                /* 1: write the window only */
};

struct outbox_price_enqueued {
	int generation;  /* the window's generation after this call */
	int corrected;   /* 1 if this call raised the generation */
	int job_written; /* 0 for a backfill */
	struct outbox_enqueued job;
};

/*
 * Confirm a price window and, unless it is a backfill, enqueue its job.
 * The first confirmation creates generation 1; a confirmation with a
 * different artifact (a correction) raises the generation; one with the
 * same artifact changes nothing.  The job identity is
 * {"type":"price","symbol":S,"window_start":T,"generation":G}, so every
 * generation is its own job and older ones become stale.
 */
int outbox_enqueue_price_job(struct pg_conn *conn, const char *destination,
                             const struct outbox_price_window *w,
                             struct outbox_price_enqueued *out,
                             char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
