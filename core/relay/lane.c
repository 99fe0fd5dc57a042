/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/lane.c: one destination's relay pass (see relay/lane.h).
 */
#include "relay/lane.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "db/db.h"
#include "common/clock.h"
#include "common/fault.h"
#include "common/log.h"
#include "common/metrics.h"
#include "relay/outbox_store.h"
#include "aws/sqs.h"

#define LANE_ERR_LEN 1024
/*
 * Statement failures on a live connection (constraint, permission, timeout)
 * repeat every pass: the same one is logged again at most every
 * LANE_REPEAT_LOG_MS, and new ones spend a token of a bucket of
 * LANE_LOG_BURST refilled every LANE_LOG_REFILL_MS, so that failures whose
 * text varies cannot flood the log either.
 */
#define LANE_REPEAT_LOG_MS 60000
#define LANE_LOG_BURST 5
#define LANE_LOG_REFILL_MS 12000

/* The statements a pass runs, as lane_db_failed() names them. */
static const char claim_what[] = "could not claim outbox events";
static const char record_what[] = "could not record the results of sent events "
                                  "(they are sent again once their claim expires)";

/* "code: message" of an AWS failure, for last_error. */
#define ITEM_ERROR_LEN (AWS_RESULT_CODE_LEN + AWS_RESULT_MESSAGE_LEN + 8)

/* The statement-failure log state of a lane (see LANE_REPEAT_LOG_MS). */
struct lane_failures {
	const char *what;          /* the failing statement; NULL while all is well */
	char last[LANE_ERR_LEN];   /* the last failure logged */
	int64_t since_ms;          /* first failure of this run */
	int64_t last_log_ms;
	int64_t refill_ms;         /* last time a token was added */
	int tokens;
	unsigned long count;       /* failures of this run */
	unsigned long unlogged;    /* failures since the last line */
};

struct relay_lane {
	char *conninfo;
	char *destination;
	char *queue_url;
	char *instance_id;
	struct relay_lane_settings s;
	struct publisher *pub; /* borrowed */
	PGconn *conn;          /* owned; NULL while disconnected */
	bool db_down;          /* an outage was logged and not yet its end */
	struct lane_failures f; /* statement failures on a live connection */
	unsigned int nonce;    /* random per lane: claims of a restarted
	                          process with the same pid never match ours */
	unsigned long long seq;
	char token[256];       /* claimed_by of the current pass */
	int limit;             /* the next claim's limit (relay/lane.h) */
	bool paced;            /* relay_lane_set_paced(): limit stays batch_size */
	bool idle;             /* our outbox.relay_idle row exists (as far as we know) */
	/* A pass's arrays, s.claim_max entries each, made once with the lane
	 * (owned): a claim never takes more than claim_max events. */
	struct lane_item *items;
	size_t *idx;
	struct lane_chunk *chunks;
	struct sqs_send_entry *entries;
	struct sqs_entry_result *results;
	struct sqs_send_batch *batches;
	struct outbox_mark *marks;
};

/* One SendMessageBatch of a pass: which items, and their answers. */
struct lane_chunk {
	size_t first;  /* index into the pass's chunk item list */
	size_t n;
};

/* One claimed event during a pass. */
struct lane_item {
	const struct outbox_claimed_event *ev; /* borrowed from the claim */
	struct outbox_mark mark;
	struct sqs_entry_result result;
	char id[24];                /* batch entry Id: "e<index>", unique in the pass */
	char error[ITEM_ERROR_LEN];
	bool decided;               /* mark is final before any send */
};

void relay_lane_settings_from_cfg(const struct cfg *cfg, struct relay_lane_settings *s)
{
	s->batch_size = cfg->relay.batch_size;
	s->claim_max = cfg->relay.claim_max;
	s->synchronous_commit = cfg->relay.synchronous_commit != 0;
	s->retry_base_seconds = cfg->relay.retry_base_seconds;
	s->retry_max_seconds = cfg->relay.retry_max_seconds;
	s->claim_lease_seconds = cfg->relay.claim_lease_seconds;
}

static unsigned int random_nonce(void)
{
	unsigned int v = 0;

	/* Fall back on time and address: uniqueness, not secrecy, matters. */
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = (unsigned int)time(NULL) ^ (unsigned int)(uintptr_t)&v;
	return v;
}

