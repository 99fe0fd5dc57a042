/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/scratch.c: the pipeline's arrays, made once per worker and
 * sized by [consumer] claim_max (consumer/batch.h).
 */
#include "consumer/batch.h"

#include <stdlib.h>

#include "consumer/bjob.h"

struct batch_scratch *consumer_batch_scratch_new(size_t max)
{
	struct batch_scratch *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	max = max > 0 ? max : 1;
	s->max = max;
	s->j = calloc(max, sizeof(*s->j));
	s->returned = calloc(max, sizeof(*s->returned));
	s->reqs = calloc(max, sizeof(*s->reqs));
	s->claims = calloc(max, sizeof(*s->claims));
	s->payloads = calloc(max, sizeof(*s->payloads));
	s->got = calloc(max, sizeof(*s->got));
	s->idx = calloc(max, sizeof(*s->idx));
	s->cl = calloc(max, sizeof(*s->cl));
	s->held = calloc(max, sizeof(*s->held));
	s->ok = calloc(max, sizeof(*s->ok));
	s->no = calloc(max, sizeof(*s->no));
	s->todo = calloc(max, sizeof(*s->todo));
	if (s->j == NULL || s->returned == NULL || s->reqs == NULL || s->claims == NULL ||
	    s->payloads == NULL || s->got == NULL || s->idx == NULL || s->cl == NULL ||
	    s->held == NULL || s->ok == NULL || s->no == NULL || s->todo == NULL) {
		consumer_batch_scratch_free(s);
		return NULL;
	}
	return s;
}

void consumer_batch_scratch_free(struct batch_scratch *s)
{
	if (s == NULL)
		return;
	free(s->j);
	free(s->returned);
	free(s->reqs);
	free(s->claims);
	free(s->payloads);
	free(s->got);
	free(s->idx);
	free(s->cl);
	free(s->held);
	free(s->ok);
	free(s->no);
	free(s->todo);
	free(s);
}
