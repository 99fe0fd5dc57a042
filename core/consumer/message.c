/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/message.c: message parsing and the choice the rules of
 * docs/consumer.md make (see consumer/message.h).
 */
#include "consumer/message.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "aws/sqs.h"
#include "common/backoff.h"

static int get_string(json_t *obj, const char *key, char *out, size_t outlen,
                       char *why, size_t whylen)
{
	const char *s = json_string_value(json_object_get(obj, key));

	if (s == NULL || s[0] == '\0') {
		snprintf(why, whylen, "member \"%s\" is missing or not a string", key);
		return -1;
	}
	if (strlen(s) >= outlen) {
		snprintf(why, whylen, "member \"%s\" is too long", key);
		return -1;
	}
	snprintf(out, outlen, "%s", s);
	return 0;
}

static bool is_job_id(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return i == LEDGER_JOB_ID_LEN;
}

static int get_generations(json_t *root, struct consumer_msg *out, char *why, size_t whylen)
{
	json_t *gen = json_object_get(root, "redrive_generation");
	json_t *win = json_object_get(root, "window_generation");

	if (!json_is_integer(gen) || json_integer_value(gen) < 0 ||
	    json_integer_value(gen) > 1000000000) {
		snprintf(why, whylen, "member \"redrive_generation\" is not a non-negative integer");
		return -1;
	}
	out->redrive_generation = (int)json_integer_value(gen);
	if (win == NULL || json_is_null(win))
		return 0;
	if (!json_is_integer(win) || json_integer_value(win) < 1 ||
	    json_integer_value(win) > 1000000000) {
		snprintf(why, whylen, "member \"window_generation\" is not a positive integer");
		return -1;
	}
	out->has_price_window = true;
	out->window_generation = (int)json_integer_value(win);
	return 0;
}

int consumer_message_parse(const char *body, size_t len, struct consumer_msg *out,
                           char *why, size_t whylen)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	char expected[sizeof(out->event_id)];
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (root == NULL || !json_is_object(root)) {
		snprintf(why, whylen, "body is not a JSON object");
		goto out;
	}
	if (get_string(root, "event_id", out->event_id, sizeof(out->event_id), why, whylen) < 0 ||
	    get_string(root, "job_id", out->job_id, sizeof(out->job_id), why, whylen) < 0 ||
	    get_string(root, "job_type", out->job_type, sizeof(out->job_type), why, whylen) < 0 ||
	    get_string(root, "destination", out->destination, sizeof(out->destination),
	               why, whylen) < 0 ||
	    get_generations(root, out, why, whylen) < 0)
		goto out;
	if (!is_job_id(out->job_id)) {
		snprintf(why, whylen, "member \"job_id\" is not 64 lower-case hex digits");
		goto out;
	}
	snprintf(expected, sizeof(expected), "%s:%s:%d", out->job_type, out->job_id,
	         out->redrive_generation);
	if (strcmp(expected, out->event_id) != 0) {
		snprintf(why, whylen, "event_id does not match job_type:job_id:redrive_generation");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

const char *consumer_action_name(enum consumer_action a)
{
	switch (a) {
	case CONSUMER_IGNORE: return "ignore";
	case CONSUMER_DELETE_TERMINAL: return "terminal";
	case CONSUMER_DELETE_OBSOLETE: return "obsolete";
	case CONSUMER_DEFER: return "defer";
	case CONSUMER_LEAVE: return "leave";
	case CONSUMER_CLAIM: return "claim";
	}
	return "unknown";
}

/* Rule 1: does the message belong to this queue and to this job? */
static const char *wiring_problem(const char *queue_destination, const struct consumer_msg *m,
                                  const struct ledger_job *job)
{
	if (strcmp(m->destination, queue_destination) != 0)
		return "message destination differs from the queue's destination";
	if (strcmp(job->destination, m->destination) != 0)
		return "job destination differs from the message's destination";
	if (strcmp(job->job_type, m->job_type) != 0)
		return "job type differs from the message's job type";
	if (m->redrive_generation > job->redrive_generation)
		return "message names a redrive generation the job does not have";
	if (m->has_price_window != job->has_price_window ||
	    (m->has_price_window && m->window_generation != job->window_generation))
		return "message window generation differs from the job's";
	return NULL;
}

enum consumer_action consumer_message_decide(const char *queue_destination,
                                             const struct consumer_msg *m,
                                             const struct ledger_job *job,
                                             int *defer_seconds, const char **why)
{
	*defer_seconds = 0;
	*why = NULL;
	if (job == NULL) {
		*why = "unknown job";
		return CONSUMER_IGNORE;
	}
	*why = wiring_problem(queue_destination, m, job);
	if (*why != NULL)
		return CONSUMER_IGNORE;
	if (job->status == LEDGER_SUCCEEDED || job->status == LEDGER_DEAD)
		return CONSUMER_DELETE_TERMINAL;
	/* An older generation is obsolete whatever the job's timing says. */
	if (m->redrive_generation < job->redrive_generation)
		return CONSUMER_DELETE_OBSOLETE;
	if (job->status == LEDGER_PENDING && job->due_in_seconds > 0) {
		*defer_seconds = consumer_visibility_cap(job->due_in_seconds);
		if (*defer_seconds < 1)
			*defer_seconds = 1;
		return CONSUMER_DEFER;
	}
	if (job->status == LEDGER_CLAIMED && job->lease_live) {
		*why = "job is claimed under a live lease";
		/* Hidden for the rest of the lease: no receive is burnt meanwhile. */
		*defer_seconds = consumer_visibility_cap(job->lease_remaining_seconds);
		if (*defer_seconds < 1)
			*defer_seconds = 1;
		return CONSUMER_LEAVE;
	}
	return CONSUMER_CLAIM;
}

int consumer_backoff_seconds(int base, int max, int attempt)
{
	return (int)backoff_doubling(base > 0 ? base : 1, max, attempt < 1 ? 1 : attempt);
}

int consumer_retry_delay_seconds(const struct cfg *cfg, int attempt, int64_t retry_after_ms)
{
	int max = cfg->relay.retry_max_seconds;

	if (retry_after_ms <= 0)
		return consumer_backoff_seconds(cfg->relay.retry_base_seconds, max, attempt);
	if (retry_after_ms >= (int64_t)max * 1000)
		return max;
	/* Whole seconds, rounded up: never before what the plugin asked. */
	return (int)((retry_after_ms + 999) / 1000);
}

int consumer_visibility_cap(double seconds)
{
	if (!(seconds > 0))
		return 0;
	if (seconds > SQS_MAX_VISIBILITY_TIMEOUT)
		return SQS_MAX_VISIBILITY_TIMEOUT;
	int whole = (int)seconds;

	return (double)whole < seconds ? whole + 1 : whole;
}
