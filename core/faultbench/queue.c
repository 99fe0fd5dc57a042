/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * faultbench/queue.c: a scenario's queue (see faultbench.h).
 *
 * Fake mode: the queue is a file of records, appended with one write()
 * each, so it survives a killed sender exactly as SQS would:
 *   "M <message_id> <len>\n<body>\n"   a message the fake publisher accepted
 *   "D <message_id>\n"                 a deletion through the fake port
 *   "V <message_id> <seconds>\n"       a visibility change through the port
 * Receipt handles are the message ids.
 *
 * SQS mode: the real queue of the scenario's destination.  Fetching makes
 * the receipts handed out before visible again, then receives everything.
 */
#include "faultbench/faultbench.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumer/message.h"
#include "consumer/port.h"
#include "common/log.h"
#include "aws/sqs.h"

#define FB_RECEIVE_VISIBILITY 120

int fb_append(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, buf, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static int fake_hook(void *arg, const char *queue_url, const char *body, size_t body_len)
{
	static unsigned long seq;
	const struct fb_dest *d = arg;
	char head[128];
	char *buf;
	int n, rc;

	(void)queue_url;
	n = snprintf(head, sizeof(head), "M m%ld-%lu %zu\n", (long)getpid(), ++seq, body_len);
	buf = malloc((size_t)n + body_len + 1);
	if (buf == NULL)
		return -1;
	memcpy(buf, head, (size_t)n);
	memcpy(buf + n, body, body_len);
	buf[(size_t)n + body_len] = '\n';
	rc = fb_append(d->journal, buf, (size_t)n + body_len + 1);
	free(buf);
	return rc;
}

int fb_publisher(struct fb *fb, struct fb_dest *d, struct publisher **out)
{
	if (strcmp(fb->publisher, "sqs") == 0)
		return publisher_sqs_new(&fb->env, out);
	if (publisher_fake_new(out) < 0)
		return -1;
	publisher_fake_set_hook(*out, fake_hook, d);
	return 0;
}

void fb_deliveries_free(struct fb_deliveries *ds)
{
	for (size_t i = 0; i < ds->n; i++) {
		free(ds->v[i].message_id);
		free(ds->v[i].receipt_handle);
		free(ds->v[i].body);
	}
	free(ds->v);
	memset(ds, 0, sizeof(*ds));
}

static int add_delivery(struct fb_deliveries *ds, const char *id, const char *receipt,
                        const char *body, size_t len)
{
	struct fb_delivery *dv;
	struct consumer_msg pm;
	char why[128];

	if (ds->n == ds->cap) {
		size_t cap = ds->cap ? ds->cap * 2 : 128;
		struct fb_delivery *v = realloc(ds->v, cap * sizeof(*v));
		if (v == NULL)
			return -1;
		ds->v = v;
		ds->cap = cap;
	}
	dv = &ds->v[ds->n];
	memset(dv, 0, sizeof(*dv));
	dv->message_id = strdup(id);
	dv->receipt_handle = strdup(receipt);
	dv->body = strndup(body, len);
	dv->body_len = len;
	if (dv->message_id == NULL || dv->receipt_handle == NULL || dv->body == NULL) {
		free(dv->message_id);
		free(dv->receipt_handle);
		free(dv->body);
		return -1;
	}
	if (consumer_message_parse(body, len, &pm, why, sizeof(why)) == 0)
		snprintf(dv->event_id, sizeof(dv->event_id), "%s", pm.event_id);
	ds->n++;
	return 0;
}

/* The whole file as a NUL-terminated string (empty if missing). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	struct stat st;

	*len = 0;
	if (f == NULL)
		return calloc(1, 1);
	if (fstat(fileno(f), &st) < 0 || (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, (size_t)st.st_size, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static bool deleted(const char *buf, const char *id)
{
	char needle[96];

	snprintf(needle, sizeof(needle), "\nD %s\n", id);
	return strstr(buf, needle) != NULL || (strncmp(buf, needle + 1, strlen(needle + 1)) == 0);
}

/* Parses "M <id> <len>" from line[0..n) (no newline, no NUL needed: sscanf
 * reads a copy).  Returns true with id and *blen set. */
static bool message_header(const char *line, size_t n, char id[64], size_t *blen)
{
	char head[128];
	int used = 0;

	if (n == 0 || line[0] != 'M' || n >= sizeof(head))
		return false;
	memcpy(head, line, n);
	head[n] = '\0';
	return sscanf(head, "M %63s %zu%n", id, blen, &used) == 2 && (size_t)used == n;
}

size_t fb_journal_scan(const char *buf, size_t len, fb_journal_fn fn, void *arg)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t hlen, blen;
		char id[64];

		if (nl == NULL)
			break; /* a record still being written (or never finished) */
		hlen = (size_t)(nl - (buf + pos));
		if (message_header(buf + pos, hlen, id, &blen)) {
			/* The body follows the header's newline and ends with its own. */
			if (pos + hlen + 1 + blen >= len || fn(arg, id, nl + 1, blen) < 0)
				break;
			pos += hlen + 1 + blen + 1;
			continue;
		}
		pos += hlen + 1;
	}
	return pos;
}

