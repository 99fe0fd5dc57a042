/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/counters.h: what one consumer worker did, message by message.
 * Each worker's thread writes its own; outbox-faultbench reads a runner's
 * after it stopped (consumer_runner_counters()).
 */
#ifndef OUTBOX_CORE_CONSUMER_COUNTERS_H
#define OUTBOX_CORE_CONSUMER_COUNTERS_H

struct consumer_counters {
	unsigned long deliveries;       /* messages processed */
	unsigned long ignored;          /* rule 1: left alone, not deleted */
	unsigned long terminal_skips;   /* rule 2: job terminal, message deleted */
	unsigned long obsolete_deletes; /* older redrive generation, deleted */
	unsigned long deferred;         /* not due: visibility moved */
	unsigned long left;             /* live lease elsewhere, or claim lost */
	unsigned long claims;           /* claim CAS won */
	unsigned long handler_runs;     /* execute() called */
	unsigned long succeeded;        /* completion committed: SUCCEEDED */
	unsigned long retried;          /* back to PENDING */
	unsigned long failed;           /* DEAD PERMANENT */
	unsigned long stale;            /* price job DEAD STALE */
	unsigned long lost_claims;      /* a completion CAS matched nothing */
	unsigned long db_errors;        /* a statement failed; the message was left */
	unsigned long rearmed;          /* outbox event back to NEW: message not movable */
};

#endif
