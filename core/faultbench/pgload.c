/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * faultbench/pgload.c: the producers, the relay and the consumer that keep
 * the pipeline busy while pg_crash kills PostgreSQL (see pgload.h).
 */
#include "faultbench/pgload.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "consumer/ledger.h"
#include "consumer/port.h"
#include "db/db.h"

/* A producer keeps retrying the job in hand after the stop flag for this
 * long at most: the server is back well before. */
#define PRODUCER_FINISH_MS 30000
/* SQS's default visibility for the emulated queue; the consumer's lease in
 * the run is 1 s, so a delivery left alone comes back once its claim could
 * have expired.  Visibility changes are honoured up to VISIBILITY_MAX_MS,
 * so the drain stays bounded. */
#define VISIBILITY_MS 1000
#define VISIBILITY_MAX_MS 5000

static bool flag_up(const char *path)
{
	return access(path, F_OK) == 0;
}

/* A short pause between attempts while the server is down or when there
 * is nothing to do: a poll interval, not a wait for an outcome. */
static void pause_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};

	nanosleep(&ts, NULL);
}

void fb_load_producer(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	const struct fb_load *load = arg;
	char job_id[LEDGER_JOB_ID_LEN + 2], err[512];
	PGconn *conn = NULL;
	int64_t give_up = 0;
	size_t k = 0;

	for (;;) {
		/* Between jobs the flag ends the loop; a job whose COMMIT failed is
		 * retried first (its outcome is unknown: the retry is idempotent).
		 * give_up != 0 while such a job is in hand. */
		if (give_up == 0 && flag_up(load->produce_stop))
			break;
		if (give_up != 0 && now_ms() > give_up)
			_exit(1);
		if (conn == NULL)
			conn = db_connect(fb->cfg->database.conninfo, "outbox-faultbench producer", err,
			                  sizeof(err));
		if (conn == NULL ||
		    fb_enqueue(fb, conn, d, i * FB_LOAD_STRIDE + k, true, job_id) < 0) {
			PQfinish(conn);
			conn = NULL;
			if (give_up == 0)
				give_up = now_ms() + PRODUCER_FINISH_MS;
			pause_ms(20);
			continue;
		}
		give_up = 0;
		job_id[LEDGER_JOB_ID_LEN] = '\n';
		if (fb_append(load->committed, job_id, FB_LOAD_LINE_LEN) < 0)
			_exit(1);
		k++;
	}
	PQfinish(conn);
	_exit(0);
}

void fb_load_relay(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	const struct fb_load *load = arg;
	struct relay_lane_settings s;
	struct relay_lane *lane = NULL;
	struct publisher *pub = NULL;
	struct relay_pass_stats st;

	(void)i;
	/* The daemon's settings, synchronous_commit included: the marks are
	 * asynchronous unless the file says [relay] synchronous_commit = on. */
	relay_lane_settings_from_cfg(&fb->run_cfg, &s);
	if (fb_publisher(fb, d, &pub) < 0 ||
	    relay_lane_new(fb->cfg->database.conninfo, d->name, d->queue_url, fb->instance_id, &s,
	                   pub, &lane) < 0)
		_exit(1);
	while (!flag_up(load->stop)) {
		if (relay_lane_pass(lane, &st) < 0)
			pause_ms(20);
		else if (st.claimed == 0)
			pause_ms(2);
	}
	relay_lane_free(lane);
	publisher_free(pub);
	_exit(0);
}

/* The emulated queue: every message of the journal, in order. */
struct fq_msg {
	char *body; /* owned, NUL-terminated */
	size_t len;
	char id[64];
	char receipt[24]; /* the index: a deletion finds its message at once */
	int64_t visible_at;
	int receives;
	bool deleted;
};

struct fq {
	struct fq_msg *v; /* owned */
	size_t n, cap;
	size_t first_live; /* v[0..first_live) are all deleted */
	off_t read;        /* journal bytes consumed */
};

