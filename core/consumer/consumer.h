/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/consumer.h: the consumer loop (docs/consumer.md) and the database/S3
 * services it lends to plugins.
 *
 * Startup order in outboxd:
 *   consumer_services_create(cfg, &svc);
 *   plugin instances are created with consumer_services_table(svc);
 *   consumer_start(cfg, svc, instances, n, id, &c);
 *   ... SIGTERM ...
 *   consumer_stop(c);                  stop receiving, finish or release work
 *   destroy the plugin instances; consumer_services_free(svc);
 */
#ifndef OUTBOX_CORE_CONSUMER_CONSUMER_H
#define OUTBOX_CORE_CONSUMER_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "common/compiler.h"
#include "plugin/host.h"
#include "plugin/loader.h"

struct consumer_services;
struct consumer;

/* cfg borrowed, must outlive svc.  Returns 0 and *out (free with
 * consumer_services_free()), or -1 with the reason logged. */
int consumer_services_create(const struct cfg *cfg, struct consumer_services **out) OUTBOX_MUSTCHECK;
/* Borrowed; valid until consumer_services_free(). */
const struct plugin_host_services *consumer_services_table(struct consumer_services *svc);
void consumer_services_free(struct consumer_services *svc);

/*
 * Start the workers.  instances[i] (borrowed, may not be NULL) is the
 * plugin instance of cfg->destinations[i]; n == cfg->n_destinations.
 * instance_id (copied) prefixes claimed_by.  Returns 0 and *out, or -1.
 */
int consumer_start(const struct cfg *cfg, struct consumer_services *svc,
                   struct plugin_instance *const *instances, size_t n,
                   const char *instance_id, struct consumer **out) OUTBOX_MUSTCHECK;

/*
 * A worker whose thread is still inside execute() past the destination's
 * handler_timeout_seconds plus the abandon grace (the job recorded RETRY
 * already) is abandoned and replaced by a fresh worker (docs/consumer.md,
 * "Time limits").  The CONSUMER_MAX_ABANDONED-th abandoned worker of the
 * process -- or the first of a plugin without OUTBOX_PLUGIN_CONCURRENT,
 * whose replacement would only wait for the same hung call -- stops the
 * process instead (SIGTERM to itself: the graceful stop), which then
 * exits CONSUMER_EXIT_ABANDONED for its service manager to restart it.
 */
#define CONSUMER_MAX_ABANDONED 3
#define CONSUMER_EXIT_ABANDONED 1

/* 0, or CONSUMER_EXIT_ABANDONED once a consumer asked the process to stop
 * for that reason: the process's exit status. */
int consumer_exit_status(void);

/* After the grace period and the release of the claims still running:
 * how long handlers get to return before the process exits anyway. */
#define CONSUMER_RELEASE_WAIT_SECONDS 5

/*
 * Stop receiving; let running handlers finish within
 * consumer.shutdown_grace_seconds, release the claims of those that do not
 * (back to PENDING, message made visible); join and free c.  NULL is a no-op.
 * When a handler has not returned CONSUMER_RELEASE_WAIT_SECONDS after its
 * claim was released, or an abandoned worker's handler is still running
 * once the other workers are joined, the process exits
 * (consumer_exit_status()) from here: a handler thread that never returns
 * cannot be joined, and its claim is given back already.
 */
void consumer_stop(struct consumer *c);

/* consumer_stop() of cs[0..n-1] (NULLs skipped) at once: one grace period
 * for all, then one release wait; every cs[i] is NULL afterwards. */
void consumer_stop_all(struct consumer **cs, size_t n);

/*
 * consumer_stop() for a destination removed or changed by a reload: the
 * same, except that a handler still running after the release wait (or
 * an abandoned one) does not end the process: c is left behind (its threads keep running until
 * the handler returns; nothing is freed) and false is returned, so the
 * caller must not destroy what c borrows (its plugin instance).  True
 * when c was stopped and freed.  NULL: true.
 */
bool consumer_drain(struct consumer *c);

#endif
