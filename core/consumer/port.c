/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/port.c: the SQS message port (see consumer/port.h).
 */
#include "consumer/port.h"

#include "consumer/delete_pool.h"
#include "consumer/message.h"

static void sqs_flush(void *ctx)
{
	struct consumer_sqs_port *p = ctx;

	p->requests += delete_send(p->sqs, p->queue_url, p->dest, p->del, p->n_del);
	p->n_del = 0;
}

static void sqs_delete(void *ctx, const struct sqs_message *m)
{
	struct consumer_sqs_port *p = ctx;

	p->deletes++;
	if (p->pool != NULL && p->sqs != NULL) {
		delete_pool_add(p->pool, p->sqs, m->receipt_handle);
		return;
	}
	if (p->n_del == SQS_MAX_BATCH_ENTRIES)
		sqs_flush(p);
	p->del[p->n_del++] = m->receipt_handle;
}

static int sqs_visibility(void *ctx, const struct sqs_message *m, int seconds,
                          struct aws_result *res)
{
	struct consumer_sqs_port *p = ctx;

	p->requests++;
	return sqs_change_message_visibility(p->sqs, p->queue_url, m->receipt_handle,
	                                     consumer_visibility_cap(seconds), res);
}

static const struct consumer_port_ops sqs_ops = {
	sqs_delete,
	sqs_flush,
	sqs_visibility,
};

void consumer_sqs_port_init(struct consumer_sqs_port *p, struct aws_http *sqs,
                            const char *queue_url, const char *dest, struct delete_pool *pool,
                            struct consumer_port *port)
{
	p->sqs = sqs;
	p->queue_url = queue_url;
	p->dest = dest;
	p->pool = pool;
	p->n_del = 0;
	p->deletes = 0;
	p->requests = 0;
	port->ops = &sqs_ops;
	port->ctx = p;
}
