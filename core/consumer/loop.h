/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/loop.h: the thread body of a consumer worker: receive, the
 * pipeline (consumer/batch.h), flush; nothing while paused.
 */
#ifndef OUTBOX_CORE_CONSUMER_LOOP_H
#define OUTBOX_CORE_CONSUMER_LOOP_H

/* arg: the struct consumer_worker it runs as; returns NULL at stop. */
void *consumer_worker_main(void *arg);

#endif
