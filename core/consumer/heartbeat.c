/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/heartbeat.c: lease and visibility extension for running handlers (see
 * heartbeat.h and docs/consumer.md, "Leases and heartbeat").
 */
#include "consumer/heartbeat.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws/http.h"
#include "common/clock.h"
#include "consumer/liveness.h"
#include "db/db.h"
#include "common/log.h"
#include "consumer/message.h"
#include "aws/sqs.h"

enum hb_kind { HB_LEASE, HB_VIS, HB_KINDS };

struct hb_slot {
	bool active;
	bool busy[HB_KINDS];        /* a beat of that kind is in progress (lock not held) */
	enum heartbeat_outcome outcome;
	struct ledger_claim claim;
	const char *queue_url;      /* borrowed until heartbeat_end() */
	const char *handles[SQS_MAX_BATCH_ENTRIES]; /* borrowed until heartbeat_end() */
	size_t n_handles;
	int64_t next_ms[HB_KINDS];
	int64_t started_ms;         /* execute() began (heartbeat_running); 0: waiting */
	int time_limit_s;           /* 0: none */
	const char *destination;    /* borrowed until heartbeat_end() */
	bool warned;                /* the long-run warning was logged */
	bool expired;               /* in a round's copy: past the time limit */
	bool abandoned;             /* heartbeat_abandon(): release, never beat */
};

struct hb_thread {
	struct heartbeat *hb;
	enum hb_kind kind;
	pthread_t thread;
	bool running;
	size_t *due;                /* owned; n_slots indexes of this round */
	struct hb_slot *copies;     /* owned; n_slots copies of this round */
	enum heartbeat_outcome *out; /* owned; n_slots outcomes of this round */
};

struct heartbeat {
	const struct cfg *cfg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	int interval_ms;
	struct hb_slot *slots;
	size_t n_slots;
	struct hb_thread threads[HB_KINDS];
	PGconn *conn;          /* the lease thread's, then release_all's */
	struct aws_http *sqs;  /* the visibility thread's, then release_all's */
};

static PGconn *hb_conn(struct heartbeat *hb)
{
	char err[512];

	if (hb->conn != NULL && db_connection_lost(hb->conn)) {
		PQfinish(hb->conn);
		hb->conn = NULL;
	}
	if (hb->conn != NULL)
		return hb->conn;
	hb->conn = db_connect(hb->cfg->database.conninfo, "outboxd consumer heartbeat",
	                      err, sizeof(err));
	/* The connection that keeps the leases also says the process lives
	 * (consumer/liveness.h): when it goes, both go. */
	if (hb->conn != NULL && (ledger_prepare(hb->conn, err, sizeof(err)) < 0 ||
	                         liveness_hold(hb->conn, err, sizeof(err)) < 0)) {
		PQfinish(hb->conn);
		hb->conn = NULL;
	}
	if (hb->conn == NULL)
		log_warning("heartbeat could not connect to the database: %s", err);
	return hb->conn;
}

/* A handler past its time limit: its claim is recorded as a RETRY (the
 * event re-armed in the same statement); the slot is released. */
static enum heartbeat_outcome expire(struct heartbeat *hb, PGconn *conn, const struct hb_slot *s)
{
	const struct cfg *cfg = hb->cfg;
	int delay = consumer_backoff_seconds(cfg->relay.retry_base_seconds,
	                                     cfg->relay.retry_max_seconds, s->claim.attempt_count);
	char why[128], err[512];
	bool rearmed;
	int rc;

	snprintf(why, sizeof(why), "the handler exceeded its time limit of %d s", s->time_limit_s);
	rc = ledger_retry(conn, &s->claim, delay, why, &rearmed, err, sizeof(err));
	if (rc < 0) {
		log_warning("could not give up on a handler past its time limit: %s job_id=%s", err,
		            s->claim.job_id);
		return HEARTBEAT_KEPT; /* tried again next interval; the lease is not extended */
	}
	if (rc == 0)
		return HEARTBEAT_LOST;
	log_warning("handler exceeded its time limit of %d s; the job is retried in %d s and"
	            " the handler's result will be discarded dest=%s job_id=%s", s->time_limit_s,
	            delay, s->destination, s->claim.job_id);
	return HEARTBEAT_RELEASED;
}

/* A claim of an abandoned worker's batch, waiting behind its hung
 * handler: back to PENDING, due now. */
