/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/dlq.h: the thread body of a destination's dead-letter reader
 * (rule 7 of docs/consumer.md; see consumer/dlq.c).
 */
#ifndef OUTBOX_CORE_CONSUMER_DLQ_H
#define OUTBOX_CORE_CONSUMER_DLQ_H

/* arg: the struct consumer_worker (dlq set) it runs as; returns NULL. */
void *consumer_dlq_main(void *arg);

#endif
