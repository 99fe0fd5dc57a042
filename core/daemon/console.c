/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/console.c: the console's server and its access rules (see
 * daemon/console.h and docs/console.md, "Access").
 *
 * The token comes from the environment variable [console] token_env names
 * and is never logged or shown.  A script sends it as "Authorization:
 * Bearer TOKEN"; a browser signs in once at /login and then carries a
 * session cookie: "EXPIRY.NONCE.NAME.MAC", MAC an HMAC-SHA256 of the rest
 * under a key derived from the token, so sessions survive a restart and a
 * new token ends them all.  Every POST carries a CSRF token (form field
 * "csrf" or header X-CSRF-Token): for a session the HMAC of its nonce, for
 * a script the HMAC of "bearer" (sent back on every signed-in response as
 * X-CSRF-Token); the sign-in form itself is a double-submit cookie.
 * Comparisons of secrets are constant-time over SHA-256 digests, so they
 * leak neither content nor length.  Without a token the console is
 * read-only, and config validation allows it only on a loopback address.
 */
#include "daemon/console.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "common/hexdigest.h"
#include "common/log.h"
#include "config/listen.h"
#include "daemon/console_internal.h"
#include "daemon/http_server.h"
#include "db/db.h"

#if MHD_VERSION < 0x00097100
#define MHD_Result int
#endif

/* A form is a few fields; nothing the console accepts is larger. */
#define CONSOLE_MAX_BODY 16384
/* A browser session lasts a working day and a night shift. */
#define SESSION_SECONDS (12 * 3600)
#define OPERATOR_NAME_MAX 32

struct console {
	struct console_ctx ctx;
	struct MHD_Daemon *mhd;
	unsigned char token_digest[32]; /* SHA-256 of the token */
	unsigned char key[32];          /* the session and CSRF key, from the token */
};

/* One request's upload, kept between libmicrohttpd's calls. */
struct upload {
	char *data;
	size_t len;
	bool too_big;
};

static void digest(const void *data, size_t len, unsigned char out[32])
{
	unsigned int n = 32;

	if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1)
		RAND_bytes(out, 32); /* a failed digest then matches nothing */
}

/* Constant-time equality of two secrets of any lengths. */
static bool same_secret(const char *a, const char *b)
{
	unsigned char da[32], db[32];

	if (a == NULL || b == NULL)
		return false;
	digest(a, strlen(a), da);
	digest(b, strlen(b), db);
	return CRYPTO_memcmp(da, db, 32) == 0;
}

/* hex HMAC-SHA256(key, a "|" b) into out[65]. */
static void mac_hex(const struct console *c, const char *a, const char *b, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	char msg[512];

	snprintf(msg, sizeof(msg), "%s|%s", a, b);
	if (HMAC(EVP_sha256(), c->key, sizeof(c->key), (const unsigned char *)msg, strlen(msg),
	         md, &n) == NULL || n != 32) {
		out[0] = '\0';
		return;
	}
	hex_encode(md, 32, out);
}

static void random_hex(char *out, size_t nbytes)
{
	unsigned char b[32];

	if (nbytes > sizeof(b) || RAND_bytes(b, (int)nbytes) != 1) {
		out[0] = '\0';
		return;
	}
	hex_encode(b, nbytes, out);
}

static const char *cookie(const struct console_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->mhd, MHD_COOKIE_KIND, name);
}

static bool peer_is_loopback(struct MHD_Connection *conn, char *peer, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;

	snprintf(peer, len, "?");
	if (sa == NULL)
		return false;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &a->sin_addr, peer, (socklen_t)len);
		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &a->sin6_addr, peer, (socklen_t)len);
		return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	}
	return false;
}

