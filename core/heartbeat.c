/*
 * heartbeat.c: lease and visibility extension for running handlers (see
 * heartbeat.h and docs/consumer.md, "Leases and heartbeat").
 */
#include "heartbeat.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws_http.h"
#include "db.h"
#include "sqs.h"

struct hb_slot {
	bool active;
	bool busy;                  /* a beat is in progress (lock not held) */
	enum heartbeat_outcome outcome;
	struct ledger_claim claim;
	const char *queue_url;      /* borrowed until heartbeat_end() */
	const char *receipt_handle; /* borrowed until heartbeat_end() */
	int64_t next_ms;
};

struct heartbeat {
	const struct cfg *cfg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	bool running;
	pthread_t thread;
	int interval_ms;
	struct hb_slot *slots;
	size_t n_slots;
	PGconn *conn;          /* used by the thread only, then by release_all */
	struct aws_http *sqs;  /* likewise */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
	if (hb->conn != NULL && ledger_prepare(hb->conn, err, sizeof(err)) < 0) {
		PQfinish(hb->conn);
		hb->conn = NULL;
	}
	if (hb->conn == NULL)
		log_warning("heartbeat could not connect to the database: %s", err);
	return hb->conn;
}

/* One beat for a copy of a slot; returns the outcome for the slot. */
static enum heartbeat_outcome beat(struct heartbeat *hb, const struct hb_slot *s)
{
	const struct cfg *cfg = hb->cfg;
	PGconn *conn = hb_conn(hb);
	struct aws_result res;
	char err[512];
	int rc;

	if (conn == NULL)
		return HEARTBEAT_KEPT; /* try again next interval */
	rc = ledger_extend_lease(conn, &s->claim, cfg->consumer.lease_seconds, err, sizeof(err));
	if (rc < 0) {
		log_warning("could not extend the lease: %s job_id=%s", err, s->claim.job_id);
		return HEARTBEAT_KEPT;
	}
	if (rc == 0) {
		log_warning("lost the claim while the handler runs job_id=%s", s->claim.job_id);
		return HEARTBEAT_LOST;
	}
	if (sqs_change_message_visibility(hb->sqs, s->queue_url, s->receipt_handle,
	                                  cfg->consumer.visibility_timeout_seconds, &res) < 0)
		log_warning("could not extend the message visibility: %s %s job_id=%s",
		            res.code, res.message, s->claim.job_id);
	return HEARTBEAT_KEPT;
}

/* Finds a due slot, marks it busy and copies it; lock held. */
static bool take_due(struct heartbeat *hb, int64_t now, size_t *idx, struct hb_slot *copy)
{
	for (size_t i = 0; i < hb->n_slots; i++) {
		struct hb_slot *s = &hb->slots[i];

		if (s->active && !s->busy && s->outcome == HEARTBEAT_KEPT && s->next_ms <= now) {
			s->busy = true;
			*copy = *s;
			*idx = i;
			return true;
		}
	}
	return false;
}

static void *hb_main(void *arg)
{
	struct heartbeat *hb = arg;
	struct hb_slot copy;
	size_t idx;

	pthread_mutex_lock(&hb->lock);
	while (!hb->stop) {
		if (!take_due(hb, now_ms(), &idx, &copy)) {
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 200 * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&hb->cond, &hb->lock, &until);
			continue;
		}
		pthread_mutex_unlock(&hb->lock);
		enum heartbeat_outcome out = beat(hb, &copy);
		pthread_mutex_lock(&hb->lock);
		hb->slots[idx].busy = false;
		hb->slots[idx].outcome = out;
		hb->slots[idx].next_ms = now_ms() + hb->interval_ms;
		pthread_cond_broadcast(&hb->cond);
	}
	pthread_mutex_unlock(&hb->lock);
	return NULL;
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
	pthread_cond_init(&hb->cond, NULL);
	if (aws_http_new(env, AWS_SERVICE_SQS, &hb->sqs) < 0) {
		log_error("could not create the heartbeat's SQS client");
		goto fail;
	}
	if (pthread_create(&hb->thread, NULL, hb_main, hb) != 0) {
		log_error("could not start the heartbeat thread");
		goto fail;
	}
	hb->running = true;
	*out = hb;
	return 0;
fail:
	if (hb == NULL || hb->slots == NULL)
		log_error("out of memory");
	heartbeat_free(hb);
	return -1;
}

void heartbeat_begin(struct heartbeat *hb, size_t slot, const struct ledger_claim *claim,
                     const char *queue_url, const char *receipt_handle)
{
	pthread_mutex_lock(&hb->lock);
	struct hb_slot *s = &hb->slots[slot];
	s->active = true;
	s->busy = false;
	s->outcome = HEARTBEAT_KEPT;
	s->claim = *claim;
	s->queue_url = queue_url;
	s->receipt_handle = receipt_handle;
	s->next_ms = now_ms() + hb->interval_ms;
	pthread_mutex_unlock(&hb->lock);
}

enum heartbeat_outcome heartbeat_end(struct heartbeat *hb, size_t slot)
{
	enum heartbeat_outcome out;

	pthread_mutex_lock(&hb->lock);
	struct hb_slot *s = &hb->slots[slot];
	while (s->busy)
		pthread_cond_wait(&hb->cond, &hb->lock);
	out = s->outcome;
	s->active = false;
	s->queue_url = NULL;
	s->receipt_handle = NULL;
	pthread_mutex_unlock(&hb->lock);
	return out;
}

enum heartbeat_outcome heartbeat_outcome(struct heartbeat *hb, size_t slot)
{
	enum heartbeat_outcome out;

	pthread_mutex_lock(&hb->lock);
	out = hb->slots[slot].outcome;
	pthread_mutex_unlock(&hb->lock);
	return out;
}

static void stop_thread(struct heartbeat *hb)
{
	if (!hb->running)
		return;
	pthread_mutex_lock(&hb->lock);
	hb->stop = true;
	pthread_cond_broadcast(&hb->cond);
	pthread_mutex_unlock(&hb->lock);
	pthread_join(hb->thread, NULL);
	hb->running = false;
}

/* Gives one claim back; lock held (the thread is stopped, so no beat runs). */
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
	if (sqs_change_message_visibility(hb->sqs, s->queue_url, s->receipt_handle, 0, &res) < 0)
		log_warning("could not make the message visible again: %s %s job_id=%s",
		            res.code, res.message, s->claim.job_id);
	return true;
}

size_t heartbeat_release_all(struct heartbeat *hb)
{
	size_t n = 0;

	stop_thread(hb);
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
	stop_thread(hb);
	PQfinish(hb->conn);
	aws_http_free(hb->sqs);
	if (hb->slots != NULL) {
		pthread_mutex_destroy(&hb->lock);
		pthread_cond_destroy(&hb->cond);
	}
	free(hb->slots);
	free(hb);
}