static int scratch_new(struct relay_lane *l)
{
	size_t n = (size_t)l->s.claim_max;

	l->items = calloc(n, sizeof(*l->items));
	l->idx = calloc(n, sizeof(*l->idx));
	l->chunks = calloc(n, sizeof(*l->chunks));
	l->entries = calloc(n, sizeof(*l->entries));
	l->results = calloc(n, sizeof(*l->results));
	l->batches = calloc(n, sizeof(*l->batches));
	l->marks = calloc(n, sizeof(*l->marks));
	return l->items == NULL || l->idx == NULL || l->chunks == NULL || l->entries == NULL ||
	               l->results == NULL || l->batches == NULL || l->marks == NULL
	           ? -1
	           : 0;
}

int relay_lane_new(const char *conninfo, const char *destination, const char *queue_url,
                   const char *instance_id, const struct relay_lane_settings *s,
                   struct publisher *pub, struct relay_lane **out)
{
	struct relay_lane *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (l == NULL)
		return -1;
	l->conninfo = strdup(conninfo);
	l->destination = strdup(destination);
	l->queue_url = strdup(queue_url);
	l->instance_id = strdup(instance_id);
	if (l->conninfo == NULL || l->destination == NULL || l->queue_url == NULL ||
	    l->instance_id == NULL) {
		relay_lane_free(l);
		return -1;
	}
	l->s = *s;
	if (l->s.batch_size < 1)
		l->s.batch_size = 1;
	if (l->s.batch_size > SQS_MAX_BATCH_ENTRIES)
		l->s.batch_size = SQS_MAX_BATCH_ENTRIES;
	if (l->s.claim_max < l->s.batch_size)
		l->s.claim_max = l->s.batch_size;
	l->limit = l->s.batch_size;
	if (scratch_new(l) < 0) {
		relay_lane_free(l);
		return -1;
	}
	l->pub = pub;
	l->nonce = random_nonce();
	*out = l;
	return 0;
}

void relay_lane_free(struct relay_lane *lane)
{
	if (lane == NULL)
		return;
	if (lane->conn != NULL && lane->idle)
		(void)relay_lane_set_idle(lane, false);
	metrics_gauge_add(METRIC_LANES_UP, lane->destination, lane->conn != NULL ? -1 : 0);
	PQfinish(lane->conn);
	free(lane->conninfo);
	free(lane->destination);
	free(lane->queue_url);
	free(lane->instance_id);
	free(lane->items);
	free(lane->idx);
	free(lane->chunks);
	free(lane->entries);
	free(lane->results);
	free(lane->batches);
	free(lane->marks);
	free(lane);
}

const char *relay_lane_destination(const struct relay_lane *lane)
{
	return lane->destination;
}

static bool lane_take_token(struct lane_failures *f, int64_t now)
{
	if (f->refill_ms == 0) {
		f->tokens = LANE_LOG_BURST;
		f->refill_ms = now;
	}
	while (f->tokens < LANE_LOG_BURST && now - f->refill_ms >= LANE_LOG_REFILL_MS) {
		f->tokens++;
		f->refill_ms += LANE_LOG_REFILL_MS;
	}
	if (f->tokens == LANE_LOG_BURST)
		f->refill_ms = now;
	if (f->tokens == 0)
		return false;
	f->tokens--;
	return true;
}

/*
 * A statement failed but the connection is up: log it if it is new (within
 * the token budget), or again once LANE_REPEAT_LOG_MS passed, with how many
 * failures went unlogged meanwhile.
 */
static void lane_stmt_failed(struct relay_lane *l, const char *what, const char *err)
{
	struct lane_failures *f = &l->f;
	int64_t now = now_ms();
	char text[LANE_ERR_LEN];
	bool same;

	snprintf(text, sizeof(text), "%s: %s", what, err);
	if (f->what == NULL) {
		f->since_ms = now;
		f->count = 0;
		f->last[0] = '\0';
	}
	f->what = what;
	f->count++;
	same = strcmp(text, f->last) == 0;
	if (same ? now - f->last_log_ms < LANE_REPEAT_LOG_MS : !lane_take_token(f, now)) {
		f->unlogged++;
		return;
	}
	if (f->unlogged > 0)
		log_warning("%s dest=%s (%s; %lu failures not logged since the last report)", text,
		            l->destination, same ? "still failing" : "a new failure",
		            f->unlogged);
	else
		log_warning("%s dest=%s", text, l->destination);
	snprintf(f->last, sizeof(f->last), "%s", text);
	f->last_log_ms = now;
	f->unlogged = 0;
}

/* The statement that failed (what, as passed to lane_db_failed) worked again. */
static void lane_stmt_ok(struct relay_lane *l, const char *what)
{
	struct lane_failures *f = &l->f;

	if (f->what == NULL || (what != NULL && what != f->what))
		return;
	log_info("database statements succeed again dest=%s after %lu failures in %lld s",
	         l->destination, f->count, (long long)((now_ms() - f->since_ms) / 1000));
	f->what = NULL;
	f->unlogged = 0;
}