static enum heartbeat_outcome give_back(PGconn *conn, const struct hb_slot *s)
{
	char err[512];
	int rc = ledger_release(conn, &s->claim, err, sizeof(err));

	if (rc < 0) {
		log_warning("could not release the claim of a job waiting behind an abandoned"
		            " handler: %s job_id=%s", err, s->claim.job_id);
		return HEARTBEAT_KEPT; /* tried again next interval */
	}
	if (rc == 1)
		log_warning("claim released: the job waited behind an abandoned handler job_id=%s",
		            s->claim.job_id);
	return rc == 1 ? HEARTBEAT_RELEASED : HEARTBEAT_LOST;
}

/* Lease beat for a copy of a slot; returns the outcome for the slot. */
static enum heartbeat_outcome lease_beat(struct heartbeat *hb, const struct hb_slot *s)
{
	PGconn *conn = hb_conn(hb);
	char err[512];
	int rc;

	if (conn == NULL)
		return HEARTBEAT_KEPT; /* try again next interval */
	if (s->abandoned)
		return give_back(conn, s);
	if (s->expired)
		return expire(hb, conn, s);
	rc = ledger_extend_lease(conn, &s->claim, hb->cfg->consumer.lease_seconds, err,
	                         sizeof(err));
	if (rc < 0) {
		log_warning("could not extend the lease: %s job_id=%s", err, s->claim.job_id);
		return HEARTBEAT_KEPT;
	}
	if (rc == 0) {
		log_warning("lost the claim while the handler runs job_id=%s", s->claim.job_id);
		return HEARTBEAT_LOST;
	}
	return HEARTBEAT_KEPT;
}

/* Visibility beat: the job's message and the batch's waiting messages. */
static void visibility_beat(struct heartbeat *hb, const struct hb_slot *s)
{
	struct sqs_handle_entry e[SQS_MAX_BATCH_ENTRIES];
	struct sqs_entry_result results[SQS_MAX_BATCH_ENTRIES];
	static const char *const ids[SQS_MAX_BATCH_ENTRIES] = {"0", "1", "2", "3", "4",
	                                                       "5", "6", "7", "8", "9"};
	int vis = hb->cfg->consumer.visibility_timeout_seconds;
	struct aws_result res;
	int rc;

	if (s->n_handles == 1) {
		rc = sqs_change_message_visibility(hb->sqs, s->queue_url, s->handles[0], vis, &res);
	} else {
		for (size_t i = 0; i < s->n_handles; i++)
			e[i] = (struct sqs_handle_entry){ids[i], s->handles[i], vis};
		rc = sqs_change_message_visibility_batch(hb->sqs, s->queue_url, e, s->n_handles,
		                                         results, &res);
		for (size_t i = 0; rc == 0 && i < s->n_handles; i++) {
			if (!results[i].ok)
				log_warning("could not extend a message visibility: %s %s job_id=%s",
				            results[i].code, results[i].message, s->claim.job_id);
		}
	}
	if (rc < 0)
		log_warning("could not extend the message visibility: %s %s job_id=%s",
		            res.code, res.message, s->claim.job_id);
}

/* Lease thread, lock held: the long-run warning, and whether the slot's
 * handler is past its time limit (s->expired, for this round's copy). */
static void check_run_time(struct hb_slot *s, int64_t now)
{
	int64_t ran = s->started_ms > 0 ? now - s->started_ms : 0;
	int64_t warn_ms = s->time_limit_s > 0 ? (int64_t)s->time_limit_s * 500
	                                      : (int64_t)HEARTBEAT_LONG_RUN_SECONDS * 1000;

	s->expired = s->time_limit_s > 0 && ran >= (int64_t)s->time_limit_s * 1000;
	if (s->started_ms == 0 || s->warned || ran < warn_ms)
		return;
	s->warned = true;
	if (s->time_limit_s > 0)
		log_warning("handler has been running for %lld s; its time limit is %d s dest=%s"
		            " job_id=%s", (long long)(ran / 1000), s->time_limit_s, s->destination,
		            s->claim.job_id);
	else
		log_warning("handler has been running for %lld s; it has no time limit dest=%s"
		            " job_id=%s", (long long)(ran / 1000), s->destination, s->claim.job_id);
}

/* Marks every slot due for kind busy and copies it; lock held.  Returns
 * how many (their indexes in t->due, copies in t->copies). */