struct fetch_arg {
	const char *buf;
	struct fb_deliveries *out;
	bool with_deleted;
	int rc;
};

static int fetch_one(void *arg, const char *id, const char *body, size_t len)
{
	struct fetch_arg *a = arg;

	if (!a->with_deleted && deleted(a->buf, id))
		return 0;
	a->rc = add_delivery(a->out, id, id, body, len);
	return a->rc;
}

static int fake_fetch(const struct fb_dest *d, struct fb_deliveries *out, bool with_deleted)
{
	size_t len;
	char *buf = slurp(d->journal, &len);
	struct fetch_arg a = {buf, out, with_deleted, 0};

	if (buf == NULL)
		return -1;
	fb_journal_scan(buf, len, fetch_one, &a);
	free(buf);
	return a.rc;
}

int fb_queue_sent(const struct fb_dest *d, struct fb_deliveries *out)
{
	fb_deliveries_free(out);
	return fake_fetch(d, out, true);
}

/* Makes every receipt in d->last visible again (deleted ones fail: fine). */
static void sqs_release_last(struct fb *fb, struct fb_dest *d)
{
	struct sqs_handle_entry e[SQS_MAX_BATCH_ENTRIES];
	struct sqs_entry_result results[SQS_MAX_BATCH_ENTRIES];
	char ids[SQS_MAX_BATCH_ENTRIES][8];
	struct aws_result res;
	size_t k = 0;

	for (size_t i = 0; i < d->last.n; i++) {
		snprintf(ids[k], sizeof(ids[k]), "h%zu", k);
		e[k] = (struct sqs_handle_entry){ids[k], d->last.v[i].receipt_handle, 0};
		if (++k == SQS_MAX_BATCH_ENTRIES || i + 1 == d->last.n) {
			if (sqs_change_message_visibility_batch(fb->sqs, d->queue_url, e, k, results,
			                                        &res) < 0)
				log_warning("could not release receipts: %s %s", res.code, res.message);
			k = 0;
		}
	}
	fb_deliveries_free(&d->last);
}

static int sqs_fetch(struct fb *fb, struct fb_dest *d, struct fb_deliveries *out)
{
	const struct sqs_receive_options opts = {.max_messages = SQS_MAX_BATCH_ENTRIES,
	                                         .wait_time_seconds = 1,
	                                         .visibility_timeout = FB_RECEIVE_VISIBILITY,
	                                         .trace_only = true};
	struct aws_result res;

	sqs_release_last(fb, d);
	for (;;) {
		struct sqs_messages msgs = {0};

		if (sqs_receive_message(fb->sqs, d->queue_url, &opts, &msgs, &res) < 0) {
			log_error("could not receive from %s: %s %s", d->queue_url, res.code,
			          res.message);
			sqs_messages_free(&msgs);
			return -1;
		}
		for (size_t i = 0; i < msgs.n; i++) {
			const struct sqs_message *m = &msgs.items[i];
			if (add_delivery(out, m->message_id, m->receipt_handle, m->body, m->body_len) < 0 ||
			    add_delivery(&d->last, m->message_id, m->receipt_handle, m->body,
			                 m->body_len) < 0) {
				sqs_messages_free(&msgs);
				return -1;
			}
		}
		size_t got = msgs.n;
		sqs_messages_free(&msgs);
		if (got == 0)
			return 0;
	}
}

int fb_queue_fetch(struct fb *fb, struct fb_dest *d, struct fb_deliveries *out)
{
	fb_deliveries_free(out);
	if (strcmp(fb->publisher, "sqs") == 0)
		return sqs_fetch(fb, d, out);
	return fake_fetch(d, out, false);
}

long fb_deliveries_find(const struct fb_deliveries *ds, const char *event_id, size_t from)
{
	for (size_t i = from; i < ds->n; i++) {
		if (strcmp(ds->v[i].event_id, event_id) == 0)
			return (long)i;
	}
	return -1;
}

size_t fb_deliveries_distinct(const struct fb_deliveries *ds)
{
	size_t n = 0;

	for (size_t i = 0; i < ds->n; i++) {
		if (fb_deliveries_find(ds, ds->v[i].event_id, 0) == (long)i)
			n++;
	}
	return n;
}

/* The fake message port: records deletions and visibility changes. */
struct fake_port {
	const struct fb_dest *d;
	char pending[SQS_MAX_BATCH_ENTRIES][64];
	size_t n;
	unsigned long deletes;
};

