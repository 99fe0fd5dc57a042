/*
 * daemon/http_server.c: see daemon/http_server.h.
 *
 * Only GET and HEAD of three fixed paths; everything else is 404 or 405.
 * A body is built in memory first (open_memstream), so a failure never
 * sends half a page.
 *
 * The listener must keep answering the probes of an orchestrator while a
 * hostile or broken neighbour holds connections open (docs/metrics.md,
 * "Slow clients"): each client address gets at most HTTP_PER_CLIENT
 * connections of a total of HTTP_TOTAL, and a request must be complete
 * within HTTP_REQUEST_DEADLINE_MS of its first byte, however slowly it
 * trickles in (libmicrohttpd's own timeout is one of inactivity, which
 * each byte resets).  A watchdog thread shuts overdue connections down;
 * libmicrohttpd then closes them.  Its messages go through our logger, at
 * most HTTP_LOG_BURST a minute.
 */
#include "daemon/http_server.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "common/clock.h"
#include "common/log.h"

/* MHD_Result appeared in 0.9.71; Debian 12 has 0.9.75. */
#if MHD_VERSION < 0x00097100
#define MHD_Result int
#endif

#define PROMETHEUS_TYPE "text/plain; version=0.0.4; charset=utf-8"

#define HTTP_PER_CLIENT 8
#define HTTP_TOTAL 128
#define HTTP_REQUEST_DEADLINE_MS 5000
#define HTTP_IDLE_TIMEOUT_S 10
#define HTTP_LOG_BURST 5
#define HTTP_LOG_WINDOW_MS 60000
#define HTTP_WATCHDOG_MS 200

/* One open connection, for the whole-request deadline. */
struct http_conn {
	bool used;
	bool shut;         /* already shut down by the watchdog */
	int fd;            /* libmicrohttpd's; valid while used (it closes it after CLOSED) */
	int64_t start_ms;  /* when the current request began: accept, or the last one's end */
};

struct http_server {
	struct MHD_Daemon *mhd;
	struct http_server_hooks hooks;
	pthread_mutex_t mu;                /* guards conns and the log window */
	pthread_cond_t wake;
	bool stopping;
	bool watchdog_running;
	pthread_t watchdog;
	struct http_conn conns[HTTP_TOTAL + 4]; /* + a few: CLOSED comes after a new STARTED */
	int64_t log_window_start;
	unsigned log_in_window, log_suppressed;
};

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned int status,
                               const char *type, char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	if (r == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned int status,
                                    const char *line)
{
	size_t len = strlen(line);
	char *body = malloc(len + 2);

	if (body == NULL)
		return MHD_NO;
	memcpy(body, line, len);
	body[len] = '\n';
	body[len + 1] = '\0';
	return respond(conn, status, "text/plain; charset=utf-8", body, len + 1);
}

static enum MHD_Result serve_metrics(struct http_server *s, struct MHD_Connection *conn)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	int rc;

	if (f == NULL)
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	rc = s->hooks.metrics(s->hooks.arg, f);
	if (fclose(f) != 0 || rc < 0) {
		free(body);
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
		                    "could not produce the metrics");
	}
	return respond(conn, MHD_HTTP_OK, PROMETHEUS_TYPE, body, len);
}

static enum MHD_Result serve_check(struct MHD_Connection *conn,
                                   bool (*check)(void *, char *, size_t), void *arg,
                                   const char *ok)
{
	char why[512] = "";

	if (check(arg, why, sizeof(why)))
		return respond_text(conn, MHD_HTTP_OK, ok);
	return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, why[0] ? why : "not ready");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
	struct http_server *s = cls;

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served");
	if (strcmp(url, "/metrics") == 0)
		return serve_metrics(s, conn);
	if (strcmp(url, "/healthz") == 0)
		return serve_check(conn, s->hooks.alive, s->hooks.arg, "ok");
	if (strcmp(url, "/readyz") == 0)
		return serve_check(conn, s->hooks.ready, s->hooks.arg, "ready");
	return respond_text(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics, /healthz or /readyz");
}

