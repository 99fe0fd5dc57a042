/*
 * daemon/http_server.c: see daemon/http_server.h.
 *
 * Only GET and HEAD of three fixed paths; everything else is 404 or 405.
 * A body is built in memory first (open_memstream), so a failure never
 * sends half a page.
 */
#include "daemon/http_server.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "common/log.h"

/* MHD_Result appeared in 0.9.71; Debian 12 has 0.9.75. */
#if MHD_VERSION < 0x00097100
#define MHD_Result int
#endif

#define PROMETHEUS_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct http_server {
	struct MHD_Daemon *mhd;
	struct http_server_hooks hooks;
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
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

	*out = NULL;
	if (s == NULL) {
		log_error("out of memory starting the metrics server");
		return -1;
	}
	s->hooks = *hooks;
	(void)http_listen_sockaddr(l, &ss);
	if (l->family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* A few connections at a time is plenty for scrapers and probes, and
	 * bounds what a misbehaving client can hold. */
	s->mhd = MHD_start_daemon(flags, (uint16_t)l->port, NULL, NULL, on_request, s,
	                          MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	                          MHD_OPTION_CONNECTION_LIMIT, (unsigned int)16,
	                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
	                          MHD_OPTION_END);
	if (s->mhd == NULL) {
		log_error("could not listen for metrics on %s%s%s:%d (address in use or not local?)",
		          l->family == AF_INET6 ? "[" : "", l->host, l->family == AF_INET6 ? "]" : "",
		          l->port);
		free(s);
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
	free(s);
}