/*
 * A lost connection is an outage: only its first failure is logged, and
 * lane_connect() logs its end.  Any other failure is a statement's.
 */
static void lane_db_failed(struct relay_lane *l, const char *what, const char *err)
{
	if (l->conn != NULL && !db_connection_lost(l->conn)) {
		lane_stmt_failed(l, what, err);
		return;
	}
	if (!l->db_down)
		log_warning("%s: %s dest=%s", what, err, l->destination);
	l->db_down = true;
	if (l->conn != NULL) {
		metrics_gauge_add(METRIC_LANES_UP, l->destination, -1);
		metrics_inc(METRIC_DB_RECONNECTS, l->destination);
		PQfinish(l->conn);
		l->conn = NULL;
	}
}

static int lane_connect(struct relay_lane *l)
{
	char err[LANE_ERR_LEN];
	char app[128];

	if (l->conn != NULL)
		return 0;
	snprintf(app, sizeof(app), "outboxd relay %s", l->destination);
	l->conn = db_connect(l->conninfo, app, err, sizeof(err));
	if (l->conn == NULL) {
		lane_db_failed(l, "could not connect to the database", err);
		return -1;
	}
	/* The lane's statements are a claim (a lease) and result marks: a
	 * commit lost in a server crash only means an event is sent again,
	 * which the consumer absorbs (docs/performance.md, "Asynchronous
	 * commit").  Visibility to other sessions is unchanged. */
	if (!l->s.synchronous_commit &&
	    db_exec(l->conn, "SET synchronous_commit = off", err, sizeof(err)) < 0) {
		lane_db_failed(l, "could not set synchronous_commit", err);
		PQfinish(l->conn); /* not counted up yet; the next pass starts over */
		l->conn = NULL;
		return -1;
	}
	/* After a server crash the unlogged table is empty: write the row
	 * again the next time the lane sleeps. */
	l->idle = false;
	metrics_gauge_add(METRIC_LANES_UP, l->destination, 1);
	if (l->db_down)
		log_info("reconnected to the database dest=%s", l->destination);
	l->db_down = false;
	return 0;
}

int relay_lane_set_idle(struct relay_lane *l, bool idle)
{
	static const char mark_sql[] =
		"INSERT INTO outbox.relay_idle (destination, instance_id) VALUES ($1, $2)"
		" ON CONFLICT DO NOTHING";
	static const char clear_sql[] =
		"DELETE FROM outbox.relay_idle WHERE destination = $1 AND instance_id = $2";
	const char *params[2] = {l->destination, l->instance_id};
	char err[LANE_ERR_LEN];
	PGresult *res;

	if (l->idle == idle)
		return 0;
	if (lane_connect(l) < 0)
		return -1;
	res = db_query(l->conn, idle ? mark_sql : clear_sql, 2, params, err, sizeof(err));
	if (res == NULL) {
		lane_db_failed(l, "could not record whether the relay lane is idle", err);
		return -1;
	}
	PQclear(res);
	l->idle = idle;
	return 1;
}

static void item_dead(struct lane_item *it, const char *reason, const struct aws_result *r)
{
	snprintf(it->error, sizeof(it->error), "%s: %s", r->code, r->message);
	it->mark.outcome = OUTBOX_OUTCOME_DEAD;
	it->mark.dead_reason = reason;
	it->mark.error = it->error;
	it->decided = true;
}

/* Events SQS could never accept die here, before anything is sent. */
static void items_prepare(struct lane_item *items, const struct outbox_claim *c)
{
	struct aws_result vr;

	for (size_t i = 0; i < c->n; i++) {
		struct lane_item *it = &items[i];
		memset(it, 0, sizeof(*it));
		it->ev = &c->events[i];
		it->mark.event_id = it->ev->event_id;
		snprintf(it->id, sizeof(it->id), "e%zu", i);
		if (sqs_validate_body(it->ev->body, it->ev->body_len, &vr) == 0)
			continue;
		item_dead(it, it->ev->body_len > SQS_MAX_MESSAGE_BYTES ? OUTBOX_DEAD_OVERSIZE
		                                                      : OUTBOX_DEAD_INVALID_BODY, &vr);
	}
}

