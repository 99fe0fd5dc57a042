/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * webhook.c: the "webhook" handler plugin.
 *
 * Hands each job to an HTTP endpoint as a Standard Webhooks message (a
 * signed JSON POST) and turns the answer into a verdict, so handlers can be
 * written in any language.  commit() records the delivery in
 * webhook.deliveries in the transaction that marks the job SUCCEEDED: one
 * row per succeeded job, although the request itself is at least once
 * (docs/webhook.md).
 *
 * Concurrent: execute() only reads the instance's configuration and takes
 * a curl handle of its own from the pool for the length of the request.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook.h"

struct webhook {
	const struct outbox_host *host; /* borrowed, valid until destroy() */
	struct outbox_ctx *ctx;         /* borrowed, valid until destroy() */
	struct wh_config cfg;           /* owned */
	struct wh_pool pool;            /* owned */
	int pool_ready;
	int has_trace;                  /* the host offers traceparent() (ABI 1.1) */
};

static int wh_init(const struct outbox_host *host, struct outbox_ctx *ctx,
                   void **instance, char *err, size_t errlen)
{
	struct webhook *self = calloc(1, sizeof(*self));

	/* Set first: destroy() gets it even when init() fails below. */
	*instance = self;
	if (self == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	self->host = host;
	self->ctx = ctx;
	self->has_trace = host->abi_minor >= 1 &&
	                  host->size >= offsetof(struct outbox_host, traceparent) +
	                                sizeof(host->traceparent) &&
	                  host->traceparent != NULL;
	if (wh_pool_init(&self->pool) < 0) {
		snprintf(err, errlen, "could not create the curl handle pool");
		return -1;
	}
	self->pool_ready = 1;
	return wh_config_load(host, ctx, &self->cfg, err, errlen);
}

static void wh_destroy(void *instance)
{
	struct webhook *self = instance;

	if (self == NULL)
		return;
	if (self->pool_ready)
		wh_pool_destroy(&self->pool);
	wh_config_clear(&self->cfg);
	free(self);
}

static enum outbox_verdict wh_execute(void *instance, const struct outbox_job *job,
                                      struct outbox_result *result)
{
	struct webhook *self = instance;
	const char *trace = self->has_trace ? self->host->traceparent(self->ctx) : NULL;
	struct wh_response resp;
	enum outbox_verdict v;
	CURL *h = wh_pool_take(&self->pool, &self->cfg);

	if (h == NULL) {
		snprintf(result->msg, result->msg_size, "could not create a curl handle");
		return OUTBOX_RETRY;
	}
	int rc = wh_deliver(&self->cfg, h, job, trace, self->host->now_ms(self->ctx), &resp,
	                    result->msg, result->msg_size);
	wh_pool_give(&self->pool, h);
	if (rc < 0)
		return OUTBOX_RETRY;
	v = wh_verdict(&self->cfg, &resp, result);
	if (v == OUTBOX_OK) {
		result->output = json_pack("{s:i, s:I}", "status", (int)resp.status,
		                           "duration_ms", (json_int_t)resp.duration_ms);
		if (result->output == NULL) {
			snprintf(result->msg, result->msg_size, "out of memory");
			return OUTBOX_RETRY;
		}
		snprintf(result->msg, result->msg_size, "HTTP %ld in %lld ms", resp.status,
		         (long long)resp.duration_ms);
		return OUTBOX_OK;
	}
	self->host->log(self->ctx, v == OUTBOX_RETRY ? OUTBOX_LOG_WARNING : OUTBOX_LOG_ERROR,
	                "webhook delivery %s: %s", v == OUTBOX_RETRY ? "will be retried" : "failed",
	                result->msg);
	return v;
}

static const char wh_insert_sql[] =
	"INSERT INTO webhook.deliveries (job_id, redrive_generation, attempt, status_code, "
	"duration_ms) VALUES ($1, $2::integer, $3::integer, $4::integer, $5::bigint) "
	"ON CONFLICT (job_id, redrive_generation) DO NOTHING";

static enum outbox_verdict wh_commit(void *instance, const struct outbox_job *job,
                                     const json_t *output, struct outbox_tx *tx,
                                     char *err, size_t errlen)
{
	struct webhook *self = instance;
	char gen[16], attempt[16], status[16], duration[24];

	if (output == NULL) {
		snprintf(err, errlen, "no delivery to record");
		return OUTBOX_RETRY;
	}
	snprintf(gen, sizeof(gen), "%d", job->redrive_generation);
	snprintf(attempt, sizeof(attempt), "%d", job->attempt);
	snprintf(status, sizeof(status), "%lld",
	         (long long)json_integer_value(json_object_get(output, "status")));
	snprintf(duration, sizeof(duration), "%lld",
	         (long long)json_integer_value(json_object_get(output, "duration_ms")));
	const char *params[5] = {job->job_id, gen, attempt, status, duration};
	/* The host rolls back; the receiver dedupes the redelivery on webhook-id. */
	return self->host->tx_exec(tx, wh_insert_sql, 5, params, NULL, err, errlen) < 0
	       ? OUTBOX_RETRY : OUTBOX_OK;
}

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
	.name = "webhook",
	.version = "1.0.0",
	.description = "POST each job to an HTTP endpoint as a signed Standard Webhooks message",
	.flags = OUTBOX_PLUGIN_CONCURRENT,
	.options = wh_options,
	.init = wh_init,
	.destroy = wh_destroy,
	.execute = wh_execute,
	.commit = wh_commit,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
