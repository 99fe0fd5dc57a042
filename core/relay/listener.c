/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * relay/listener.c: LISTEN/NOTIFY wake-ups and the unknown-destination
 * sweep (see relay/listener.h).
 */
#include "relay/listener.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "common/clock.h"
#include "db/db.h"
#include "db/registry.h"
#include "common/log.h"
#include "relay/outbox_store.h"
#include "relay/backoff.h"

#define LISTENER_ERR_LEN 1024
/* Dead events logged one by one per sweep; the rest are counted. */
#define SWEEP_LOG_LIMIT 20

struct relay_listener {
	char *conninfo;
	char *instance_id; /* owned; the registry key */
	const char *role;  /* static: DB_ROLE_RELAY or DB_ROLE_ALL */
	char **known; /* owned; n_known names */
	size_t n_known;
	relay_wake_fn wake;
	void *arg;
	PGconn *conn;    /* owned; NULL while disconnected */
	bool down;       /* an outage was logged */
	int failures;    /* consecutive connect failures */
	int stop_pipe[2];/* relay_listener_stop() writes; the thread polls */
	pthread_t thread;
	size_t swept_logged;
};

/*
 * Waits for the stop pipe and, when fd >= 0, for fd to be readable, at
 * most timeout_ms.  Returns 1 when asked to stop, 0 otherwise.
 */
static int wait_for(struct relay_listener *l, int fd, long timeout_ms)
{
	struct pollfd p[2] = {{l->stop_pipe[0], POLLIN, 0}, {fd, POLLIN, 0}};
	int rc = poll(p, fd >= 0 ? 2 : 1, (int)(timeout_ms < 0 ? 0 : timeout_ms));

	if (rc < 0 && errno != EINTR)
		log_warning("could not wait for notifications: %s", strerror(errno));
	return rc > 0 && (p[0].revents & POLLIN) ? 1 : 0;
}

static void listener_lost(struct relay_listener *l, const char *what, const char *err)
{
	if (!l->down)
		log_warning("%s: %s; the relay keeps polling until it is back", what, err);
	l->down = true;
	PQfinish(l->conn);
	l->conn = NULL;
}

static int listener_connect(struct relay_listener *l)
{
	char err[LISTENER_ERR_LEN];

	l->conn = db_connect(l->conninfo, "outboxd relay listener", err, sizeof(err));
	if (l->conn == NULL) {
		if (!l->down)
			log_warning("could not connect the notification listener: %s; the relay keeps "
			            "polling until it is back", err);
		l->down = true;
		return -1;
	}
	if (db_exec(l->conn, "LISTEN " RELAY_NOTIFY_CHANNEL, err, sizeof(err)) < 0) {
		listener_lost(l, "could not listen for notifications", err);
		return -1;
	}
	if (l->down)
		log_info("notification listener reconnected");
	l->down = false;
	/* Anything notified while we were away is lost: let every lane look. */
	l->wake(l->arg, NULL);
	return 0;
}

static void on_swept(void *arg, const char *event_id, const char *destination)
{
	struct relay_listener *l = arg;

	if (l->swept_logged++ < SWEEP_LOG_LIMIT)
		log_warning("outbox event is dead dest=%s event_id=%s reason=%s", destination,
		            event_id, OUTBOX_DEAD_UNKNOWN_DESTINATION);
}

static void sweep(struct relay_listener *l)
{
	char err[LISTENER_ERR_LEN];
	size_t count = 0;

	l->swept_logged = 0;
	/* Registered first, so two relays sweeping at once never kill each other's events. */
	if (db_registry_beat(l->conn, l->instance_id, l->role, (const char *const *)l->known,
	                     l->n_known, err, sizeof(err)) < 0) {
		if (db_connection_lost(l->conn))
			listener_lost(l, "lost the notification listener's connection", err);
		else
			log_warning("could not register the relay in outbox.relay_instances: %s", err);
		return;
	}
	if (outbox_store_sweep_unknown(l->conn, (const char *const *)l->known, l->n_known,
	                               OUTBOX_UNKNOWN_DESTINATION_GRACE_SECONDS, on_swept, l,
	                               &count, err, sizeof(err)) < 0) {
		if (db_connection_lost(l->conn))
			listener_lost(l, "lost the notification listener's connection", err);
		else
			log_warning("could not sweep events of unknown destinations: %s", err);
		return;
	}
	if (count > SWEEP_LOG_LIMIT)
		log_warning("%zu events of unknown destinations are dead (%d logged) reason=%s",
		            count, SWEEP_LOG_LIMIT, OUTBOX_DEAD_UNKNOWN_DESTINATION);
}

