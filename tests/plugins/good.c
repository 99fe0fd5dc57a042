/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ABI fixture "good": a well-formed plugin with one option of every type.
 *
 * It reports its lifecycle through host->query ("fixture:init",
 * "fixture:destroy") and commits through host->tx_exec ("fixture:commit"),
 * so tests with mock host services can count calls from the plugin's side.
 * A payload {"verdict": N} makes execute() return N, to test how the host
 * treats verdicts, including invalid ones.  A payload {"overlap_probe": true}
 * makes execute() linger and count how many calls were inside it at once
 * (the host must serialise them: this plugin is not CONCURRENT).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

struct good {
	const struct outbox_host *host;
	struct outbox_ctx *ctx;
	const char *greeting;
	long long count;
	int in_flight;     /* calls inside execute() now (atomic) */
	int max_in_flight; /* the most seen at once (atomic) */
};

static const struct outbox_option good_options[] = {
	{.name = "greeting", .type = OUTBOX_OPT_STRING, .help = "text put into the output"},
	{.name = "count", .type = OUTBOX_OPT_INT, .default_value = "3", .min = 1, .max = 10,
	 .help = "how many times"},
	{.name = "ratio", .type = OUTBOX_OPT_DOUBLE, .default_value = "0.5", .min = 0, .max = 1,
	 .help = "a fraction"},
	{.name = "verbose", .type = OUTBOX_OPT_BOOL, .default_value = "false",
	 .help = "log more"},
	{.name = "endpoint", .type = OUTBOX_OPT_URL, .default_value = "https://example.invalid/api",
	 .help = "where to send"},
	{.name = "token_env", .type = OUTBOX_OPT_STRING, .default_value = "OUTBOX_FIXTURE_TOKEN",
	 .flags = OUTBOX_OPT_SECRET_ENV, .help = "variable holding the API token"},
	{.name = NULL},
};

static void good_report(struct good *self, const char *what)
{
	char err[256];
	json_t *rows = NULL;

	/* Without mock services this fails with "not available": that is fine. */
	if (self->host->query(self->ctx, what, 0, NULL, &rows, err, sizeof(err)) == 0)
		json_decref(rows);
}

static int good_init(const struct outbox_host *host, struct outbox_ctx *ctx,
                     void **instance, char *err, size_t errlen)
{
	struct good *self = calloc(1, sizeof(*self));

	*instance = self;
	if (self == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	self->host = host;
	self->ctx = ctx;
	self->greeting = host->option(ctx, "greeting");
	self->count = host->option_int(ctx, "count");
	host->log(ctx, OUTBOX_LOG_DEBUG, "good fixture started, count=%lld ratio=%g verbose=%d",
	          self->count, host->option_double(ctx, "ratio"), host->option_bool(ctx, "verbose"));
	good_report(self, "fixture:init");
	return 0;
}

static void good_destroy(void *instance)
{
	struct good *self = instance;

	if (self == NULL)
		return;
	good_report(self, "fixture:destroy");
	free(self);
}

static void good_overlap_probe(struct good *self, struct outbox_result *result)
{
	const struct timespec linger = {.tv_nsec = 20 * 1000 * 1000};
	int now = __atomic_add_fetch(&self->in_flight, 1, __ATOMIC_SEQ_CST);
	int seen = __atomic_load_n(&self->max_in_flight, __ATOMIC_SEQ_CST);

	while (now > seen &&
	       !__atomic_compare_exchange_n(&self->max_in_flight, &seen, now, false,
	                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	nanosleep(&linger, NULL);
	__atomic_sub_fetch(&self->in_flight, 1, __ATOMIC_SEQ_CST);
	result->output = json_pack("{s:i}", "max_in_flight",
	                           __atomic_load_n(&self->max_in_flight, __ATOMIC_SEQ_CST));
}

static enum outbox_verdict good_execute(void *instance, const struct outbox_job *job,
                                        struct outbox_result *result)
{
	struct good *self = instance;
	json_t *verdict = json_object_get(job->payload, "verdict");

	if (json_is_true(json_object_get(job->payload, "overlap_probe"))) {
		good_overlap_probe(self, result);
		return result->output != NULL ? OUTBOX_OK : OUTBOX_RETRY;
	}

	if (json_is_integer(verdict)) {
		/* Whatever the payload asks for, even an invalid verdict. */
		snprintf(result->msg, result->msg_size, "asked for %lld",
		         (long long)json_integer_value(verdict));
		return (enum outbox_verdict)json_integer_value(verdict);
	}
	result->output = json_pack("{s:s, s:I, s:s}", "greeting", self->greeting,
	                           "count", (json_int_t)self->count, "job", job->job_id);
	snprintf(result->msg, result->msg_size, "ok");
	return result->output != NULL ? OUTBOX_OK : OUTBOX_RETRY;
}

static enum outbox_verdict good_commit(void *instance, const struct outbox_job *job,
                                       const json_t *output, struct outbox_tx *tx,
                                       char *err, size_t errlen)
{
	struct good *self = instance;
	const char *params[1] = {job->job_id};

	if (self->host->tx_exec(tx, "fixture:commit", 1, params, NULL, err, errlen) < 0)
		return OUTBOX_RETRY;
	return OUTBOX_OK;
}

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
	.name = "good",
	.version = "1.0",
	.description = "ABI fixture that does everything right",
	.options = good_options,
	.init = good_init,
	.destroy = good_destroy,
	.execute = good_execute,
	.commit = good_commit,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