/* Turns one entry's answer (or the whole request's failure) into a mark. */
static void item_apply(struct lane_item *it, int request_rc, const struct aws_result *req)
{
	const struct sqs_entry_result *r = &it->result;

	if (request_rc < 0) {
		snprintf(it->error, sizeof(it->error), "%s: %s", req->code, req->message);
		it->mark.outcome = OUTBOX_OUTCOME_RETRY;
		it->mark.error = it->error;
		return;
	}
	if (r->ok) {
		it->mark.outcome = OUTBOX_OUTCOME_PUBLISHED;
		it->mark.message_id = r->message_id;
		return;
	}
	snprintf(it->error, sizeof(it->error), "%s: %s", r->code, r->message);
	it->mark.error = it->error;
	/* SenderFault: the entry itself is bad and would fail again. */
	if (r->sender_fault || r->klass == AWS_ERR_PERMANENT) {
		it->mark.outcome = OUTBOX_OUTCOME_DEAD;
		it->mark.dead_reason = OUTBOX_DEAD_REJECTED;
	} else {
		it->mark.outcome = OUTBOX_OUTCOME_RETRY;
	}
}

/* Records one request's outcome and turns its answers into marks. */
static void chunk_done(struct relay_lane *l, struct lane_item *items, const size_t *idx,
                       const struct sqs_send_batch *b, struct relay_pass_stats *st)
{
	st->requests++;
	metrics_observe(METRIC_PUBLISH_BATCH_SIZE, l->destination, (double)b->n);
	if (b->n > st->max_request_entries)
		st->max_request_entries = b->n;
	if (b->rc < 0) {
		st->failed_requests++;
		st->failure_class = b->res.klass;
		snprintf(st->failure_code, sizeof(st->failure_code), "%s", b->res.code);
	}
	for (size_t k = 0; k < b->n; k++) {
		struct lane_item *it = &items[idx[k]];
		if (b->rc == 0)
			it->result = b->results[k];
		item_apply(it, b->rc, &b->res);
		metrics_add(it->mark.outcome == OUTBOX_OUTCOME_DEAD ? METRIC_SEND_FAILED_PERMANENT
		                                                    : METRIC_SEND_FAILED_TRANSIENT,
		            l->destination, it->mark.outcome != OUTBOX_OUTCOME_PUBLISHED);
	}
}

/*
 * Splits the sendable items, in claim order, into requests of at most
 * batch_size entries and SQS_MAX_BATCH_BYTES (a claim of large bodies
 * becomes more requests instead of one SQS would refuse).  idx gets the
 * items' indexes request after request; returns the number of requests.
 */
static size_t plan_chunks(const struct relay_lane *l, const struct lane_item *items, size_t n,
                          size_t *idx, struct lane_chunk *chunks)
{
	size_t n_chunks = 0, k = 0, bytes = 0;

	for (size_t i = 0; i < n; i++) {
		if (items[i].decided)
			continue;
		if (n_chunks == 0 || chunks[n_chunks - 1].n == (size_t)l->s.batch_size ||
		    bytes + items[i].ev->body_len > SQS_MAX_BATCH_BYTES) {
			chunks[n_chunks++] = (struct lane_chunk){k, 0};
			bytes = 0;
		}
		idx[k++] = i;
		chunks[n_chunks - 1].n++;
		bytes += items[i].ev->body_len;
	}
	return n_chunks;
}

/* Sends every sendable item (n <= claim_max), the requests as
 * concurrently as the publisher allows. */
static void send_items(struct relay_lane *l, struct lane_item *items, size_t n,
                       struct relay_pass_stats *st)
{
	size_t *idx = l->idx;
	struct lane_chunk *chunks = l->chunks;
	struct sqs_send_entry *entries = l->entries;
	struct sqs_entry_result *results = l->results;
	struct sqs_send_batch *b = l->batches;
	size_t n_chunks;

	memset(chunks, 0, n * sizeof(*chunks));
	memset(results, 0, n * sizeof(*results));
	n_chunks = plan_chunks(l, items, n, idx, chunks);
	for (size_t c = 0; c < n_chunks; c++) {
		for (size_t k = chunks[c].first; k < chunks[c].first + chunks[c].n; k++) {
			const struct lane_item *it = &items[idx[k]];
			entries[k] = (struct sqs_send_entry){it->id, it->ev->body, it->ev->body_len,
			                                     it->ev->traceparent};
		}
		b[c] = (struct sqs_send_batch){.entries = entries + chunks[c].first, .n = chunks[c].n,
		                               .results = results + chunks[c].first};
	}
	publisher_send_batches(l->pub, l->queue_url, b, n_chunks);
	for (size_t c = 0; c < n_chunks; c++)
		chunk_done(l, items, idx + chunks[c].first, &b[c], st);
}