static void fake_flush(void *ctx)
{
	struct fake_port *p = ctx;
	char buf[SQS_MAX_BATCH_ENTRIES * 72];
	size_t len = 0;

	for (size_t i = 0; i < p->n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "D %s\n", p->pending[i]);
	if (len > 0 && fb_append(p->d->journal, buf, len) < 0)
		log_warning("could not record deletions in %s", p->d->journal);
	p->deletes += p->n;
	p->n = 0;
}

static void fake_delete(void *ctx, const struct sqs_message *m)
{
	struct fake_port *p = ctx;

	if (p->n == SQS_MAX_BATCH_ENTRIES)
		fake_flush(p);
	snprintf(p->pending[p->n++], sizeof(p->pending[0]), "%s", m->receipt_handle);
}

static int fake_visibility(void *ctx, const struct sqs_message *m, int seconds,
                           struct aws_result *res)
{
	struct fake_port *p = ctx;
	char line[96];
	int n = snprintf(line, sizeof(line), "V %s %d\n", m->receipt_handle, seconds);

	aws_result_reset(res);
	return fb_append(p->d->journal, line, (size_t)n);
}

static const struct consumer_port_ops fake_ops = {fake_delete, fake_flush, fake_visibility};

static void report(const struct fb_dest *d, const struct consumer_counters *c,
                   unsigned long deletes)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "R %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu\n",
	                 c->deliveries, c->terminal_skips, c->obsolete_deletes, c->claims,
	                 c->handler_runs, c->succeeded, c->stale, c->lost_claims, c->db_errors,
	                 deletes);

	if (fb_append(d->stats, line, (size_t)n) < 0)
		log_warning("could not write %s", d->stats);
}

void fb_child_consume(struct fb *fb, struct fb_dest *d, const struct fb_delivery *const *dvs,
                      size_t n)
{
	struct fake_port fp = {.d = d};
	struct consumer_sqs_port sp;
	struct consumer_port port = {&fake_ops, &fp};
	struct consumer_runner *r = NULL;
	struct aws_http *sqs = NULL;
	char claimed_by[LEDGER_CLAIMED_BY_MAX];

	if (strcmp(fb->publisher, "sqs") == 0) {
		if (aws_http_new(&fb->env, AWS_SERVICE_SQS, &sqs) < 0)
			_exit(1);
		consumer_sqs_port_init(&sp, sqs, d->queue_url, d->name, NULL, &port);
	}
	snprintf(claimed_by, sizeof(claimed_by), "%s/%s/%ld", fb->instance_id, d->name,
	         (long)getpid());
	if (consumer_runner_new(&fb->run_cfg, &d->d, d->inst, claimed_by, &port, &r) < 0)
		_exit(1);
	for (size_t k = 0; k < n; k++) {
		const struct fb_delivery *dv = dvs[k];
		struct sqs_message m = {dv->message_id, dv->receipt_handle, dv->body, dv->body_len,
		                        1, 0, NULL, NULL};
		consumer_runner_process(r, &m);
		consumer_runner_flush(r);
	}
	report(d, consumer_runner_counters(r), sqs != NULL ? sp.deletes : fp.deletes);
	/* The caller dies at its fault point: nothing is freed on purpose. */
}

void fb_reports_sum(const struct fb_dest *d, struct fb_child_report *sum)
{
	FILE *f = fopen(d->stats, "r");
	struct fb_child_report r;
	struct consumer_counters *c = &r.c;

	memset(sum, 0, sizeof(*sum));
	if (f == NULL)
		return;
	memset(&r, 0, sizeof(r));
	while (fscanf(f, "R %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu\n", &c->deliveries,
	              &c->terminal_skips, &c->obsolete_deletes, &c->claims, &c->handler_runs,
	              &c->succeeded, &c->stale, &c->lost_claims, &c->db_errors,
	              &r.port_deletes) == 10) {
		sum->c.deliveries += c->deliveries;
		sum->c.terminal_skips += c->terminal_skips;
		sum->c.obsolete_deletes += c->obsolete_deletes;
		sum->c.claims += c->claims;
		sum->c.handler_runs += c->handler_runs;
		sum->c.succeeded += c->succeeded;
		sum->c.stale += c->stale;
		sum->c.lost_claims += c->lost_claims;
		sum->c.db_errors += c->db_errors;
		sum->port_deletes += r.port_deletes;
	}
	fclose(f);
}

long fb_runs(const struct fb_dest *d, int gen)
{
	FILE *f = fopen(d->runs_log, "r");
	char job[80];
	int attempt, g;
	long long us;
	long n = 0;

	if (f == NULL)
		return 0;
	while (fscanf(f, "%79s %d %d %lld\n", job, &attempt, &g, &us) == 4) {
		if (gen < 0 || g == gen)
			n++;
	}
	fclose(f);
	return n;
}
