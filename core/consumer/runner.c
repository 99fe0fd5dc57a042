/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/runner.c: one consumer worker driven by the caller (see
 * consumer/runner.h).  It is a struct consumer with a single worker, no
 * threads and no heartbeat; each delivery goes through the daemon's
 * pipeline (consumer/batch.h) as a batch of one.
 */
#include "consumer/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "consumer/batch.h"
#include "consumer/session.h"
#include "consumer/worker.h"

struct consumer_runner {
	struct consumer c;
	struct consumer_worker w;
};

int consumer_runner_new(const struct cfg *cfg, const struct cfg_destination *dest,
                        struct plugin_instance *inst, const char *claimed_by,
                        const struct consumer_port *port, struct consumer_runner **out)
{
	struct consumer_runner *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (r == NULL)
		return -1;
	pthread_mutex_init(&r->c.lock, NULL);
	if (monotonic_cond_init(&r->c.cond) != 0) {
		pthread_mutex_destroy(&r->c.lock);
		free(r);
		return -1;
	}
	r->c.cfg = cfg;
	r->c.workers = &r->w;
	r->c.n_workers = 1;
	r->w.c = &r->c;
	r->w.dest = dest;
	r->w.inst = inst;
	r->w.port = *port;
	r->w.uses_sqs = false;
	snprintf(r->w.claimed_by, sizeof(r->w.claimed_by), "%s", claimed_by);
	*out = r;
	return 0;
}

void consumer_runner_process(struct consumer_runner *r, const struct sqs_message *m)
{
	/* As the daemon's loop does before a receive: after a database error
	 * the delivery waits for the database (and is left alone if it still
	 * refuses, as a delivery during an outage is). */
	struct sqs_messages one = {(struct sqs_message *)m, 1, NULL};

	if (consumer_worker_gate(&r->w) == 0)
		consumer_batch_process(&r->w, &one);
	consumer_worker_batch_done(&r->w, 1);
}

void consumer_runner_flush(struct consumer_runner *r)
{
	consumer_worker_flush_deletes(&r->w);
}

const struct consumer_counters *consumer_runner_counters(const struct consumer_runner *r)
{
	return &r->w.counters;
}

void consumer_runner_free(struct consumer_runner *r)
{
	if (r == NULL)
		return;
	PQfinish(r->w.conn);
	consumer_batch_scratch_free(r->w.scratch);
	pthread_mutex_destroy(&r->c.lock);
	pthread_cond_destroy(&r->c.cond);
	free(r);
}
