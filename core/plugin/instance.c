/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/instance.c: one destination's use of a loaded plugin: its options
 * validated, init() once, execute() and commit() serialised unless the
 * plugin says it is concurrent, destroy() exactly once.
 */
#include "plugin/instance.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "common/metrics.h"

struct plugin_instance {
	const struct outbox_plugin *desc; /* borrowed from the registry's module */
	const char *name;          /* the plugin's, borrowed from the module */
	struct outbox_ctx *ctx;
	void *instance;            /* the plugin's handle from init() */
	bool serialise;
	bool destroyed;
	pthread_mutex_t lock;
};

struct cfg_sink {
	struct cfg_errors *errs;
	const struct cfg *cfg;
	const struct cfg_destination *dest;
};

static void cfg_sink_report(void *arg, const struct cfg_plugin_option *opt, const char *msg)
{
	const struct cfg_sink *sink = arg;

	cfg_plugin_option_error(sink->errs, sink->cfg, sink->dest, opt, "%s", msg);
}

int plugin_instance_create_from_config(struct plugin_registry *reg,
                                       const struct cfg *cfg,
                                       const struct cfg_destination *dest,
                                       const struct plugin_host_services *services,
                                       struct cfg_errors *errs,
                                       struct plugin_instance **out)
{
	struct cfg_sink sink = {.errs = errs, .cfg = cfg, .dest = dest};
	const struct plugin_diag diag = {.report = cfg_sink_report, .arg = &sink};
	const struct plugin_instance_spec spec = {
		.destination = dest->name,
		.plugin = dest->plugin,
		.options = dest->plugin_options,
		.n_options = dest->n_plugin_options,
		.services = services,
	};

	return plugin_instance_create(reg, &spec, &diag, out);
}

/* init() failing still gets its destroy() (docs/plugin-api.md, "Lifecycle"), right here. */
static int run_init(struct plugin_instance *inst, const struct plugin_diag *diag)
{
	const struct outbox_plugin *d = inst->desc;
	struct plugin_call_state saved;
	char err[512] = "";

	plugin_call_enter(inst->ctx, NULL, NULL, &saved);
	int rc = d->init(plugin_host_table(), inst->ctx, &inst->instance, err, sizeof(err));
	plugin_call_leave(&saved);
	if (rc == 0)
		return 0;
	err[sizeof(err) - 1] = '\0';
	plugin_diag_report(diag, NULL, "plugin \"%s\" failed to start: %s", inst->name,
	                   err[0] != '\0' ? err : "init() gave no reason");
	plugin_call_enter(inst->ctx, NULL, NULL, &saved);
	d->destroy(inst->instance);
	plugin_call_leave(&saved);
	inst->instance = NULL;
	inst->destroyed = true;
	return -1;
}

static void free_instance(struct plugin_instance *inst)
{
	if (inst == NULL)
		return;
	plugin_ctx_free(inst->ctx);
	if (inst->serialise)
		pthread_mutex_destroy(&inst->lock);
	free(inst);
}

int plugin_instance_create(struct plugin_registry *reg,
                           const struct plugin_instance_spec *spec,
                           const struct plugin_diag *diag,
                           struct plugin_instance **out)
{
	struct plugin_module *mod = NULL;
	struct plugin_options opts = {0};
	struct plugin_instance *inst = NULL;

	*out = NULL;
	if (plugin_registry_load(reg, spec->plugin, diag, &mod) < 0)
		return -1;
	if (plugin_options_validate(spec->plugin, plugin_module_descriptor(mod)->options, spec->options,
	                            spec->n_options, diag, &opts) < 0)
		return -1;
	inst = calloc(1, sizeof(*inst));
	if (inst == NULL)
		goto oom;
	inst->desc = plugin_module_descriptor(mod);
	inst->name = plugin_module_name(mod);
	if (plugin_ctx_create(spec->destination, spec->plugin, &opts, spec->services,
	                      &inst->ctx) < 0)
		goto oom;
	if ((plugin_module_descriptor(mod)->flags & OUTBOX_PLUGIN_CONCURRENT) == 0) {
		if (pthread_mutex_init(&inst->lock, NULL) != 0)
			goto oom;
		inst->serialise = true;
	}
	if (run_init(inst, diag) < 0)
		goto fail;
	*out = inst;
	return 0;
oom:
	plugin_diag_report(diag, NULL, "plugin \"%s\": out of memory", spec->plugin);
fail:
	plugin_options_free(&opts);
	free_instance(inst);
	return -1;
}