/* Splits a session cookie in place: "EXP.NONCE.NAME.MAC". */
static bool session_valid(const struct console *c, char *v, char **nonce, char **name)
{
	char *exp = v, *mac, msg[320], want[65];
	int n;
	char *d1 = strchr(v, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	char *d3 = d2 ? strchr(d2 + 1, '.') : NULL;

	if (d3 == NULL)
		return false;
	*d1 = *d2 = *d3 = '\0';
	*nonce = d1 + 1;
	*name = d2 + 1;
	mac = d3 + 1;
	if (strtoll(exp, NULL, 10) < (long long)time(NULL))
		return false;
	n = snprintf(msg, sizeof(msg), "%s.%s.%s", exp, *nonce, *name);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return false;
	mac_hex(c, "session", msg, want);
	return want[0] != '\0' && same_secret(mac, want);
}

/* Who is asking: a bearer token, a session cookie, or nobody. */
static void authenticate(const struct console *c, struct console_request *req)
{
	const char *auth = console_header(req, MHD_HTTP_HEADER_AUTHORIZATION);
	const char *sess = cookie(req, CONSOLE_COOKIE);
	char buf[300], *nonce, *name;

	if (!c->ctx.have_token) {
		req->signed_in = true;
		snprintf(req->who, sizeof(req->who), "anonymous from %s", req->peer);
		return;
	}
	if (auth != NULL && strncmp(auth, "Bearer ", 7) == 0) {
		unsigned char d[32];

		digest(auth + 7, strlen(auth + 7), d);
		if (CRYPTO_memcmp(d, c->token_digest, 32) == 0) {
			req->signed_in = req->can_write = true;
			mac_hex(c, "csrf", "bearer", req->csrf);
			snprintf(req->who, sizeof(req->who), "token from %s", req->peer);
		}
		return;
	}
	if (sess == NULL || strlen(sess) >= sizeof(buf))
		return;
	snprintf(buf, sizeof(buf), "%s", sess);
	if (!session_valid(c, buf, &nonce, &name))
		return;
	req->signed_in = req->can_write = req->session = true;
	mac_hex(c, "csrf", nonce, req->csrf);
	snprintf(req->who, sizeof(req->who), "%s (session %.8s) from %s", name, nonce, req->peer);
}

/* The CSRF token of a POST, from the form or the header. */
static bool csrf_ok(const struct console_request *req)
{
	const char *h = console_header(req, "X-CSRF-Token");
	char buf[128];
	const char *f = console_form(req, "csrf", buf, sizeof(buf));

	if (req->csrf[0] == '\0')
		return false;
	return same_secret(f != NULL ? f : h, req->csrf);
}

/* TLS ends at a proxy on this host: it says so with X-Forwarded-Proto,
 * believed only from a loopback peer (docs/console.md, "Access"). */
static bool behind_tls(const struct console_request *req, bool loopback)
{
	const char *p = console_header(req, "X-Forwarded-Proto");

	return loopback && p != NULL && strcmp(p, "https") == 0;
}

/* Keeps [A-Za-z0-9._@-] of s: the name goes into a cookie and the log. */
static void operator_name(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; s != NULL && *s != '\0' && o + 1 < len && o < OPERATOR_NAME_MAX; s++) {
		char ch = *s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '.' || ch == '_' || ch == '@' || ch == '-')
			out[o++] = ch;
	}
	out[o] = '\0';
	if (o == 0)
		snprintf(out, len, "operator");
}

static void login_form(struct console_response *resp, const struct console_request *req,
                       unsigned int status, const char *problem, bool secure)
{
	char nonce[65];
	FILE *f;

	random_hex(nonce, 16);
	snprintf(resp->cookie2, sizeof(resp->cookie2),
	         CONSOLE_LOGIN_COOKIE "=%s; Path=/login; HttpOnly; SameSite=Strict%s", nonce,
	         secure ? "; Secure" : "");
	f = html_open(resp);
	if (f == NULL) {
		resp->status = 500;
		return;
	}
	html_begin(f, req, "Sign in");
	if (problem != NULL) {
		fputs("<p class=\"error\">", f);
		html_esc(f, problem);
		fputs("</p>", f);
	}
	fputs("<form class=\"signin\" method=\"post\" action=\"/login\">"
	      "<input type=\"hidden\" name=\"csrf\" value=\"", f);
	html_esc(f, nonce);
	fputs("\"><label>Your name (for the log)<input name=\"name\" autocomplete=\"username\""
	      " maxlength=\"32\"></label><label>Console token<input name=\"token\" type=\"password\""
	      " autocomplete=\"current-password\" required></label>"
	      "<button type=\"submit\">Sign in</button></form>\n", f);
	html_end(f);
	html_close(f, resp, status);
}

static void login(const struct console *c, const struct console_request *req,
                  struct console_response *resp, bool secure)
{
	char token[1024], csrf[128], name_in[128], name[OPERATOR_NAME_MAX + 1], nonce[33];
	char msg[200], mac[65];
	unsigned char d[32];
	long long exp = (long long)time(NULL) + SESSION_SECONDS;
	const char *t = console_form(req, "token", token, sizeof(token));

