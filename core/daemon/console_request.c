/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/console_request.c: what every console handler uses (see
 * daemon/console_internal.h): the database connection, a request's query,
 * headers and form fields, and the answer to an action.  Apart from
 * console.c, the router, so that the pages and actions call down into it
 * and only the router calls them.
 */
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "daemon/console_internal.h"
#include "db/db.h"

PGconn *console_db(struct console_ctx *c, char *err, size_t errlen)
{
	if (c->conn != NULL && PQstatus(c->conn) != CONNECTION_OK)
		console_db_failed(c);
	if (c->conn == NULL) {
		c->conn = db_connect(c->cfg->database.conninfo, "outboxd-console", err, errlen);
		c->prepared = false;
	}
	return c->conn;
}

void console_db_failed(struct console_ctx *c)
{
	if (c->conn != NULL && (PQstatus(c->conn) != CONNECTION_OK || db_connection_lost(c->conn))) {
		PQfinish(c->conn);
		c->conn = NULL;
		c->prepared = false;
	}
}

const char *console_query(const struct console_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->mhd, MHD_GET_ARGUMENT_KIND, name);
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Decodes application/x-www-form-urlencoded s[0..n) into buf. */
static void form_decode(const char *s, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < len; i++) {
		if (s[i] == '+') {
			buf[o++] = ' ';
		} else if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
		           hexval(s[i + 2]) >= 0) {
			buf[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			buf[o++] = s[i];
		}
	}
	buf[o] = '\0';
}

const char *console_form(const struct console_request *req, const char *name, char *buf,
                         size_t len)
{
	size_t nlen = strlen(name);
	const char *p = req->body;

	while (p != NULL && *p != '\0') {
		const char *amp = strchr(p, '&');
		size_t seg = amp != NULL ? (size_t)(amp - p) : strlen(p);

		if (seg > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
			form_decode(p + nlen + 1, seg - nlen - 1, buf, len);
			return buf;
		}
		p = amp != NULL ? amp + 1 : NULL;
	}
	return NULL;
}

const char *console_header(const struct console_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->mhd, MHD_HEADER_KIND, name);
}

static bool wants_json(const struct console_request *req)
{
	const char *accept = console_header(req, "Accept");

	return accept != NULL && strstr(accept, "application/json") != NULL;
}

void console_action_done(const struct console_request *req, struct console_response *resp,
                 json_t *doc, const char *fallback)
{
	char back[256];
	const char *b = console_form(req, "back", back, sizeof(back));

	if (wants_json(req)) {
		resp->body = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
		resp->len = resp->body != NULL ? strlen(resp->body) : 0;
		resp->type = "application/json";
		resp->status = 200;
		json_decref(doc);
		return;
	}
	json_decref(doc);
	/* Only a path of this server: never an open redirect. */
	if (b == NULL || b[0] != '/' || b[1] == '/' || b[1] == '\\' || strpbrk(b, "\r\n") != NULL)
		b = fallback;
	html_redirect(resp, b);
}