static int fq_add(void *arg, const char *id, const char *body, size_t len)
{
	struct fq *q = arg;
	struct fq_msg *m;

	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		struct fq_msg *v = realloc(q->v, cap * sizeof(*v));
		if (v == NULL)
			return -1;
		q->v = v;
		q->cap = cap;
	}
	m = &q->v[q->n];
	memset(m, 0, sizeof(*m));
	m->body = strndup(body, len);
	if (m->body == NULL)
		return -1;
	m->len = len;
	snprintf(m->id, sizeof(m->id), "%s", id);
	snprintf(m->receipt, sizeof(m->receipt), "%zu", q->n);
	q->n++;
	return 0;
}

/* Adds the records appended to the journal since the last call. */
static int fq_read(struct fq *q, const char *journal)
{
	int fd = open(journal, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	ssize_t got;

	if (fd < 0)
		return 0; /* nothing sent yet */
	if (fstat(fd, &st) < 0 || st.st_size <= q->read) {
		close(fd);
		return 0;
	}
	buf = malloc((size_t)(st.st_size - q->read));
	got = buf != NULL ? pread(fd, buf, (size_t)(st.st_size - q->read), q->read) : -1;
	close(fd);
	if (got > 0)
		q->read += (off_t)fb_journal_scan(buf, (size_t)got, fq_add, q);
	free(buf);
	return got < 0 ? -1 : 0;
}

static struct fq_msg *fq_by_receipt(struct fq *q, const char *receipt)
{
	size_t idx = (size_t)strtoul(receipt, NULL, 10);

	return idx < q->n ? &q->v[idx] : NULL;
}

static void fq_delete(void *ctx, const struct sqs_message *m)
{
	struct fq_msg *qm = fq_by_receipt(ctx, m->receipt_handle);

	if (qm != NULL)
		qm->deleted = true;
}

static void fq_flush(void *ctx)
{
	(void)ctx; /* deletions take effect at once */
}

static int fq_visibility(void *ctx, const struct sqs_message *m, int seconds,
                         struct aws_result *res)
{
	struct fq_msg *qm = fq_by_receipt(ctx, m->receipt_handle);
	int64_t ms = (int64_t)seconds * 1000;

	aws_result_reset(res);
	if (qm != NULL)
		qm->visible_at = now_ms() + (ms < VISIBILITY_MAX_MS ? ms : VISIBILITY_MAX_MS);
	return 0;
}

static const struct consumer_port_ops fq_ops = {fq_delete, fq_flush, fq_visibility};

/* One receive: every visible message, ten per batch.  Returns how many. */
static size_t fq_deliver(struct fq *q, struct consumer_runner *r)
{
	int64_t now = now_ms();
	size_t n = 0;

	for (size_t i = q->first_live; i < q->n; i++) {
		struct fq_msg *qm = &q->v[i];
		struct sqs_message m;

		if (qm->deleted || qm->visible_at > now)
			continue;
		qm->visible_at = now + VISIBILITY_MS;
		qm->receives++;
		m = (struct sqs_message){qm->id, qm->receipt, qm->body, qm->len, qm->receives, 0,
		                         NULL, NULL};
		consumer_runner_process(r, &m);
		if (++n % SQS_MAX_BATCH_ENTRIES == 0)
			consumer_runner_flush(r);
	}
	consumer_runner_flush(r);
	while (q->first_live < q->n && q->v[q->first_live].deleted)
		q->first_live++;
	return n;
}

void fb_load_consumer(struct fb *fb, struct fb_dest *d, size_t i, void *arg)
{
	const struct fb_load *load = arg;
	struct fq q = {0};
	struct consumer_port port = {&fq_ops, &q};
	struct consumer_runner *r = NULL;
	char claimed_by[LEDGER_CLAIMED_BY_MAX];

	(void)i;
	snprintf(claimed_by, sizeof(claimed_by), "%s/%s/%ld", fb->instance_id, d->name,
	         (long)getpid());
	if (consumer_runner_new(&fb->run_cfg, &d->d, d->inst, claimed_by, &port, &r) < 0)
		_exit(1);
	while (!flag_up(load->stop)) {
		if (fq_read(&q, d->journal) < 0)
			_exit(1);
		if (fq_deliver(&q, r) == 0)
			pause_ms(2);
	}
	consumer_runner_free(r);
	for (size_t k = 0; k < q.n; k++)
		free(q.v[k].body);
	free(q.v);
	_exit(0);
}
