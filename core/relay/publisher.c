/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/publisher.c: the "sqs", "null" and "fake" publishers (see publisher.h).
 */
#include "relay/publisher.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/http.h"
#include "common/log.h"

enum publisher_type {
	PUBLISHER_SQS,
	PUBLISHER_NULL,
	PUBLISHER_FAKE,
};

struct publisher {
	enum publisher_type type;
	struct aws_http *sqs; /* owned; PUBLISHER_SQS only */
	/* PUBLISHER_SQS with a concurrency above 1: one client per request in
	 * flight (clients[0] is sqs) and the multi handle that drives them. */
	struct aws_http *clients[AWS_HTTP_MAX_TRANSFERS]; /* [1..n_clients) owned */
	size_t n_clients;
	struct aws_http_multi *multi; /* owned */
	/* PUBLISHER_FAKE only; mutex because tests read while a lane sends. */
	pthread_mutex_t lock;
	struct publisher_fake_message *sent; /* owned, n_sent entries */
	size_t n_sent;
	size_t cap_sent;
	size_t requests;
	unsigned long long next_id;
	publisher_fake_hook hook; /* may be NULL */
	void *hook_arg;
};

static int publisher_alloc(enum publisher_type type, struct publisher **out)
{
	struct publisher *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (p == NULL) {
		log_error("out of memory creating a publisher");
		return -1;
	}
	p->type = type;
	p->next_id = 1;
	if (pthread_mutex_init(&p->lock, NULL) != 0) {
		free(p);
		log_error("could not create a publisher lock");
		return -1;
	}
	*out = p;
	return 0;
}

/* The clients and multi handle of n requests in flight (n >= 2). */
static int add_clients(struct publisher *p, const struct aws_env *env, size_t n)
{
	if (aws_http_multi_new(n, &p->multi) < 0)
		return -1;
	while (p->n_clients < n) {
		if (aws_http_new(env, AWS_SERVICE_SQS, &p->clients[p->n_clients]) < 0)
			return -1;
		p->n_clients++;
	}
	return 0;
}

int publisher_sqs_new_concurrent(const struct aws_env *env, size_t concurrency,
                                 struct publisher **out)
{
	struct publisher *p = NULL;

