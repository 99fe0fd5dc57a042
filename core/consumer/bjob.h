/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/bjob.h: the pipeline's data (consumer/batch.c): one delivery of
 * a batch, the batch, and the scratch arrays a worker makes once
 * (consumer/scratch.c).  Only batch.c, complete.c and scratch.c include it.
 */
#ifndef OUTBOX_CORE_CONSUMER_BJOB_H
#define OUTBOX_CORE_CONSUMER_BJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <outbox/plugin.h>

#include "aws/sqs.h"
#include "consumer/ledger.h"
#include "consumer/message.h"
#include "consumer/worker.h"

#define MSG_LEN 1024

/* Where one delivery of the batch is. */
enum bstate {
	B_DONE,  /* decided, ignored or left alone: nothing more to do */
	B_WANT,  /* offered to the next claim */
	B_RULES, /* to the rules (consumer/rules.h) */
	B_WON,   /* claim won; heartbeat slot active until its completion */
};

/* One delivery of the batch. */
struct bjob {
	const struct sqs_message *m;  /* borrowed from the receive batch */
	struct consumer_msg pm;
	enum bstate state;
	bool second;                  /* offered to the claim after the rules */
	bool executed;                /* execute() returned v */
	bool lost;                    /* its claim did not hold at completion */
	bool refused;                 /* commit() returned RETRY or FAIL */
	bool stale_check;             /* price job whose success CAS matched nothing */
	struct ledger_job looked;     /* as the rules read it (the price claim) */
	struct ledger_claim claim;
	char *payload;                /* owned: JSON text */
	json_t *payload_json;         /* owned reference */
	struct outbox_job job;
	enum outbox_verdict v;
	int64_t retry_after_ms;       /* execute()'s, with OUTBOX_RETRY only */
	char msg[MSG_LEN];
	json_t *output;               /* owned reference: execute()'s result */
	int64_t claimed_ms;
};

/* The pipeline's arrays, max entries each, made once per worker. */
struct batch_scratch {
	size_t max;
	struct bjob *j;
	const char **returned;
	struct ledger_batch_req *reqs;
	struct ledger_claim *claims;
	char **payloads;
	bool *got;
	size_t *idx;
	const struct ledger_claim **cl;
	bool *held;
	struct bjob **ok, **no, **todo;
};

struct batch {
	struct consumer_worker *w;
	struct batch_scratch *s;
	struct bjob *j;         /* s->j; n entries, at most [consumer] claim_max */
	size_t n;
	/* job_ids of the runs that returned, in order (borrowed from j[]) */
	const char **returned;
	size_t n_returned;
	/* mark_each(): each run recorded as started and completed on its own */
	bool each;
	/* The worker was abandoned while a handler ran (consumer/control.h):
	 * nothing more of the batch is run, completed or counted. */
	bool abandoned;
	/* A commit() of the current success completion ran a statement */
	bool commit_ran_sql;
};

#endif