static size_t take_due(struct hb_thread *t, int64_t now)
{
	struct heartbeat *hb = t->hb;
	size_t n = 0;

	for (size_t i = 0; i < hb->n_slots; i++) {
		struct hb_slot *s = &hb->slots[i];

		if (s->active && !s->busy[t->kind] && s->outcome == HEARTBEAT_KEPT &&
		    s->next_ms[t->kind] <= now && !(s->abandoned && t->kind == HB_VIS)) {
			if (t->kind == HB_LEASE)
				check_run_time(s, now);
			s->busy[t->kind] = true;
			t->copies[n] = *s;
			t->due[n++] = i;
		}
	}
	return n;
}

static void wait_tick(struct heartbeat *hb)
{
	struct timespec until;

	monotonic_deadline(&until, 200);
	pthread_cond_timedwait(&hb->cond, &hb->lock, &until);
}

/* Under the lock: the slot of the thread's i-th due beat is free again,
 * with the beat's outcome. */
static void slot_done(struct heartbeat *hb, struct hb_thread *t, size_t i)
{
	struct hb_slot *s = &hb->slots[t->due[i]];

	s->busy[t->kind] = false;
	if (s->outcome == HEARTBEAT_KEPT)
		s->outcome = t->out[i];
	s->next_ms[t->kind] = now_ms() + hb->interval_ms;
	pthread_cond_broadcast(&hb->cond);
}

/* One thread per kind: leases first for every due slot, never behind SQS. */
static void *hb_main(void *arg)
{
	struct hb_thread *t = arg;
	struct heartbeat *hb = t->hb;
	enum heartbeat_outcome *out = t->out;

	/* Connected (and the liveness lock held) before any handler runs,
	 * when the database is there; else at the first beat. */
	if (t->kind == HB_LEASE)
		(void)hb_conn(hb);
	pthread_mutex_lock(&hb->lock);
	while (!hb->stop) {
		size_t n = take_due(t, now_ms());

		if (n == 0) {
			wait_tick(hb);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			/* Each slot is given back right after its own beat, so a
			 * heartbeat_end() waits for one beat, not the round. */
			pthread_mutex_unlock(&hb->lock);
			out[i] = HEARTBEAT_KEPT;
			if (t->kind == HB_LEASE)
				out[i] = lease_beat(hb, &t->copies[i]);
			else
				visibility_beat(hb, &t->copies[i]);
			pthread_mutex_lock(&hb->lock);
			slot_done(hb, t, i);
		}
	}
	pthread_mutex_unlock(&hb->lock);
	return NULL;
}

static int start_threads(struct heartbeat *hb)
{
	for (int k = 0; k < HB_KINDS; k++) {
		struct hb_thread *t = &hb->threads[k];

		t->hb = hb;
		t->kind = (enum hb_kind)k;
		t->due = calloc(hb->n_slots ? hb->n_slots : 1, sizeof(*t->due));
		t->copies = calloc(hb->n_slots ? hb->n_slots : 1, sizeof(*t->copies));
		t->out = calloc(hb->n_slots ? hb->n_slots : 1, sizeof(*t->out));
		if (t->due == NULL || t->copies == NULL || t->out == NULL) {
			log_error("out of memory");
			return -1;
		}
		if (pthread_create(&t->thread, NULL, hb_main, t) != 0) {
			log_error("could not start a heartbeat thread");
			return -1;
		}
		t->running = true;
	}
	return 0;
}

int heartbeat_start(const struct cfg *cfg, const struct aws_env *env, size_t n_slots,
                    struct heartbeat **out)
{
	struct heartbeat *hb = calloc(1, sizeof(*hb));
	int shortest;

	*out = NULL;
	if (hb == NULL)
		goto fail;
	hb->slots = calloc(n_slots ? n_slots : 1, sizeof(*hb->slots));
	if (hb->slots == NULL)
		goto fail;
	hb->cfg = cfg;
	hb->n_slots = n_slots;
	shortest = cfg->consumer.lease_seconds < cfg->consumer.visibility_timeout_seconds
	               ? cfg->consumer.lease_seconds
	               : cfg->consumer.visibility_timeout_seconds;
	hb->interval_ms = shortest * 1000 / 3 < 500 ? 500 : shortest * 1000 / 3;
	pthread_mutex_init(&hb->lock, NULL);
	if (monotonic_cond_init(&hb->cond) != 0) {
		log_error("could not create the heartbeat's condition variable");
		pthread_mutex_destroy(&hb->lock);
		free(hb->slots);
		free(hb);
		return -1;
	}
	if (aws_http_new(env, AWS_SERVICE_SQS, &hb->sqs) < 0) {
		log_error("could not create the heartbeat's SQS client");
		goto fail;
	}
	/* A slow SQS must not hold a visibility beat (and heartbeat_end()) long. */
	aws_http_set_timeouts(hb->sqs, HEARTBEAT_SQS_TIMEOUT_MS / 3, HEARTBEAT_SQS_TIMEOUT_MS);
	if (start_threads(hb) < 0)
		goto fail;
	*out = hb;
	return 0;
fail:
	if (hb == NULL || hb->slots == NULL)
		log_error("out of memory");
	heartbeat_free(hb);
	return -1;
}

