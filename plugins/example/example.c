/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * example.c: a complete outboxd handler plugin that does nothing useful.
 *
 * Copy this file to start your own plugin.  Build it out of tree with
 * the Makefile installed next to it (in the documentation's examples/
 * directory), or by hand:
 *
 *   cc $(pkg-config --cflags outboxd-plugin) -fPIC -shared \
 *      -o myplugin.so myplugin.c $(pkg-config --libs jansson)
 *
 * rename it everywhere ("example" -> "myplugin": the .so file name and
 * descriptor.name must match), install it into
 * $(pkg-config --variable=plugindir outboxd-plugin) and name it in relay.ini:
 *
 *   [destination:demo]
 *   queue_url = ...
 *   plugin = myplugin
 *   plugin.prefix = hello
 *
 * Rules (docs/plugin-api.md has the whole contract):
 *   - export only outbox_plugin_describe(); make everything else static
 *   - never exit(), abort() or assert(): report through the verdict
 *   - never call process-wide init functions (curl_global_init, OpenSSL)
 *   - keep no mutable globals: each destination gets its own instance
 *   - read options through host->option*(); the host has validated them
 */
#include <stdio.h>
#include <stdlib.h>

#include <outbox/plugin.h>

/* Per-instance state: one per [destination:NAME] that names this plugin. */
struct example {
	const struct outbox_host *host; /* borrowed, valid until destroy() */
	struct outbox_ctx *ctx;         /* borrowed, valid until destroy() */
	const char *prefix;             /* borrowed from the host, same lifetime */
	long long max_items;
	int dry_run;
};

/*
 * The plugin.* keys this plugin accepts.  The host rejects unknown keys,
 * missing required keys (default_value NULL) and bad values before init()
 * runs, with the file and line, so init() never parses strings.
 */
static const struct outbox_option example_options[] = {
	{.name = "prefix", .type = OUTBOX_OPT_STRING, .default_value = "example",
	 .help = "text put in front of every message"},
	{.name = "max_items", .type = OUTBOX_OPT_INT, .default_value = "100",
	 .min = 1, .max = 10000, .help = "largest payload array accepted"},
	{.name = "dry_run", .type = OUTBOX_OPT_BOOL, .default_value = "true",
	 .help = "log instead of writing anything in commit()"},
	/*
	 * A secret is never put in relay.ini; the key names an environment
	 * variable and the host checks it is set.  Uncomment to require one:
	 * {.name = "api_key_env", .type = OUTBOX_OPT_STRING,
	 *  .flags = OUTBOX_OPT_SECRET_ENV, .help = "variable holding the API key"},
	 */
	{.name = NULL},
};

static int example_init(const struct outbox_host *host, struct outbox_ctx *ctx,
                        void **instance, char *err, size_t errlen)
{
	struct example *self = calloc(1, sizeof(*self));

	/* Set *instance first: destroy() gets it even if init() fails below. */
	*instance = self;
	if (self == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	self->host = host;
	self->ctx = ctx;
	self->prefix = host->option(ctx, "prefix");
	self->max_items = host->option_int(ctx, "max_items");
	self->dry_run = host->option_bool(ctx, "dry_run");
	host->log(ctx, OUTBOX_LOG_INFO, "example plugin ready (max_items=%lld, dry_run=%d)",
	          self->max_items, self->dry_run);
	return 0;
}

/* Called exactly once per init(), also after a failed init(): accept NULL. */
static void example_destroy(void *instance)
{
	free(instance);
}

/*
 * Do the work, outside any transaction.  Decide between RETRY (worth trying
 * again later: timeouts, 5xx, connection refused) and FAIL (never going to
 * work: invalid payload, 4xx).  Put a short reason in result->msg.
 */
static enum outbox_verdict example_execute(void *instance, const struct outbox_job *job,
                                           struct outbox_result *result)
{
	struct example *self = instance;
	const json_t *items = json_object_get(job->payload, "items");

	if (items != NULL && !json_is_array(items)) {
		snprintf(result->msg, result->msg_size, "payload \"items\" is not an array");
		return OUTBOX_FAIL;
	}
	if (items != NULL && json_array_size(items) > (size_t)self->max_items) {
		snprintf(result->msg, result->msg_size, "%zu items, at most %lld accepted",
		         json_array_size(items), self->max_items);
		return OUTBOX_FAIL;
	}
	/* What commit() should store: a new reference the host takes over. */
	result->output = json_pack("{s:s, s:s}", "prefix", self->prefix, "job_id", job->job_id);
	if (result->output == NULL) {
		snprintf(result->msg, result->msg_size, "out of memory");
		return OUTBOX_RETRY;
	}
	snprintf(result->msg, result->msg_size, "%s: handled %s job", self->prefix, job->job_type);
	return OUTBOX_OK;
}

/*
 * Store the outcome inside the host's transaction, which also marks the job
 * SUCCEEDED: both happen or neither.  Use only host->tx_exec/tx_enqueue
 * with the tx given here.
 */
static enum outbox_verdict example_commit(void *instance, const struct outbox_job *job,
                                          const json_t *output, struct outbox_tx *tx,
                                          char *err, size_t errlen)
{
	struct example *self = instance;

	if (self->dry_run || output == NULL) {
		self->host->log(self->ctx, OUTBOX_LOG_DEBUG, "dry run: nothing stored");
		return OUTBOX_OK;
	}
	/* output is borrowed; the text json_dumps() makes is ours to free. */
	char *text = json_dumps(output, JSON_COMPACT);
	if (text == NULL) {
		snprintf(err, errlen, "out of memory");
		return OUTBOX_RETRY;
	}
	const char *params[2] = {job->job_id, text};
	int rc = self->host->tx_exec(tx, "SELECT $1::text, $2::jsonb", 2, params, NULL,
	                             err, errlen);
	free(text);
	/* The host rolls back; a failed statement is worth another try. */
	return rc < 0 ? OUTBOX_RETRY : OUTBOX_OK;
}

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT, /* magic, sizes and versions; every other member NULL */
	.name = "example",
	.version = "1.0.0",
	.description = "no-op handler to copy from",
	.flags = 0, /* OUTBOX_PLUGIN_CONCURRENT if execute() is thread-safe */
	.options = example_options,
	.init = example_init,
	.destroy = example_destroy,
	.execute = example_execute,
	.commit = example_commit,
};

/* The only exported symbol.  It must not do anything but return the pointer. */
const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