	if (!c->ctx.have_token) {
		html_message(resp, req, 403, "Sign in",
		             "no token is configured: the console is read-only and needs no sign-in");
		return;
	}
	if (!same_secret(console_form(req, "csrf", csrf, sizeof(csrf)),
	                 cookie(req, CONSOLE_LOGIN_COOKIE))) {
		login_form(resp, req, 403, "the sign-in form expired: try again", secure);
		return;
	}
	if (t != NULL)
		digest(t, strlen(t), d);
	if (t == NULL || CRYPTO_memcmp(d, c->token_digest, 32) != 0) {
		log_warning("console: failed sign-in from %s", req->peer);
		login_form(resp, req, 401, "wrong token", secure);
		return;
	}
	operator_name(console_form(req, "name", name_in, sizeof(name_in)), name, sizeof(name));
	random_hex(nonce, 16);
	snprintf(msg, sizeof(msg), "%lld.%s.%s", exp, nonce, name);
	mac_hex(c, "session", msg, mac);
	snprintf(resp->cookie, sizeof(resp->cookie),
	         CONSOLE_COOKIE "=%s.%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Strict%s", msg, mac,
	         SESSION_SECONDS, secure ? "; Secure" : "");
	log_info("console: %s (session %.8s) signed in from %s", name, nonce, req->peer);
	html_redirect(resp, "/");
}

static void logout(struct console_response *resp, bool secure)
{
	snprintf(resp->cookie, sizeof(resp->cookie),
	         CONSOLE_COOKIE "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict%s",
	         secure ? "; Secure" : "");
	html_redirect(resp, "/login");
}

static void css(struct console_response *resp)
{
	resp->body = strdup(console_css);
	resp->len = resp->body != NULL ? strlen(resp->body) : 0;
	resp->type = "text/css; charset=utf-8";
	resp->status = resp->body != NULL ? 200 : 500;
}

static void unauthorized(struct console_response *resp, const struct console_request *req)
{
	FILE *f = html_open(resp);

	if (f == NULL) {
		resp->status = 500;
		return;
	}
	html_begin(f, req, "Sign in required");
	fputs("<p>This console needs its token. <a href=\"/login\">Sign in</a>, or send"
	      " <span class=\"mono\">Authorization: Bearer TOKEN</span>.</p>\n", f);
	html_end(f);
	html_close(f, resp, 401);
}

/* A GET page by path; false when there is none. */
static bool page(struct console *c, const struct console_request *req,
                 struct console_response *resp)
{
	const char *p = req->path;

	if (strcmp(p, "/") == 0)
		console_page_overview(&c->ctx, req, resp);
	else if (strcmp(p, "/jobs") == 0)
		console_page_jobs(&c->ctx, req, resp);
	else if (strncmp(p, "/jobs/", 6) == 0 && p[6] != '\0' && strchr(p + 6, '/') == NULL)
		console_page_job(&c->ctx, req, resp, p + 6);
	else if (strcmp(p, "/dead") == 0)
		console_page_dead(&c->ctx, req, resp);
	else
		return false;
	return true;
}

static void route(struct console *c, struct console_request *req, struct console_response *resp,
                  bool secure)
{
	bool get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
	bool post = strcmp(req->method, "POST") == 0;

	if (!get && !post) {
		html_message(resp, req, 405, "Method not allowed", "only GET, HEAD and POST are served");
		return;
	}
	if (get && strcmp(req->path, "/console.css") == 0) {
		css(resp);
		return;
	}
	/* Browsers ask for it unprompted; there is none, and saying so with a
	 * 404 would show as an error in their consoles. */
	if (get && strcmp(req->path, "/favicon.ico") == 0) {
		resp->body = strdup("");
		resp->type = "image/x-icon";
		resp->status = resp->body != NULL ? 204 : 500;
		return;
	}
	if (strcmp(req->path, "/login") == 0) {
		if (post)
			login(c, req, resp, secure);
		else
			login_form(resp, req, 200, NULL, secure);
		return;
	}
	authenticate(c, req);
	if (!req->signed_in) {
		unauthorized(resp, req);
		return;
	}
	if (get) {
		if (!page(c, req, resp))
			html_message(resp, req, 404, "Not found", "there is no such page");
		return;
	}
	if (!req->can_write) {
		html_message(resp, req, 403, "Read-only",
		             "the console is read-only: no [console] token_env is configured");
		return;
	}
	if (!csrf_ok(req)) {
		log_warning("console: POST %s without a valid CSRF token refused, by %s", req->path,
		            req->who);
		html_message(resp, req, 403, "Forbidden",
		             "this form is missing its CSRF token or it is stale: reload the page");
		return;
	}
	if (strcmp(req->path, "/logout") == 0)
		logout(resp, secure);
	else if (!console_action(&c->ctx, req, resp))
		html_message(resp, req, 404, "Not found", "there is no such action");
}

static enum MHD_Result send_response(struct MHD_Connection *conn,
                                     const struct console_request *req,
                                     struct console_response *resp)
{
	struct MHD_Response *r;
	enum MHD_Result rc;