void heartbeat_begin(struct heartbeat *hb, size_t slot, const struct heartbeat_job *job)
{
	size_t n = job->n_handles < SQS_MAX_BATCH_ENTRIES ? job->n_handles : SQS_MAX_BATCH_ENTRIES;

	pthread_mutex_lock(&hb->lock);
	struct hb_slot *s = &hb->slots[slot];
	s->active = true;
	s->outcome = HEARTBEAT_KEPT;
	s->claim = *job->claim;
	s->queue_url = job->queue_url;
	for (size_t i = 0; i < n; i++)
		s->handles[i] = job->handles[i];
	s->n_handles = n;
	/* The claim just set the lease; the messages are due one interval
	 * after their receive, which may be now. */
	s->next_ms[HB_LEASE] = now_ms() + hb->interval_ms;
	s->next_ms[HB_VIS] = job->received_ms + hb->interval_ms;
	s->started_ms = 0;
	s->time_limit_s = 0;
	s->destination = NULL;
	s->warned = false;
	s->expired = false;
	s->abandoned = false;
	pthread_cond_broadcast(&hb->cond);
	pthread_mutex_unlock(&hb->lock);
}

void heartbeat_running(struct heartbeat *hb, size_t slot, int time_limit_seconds,
                       const char *destination)
{
	pthread_mutex_lock(&hb->lock);
	struct hb_slot *s = &hb->slots[slot];
	s->started_ms = now_ms();
	s->time_limit_s = time_limit_seconds;
	s->destination = destination;
	pthread_mutex_unlock(&hb->lock);
}

void heartbeat_carry(struct heartbeat *hb, size_t slot, const char *const *handles, size_t n)
{
	pthread_mutex_lock(&hb->lock);
	struct hb_slot *s = &hb->slots[slot];
	for (size_t i = 0; s->active && i < n && s->n_handles < SQS_MAX_BATCH_ENTRIES; i++)
		s->handles[s->n_handles++] = handles[i];
	pthread_mutex_unlock(&hb->lock);
}

enum heartbeat_outcome heartbeat_end(struct heartbeat *hb, size_t slot)
{
	enum heartbeat_outcome out;

	pthread_mutex_lock(&hb->lock);
	struct hb_slot *s = &hb->slots[slot];
	while (s->busy[HB_LEASE] || s->busy[HB_VIS])
		pthread_cond_wait(&hb->cond, &hb->lock);
	out = s->outcome;
	s->active = false;
	s->queue_url = NULL;
	s->n_handles = 0;
	pthread_mutex_unlock(&hb->lock);
	return out;
}

int64_t heartbeat_abandon_after_ms(int time_limit_seconds)
{
	int64_t limit = (int64_t)time_limit_seconds * 1000;
	int64_t grace = limit / 10 > HEARTBEAT_ABANDON_GRACE_MIN_SECONDS * 1000
	                    ? limit / 10 : HEARTBEAT_ABANDON_GRACE_MIN_SECONDS * 1000;

	return time_limit_seconds > 0 ? limit + grace : 0;
}

bool heartbeat_overdue(struct heartbeat *hb, size_t slot, char *job_id, size_t len)
{
	bool overdue;

	pthread_mutex_lock(&hb->lock);
	const struct hb_slot *s = &hb->slots[slot];
	overdue = s->active && s->started_ms > 0 && s->time_limit_s > 0 &&
	          s->outcome != HEARTBEAT_KEPT &&
	          now_ms() - s->started_ms >= heartbeat_abandon_after_ms(s->time_limit_s);
	if (overdue)
		snprintf(job_id, len, "%s", s->claim.job_id);
	pthread_mutex_unlock(&hb->lock);
	return overdue;
}