static void count_outcomes(const struct relay_lane *l, const struct lane_item *items,
                           size_t n, struct relay_pass_stats *st)
{
	for (size_t i = 0; i < n; i++) {
		const struct outbox_mark *m = &items[i].mark;
		switch (m->outcome) {
		case OUTBOX_OUTCOME_PUBLISHED:
			st->published++;
			metrics_inc(METRIC_EVENTS_PUBLISHED, l->destination);
			break;
		case OUTBOX_OUTCOME_RETRY:
			st->retried++;
			break;
		case OUTBOX_OUTCOME_DEAD:
			st->dead++;
			metrics_inc(METRIC_EVENTS_DEAD, l->destination);
			log_warning("outbox event is dead dest=%s event_id=%s reason=%s error=\"%s\"",
			            l->destination, m->event_id, m->dead_reason, m->error);
			break;
		}
	}
}

static int lane_record(struct relay_lane *l, struct lane_item *items, size_t n,
                       struct relay_pass_stats *st)
{
	struct outbox_mark *marks = l->marks;
	struct outbox_mark_stats ms;
	char err[LANE_ERR_LEN];
	int rc;

	for (size_t i = 0; i < n; i++)
		marks[i] = items[i].mark;
	rc = outbox_store_mark(l->conn, l->token, marks, n, l->s.retry_base_seconds,
	                       l->s.retry_max_seconds, &ms, err, sizeof(err));
	if (rc < 0) {
		lane_db_failed(l, record_what, err);
		return -1;
	}
	lane_stmt_ok(l, NULL); /* recording implies the claim worked too */
	count_outcomes(l, items, n, st);
	st->lost = n - ms.applied;
	st->jobs_dead = ms.jobs_dead;
	metrics_add(METRIC_JOBS_DEAD_UNROUTABLE, l->destination, ms.jobs_dead);
	if (st->lost > 0)
		log_warning("claim expired before its results were recorded: %zu events were "
		            "claimed again by another relay dest=%s token=%s",
		            st->lost, l->destination, l->token);
	return 0;
}

/* The next claim's limit: one batch while paced; else doubling while
 * claims come back full (a backlog), halving back towards batch_size when
 * they do not. */
static void adapt_limit(struct relay_lane *l, const struct relay_pass_stats *st)
{
	if (l->paced)
		l->limit = l->s.batch_size;
	else if (st->full)
		l->limit = l->limit > l->s.claim_max / 2 ? l->s.claim_max : l->limit * 2;
	else if (l->limit / 2 >= l->s.batch_size && st->claimed < (size_t)l->limit / 2)
		l->limit /= 2;
}

void relay_lane_set_paced(struct relay_lane *l, bool paced)
{
	l->paced = paced;
	if (paced)
		l->limit = l->s.batch_size;
}

int relay_lane_pass(struct relay_lane *l, struct relay_pass_stats *st)
{
	struct lane_item *items = l->items;
	struct outbox_claim claim;
	char err[LANE_ERR_LEN];
	int rc = -1;

	memset(st, 0, sizeof(*st));
	memset(&claim, 0, sizeof(claim));
	if (lane_connect(l) < 0)
		return -1;
	l->seq++;
	snprintf(l->token, sizeof(l->token), "%s/%s/%08x.%llu", l->instance_id,
	         l->destination, l->nonce, l->seq);
	st->limit = (size_t)l->limit;
	if (outbox_store_claim(l->conn, l->destination, l->token, l->limit,
	                       l->s.claim_lease_seconds, &claim, err, sizeof(err)) < 0) {
		lane_db_failed(l, claim_what, err);
		goto out;
	}
	lane_stmt_ok(l, claim_what);
	st->claimed = claim.n;
	st->full = claim.n >= (size_t)l->limit;
	adapt_limit(l, st);
	rc = 0;
	if (claim.n == 0)
		goto out;
	FAULT_POINT("relay.after_claim");
	if (claim.n > (size_t)l->s.claim_max) {
		/* Nothing sent: the events are claimed again once the lease ends. */
		log_warning("claimed %zu events, more than claim_max %d dest=%s", claim.n,
		            l->s.claim_max, l->destination);
		rc = -1;
		goto out;
	}
	memset(items, 0, claim.n * sizeof(*items));
	items_prepare(items, &claim);
	send_items(l, items, claim.n, st);
	FAULT_POINT("relay.after_send");
	rc = lane_record(l, items, claim.n, st);
out:
	outbox_store_claim_free(&claim);
	return rc;
}
