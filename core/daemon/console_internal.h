/*
 * daemon/console_internal.h: what the console's files share (console.c,
 * the server, access and routing; console_request.c, what every handler
 * uses; console_html.c, the page frame; console_pages.c and
 * console_jobs.c, the pages; console_actions.c, the POST actions).  Calls
 * go one way: console.c -> pages, actions -> jobs -> request -> html.
 *
 * Every handler runs on libmicrohttpd's one thread, so the connection and
 * the buffers need no lock.
 */
#ifndef OUTBOX_CORE_DAEMON_CONSOLE_INTERNAL_H
#define OUTBOX_CORE_DAEMON_CONSOLE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "config/config.h"
#include "daemon/console_snapshot.h"

/* The session cookie, and the pre-session cookie of the sign-in form. */
#define CONSOLE_COOKIE "outboxd_session"
#define CONSOLE_LOGIN_COOKIE "outboxd_login"

struct console_request {
	void *mhd;              /* struct MHD_Connection *, borrowed */
	const char *method;     /* borrowed */
	const char *path;       /* borrowed, without the query */
	const char *body;       /* the POST body (NUL-terminated), or NULL */
	size_t body_len;
	bool signed_in;         /* a valid token or session */
	bool can_write;         /* signed in, and a token is configured */
	bool session;           /* by cookie (false: bearer token, or none) */
	char who[128];          /* for the log: "alice (session 1a2b3c4d) from 127.0.0.1" */
	char csrf[65];          /* the token forms carry; "" when not signed in */
	char peer[64];          /* the client's address */
};

struct console_response {
	unsigned int status;
	char *body;             /* owned; malloc'd */
	size_t len;
	const char *type;       /* static */
	char location[512];     /* a 303's Location, or "" */
	char cookie[600];       /* a Set-Cookie value, or "" */
	char cookie2[200];      /* a second one, or "" */
};

struct console_ctx {
	const struct cfg *cfg;  /* borrowed */
	PGconn *conn;           /* owned; NULL while disconnected */
	bool prepared;          /* the ledger's statements are prepared on conn */
	bool have_token;
	struct console_snapshot snapshot; /* the overview's counts */
};

/* ---- console_request.c ---- */

/* The connection, (re)connected when needed; NULL with err set. */
PGconn *console_db(struct console_ctx *c, char *err, size_t errlen);
/* The database failed: drop a lost connection so the next request reconnects. */
void console_db_failed(struct console_ctx *c);
/* A query argument (decoded), or NULL/"" as given. */
const char *console_query(const struct console_request *req, const char *name);
/* A request header, or NULL. */
const char *console_header(const struct console_request *req, const char *name);
/* A form field of the POST body, decoded into buf; NULL when absent. */
const char *console_form(const struct console_request *req, const char *name, char *buf,
                         size_t len);

/* ---- console_html.c ---- */

/* Opens *resp's body as a stream; NULL out of memory. */
FILE *html_open(struct console_response *resp);
/* Closes the stream: a 200 text/html page (500 when the stream failed). */
void html_close(FILE *f, struct console_response *resp, unsigned int status);
/* Writes s (NULL: nothing) with & < > " ' escaped. */
void html_esc(FILE *f, const char *s);
/* Writes s percent-encoded for a URL's path segment or query value. */
void html_url(FILE *f, const char *s);
/* A link to /jobs/JOB_ID showing the id's first 12 characters. */
void html_job_link(FILE *f, const char *job_id);
/* A JSON value as text: strings escaped, null as "-". */
void html_json(FILE *f, const json_t *v);
/* The page head, the navigation and the title (escaped). */
void html_begin(FILE *f, const struct console_request *req, const char *title);
void html_end(FILE *f);
/* A one-button form POSTing to action (the CSRF field included); name and
 * value add one hidden field when not NULL. */
void html_button(FILE *f, const struct console_request *req, const char *action,
                 const char *label, const char *name, const char *value);
/* A page that says one thing (escaped), with the status given. */
void html_message(struct console_response *resp, const struct console_request *req,
                  unsigned int status, const char *title, const char *message);
/* A 303 to location (a local path). */
void html_redirect(struct console_response *resp, const char *location);
/* The stylesheet, served as /console.css (CSP: no inline style). */
extern const char console_css[];

/* ---- console_pages.c ---- */

void console_page_overview(struct console_ctx *c, const struct console_request *req,
                           struct console_response *resp);
void console_page_dead(struct console_ctx *c, const struct console_request *req,
                       struct console_response *resp);
void console_page_jobs(struct console_ctx *c, const struct console_request *req,
                       struct console_response *resp);
void console_page_job(struct console_ctx *c, const struct console_request *req,
                      struct console_response *resp, const char *job_id);

/* Answers an action with doc (stolen): JSON to a script that accepts it,
 * else a 303 to the form's "back" (a local path) or to fallback. */
void console_action_done(const struct console_request *req, struct console_response *resp,
                         json_t *doc, const char *fallback);

/* ---- console_jobs.c ---- */

/* POST /jobs/JOB_ID/cancel and /jobs/JOB_ID/retry; false for another verb. */
bool console_job_action(struct console_ctx *c, const struct console_request *req,
                        struct console_response *resp, const char *job_id, const char *verb);

/* ---- console_actions.c ---- */

/* POST /jobs/JOB_ID/VERB and /destinations/NAME/VERB and /dead/redrive;
 * false when path is none of them. */
bool console_action(struct console_ctx *c, const struct console_request *req,
                    struct console_response *resp);

#endif
