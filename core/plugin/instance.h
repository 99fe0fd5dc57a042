/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/instance.h: running plugin instances.
 *
 * An instance is one destination's use of a plugin (loaded through a
 * registry, plugin/module.h): its options validated against the plugin's
 * table, init() called once, destroy() exactly once.  Create and destroy
 * instances from one thread; execute/commit may be called from any thread.
 */
#ifndef OUTBOX_CORE_PLUGIN_INSTANCE_H
#define OUTBOX_CORE_PLUGIN_INSTANCE_H

#include <stddef.h>

#include <outbox/plugin.h>

#include "config/config.h"
#include "common/compiler.h"
#include "plugin/host.h"
#include "plugin/module.h"
#include "plugin/options.h"

struct plugin_instance;

/* What an instance is made from.  Every pointer is borrowed for the call. */
struct plugin_instance_spec {
	const char *destination;                  /* [destination:NAME] */
	const char *plugin;                       /* plugin = NAME */
	const struct cfg_plugin_option *options;  /* the plugin.* lines */
	size_t n_options;
	const struct plugin_host_services *services; /* copied; NULL: none yet */
};

/*
 * Load the plugin (through reg), validate options, create the context and
 * call init().  Every problem goes to diag (options: all of them).  If
 * init() fails its message is reported as `plugin "x" failed to start: MSG`
 * and destroy() is called right away.  Returns 0 and *out (caller frees
 * with plugin_instance_destroy(), before plugin_registry_free()), or -1.
 */
int plugin_instance_create(struct plugin_registry *reg,
                           const struct plugin_instance_spec *spec,
                           const struct plugin_diag *diag,
                           struct plugin_instance **out) OUTBOX_MUSTCHECK;

/*
 * The same for one parsed destination; problems become cfg errors of the
 * form "FILE:LINE: [destination:NAME] plugin.KEY: problem".  cfg, dest and
 * services are borrowed.
 */
int plugin_instance_create_from_config(struct plugin_registry *reg,
                                       const struct cfg *cfg,
                                       const struct cfg_destination *dest,
                                       const struct plugin_host_services *services,
                                       struct cfg_errors *errs,
                                       struct plugin_instance **out) OUTBOX_MUSTCHECK;

/* Calls the plugin's destroy() (exactly once) and frees inst.  NULL is a no-op. */
void plugin_instance_destroy(struct plugin_instance *inst);

/*
 * Run execute() for job (borrowed).  result->msg must point to at least
 * 256 bytes (result->msg_size); it is emptied before the call and always
 * NUL-terminated after it.  result->output must be NULL on entry; after an
 * OUTBOX_OK it may hold a new reference the caller owns (json_decref it
 * after commit); for any other verdict it is NULL.  A verdict outside the
 * enum becomes OUTBOX_FAIL with an explanation in msg.  Serialised per
 * instance unless the plugin is OUTBOX_PLUGIN_CONCURRENT.
 */
enum outbox_verdict plugin_instance_execute(struct plugin_instance *inst,
                                            const struct outbox_job *job,
                                            struct outbox_result *result);

/*
 * plugin_instance_execute() for a job whose message carried the producer's
 * W3C trace context: traceparent (borrowed, may be NULL) appears in every
 * line the handler logs during the call, so the job can be followed from
 * the producer's trace to the handler.
 */
enum outbox_verdict plugin_instance_execute_traced(struct plugin_instance *inst,
                                                   const struct outbox_job *job,
                                                   const char *traceparent,
                                                   struct outbox_result *result);

/*
 * Run commit() inside the caller's transaction tx (borrowed; the consumer's
 * own struct outbox_tx, handed back to its tx_exec/tx_enqueue services).
 * output is the borrowed reference execute() produced (may be NULL).  err
 * (errlen >= 1) is always NUL-terminated.  A plugin without commit() gives
 * OUTBOX_OK.  Out-of-range verdicts become OUTBOX_FAIL.
 */
enum outbox_verdict plugin_instance_commit(struct plugin_instance *inst,
                                           const struct outbox_job *job,
                                           const json_t *output,
                                           struct outbox_tx *tx,
                                           char *err, size_t errlen);

/* Borrowed; live as long as inst. */
const char *plugin_instance_destination(const struct plugin_instance *inst);
const struct outbox_plugin *plugin_instance_descriptor(const struct plugin_instance *inst);

/* Verdict name: "OK", "RETRY", "FAIL" (static string). */
const char *plugin_verdict_name(enum outbox_verdict verdict);

#endif