/* Reads what arrived on the socket and wakes the lanes it names. */
static void drain_notifications(struct relay_listener *l)
{
	PGnotify *n;

	if (PQconsumeInput(l->conn) == 0) {
		char err[LISTENER_ERR_LEN];
		db_error(l->conn, NULL, err, sizeof(err));
		listener_lost(l, "lost the notification listener's connection", err);
		return;
	}
	for (;;) {
		n = PQnotifies(l->conn);
		if (n == NULL)
			break;
		l->wake(l->arg, n->extra);
		PQfreemem(n);
	}
}

static void *listener_main(void *arg)
{
	struct relay_listener *l = arg;
	long long next_sweep = now_ms();

	for (;;) {
		if (l->conn == NULL && listener_connect(l) < 0) {
			l->failures++;
			if (wait_for(l, -1, relay_reconnect_delay_ms(l->failures)))
				break;
			continue;
		}
		l->failures = 0;
		if (now_ms() >= next_sweep) {
			sweep(l);
			next_sweep = now_ms() + RELAY_SWEEP_INTERVAL_SECONDS * 1000LL;
			if (l->conn == NULL)
				continue;
		}
		if (wait_for(l, PQsocket(l->conn), (long)(next_sweep - now_ms())))
			break;
		drain_notifications(l);
	}
	return NULL;
}

static void listener_free(struct relay_listener *l)
{
	char err[LISTENER_ERR_LEN];

	/* Best effort: a row left behind goes stale and stops protecting anything. */
	if (l->conn != NULL && l->instance_id != NULL &&
	    db_registry_leave(l->conn, l->instance_id, err, sizeof(err)) < 0)
		log_debug("could not remove the relay from outbox.relay_instances: %s", err);
	PQfinish(l->conn);
	for (size_t i = 0; i < l->n_known; i++)
		free(l->known[i]);
	free(l->known);
	free(l->conninfo);
	free(l->instance_id);
	if (l->stop_pipe[0] >= 0)
		close(l->stop_pipe[0]);
	if (l->stop_pipe[1] >= 0)
		close(l->stop_pipe[1]);
	free(l);
}

static int listener_init(struct relay_listener *l, const char *conninfo,
                         const char *instance_id, const char *const *known, size_t n)
{
	l->stop_pipe[0] = l->stop_pipe[1] = -1;
	l->conninfo = strdup(conninfo);
	l->instance_id = strdup(instance_id);
	l->known = calloc(n ? n : 1, sizeof(*l->known));
	if (l->conninfo == NULL || l->instance_id == NULL || l->known == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		l->known[i] = strdup(known[i]);
		if (l->known[i] == NULL)
			return -1;
		l->n_known++;
	}
	return pipe2(l->stop_pipe, O_CLOEXEC);
}

int relay_listener_start(const char *conninfo, const char *instance_id, const char *role,
                         const char *const *known, size_t n,
                         relay_wake_fn wake, void *arg, struct relay_listener **out)
{
	struct relay_listener *l = calloc(1, sizeof(*l));
	int err;

	*out = NULL;
	if (l == NULL) {
		log_error("out of memory starting the notification listener");
		return -1;
	}
	l->wake = wake;
	l->arg = arg;
	l->role = role;
	if (listener_init(l, conninfo, instance_id, known, n) < 0) {
		log_error("could not set up the notification listener: %s", strerror(errno));
		listener_free(l);
		return -1;
	}
	err = pthread_create(&l->thread, NULL, listener_main, l);
	if (err != 0) {
		log_error("could not start the notification listener: %s", strerror(err));
		listener_free(l);
		return -1;
	}
	*out = l;
	return 0;
}

void relay_listener_stop(struct relay_listener *l)
{
	ssize_t w;

	if (l == NULL)
		return;
	w = write(l->stop_pipe[1], "x", 1);
	(void)w; /* a full pipe already says "stop" */
	pthread_join(l->thread, NULL);
	listener_free(l);
}
