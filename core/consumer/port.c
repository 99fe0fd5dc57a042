/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/port.c: the SQS message port (see consumer/port.h).
 */
#include "consumer/port.h"

#include <stdio.h>

#include "consumer/message.h"
#include "common/log.h"

static void sqs_flush(void *ctx)
{
	struct consumer_sqs_port *p = ctx;
	struct sqs_entry_result results[SQS_MAX_BATCH_ENTRIES];
	struct aws_result res;
	int rc;

	if (p->n_del == 0)
		return;
	p->requests++;
	if (p->n_del == 1)
		rc = sqs_delete_message(p->sqs, p->queue_url, p->del[0].receipt_handle, &res);
	else
		rc = sqs_delete_message_batch(p->sqs, p->queue_url, p->del, p->n_del, results, &res);
	if (rc < 0)
		log_warning("could not delete %zu message(s): %s %s dest=%s", p->n_del, res.code,
		            res.message, p->dest);
	for (size_t i = 0; rc == 0 && p->n_del > 1 && i < p->n_del; i++) {
		if (!results[i].ok)
			log_warning("could not delete a message: %s %s dest=%s", results[i].code,
			            results[i].message, p->dest);
	}
	p->n_del = 0;
}

static void sqs_delete(void *ctx, const struct sqs_message *m)
{
	struct consumer_sqs_port *p = ctx;

	if (p->n_del == SQS_MAX_BATCH_ENTRIES)
		sqs_flush(p);
	snprintf(p->del_ids[p->n_del], sizeof(p->del_ids[p->n_del]), "%zu", p->n_del);
	p->del[p->n_del].id = p->del_ids[p->n_del];
	p->del[p->n_del].receipt_handle = m->receipt_handle;
	p->del[p->n_del].visibility_timeout = 0;
	p->n_del++;
	p->deletes++;
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
                            const char *queue_url, const char *dest,
                            struct consumer_port *port)
{
	p->sqs = sqs;
	p->queue_url = queue_url;
	p->dest = dest;
	p->n_del = 0;
	p->deletes = 0;
	p->requests = 0;
	port->ops = &sqs_ops;
	port->ctx = p;
}
