/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/host.h: the services table plugins get (struct outbox_host) and the
 * per-instance context behind it (struct outbox_ctx).
 *
 * log, the option getters and now_ms are implemented here.  The database
 * and S3 services (artifact_get, query, tx_exec, tx_enqueue) belong to the
 * consumer: it fills a struct plugin_host_services and passes it when it
 * creates instances (plugin/loader.h).  Without one, those four services
 * answer -1 with "not available", which is what --check-config wants.
 */
#ifndef OUTBOX_CORE_PLUGIN_HOST_H
#define OUTBOX_CORE_PLUGIN_HOST_H

#include <outbox/plugin.h>

#include "common/compiler.h"
#include "plugin/options.h"

/*
 * The consumer's side of the database/S3 services.  Each member mirrors the
 * outbox_host member of the same name (see include/outbox/plugin.h for
 * arguments and ownership) with the opaque pointer first; ctx says which
 * destination asks (plugin_ctx_destination()).  For tx_exec/tx_enqueue the
 * host has already checked that tx is the transaction of the commit() call
 * in progress on this thread.  Any member may be NULL ("not available").
 * Members are called from worker threads, concurrently for different
 * instances.
 */
struct plugin_host_services {
	void *opaque; /* borrowed; must outlive every instance using it */
	int (*artifact_get)(void *opaque, const struct outbox_ctx *ctx, const char *key,
	                    char **data, size_t *len, char *err, size_t errlen);
	int (*query)(void *opaque, const struct outbox_ctx *ctx, const char *sql,
	             int nparams, const char *const *params, json_t **rows,
	             char *err, size_t errlen);
	int (*tx_exec)(void *opaque, const struct outbox_ctx *ctx, struct outbox_tx *tx,
	               const char *sql, int nparams, const char *const *params,
	               json_t **rows, char *err, size_t errlen);
	int (*tx_enqueue)(void *opaque, const struct outbox_ctx *ctx, struct outbox_tx *tx,
	                  const char *job_type, const char *destination,
	                  const json_t *identity, const json_t *payload,
	                  char *job_id_out, char *err, size_t errlen);
};

/* Host-owned state of one instance; plugins only ever see a pointer. */
struct outbox_ctx {
	char *destination;                    /* owned */
	char *plugin;                         /* owned */
	struct plugin_options options;        /* owned */
	struct plugin_host_services services; /* copy; all NULL when none given */
};

/*
 * Build a context.  destination and plugin are copied; on success options
 * is moved in (left empty; the context frees it), on failure the caller
 * still owns it.  services (borrowed, may be NULL) is copied.  Returns 0 and
 * *out (caller frees with plugin_ctx_free()), or -1 on out of memory.
 */
int plugin_ctx_create(const char *destination, const char *plugin,
                      struct plugin_options *options,
                      const struct plugin_host_services *services,
                      struct outbox_ctx **out) OUTBOX_MUSTCHECK;
void plugin_ctx_free(struct outbox_ctx *ctx);

/* Borrowed; lives as long as ctx. */
const char *plugin_ctx_destination(const struct outbox_ctx *ctx);

/* The table passed to every init(); static, never freed. */
const struct outbox_host *plugin_host_table(void);

/*
 * What the calling thread is doing inside a plugin, for the log prefix and
 * to confine tx_* services to the commit() in progress.  plugin_call_enter()
 * saves the previous state in *saved; plugin_call_leave() restores it.
 * job_id and tx are borrowed for the duration of the call (may be NULL).
 */
/* "00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>" */
#define OUTBOX_TRACEPARENT_LEN 55

struct plugin_call_state {
	const struct outbox_ctx *ctx;
	const char *job_id;
	struct outbox_tx *tx;
};

void plugin_call_enter(const struct outbox_ctx *ctx, const char *job_id,
                       struct outbox_tx *tx, struct plugin_call_state *saved);
void plugin_call_leave(const struct plugin_call_state *saved);

/*
 * The W3C trace context of the job this thread runs next, shown as
 * "traceparent=..." in the lines a plugin logs inside calls until it is
 * set again (NULL: none).  Copied; anything but a well-formed
 * "vv-<32 hex>-<16 hex>-ff" is ignored, so a message cannot forge log text.
 */
void plugin_call_set_trace(const char *traceparent);

#endif
