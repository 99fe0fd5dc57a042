/*
 * fuzz_message.c: libFuzzer harness for the consumer's message parser and
 * its rule choice (core/consumer/message.c, docs/consumer.md "Per-message
 * rules, in order").
 *
 * A random body rarely names a job, so a harness that looked jobs up by the
 * body would rarely get past rule 1.  Instead the job is derived from the
 * parsed message and perturbed by the first CONTROL_BYTES bytes of the
 * input, so every rule is reached: an unknown job, each kind of mismatch
 * (rule 1), terminal (2), older generation (3), not due (4), live lease
 * (5) and claim (6).  The rest of the input is the body.
 *
 * Input: [status/mismatch byte][generation byte][timing byte][price byte] body...
 * Every outcome is checked against the rules themselves; a violation
 * aborts, which libFuzzer reports as a crash.  With FUZZ_MESSAGE_TRACE set
 * each decision is printed ("action=claim"), so that run-fuzzers.sh can
 * check that the corpus reaches every rule.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer/message.h"

#define CONTROL_BYTES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_message: rule violated: %s\n", what);
		abort();
	}
}

/* The job the message names, as the database would hold it, perturbed by c. */
static void make_job(const struct consumer_msg *m, const uint8_t *c, struct ledger_job *job,
                     char *queue, size_t qlen)
{
	memset(job, 0, sizeof(*job));
	snprintf(job->job_id, sizeof(job->job_id), "%s", m->job_id);
	snprintf(job->job_type, sizeof(job->job_type), "%s", m->job_type);
	snprintf(job->destination, sizeof(job->destination), "%s", m->destination);
	snprintf(queue, qlen, "%s", m->destination);
	job->status = (enum ledger_status)(c[0] & 3);
	switch ((c[0] >> 2) & 7) { /* rule 1 mismatches; 0..2 leave the wiring intact */
	case 3: snprintf(queue, qlen, "%s-other", m->destination); break;
	case 4: snprintf(job->destination, sizeof(job->destination), "x%s", m->destination); break;
	case 5: snprintf(job->job_type, sizeof(job->job_type), "x%s", m->job_type); break;
	default: break;
	}
	/* Generation: equal, older or newer than the message's. */
	job->redrive_generation = m->redrive_generation + (int)(c[1] % 3) - 1;
	if (job->redrive_generation < 0)
		job->redrive_generation = 0;
	job->attempt_count = c[1] >> 2;
	/* Timing: due or not, lease live or expired, fractions and huge values. */
	job->due_in_seconds = (c[2] & 1) ? (double)(c[2] >> 1) * 997.5 : -(double)(c[2] >> 1);
	job->lease_live = job->status == LEDGER_CLAIMED && (c[2] & 2);
	job->lease_remaining_seconds = job->lease_live ? (double)(c[2] >> 2) * 1234.25 : 0;
	/* Price window: as the message says, or not. */
	job->has_price_window = (c[3] & 1) ? !m->has_price_window : m->has_price_window;
	job->window_generation = m->window_generation + ((c[3] & 2) ? 1 : 0);
}

static int wiring_matches(const char *queue, const struct consumer_msg *m,
                          const struct ledger_job *j)
{
	return strcmp(queue, m->destination) == 0 && strcmp(j->destination, m->destination) == 0 &&
	       strcmp(j->job_type, m->job_type) == 0 &&
	       m->redrive_generation <= j->redrive_generation &&
	       m->has_price_window == j->has_price_window &&
	       (!m->has_price_window || m->window_generation == j->window_generation);
}

/* The rules of docs/consumer.md, in order, restated independently. */
static enum consumer_action expected(const char *queue, const struct consumer_msg *m,
                                     const struct ledger_job *j)
{
	if (j == NULL || !wiring_matches(queue, m, j))
		return CONSUMER_IGNORE;
	if (j->status == LEDGER_SUCCEEDED || j->status == LEDGER_DEAD)
		return CONSUMER_DELETE_TERMINAL;
	if (m->redrive_generation < j->redrive_generation)
		return CONSUMER_DELETE_OBSOLETE;
	if (j->status == LEDGER_PENDING && j->due_in_seconds > 0)
		return CONSUMER_DEFER;
	if (j->status == LEDGER_CLAIMED && j->lease_live)
		return CONSUMER_LEAVE;
	return CONSUMER_CLAIM;
}

static void check_decision(const char *queue, const struct consumer_msg *m,
                           const struct ledger_job *j)
{
	int defer = -1;
	const char *why = "unset";
	enum consumer_action a = consumer_message_decide(queue, m, j, &defer, &why);
	static int trace = -1;

	if (trace < 0)
		trace = getenv("FUZZ_MESSAGE_TRACE") != NULL;
	if (trace)
		fprintf(stderr, "action=%s\n", consumer_action_name(a));

	require(a == expected(queue, m, j), "the action is the first rule that applies");
	require(strcmp(consumer_action_name(a), "unknown") != 0, "every action has a name");
	if (a == CONSUMER_DEFER || a == CONSUMER_LEAVE)
		require(defer >= 1 && defer <= 43200, "a delay is 1..43200 s");
	else
		require(defer == 0, "no delay unless deferring or leaving");
	if (a == CONSUMER_IGNORE || a == CONSUMER_LEAVE)
		require(why != NULL && *why != '\0', "ignore and leave say why");
	if (a == CONSUMER_DEFER)
		require(defer >= (int)(j->due_in_seconds > 43200 ? 43200 : j->due_in_seconds),
		        "never due earlier than the job");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t c[CONTROL_BYTES] = {0};
	struct consumer_msg m;
	struct ledger_job job;
	char queue[LEDGER_NAME_MAX + 8];
	char why[256] = "";
	size_t n = size < CONTROL_BYTES ? size : CONTROL_BYTES;

	memcpy(c, data, n);
	if (consumer_message_parse((const char *)data + n, size - n, &m, why, sizeof(why)) < 0) {
		require(why[0] != '\0', "a refused body says why");
		return 0;
	}
	require(strlen(m.job_id) == 64, "a parsed job_id is 64 hex digits");
	require(m.redrive_generation >= 0, "a parsed generation is not negative");
	require(!m.has_price_window || m.window_generation > 0, "a window generation is positive");
	make_job(&m, c, &job, queue, sizeof(queue));
	check_decision(queue, &m, (c[0] & 0x80) ? NULL : &job);
	(void)consumer_backoff_seconds(c[1], c[2] * 100, c[3]);
	require(consumer_visibility_cap(job.due_in_seconds) <= 43200, "visibility is capped");
	return 0;
}