void plugin_instance_destroy(struct plugin_instance *inst)
{
	struct plugin_call_state saved;

	if (inst == NULL)
		return;
	if (!inst->destroyed) {
		plugin_call_enter(inst->ctx, NULL, NULL, &saved);
		inst->desc->destroy(inst->instance);
		plugin_call_leave(&saved);
		inst->destroyed = true;
	}
	free_instance(inst);
}

static bool verdict_valid(enum outbox_verdict v)
{
	int raw = (int)v;

	return raw == OUTBOX_OK || raw == OUTBOX_RETRY || raw == OUTBOX_FAIL;
}

static void lock_instance(struct plugin_instance *inst)
{
	if (inst->serialise)
		pthread_mutex_lock(&inst->lock);
}

static void unlock_instance(struct plugin_instance *inst)
{
	if (inst->serialise)
		pthread_mutex_unlock(&inst->lock);
}

enum outbox_verdict plugin_instance_execute(struct plugin_instance *inst,
                                            const struct outbox_job *job,
                                            struct outbox_result *result)
{
	struct plugin_call_state saved;

	if (result->msg == NULL || result->msg_size == 0) {
		log_error("plugin \"%s\" called without a message buffer dest=%s",
		          inst->name, inst->ctx->destination);
		return OUTBOX_FAIL;
	}
	result->msg[0] = '\0';
	result->output = NULL;
	lock_instance(inst);
	plugin_call_enter(inst->ctx, job->job_id, NULL, &saved);
	double started = metrics_now_seconds();
	enum outbox_verdict v = inst->desc->execute(inst->instance, job, result);
	metrics_observe(METRIC_EXECUTE_SECONDS, inst->ctx->destination,
	                metrics_now_seconds() - started);
	plugin_call_leave(&saved);
	unlock_instance(inst);
	result->msg[result->msg_size - 1] = '\0';
	if (!verdict_valid(v)) {
		snprintf(result->msg, result->msg_size, "plugin \"%s\" returned invalid verdict %d",
		         inst->name, (int)v);
		v = OUTBOX_FAIL;
	}
	if (v != OUTBOX_OK && result->output != NULL) {
		json_decref(result->output);
		result->output = NULL;
	}
	return v;
}

enum outbox_verdict plugin_instance_execute_traced(struct plugin_instance *inst,
                                                   const struct outbox_job *job,
                                                   const char *traceparent,
                                                   struct outbox_result *result)
{
	plugin_call_set_trace(traceparent);
	enum outbox_verdict v = plugin_instance_execute(inst, job, result);
	plugin_call_set_trace(NULL);
	return v;
}

enum outbox_verdict plugin_instance_commit(struct plugin_instance *inst,
                                           const struct outbox_job *job,
                                           const json_t *output,
                                           struct outbox_tx *tx,
                                           char *err, size_t errlen)
{
	struct plugin_call_state saved;

	if (err == NULL || errlen == 0)
		return OUTBOX_FAIL;
	err[0] = '\0';
	if (inst->desc->commit == NULL)
		return OUTBOX_OK;
	lock_instance(inst);
	plugin_call_enter(inst->ctx, job->job_id, tx, &saved);
	double started = metrics_now_seconds();
	enum outbox_verdict v = inst->desc->commit(inst->instance, job, output, tx,
	                                                err, errlen);
	metrics_observe(METRIC_COMMIT_SECONDS, inst->ctx->destination,
	                metrics_now_seconds() - started);
	plugin_call_leave(&saved);
	unlock_instance(inst);
	err[errlen - 1] = '\0';
	if (!verdict_valid(v)) {
		snprintf(err, errlen, "plugin \"%s\" returned invalid verdict %d from commit()",
		         inst->name, (int)v);
		v = OUTBOX_FAIL;
	}
	return v;
}

const char *plugin_instance_destination(const struct plugin_instance *inst)
{
	return inst->ctx->destination;
}

const struct outbox_plugin *plugin_instance_descriptor(const struct plugin_instance *inst)
{
	return inst->desc;
}

const char *plugin_verdict_name(enum outbox_verdict verdict)
{
	switch (verdict) {
	case OUTBOX_OK:
		return "OK";
	case OUTBOX_RETRY:
		return "RETRY";
	case OUTBOX_FAIL:
		return "FAIL";
	}
	return "INVALID";
}