	if (concurrency > AWS_HTTP_MAX_TRANSFERS)
		concurrency = AWS_HTTP_MAX_TRANSFERS;
	if (publisher_alloc(PUBLISHER_SQS, &p) < 0)
		return -1;
	if (aws_http_new(env, AWS_SERVICE_SQS, &p->sqs) < 0) {
		log_error("could not create the SQS client");
		publisher_free(p);
		return -1;
	}
	p->clients[0] = p->sqs;
	p->n_clients = 1;
	if (concurrency > 1 && add_clients(p, env, concurrency) < 0) {
		log_error("could not create %zu SQS clients", concurrency);
		publisher_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int publisher_sqs_new(const struct aws_env *env, struct publisher **out)
{
	return publisher_sqs_new_concurrent(env, 1, out);
}

int publisher_null_new(struct publisher **out)
{
	return publisher_alloc(PUBLISHER_NULL, out);
}

int publisher_fake_new(struct publisher **out)
{
	return publisher_alloc(PUBLISHER_FAKE, out);
}

int publisher_new(const char *kind, const struct aws_env *env, struct publisher **out)
{
	return publisher_new_concurrent(kind, env, 1, out);
}

int publisher_new_concurrent(const char *kind, const struct aws_env *env, size_t concurrency,
                             struct publisher **out)
{
	*out = NULL;
	if (strcmp(kind, "sqs") == 0) {
		if (env == NULL) {
			log_error("the \"sqs\" publisher needs AWS settings");
			return -1;
		}
		return publisher_sqs_new_concurrent(env, concurrency, out);
	}
	if (strcmp(kind, "null") == 0)
		return publisher_null_new(out);
	if (strcmp(kind, "fake") == 0)
		return publisher_fake_new(out);
	log_error("unknown publisher \"%s\"", kind);
	return -1;
}

const char *publisher_kind(const struct publisher *p)
{
	switch (p->type) {
	case PUBLISHER_SQS:
		return "sqs";
	case PUBLISHER_NULL:
		return "null";
	case PUBLISHER_FAKE:
		return "fake";
	}
	return "unknown";
}

/*
 * The null and fake publishers enforce the request-level limits SQS does
 * (entry count, total size), so code that passes against them does not
 * fail against the real queue.
 */
static int check_batch(const struct sqs_send_entry *entries, size_t n,
                       struct aws_result *res)
{
	size_t total = 0;

	if (n == 0)
		return aws_result_fail(res, "EmptyBatchRequest", "the batch has no entries");
	if (n > SQS_MAX_BATCH_ENTRIES)
		return aws_result_fail(res, "TooManyEntriesInBatchRequest",
		                       "the batch has %zu entries", n);
	for (size_t i = 0; i < n; i++)
		total += entries[i].body_len;
	if (total > SQS_MAX_BATCH_BYTES)
		return aws_result_fail(res, "BatchRequestTooLong",
		                       "the batch totals %zu bytes", total);
	return 0;
}

static void result_ok(struct sqs_entry_result *r, unsigned long long id)
{
	memset(r, 0, sizeof(*r));
	r->ok = true;
	r->klass = AWS_ERR_NONE;
	snprintf(r->message_id, sizeof(r->message_id), "fake-%llu", id);
}

static int fake_record(struct publisher *p, const char *queue_url,
                       const struct sqs_send_entry *e, const struct sqs_entry_result *r)
{
	struct publisher_fake_message *m;

	if (p->n_sent == p->cap_sent) {
		size_t cap = p->cap_sent ? p->cap_sent * 2 : 64;
		struct publisher_fake_message *grown = realloc(p->sent, cap * sizeof(*grown));
		if (grown == NULL)
			return -1;
		p->sent = grown;
		p->cap_sent = cap;
	}
	m = &p->sent[p->n_sent];
	memset(m, 0, sizeof(*m));
	m->queue_url = strdup(queue_url);
	m->body = strndup(e->body, e->body_len);
	if (m->queue_url == NULL || m->body == NULL) {
		free(m->queue_url);
		free(m->body);
		return -1;
	}
	m->body_len = e->body_len;
	snprintf(m->message_id, sizeof(m->message_id), "%s", r->message_id);
	p->n_sent++;
	return 0;
}

static int local_send(struct publisher *p, const char *queue_url,
                      const struct sqs_send_entry *entries, size_t n,
                      struct sqs_entry_result *results, struct aws_result *res)
{
	int rc = 0;

	if (check_batch(entries, n, res) < 0)
		return -1;
	pthread_mutex_lock(&p->lock);
	p->requests++;
	for (size_t i = 0; i < n; i++) {
		result_ok(&results[i], p->next_id++);
		if (p->type == PUBLISHER_FAKE &&
		    (fake_record(p, queue_url, &entries[i], &results[i]) < 0 ||
		     (p->hook != NULL &&
		      p->hook(p->hook_arg, queue_url, entries[i].body, entries[i].body_len) < 0))) {
			/* Nothing was "sent" for the rest: fail the request as a whole. */
			rc = aws_result_fail(res, "InternalError", "could not record a message");
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void publisher_fake_set_hook(struct publisher *p, publisher_fake_hook fn, void *arg)
{
	if (p->type != PUBLISHER_FAKE)
		return;
	pthread_mutex_lock(&p->lock);
	p->hook = fn;
	p->hook_arg = arg;
	pthread_mutex_unlock(&p->lock);
}

int publisher_send_batch(struct publisher *p, const char *queue_url,
                         const struct sqs_send_entry *entries, size_t n,
                         struct sqs_entry_result *results, struct aws_result *res)
{
	aws_result_reset(res);
	if (p->type == PUBLISHER_SQS)
		return sqs_send_message_batch(p->sqs, queue_url, entries, n, results, res);
	return local_send(p, queue_url, entries, n, results, res);
}

void publisher_send_batches(struct publisher *p, const char *queue_url,
                            struct sqs_send_batch *b, size_t n)
{
	if (p->type == PUBLISHER_SQS && p->multi != NULL) {
		for (size_t i = 0; i < n; i += p->n_clients) {
			size_t k = n - i < p->n_clients ? n - i : p->n_clients;
			sqs_send_message_batches(p->multi, p->clients, queue_url, b + i, k);
		}
		return;
	}
	for (size_t i = 0; i < n; i++)
		b[i].rc = publisher_send_batch(p, queue_url, b[i].entries, b[i].n, b[i].results,
		                               &b[i].res);
}

void publisher_free(struct publisher *p)
{
	if (p == NULL)
		return;
	for (size_t i = 1; i < p->n_clients; i++)
		aws_http_free(p->clients[i]);
	aws_http_multi_free(p->multi);
	aws_http_free(p->sqs);
	for (size_t i = 0; i < p->n_sent; i++) {
		free(p->sent[i].queue_url);
		free(p->sent[i].body);
	}
	free(p->sent);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Reads *field under the fake's lock; 0 for other kinds. */
static size_t fake_read(struct publisher *p, const size_t *field)
{
	size_t n;

	if (p->type != PUBLISHER_FAKE)
		return 0;
	pthread_mutex_lock(&p->lock);
	n = *field;
	pthread_mutex_unlock(&p->lock);
	return n;
}

size_t publisher_fake_count(struct publisher *p)
{
	return fake_read(p, &p->n_sent);
}

size_t publisher_fake_requests(struct publisher *p)
{
	return fake_read(p, &p->requests);
}

int publisher_fake_message(struct publisher *p, size_t i,
                           struct publisher_fake_message *out)
{
	int rc = -1;

	if (p->type != PUBLISHER_FAKE)
		return -1;
	pthread_mutex_lock(&p->lock);
	if (i < p->n_sent) {
		*out = p->sent[i];
		rc = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}
