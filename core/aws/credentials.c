/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/credentials.c: credential snapshots and the shared, refreshing
 * provider (see aws/credentials.h).
 */
#include "aws/credentials.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"

/* Refresh this long before expiry at the latest (the SDKs' window). */
#define REFRESH_AHEAD_SECONDS 300
/* Retry a failed refresh no sooner than this, doubling up to the maximum. */
#define RETRY_MIN_SECONDS 1
#define RETRY_MAX_SECONDS 30
/* A thread waits this long at most for another thread's refresh. */
#define WAIT_FOR_REFRESH_SECONDS 15

struct aws_credentials {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct aws_credential_source *src;
	struct aws_creds *current; /* never NULL */
	/* The expiry comes from the issuer's clock, so what is compared with it
	 * is wall time; every pause and deadline of our own is monotonic. */
	long long refresh_at;      /* wall clock, s: when current is due; 0: never */
	int64_t fetched_ms;        /* now_ms() when current arrived */
	int64_t next_attempt_ms;   /* now_ms(): no fetch before this (after failures) */
	int failures;              /* fetches failed in a row */
	int refusals;              /* fresh credentials refused in a row */
	bool stale;                /* current was refused by a service */
	bool refreshing;           /* one thread is fetching */
	unsigned long fetches;
	unsigned long attempts;    /* refreshes finished, successful or not */
	char last_error[AWS_CREDS_ERR_LEN];
	atomic_int refs;
};

/* Wall-clock seconds, to compare with an expiry the issuer wrote. */
static long long wall_s(void)
{
	return (long long)(wall_clock_ms() / 1000);
}

static char *dup_nonempty(const char *s)
{
	return s != NULL && s[0] != '\0' ? strdup(s) : NULL;
}

struct aws_creds *aws_creds_new(const char *key, const char *secret, const char *token,
                                long long expires_at)
{
	struct aws_creds *c;

	if (key == NULL || key[0] == '\0' || secret == NULL || secret[0] == '\0')
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->access_key_id = strdup(key);
	c->secret_access_key = strdup(secret);
	c->session_token = dup_nonempty(token);
	c->expires_at = expires_at;
	atomic_init(&c->refs, 1);
	if (c->access_key_id == NULL || c->secret_access_key == NULL ||
	    (token != NULL && token[0] != '\0' && c->session_token == NULL)) {
		aws_creds_unref(c);
		return NULL;
	}
	return c;
}

struct aws_creds *aws_creds_ref(struct aws_creds *c)
{
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	return c;
}

static void wipe_free(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
	free(s);
}

void aws_creds_unref(struct aws_creds *c)
{
	if (c == NULL || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(c->access_key_id);
	wipe_free(c->secret_access_key);
	wipe_free(c->session_token);
	free(c);
}

long long aws_credentials_refresh_at(long long fetched_at, long long expires_at)
{
	long long half;

	if (expires_at == 0)
		return 0;
	half = (expires_at - fetched_at) / 2;
	if (half < 0)
		half = 0;
	return expires_at - (half < REFRESH_AHEAD_SECONDS ? half : REFRESH_AHEAD_SECONDS);
}

static void set_current(struct aws_credentials *p, struct aws_creds *c)
{
	aws_creds_unref(p->current);
	p->current = c;
	p->fetched_ms = now_ms();
	p->refresh_at = p->src->refreshable ? aws_credentials_refresh_at(wall_s(), c->expires_at) : 0;
	p->stale = false;
	p->fetches++;
}

/* The waits below take monotonic deadlines (monotonic_deadline()). */
static void init_monotonic_cond(pthread_cond_t *cv)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}

struct aws_credentials *aws_credentials_new(struct aws_credential_source *src,
                                            struct aws_creds *first)
{
	struct aws_credentials *p = calloc(1, sizeof(*p));