/* libmicrohttpd's messages, rate-limited: a flood of clients must not
 * become a flood of log lines. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *s = cls;
	int64_t now = now_ms();
	unsigned suppressed = 0;
	bool emit;
	char msg[512];

	pthread_mutex_lock(&s->mu);
	if (now - s->log_window_start >= HTTP_LOG_WINDOW_MS) {
		suppressed = s->log_suppressed;
		s->log_window_start = now;
		s->log_in_window = 0;
		s->log_suppressed = 0;
	}
	emit = s->log_in_window < HTTP_LOG_BURST;
	if (emit)
		s->log_in_window++;
	else
		s->log_suppressed++;
	pthread_mutex_unlock(&s->mu);
	if (suppressed > 0)
		log_warning("http: %u more messages of the listener were not logged in the last minute",
		            suppressed);
	if (!emit)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\r\n")] = '\0'; /* its messages end with a newline */
	log_warning("http: %s", msg);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	struct http_conn *c = *socket_context;

	pthread_mutex_lock(&s->mu);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		for (size_t i = 0; fd != NULL && i < sizeof(s->conns) / sizeof(s->conns[0]); i++) {
			if (!s->conns[i].used) {
				s->conns[i] = (struct http_conn){.used = true, .fd = fd->connect_fd,
				                                 .start_ms = now_ms()};
				*socket_context = &s->conns[i];
				break;
			}
		}
	} else if (c != NULL) {
		c->used = false;
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&s->mu);
}

/* The next request on a kept-alive connection gets a deadline of its own. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	(void)con_cls;
	(void)toe;
	pthread_mutex_lock(&s->mu);
	if (info != NULL && info->socket_context != NULL)
		((struct http_conn *)info->socket_context)->start_ms = now_ms();
	pthread_mutex_unlock(&s->mu);
}

/*
 * Shuts down (never closes: the descriptor stays libmicrohttpd's) every
 * connection whose request is overdue.  Under mu, so a descriptor is never
 * touched after CLOSED, which libmicrohttpd reports before closing it.
 */
static void *watchdog_main(void *arg)
{
	struct http_server *s = arg;

	pthread_mutex_lock(&s->mu);
	while (!s->stopping) {
		struct timespec until;
		int64_t now = now_ms();

		for (size_t i = 0; i < sizeof(s->conns) / sizeof(s->conns[0]); i++) {
			struct http_conn *c = &s->conns[i];

			if (c->used && !c->shut && now - c->start_ms > HTTP_REQUEST_DEADLINE_MS) {
				(void)shutdown(c->fd, SHUT_RDWR);
				c->shut = true;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += HTTP_WATCHDOG_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		(void)pthread_cond_timedwait(&s->wake, &s->mu, &until);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static int server_init(struct http_server *s, const struct http_server_hooks *hooks)
{
	pthread_condattr_t ca;

	s->hooks = *hooks;
	s->log_window_start = now_ms();
	if (pthread_mutex_init(&s->mu, NULL) != 0)
		return -1;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_cond_init(&s->wake, &ca) != 0) {
		pthread_condattr_destroy(&ca);
		pthread_mutex_destroy(&s->mu);
		return -1;
	}
	pthread_condattr_destroy(&ca);
	if (pthread_create(&s->watchdog, NULL, watchdog_main, s) != 0) {
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->mu);
		return -1;
	}
	s->watchdog_running = true;
	return 0;
}

static void server_free(struct http_server *s)
{
	if (s->watchdog_running) {
		pthread_mutex_lock(&s->mu);
		s->stopping = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->watchdog, NULL);
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->mu);
	}
	free(s);
}

socklen_t http_listen_sockaddr(const struct cfg_listen *l, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (l->family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)l->port);
		(void)inet_pton(AF_INET6, l->host, &a->sin6_addr);
		return sizeof(*a);
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)l->port);
	(void)inet_pton(AF_INET, l->host, &a->sin_addr);
	return sizeof(*a);
}

int http_server_start(const struct cfg_listen *l, const struct http_server_hooks *hooks,
                      struct http_server **out)
{
	struct http_server *s = calloc(1, sizeof(*s));
	struct sockaddr_storage ss;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_AUTO;

	*out = NULL;
	if (s == NULL || server_init(s, hooks) < 0) {
		free(s);
		log_error("out of memory starting the metrics server");
		return -1;
	}
	(void)http_listen_sockaddr(l, &ss);
	if (l->family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* The logger first: libmicrohttpd warns (through its own logger, to
	 * stderr) about any option given before it. */
	s->mhd = MHD_start_daemon(flags, (uint16_t)l->port, NULL, NULL, on_request, s,
	                          MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
	                          MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	                          MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_TOTAL,
	                          MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTP_PER_CLIENT,
	                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE_TIMEOUT_S,
	                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
	                          MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
	                          MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
	                          MHD_OPTION_END);
	if (s->mhd == NULL) {
		log_error("could not listen for metrics on %s%s%s:%d (address in use or not local?)",
		          l->family == AF_INET6 ? "[" : "", l->host, l->family == AF_INET6 ? "]" : "",
		          l->port);
		server_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

void http_server_stop(struct http_server *s)
{
	if (s == NULL)
		return;
	MHD_stop_daemon(s->mhd);
	server_free(s);
}