	if (resp->body == NULL) {
		resp->body = strdup("internal error\n");
		resp->len = resp->body != NULL ? strlen(resp->body) : 0;
		resp->type = "text/plain; charset=utf-8";
		resp->status = 500;
	}
	r = MHD_create_response_from_buffer(resp->len, resp->body, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(resp->body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "Content-Security-Policy", "default-src 'self'");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	if (resp->status == 401)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"outboxd\"");
	if (req->csrf[0] != '\0' && !req->session)
		MHD_add_response_header(r, "X-CSRF-Token", req->csrf);
	if (resp->location[0] != '\0')
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, resp->location);
	if (resp->cookie[0] != '\0')
		MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, resp->cookie);
	if (resp->cookie2[0] != '\0')
		MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, resp->cookie2);
	rc = MHD_queue_response(conn, resp->status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
	struct console *c = cls;
	struct upload *up = *con_cls;
	struct console_request req = {.mhd = conn, .method = method, .path = url};
	struct console_response resp = {.status = 500};
	bool loopback;

	if (up == NULL) {
		up = calloc(1, sizeof(*up));
		if (up == NULL)
			return MHD_NO;
		*con_cls = up;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (!up->too_big && up->len + *upload_data_size <= CONSOLE_MAX_BODY) {
			char *grown = realloc(up->data, up->len + *upload_data_size + 1);

			if (grown == NULL)
				return MHD_NO;
			up->data = grown;
			memcpy(up->data + up->len, upload_data, *upload_data_size);
			up->len += *upload_data_size;
			up->data[up->len] = '\0';
		} else {
			up->too_big = true;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	loopback = peer_is_loopback(conn, req.peer, sizeof(req.peer));
	snprintf(req.who, sizeof(req.who), "nobody from %s", req.peer);
	req.body = up->data;
	req.body_len = up->len;
	if (up->too_big)
		html_message(&resp, &req, 413, "Too large", "the request body is too large");
	else
		route(c, &req, &resp, behind_tls(&req, loopback));
	log_debug("console: %s %s %u (%s)", method, url, resp.status, req.who);
	return send_response(conn, &req, &resp);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct upload *up = *con_cls;

	if (up != NULL) {
		free(up->data);
		free(up);
		*con_cls = NULL;
	}
}

/* The token and the keys derived from it; -1 (logged) when the variable
 * is named but not set. */
static int load_token(struct console *c, const char *env_name)
{
	static const char label[] = "outboxd console sessions v1";
	const char *token = env_name != NULL ? getenv(env_name) : NULL;
	unsigned int n = 0;

	if (env_name == NULL)
		return 0;
	if (token == NULL || token[0] == '\0') {
		log_error("console: [console] token_env names \"%s\", which is not set or empty",
		          env_name);
		return -1;
	}
	digest(token, strlen(token), c->token_digest);
	if (HMAC(EVP_sha256(), token, (int)strlen(token), (const unsigned char *)label,
	         sizeof(label) - 1, c->key, &n) == NULL || n != 32) {
		log_error("console: could not derive the session key");
		return -1;
	}
	c->ctx.have_token = true;
	return 0;
}

int console_start(const struct cfg *cfg, struct console **out)
{
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	struct sockaddr_storage ss;
	struct cfg_listen l;
	struct console *c;

	*out = NULL;
	if (cfg->console.listen == NULL)
		return 0;
	if (cfg_listen_parse(cfg->console.listen, &l) != NULL) {
		log_error("console: invalid listen address");
		return -1;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		log_error("out of memory starting the console");
		return -1;
	}
	c->ctx.cfg = cfg;
	if (load_token(c, cfg->console.token_env) < 0) {
		free(c);
		return -1;
	}
	if (console_snapshot_start(&c->ctx.snapshot, cfg) < 0) {
		free(c);
		return -1;
	}
	(void)http_listen_sockaddr(&l, &ss);
	if (l.family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* One thread serves requests one at a time over one connection; the
	 * limits bound what a misbehaving client can hold. */
	c->mhd = MHD_start_daemon(flags, (uint16_t)l.port, NULL, NULL, on_request, c,
	                          MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	                          MHD_OPTION_CONNECTION_LIMIT, (unsigned int)32,
	                          MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)16,
	                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
	                          MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	                          MHD_OPTION_END);
	if (c->mhd == NULL) {
		log_error("console: could not listen on %s (address in use or not local?)",
		          cfg->console.listen);
		console_snapshot_stop(&c->ctx.snapshot);
		free(c);
		return -1;
	}
	log_info("console: serving on http://%s/ (%s)", cfg->console.listen,
	         c->ctx.have_token ? "token required" : "read-only, no token configured");
	*out = c;
	return 0;
}

void console_stop(struct console *c)
{
	if (c == NULL)
		return;
	MHD_stop_daemon(c->mhd);
	console_snapshot_stop(&c->ctx.snapshot);
	if (c->ctx.conn != NULL)
		PQfinish(c->ctx.conn);
	OPENSSL_cleanse(c->key, sizeof(c->key));
	free(c);
}