void heartbeat_abandon(struct heartbeat *hb, size_t first, size_t n)
{
	pthread_mutex_lock(&hb->lock);
	for (size_t i = first; i < first + n && i < hb->n_slots; i++) {
		struct hb_slot *s = &hb->slots[i];

		/* The receipt handles belong to the abandoned thread's batch,
		 * which it frees as soon as its handler returns: no beat may
		 * hold them past this point (the visibility thread skips
		 * abandoned slots from now on), and the slot forgets them.
		 * Its messages reappear when their visibility runs out. */
		while (s->busy[HB_VIS])
			pthread_cond_wait(&hb->cond, &hb->lock);
		s->abandoned = true;
		s->n_handles = 0;
		/* A slot of the abandoned batch is never ended: it stays
		 * active, so the shutdown's release_all() still sees a claim
		 * the lease thread has not given back yet. */
	}
	pthread_cond_broadcast(&hb->cond);
	pthread_mutex_unlock(&hb->lock);
}

enum heartbeat_outcome heartbeat_outcome(struct heartbeat *hb, size_t slot)
{
	enum heartbeat_outcome out;

	pthread_mutex_lock(&hb->lock);
	out = hb->slots[slot].outcome;
	pthread_mutex_unlock(&hb->lock);
	return out;
}

static void stop_threads(struct heartbeat *hb)
{
	pthread_mutex_lock(&hb->lock);
	hb->stop = true;
	pthread_cond_broadcast(&hb->cond);
	pthread_mutex_unlock(&hb->lock);
	for (int k = 0; k < HB_KINDS; k++) {
		if (hb->threads[k].running)
			pthread_join(hb->threads[k].thread, NULL);
		hb->threads[k].running = false;
	}
}

/* Gives one claim back; lock held (the threads are stopped, so no beat
 * runs).  When the message cannot be made visible, the job's outbox event
 * is re-armed so that the job has a message again. */
static bool release_one(struct heartbeat *hb, struct hb_slot *s)
{
	PGconn *conn = hb_conn(hb);
	struct aws_result res;
	char err[512];
	int rc = conn != NULL ? ledger_release(conn, &s->claim, err, sizeof(err)) : -1;

	if (rc < 0)
		log_error("could not release the claim; it is retried when its lease expires"
		          " job_id=%s", s->claim.job_id);
	if (rc != 1)
		return false;
	log_warning("handler did not finish within the shutdown grace period;"
	            " claim released job_id=%s", s->claim.job_id);
	/* An abandoned batch's slot has no handles any more; its message
	 * reappears when its visibility runs out (nothing extends it). */
	if (s->n_handles == 0)
		return true;
	if (sqs_change_message_visibility(hb->sqs, s->queue_url, s->handles[0], 0, &res) == 0)
		return true;
	log_warning("could not make the message visible again: %s %s job_id=%s",
	            res.code, res.message, s->claim.job_id);
	rc = ledger_rearm_event(conn, s->claim.job_id, s->claim.redrive_generation,
	                        "republished: the released claim's message could not be made"
	                        " visible again", err, sizeof(err));
	if (rc < 0)
		log_error("could not re-arm the outbox event; the job waits for a redrive: %s"
		          " job_id=%s", err, s->claim.job_id);
	else if (rc == 1)
		log_warning("outbox event re-armed: the relay publishes the job again job_id=%s",
		            s->claim.job_id);
	return true;
}

size_t heartbeat_release_all(struct heartbeat *hb)
{
	size_t n = 0;

	stop_threads(hb);
	pthread_mutex_lock(&hb->lock);
	for (size_t i = 0; i < hb->n_slots; i++) {
		struct hb_slot *s = &hb->slots[i];

		if (!s->active || s->outcome != HEARTBEAT_KEPT)
			continue;
		if (release_one(hb, s))
			n++;
		/* Released or not, the worker must not complete it any more. */
		s->outcome = HEARTBEAT_RELEASED;
	}
	pthread_mutex_unlock(&hb->lock);
	return n;
}

void heartbeat_free(struct heartbeat *hb)
{
	if (hb == NULL)
		return;
	if (hb->slots != NULL)
		stop_threads(hb);
	for (int k = 0; k < HB_KINDS; k++) {
		free(hb->threads[k].due);
		free(hb->threads[k].copies);
		free(hb->threads[k].out);
	}
	PQfinish(hb->conn);
	aws_http_free(hb->sqs);
	if (hb->slots != NULL) {
		pthread_mutex_destroy(&hb->lock);
		pthread_cond_destroy(&hb->cond);
	}
	free(hb->slots);
	free(hb);
}