	if (p == NULL) {
		aws_creds_unref(first);
		if (src->free_ctx != NULL)
			src->free_ctx(src->ctx);
		free(src->name);
		free(src);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	init_monotonic_cond(&p->cv);
	p->src = src;
	atomic_init(&p->refs, 1);
	set_current(p, first);
	return p;
}

struct aws_credentials *aws_credentials_ref(struct aws_credentials *p)
{
	atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
	return p;
}

void aws_credentials_unref(struct aws_credentials *p)
{
	if (p == NULL || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
		return;
	aws_creds_unref(p->current);
	if (p->src->free_ctx != NULL)
		p->src->free_ctx(p->src->ctx);
	free(p->src->name);
	free(p->src);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

const char *aws_credentials_source(const struct aws_credentials *p)
{
	return p->src->name;
}

unsigned long aws_credentials_fetches(const struct aws_credentials *p)
{
	struct aws_credentials *mp = (struct aws_credentials *)p;
	unsigned long n;

	pthread_mutex_lock(&mp->mu);
	n = mp->fetches;
	pthread_mutex_unlock(&mp->mu);
	return n;
}

/* Called with the lock held; releases it while the source fetches. */
static void refresh_locked(struct aws_credentials *p)
{
	struct aws_creds *fresh = NULL;
	char err[AWS_CREDS_ERR_LEN] = "";
	int rc;

	p->refreshing = true;
	pthread_mutex_unlock(&p->mu);
	rc = p->src->fetch(p->src->ctx, &fresh, err, sizeof(err));
	pthread_mutex_lock(&p->mu);
	p->refreshing = false;
	p->attempts++;
	if (rc == 0 && fresh != NULL) {
		set_current(p, fresh);
		p->failures = 0;
		p->next_attempt_ms = 0;
		metrics_process_inc(METRIC_CREDENTIAL_REFRESHES);
		log_debug("aws credentials refreshed source=\"%s\"", p->src->name);
	} else {
		int shift = p->failures < 5 ? p->failures : 5;
		long long delay = (long long)RETRY_MIN_SECONDS << shift;
		p->failures++;
		p->next_attempt_ms = now_ms() + 1000 * (delay < RETRY_MAX_SECONDS ? delay : RETRY_MAX_SECONDS);
		snprintf(p->last_error, sizeof(p->last_error), "%s",
		         err[0] != '\0' ? err : "no credentials returned");
		metrics_process_inc(METRIC_CREDENTIAL_REFRESH_FAILURES);
		log_warning("could not refresh AWS credentials from %s: %s failures=%d", p->src->name,
		            p->last_error, p->failures);
	}
	pthread_cond_broadcast(&p->cv);
}

static bool usable_locked(const struct aws_credentials *p, long long wall)
{
	return !p->stale && (p->current->expires_at == 0 || wall < p->current->expires_at);
}

static bool due_locked(const struct aws_credentials *p, long long wall, int64_t now)
{
	if (!p->src->refreshable || p->refreshing || now < p->next_attempt_ms)
		return false;
	return p->stale || (p->refresh_at != 0 && wall >= p->refresh_at);
}

/* Waits for a broadcast or until now_ms() reaches until_ms. */
static void wait_locked(struct aws_credentials *p, int64_t until_ms)
{
	struct timespec ts;
	int64_t ms = until_ms - now_ms();

	monotonic_deadline(&ts, ms > 0 ? ms : 0);
	(void)pthread_cond_timedwait(&p->cv, &p->mu, &ts);
}

struct aws_creds *aws_credentials_get(struct aws_credentials *p, char *err, size_t err_size)
{
	int64_t give_up = now_ms() + WAIT_FOR_REFRESH_SECONDS * 1000LL;
	struct aws_creds *c = NULL;
	unsigned long attempts0;

	pthread_mutex_lock(&p->mu);
	attempts0 = p->attempts;
	for (;;) {
		long long wall = wall_s();
		int64_t now = now_ms();

		if (due_locked(p, wall, now)) {
			refresh_locked(p);
			continue;
		}
		if (usable_locked(p, wall)) {
			c = aws_creds_ref(p->current);
			break;
		}
		/* Nothing valid: wait for the refresher (or the short pause after
		 * a refusal), within the bound; once a refresh has failed while
		 * this call waited, give up: the caller retries later. */
		if (now >= give_up || !p->src->refreshable || p->attempts != attempts0 ||
		    (!p->refreshing && p->next_attempt_ms > now + RETRY_MIN_SECONDS * 1000LL)) {
			snprintf(err, err_size, "AWS credentials from %s %s%s%s", p->src->name,
			         p->stale ? "were refused" : "expired",
			         p->last_error[0] != '\0' ? " and could not be refreshed: " : "",
			         p->last_error);
			break;
		}
		int64_t until = p->refreshing ? give_up : p->next_attempt_ms;
		wait_locked(p, until < give_up ? until : give_up);
	}
	pthread_mutex_unlock(&p->mu);
	return c;
}

/*
 * A key refused soon after it arrived says the source hands out keys the
 * service does not take (a role without the permission, a key of another
 * account): the next fetch would likely get the same answer.  Such
 * refusals in a row space the refetches out, doubling from
 * RETRY_MIN_SECONDS up to RETRY_MAX_SECONDS after the fetch; a key that
 * served longer than that before being refused starts over.
 */
static void note_refusal_locked(struct aws_credentials *p)
{
	int64_t age = now_ms() - p->fetched_ms;
	int shift;
	int64_t delay;

	if (age >= RETRY_MAX_SECONDS * 1000LL) {
		p->refusals = 0;
		return;
	}
	shift = p->refusals < 5 ? p->refusals : 5;
	delay = (RETRY_MIN_SECONDS * 1000LL) << shift;
	if (delay > RETRY_MAX_SECONDS * 1000LL)
		delay = RETRY_MAX_SECONDS * 1000LL;
	p->refusals++;
	if (p->next_attempt_ms < p->fetched_ms + delay)
		p->next_attempt_ms = p->fetched_ms + delay;
}

bool aws_credentials_invalidate(struct aws_credentials *p, const struct aws_creds *used)
{
	bool retry;

	pthread_mutex_lock(&p->mu);
	retry = p->src->refreshable;
	if (retry && p->current == used && !p->stale) {
		p->stale = true;
		note_refusal_locked(p);
		log_info("AWS credentials from %s were refused, fetching new ones refusals=%d",
		         p->src->name, p->refusals);
	}
	pthread_mutex_unlock(&p->mu);
	return retry;
}

int aws_parse_iso8601(const char *s, long long *out)
{
	struct tm tm = {0};
	int y, mo, d, h, mi, sec, n = 0;
	const char *rest;
	time_t t;

	if (s == NULL || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 ||
	    n == 0)
		return -1;
	rest = s + n;
	if (*rest == '.') {
		rest++;
		while (*rest >= '0' && *rest <= '9')
			rest++;
	}
	if (strcmp(rest, "Z") != 0 && strcmp(rest, "+00:00") != 0 && strcmp(rest, "+0000") != 0)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	errno = 0;
	t = timegm(&tm);
	if (t == (time_t)-1 && errno != 0)
		return -1;
	*out = (long long)t;
	return 0;
}
