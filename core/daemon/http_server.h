/*
 * daemon/http_server.h: the daemon's HTTP endpoints ([metrics] listen):
 * /metrics (Prometheus text), /healthz and /readyz (docs/metrics.md).
 *
 * HTTP itself is libmicrohttpd's, on its own thread; each request calls
 * back into the hooks below, from that thread.
 */
#ifndef OUTBOX_CORE_DAEMON_HTTP_SERVER_H
#define OUTBOX_CORE_DAEMON_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>

#include "config/listen.h"

struct http_server_hooks {
	/* Writes the /metrics body to out; returns 0 or -1 (answered 500). */
	int (*metrics)(void *arg, FILE *out);
	/* true when alive / ready; else a one-line reason in why. */
	bool (*alive)(void *arg, char *why, size_t whylen);
	bool (*ready)(void *arg, char *why, size_t whylen);
	void *arg; /* borrowed; must outlive the server */
};

struct http_server;

/*
 * Binds l and starts serving.  Returns 0 and *out, or -1 (logged: the
 * address is in use, or not ours).
 */
int http_server_start(const struct cfg_listen *l, const struct http_server_hooks *hooks,
                      struct http_server **out);
/* l as a socket address for MHD_OPTION_SOCK_ADDR (the console's too);
 * returns its length. */
socklen_t http_listen_sockaddr(const struct cfg_listen *l, struct sockaddr_storage *ss);

/* Stops serving and frees; NULL is fine. */
void http_server_stop(struct http_server *s);

#endif
