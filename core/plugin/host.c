/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/host.c: the outbox_host table and the contexts behind it.
 *
 * The table is one static const object shared by every instance; what
 * differs per instance lives in struct outbox_ctx, and what differs per
 * call (job id, commit transaction) in a thread-local, because worker
 * threads run different instances at the same time.
 */
#include "plugin/host.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"

static _Thread_local struct plugin_call_state current;

void plugin_call_enter(const struct outbox_ctx *ctx, const char *job_id,
                       struct outbox_tx *tx, struct plugin_call_state *saved)
{
	*saved = current;
	current.ctx = ctx;
	current.job_id = job_id;
	current.tx = tx;
}

void plugin_call_leave(const struct plugin_call_state *saved)
{
	current = *saved;
}

static _Thread_local char trace[OUTBOX_TRACEPARENT_LEN + 1];

static bool traceparent_valid(const char *s)
{
	if (strlen(s) != OUTBOX_TRACEPARENT_LEN)
		return false;
	for (size_t i = 0; i < OUTBOX_TRACEPARENT_LEN; i++) {
		bool dash = i == 2 || i == 35 || i == 52;
		if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

void plugin_call_set_trace(const char *traceparent)
{
	if (traceparent != NULL && traceparent_valid(traceparent))
		memcpy(trace, traceparent, OUTBOX_TRACEPARENT_LEN + 1);
	else
		trace[0] = '\0';
}

static void set_err(char *err, size_t errlen, const char *what)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", what);
}

static void host_log(struct outbox_ctx *ctx, enum outbox_log_level level,
                     const char *fmt, ...) OUTBOX_PRINTF(3, 4);

static void host_log(struct outbox_ctx *ctx, enum outbox_log_level level,
                     const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	enum log_level lvl = LOG_LEVEL_INFO;

	if (level >= OUTBOX_LOG_ERROR && level <= OUTBOX_LOG_DEBUG)
		lvl = (enum log_level)level;
	if (lvl > log_max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ctx == NULL) {
		log_write(lvl, "%s plugin=(unknown)", msg);
		return;
	}
	/* The job id is only known while this thread is inside a call for ctx. */
	const char *job = current.ctx == ctx ? current.job_id : NULL;
	const char *tp = job != NULL && trace[0] != '\0' ? trace : NULL;
	log_write(lvl, "%s dest=%s plugin=%s%s%s%s%s", msg, ctx->destination, ctx->plugin,
	          job != NULL ? " job=" : "", job != NULL ? job : "",
	          tp != NULL ? " traceparent=" : "", tp != NULL ? tp : "");
}

static const struct plugin_option_value *typed_option(struct outbox_ctx *ctx,
                                                      const char *name,
                                                      enum outbox_option_type type)
{
	const struct plugin_option_value *val = NULL;

	if (ctx != NULL && name != NULL)
		val = plugin_options_find(&ctx->options, name);
	if (val == NULL || val->decl->type != type) {
		log_error("plugin asked for %s option \"%s\" it does not declare with that type dest=%s plugin=%s",
		          type == OUTBOX_OPT_INT ? "integer" : type == OUTBOX_OPT_DOUBLE ? "number" : "boolean",
		          name != NULL ? name : "(null)",
		          ctx != NULL ? ctx->destination : "(unknown)",
		          ctx != NULL ? ctx->plugin : "(unknown)");
		return NULL;
	}
	return val;
}

static const char *host_option(struct outbox_ctx *ctx, const char *name)
{
	if (ctx == NULL || name == NULL)
		return NULL;
	const struct plugin_option_value *val = plugin_options_find(&ctx->options, name);
	return val != NULL ? val->text : NULL;
}

static long long host_option_int(struct outbox_ctx *ctx, const char *name)
{
	const struct plugin_option_value *val = typed_option(ctx, name, OUTBOX_OPT_INT);

	return val != NULL ? val->i : 0;
}

static double host_option_double(struct outbox_ctx *ctx, const char *name)
{
	const struct plugin_option_value *val = typed_option(ctx, name, OUTBOX_OPT_DOUBLE);

	return val != NULL ? val->d : 0.0;
}

static int host_option_bool(struct outbox_ctx *ctx, const char *name)
{
	const struct plugin_option_value *val = typed_option(ctx, name, OUTBOX_OPT_BOOL);

	return val != NULL && val->b;
}

static int64_t host_now_ms(struct outbox_ctx *ctx)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int host_artifact_get(struct outbox_ctx *ctx, const char *key,
                             char **data, size_t *len, char *err, size_t errlen)
{
	if (ctx == NULL || ctx->services.artifact_get == NULL) {
		set_err(err, errlen, "host service \"artifact_get\" is not available");
		return -1;
	}
	return ctx->services.artifact_get(ctx->services.opaque, ctx, key, data, len,
	                                  err, errlen);
}

static int host_query(struct outbox_ctx *ctx, const char *sql, int nparams,
                      const char *const *params, json_t **rows, char *err, size_t errlen)
{
	if (ctx == NULL || ctx->services.query == NULL) {
		set_err(err, errlen, "host service \"query\" is not available");
		return -1;
	}
	return ctx->services.query(ctx->services.opaque, ctx, sql, nparams, params, rows,
	                           err, errlen);
}

/*
 * A plugin could keep tx past commit() or use it from another thread; only
 * the transaction of the commit() running on this thread is accepted.
 */
static const struct outbox_ctx *commit_ctx(struct outbox_tx *tx, const char *service,
                                           char *err, size_t errlen)
{
	char what[128];

	if (tx == NULL || current.ctx == NULL || current.tx != tx) {
		snprintf(what, sizeof(what), "host service \"%s\" is only available inside commit()",
		         service);
		set_err(err, errlen, what);
		return NULL;
	}
	return current.ctx;
}

static int host_tx_exec(struct outbox_tx *tx, const char *sql, int nparams,
                        const char *const *params, json_t **rows, char *err, size_t errlen)
{
	const struct outbox_ctx *ctx = commit_ctx(tx, "tx_exec", err, errlen);

	if (ctx == NULL)
		return -1;
	if (ctx->services.tx_exec == NULL) {
		set_err(err, errlen, "host service \"tx_exec\" is not available");
		return -1;
	}
	return ctx->services.tx_exec(ctx->services.opaque, ctx, tx, sql, nparams, params,
	                             rows, err, errlen);
}

static int host_tx_enqueue(struct outbox_tx *tx, const char *job_type,
                           const char *destination, const json_t *identity,
                           const json_t *payload, char *job_id_out,
                           char *err, size_t errlen)
{
	const struct outbox_ctx *ctx = commit_ctx(tx, "tx_enqueue", err, errlen);

	if (ctx == NULL)
		return -1;
	if (ctx->services.tx_enqueue == NULL) {
		set_err(err, errlen, "host service \"tx_enqueue\" is not available");
		return -1;
	}
	return ctx->services.tx_enqueue(ctx->services.opaque, ctx, tx, job_type, destination,
	                                identity, payload, job_id_out, err, errlen);
}

static const char *host_traceparent(struct outbox_ctx *ctx)
{
	if (ctx == NULL || current.ctx != ctx || current.job_id == NULL || trace[0] == '\0')
		return NULL;
	return trace;
}

static const struct outbox_host host_table = {
	.size = sizeof(struct outbox_host),
	.abi_minor = OUTBOX_PLUGIN_ABI_MINOR,
	.log = host_log,
	.option = host_option,
	.option_int = host_option_int,
	.option_double = host_option_double,
	.option_bool = host_option_bool,
	.now_ms = host_now_ms,
	.artifact_get = host_artifact_get,
	.query = host_query,
	.tx_exec = host_tx_exec,
	.tx_enqueue = host_tx_enqueue,
	.traceparent = host_traceparent,
};

const struct outbox_host *plugin_host_table(void)
{
	return &host_table;
}

int plugin_ctx_create(const char *destination, const char *plugin,
                      struct plugin_options *options,
                      const struct plugin_host_services *services,
                      struct outbox_ctx **out)
{
	struct outbox_ctx *ctx = calloc(1, sizeof(*ctx));

	*out = NULL;
	if (ctx == NULL)
		goto fail;
	ctx->destination = strdup(destination);
	ctx->plugin = strdup(plugin);
	if (ctx->destination == NULL || ctx->plugin == NULL)
		goto fail;
	ctx->options = *options;
	options->v = NULL;
	options->n = 0;
	if (services != NULL)
		ctx->services = *services;
	*out = ctx;
	return 0;
fail:
	plugin_ctx_free(ctx);
	return -1;
}

void plugin_ctx_free(struct outbox_ctx *ctx)
{
	if (ctx == NULL)
		return;
	plugin_options_free(&ctx->options);
	free(ctx->destination);
	free(ctx->plugin);
	free(ctx);
}

const char *plugin_ctx_destination(const struct outbox_ctx *ctx)
{
	return ctx->destination;
}
