/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/runner.h: the consumer's pipeline without threads or
 * SQS, for programs that deliver messages themselves (outbox-faultbench).
 *
 * A runner is one consumer worker of one destination: its own database
 * connection (made at the first message, statements prepared), its claim
 * identity, the plugin instance, and a message port (consumer/port.h)
 * that receives its deletions and visibility changes.  Every rule of
 * docs/consumer.md and every CAS is the daemon's own code: each delivery
 * goes through the pipeline (consumer/batch.h) as a batch of one.
 *
 *   consumer_runner_new(cfg, dest, inst, "host:pid/dest/0", &port, &r);
 *   consumer_runner_process(r, &msg);      one delivery
 *   consumer_runner_flush(r);              end of a "receive batch"
 *   consumer_runner_free(r);
 *
 * There is no heartbeat: a handler that runs longer than
 * consumer.lease_seconds may be claimed again by another delivery, as the
 * lease allows.  Not thread-safe: one thread drives a runner.
 */
#ifndef OUTBOX_CORE_CONSUMER_RUNNER_H
#define OUTBOX_CORE_CONSUMER_RUNNER_H

#include <stddef.h>

#include "config/config.h"
#include "consumer/counters.h"
#include "common/compiler.h"
#include "plugin/loader.h"
#include "aws/sqs.h"

struct consumer_port;
struct consumer_runner;

/*
 * cfg, dest, inst and port (and what port->ctx points to) are borrowed
 * and must outlive the runner; claimed_by is copied.  Returns 0 and *out
 * (free with consumer_runner_free()), or -1 when out of memory.
 */
int consumer_runner_new(const struct cfg *cfg, const struct cfg_destination *dest,
                        struct plugin_instance *inst, const char *claimed_by,
                        const struct consumer_port *port,
                        struct consumer_runner **out) OUTBOX_MUSTCHECK;

/* One delivery of m (borrowed until the next consumer_runner_flush()). */
void consumer_runner_process(struct consumer_runner *r, const struct sqs_message *m);

/* Flushes queued deletions through the port. */
void consumer_runner_flush(struct consumer_runner *r);

/* Borrowed; valid until consumer_runner_free(). */
const struct consumer_counters *consumer_runner_counters(const struct consumer_runner *r);

/* Closes the connection and frees r; NULL is a no-op. */
void consumer_runner_free(struct consumer_runner *r);

#endif
