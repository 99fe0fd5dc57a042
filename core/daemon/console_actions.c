/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/console_actions.c: the console's POST actions, each through the
 * function of core/ops/ that outboxctl calls, each idempotent (repeating a
 * request changes nothing more) and logged with who did it.
 *
 * A browser is sent back with a 303 (to the page the form names in "back",
 * a local path, or the job's page); a script that sends "Accept:
 * application/json" gets what changed as a JSON object instead.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "daemon/console_internal.h"
#include "ops/dead.h"
#include "ops/pause.h"
#include "ops/redrive.h"

/* "Redrive all matching" redrives at most this many jobs per request. */
#define REDRIVE_ALL_MAX 10000

static PGconn *ready_db(struct console_ctx *c, const struct console_request *req,
                        struct console_response *resp)
{
	char err[1024] = "", msg[1200];
	PGconn *conn = console_db(c, err, sizeof(err));

	if (conn != NULL && !c->prepared) {
		if (ops_redrive_prepare(conn, err, sizeof(err)) < 0) {
			console_db_failed(c);
			conn = NULL;
		} else {
			c->prepared = true;
		}
	}
	if (conn == NULL) {
		snprintf(msg, sizeof(msg), "could not reach the database: %s", err);
		html_message(resp, req, 503, "Database unavailable", msg);
	}
	return conn;
}

static void action_failed(struct console_ctx *c, const struct console_request *req,
                          struct console_response *resp, const char *what, const char *err)
{
	char msg[1400];
	unsigned int status = strcmp(err, "no such job") == 0 ? 404 : 409;

	if (c->conn != NULL && PQstatus(c->conn) != CONNECTION_OK)
		status = 503;
	console_db_failed(c);
	log_warning("console: %s failed: %s, by %s", what, err, req->who);
	snprintf(msg, sizeof(msg), "could not %s: %s", what, err);
	html_message(resp, req, status, "Action failed", msg);
}

static void redrive(struct console_ctx *c, const struct console_request *req,
                    struct console_response *resp, const char *job_id)
{
	struct ops_redrive_result r;
	char err[1024], what[200], fallback[128];
	PGconn *conn = ready_db(c, req, resp);

	if (conn == NULL)
		return;
	snprintf(what, sizeof(what), "redrive job \"%.70s\"", job_id);
	if (ops_redrive_job(conn, job_id, true, &r, err, sizeof(err)) < 0) {
		action_failed(c, req, resp, what, err);
		return;
	}
	if (r.changed)
		log_info("console: job \"%s\" redriven (generation %d, event %s), by %s", job_id,
		         r.generation, r.event_id, req->who);
	else
		log_info("console: job \"%s\" not redriven: it is %s, not DEAD, by %s", job_id,
		         r.status, req->who);
	snprintf(fallback, sizeof(fallback), "/jobs/%.70s", job_id);
	console_action_done(req, resp, json_pack("{s:s, s:b, s:s, s:i}", "job_id", job_id, "changed", r.changed,
	                          "status_before", r.status, "redrive_generation", r.generation),
	     fallback);
}

static void set_paused(struct console_ctx *c, const struct console_request *req,
                       struct console_response *resp, const char *dest, bool pause)
{
	char err[1024] = "", what[200];
	PGconn *conn = ready_db(c, req, resp);
	int rc;

	if (conn == NULL)
		return;
	snprintf(what, sizeof(what), "%s destination \"%.100s\"", pause ? "pause" : "resume", dest);
	rc = ops_set_paused(c->cfg, conn, dest, pause, err, sizeof(err));
	if (rc == OPS_PAUSE_NOT_CONFIGURED) {
		html_message(resp, req, 404, "Not found", "no such destination is configured");
		return;
	}
	if (rc < 0) {
		action_failed(c, req, resp, what, err);
		return;
	}
	log_info("console: destination \"%s\" %s, by %s", dest,
	         pause ? (rc == 1 ? "paused" : "was already paused")
	               : (rc == 1 ? "resumed" : "was not paused"), req->who);
	console_action_done(req, resp, json_pack("{s:s, s:b, s:b}", "destination", dest, "paused", pause,
	                          "changed", rc == 1), "/");
}

static const char *field(const struct console_request *req, const char *name, char *buf,
                         size_t len)
{
	const char *v = console_form(req, name, buf, len);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* The page that asks before "redrive all matching" acts. */
static void confirm_page(const struct console_request *req, struct console_response *resp,
                         const struct ops_dead_filter *flt, size_t n)
{
	FILE *f = html_open(resp);

	if (f == NULL) {
		resp->status = 500;
		return;
	}
	html_begin(f, req, "Redrive dead jobs?");
	fprintf(f, "<p>This redrives <strong>%zu</strong> dead job%s%s (destination: ", n,
	        n == 1 ? "" : "s", n == REDRIVE_ALL_MAX ? " (the most one request redrives)" : "");
	html_esc(f, flt->destination != NULL ? flt->destination : "any");
	fputs(", reason: ", f);
	html_esc(f, flt->reason != NULL ? flt->reason : "any");
	fputs("): each goes back to PENDING with a new generation and is sent again.</p>"
	      "<form class=\"filters\" method=\"post\" action=\"/dead/redrive\">"
	      "<input type=\"hidden\" name=\"csrf\" value=\"", f);
	html_esc(f, req->csrf);
	fputs("\"><input type=\"hidden\" name=\"confirm\" value=\"yes\">"
	      "<input type=\"hidden\" name=\"destination\" value=\"", f);
	html_esc(f, flt->destination);
	fputs("\"><input type=\"hidden\" name=\"reason\" value=\"", f);
	html_esc(f, flt->reason);
	fputs("\"><button class=\"danger\" type=\"submit\">Yes, redrive them</button>"
	      " <a href=\"/dead\">Cancel</a></form>\n", f);
	html_end(f);
	html_close(f, resp, 200);
}

static void redrive_all(struct console_ctx *c, const struct console_request *req,
                        struct console_response *resp)
{
	char dest[256], reason[64], confirm[8], err[1024] = "";
	struct ops_dead_filter flt = {
		.destination = field(req, "destination", dest, sizeof(dest)),
		.reason = field(req, "reason", reason, sizeof(reason)),
		.limit = REDRIVE_ALL_MAX,
	};
	const char *yes = field(req, "confirm", confirm, sizeof(confirm));
	PGconn *conn = ready_db(c, req, resp);
	size_t i, done_n = 0, failed = 0;
	json_t *ids, *id;

	if (conn == NULL)
		return;
	ids = ops_dead_job_ids(conn, &flt, err, sizeof(err));
	if (ids == NULL) {
		action_failed(c, req, resp, "list the dead jobs", err);
		return;
	}
	if (yes == NULL || strcmp(yes, "yes") != 0) {
		confirm_page(req, resp, &flt, json_array_size(ids));
		json_decref(ids);
		return;
	}
	json_array_foreach(ids, i, id) {
		struct ops_redrive_result r;

		if (ops_redrive_job(conn, json_string_value(id), true, &r, err, sizeof(err)) < 0)
			failed++;
		else if (r.changed)
			done_n++;
		log_debug("console: job \"%s\" redriven by %s", json_string_value(id), req->who);
	}
	log_info("console: %zu dead jobs redriven, %zu failed (destination=%s reason=%s), by %s",
	         done_n, failed, flt.destination != NULL ? flt.destination : "any",
	         flt.reason != NULL ? flt.reason : "any", req->who);
	json_decref(ids);
	console_action_done(req, resp, json_pack("{s:I, s:I}", "redriven", (json_int_t)done_n,
	                          "failed", (json_int_t)failed), "/dead");
}

/* "/PREFIX/NAME/VERB" into name (decoded already) and verb; false if not. */
static bool split_path(const char *path, const char *prefix, char *name, size_t nlen,
                       const char **verb)
{
	size_t plen = strlen(prefix);
	const char *slash;

	if (strncmp(path, prefix, plen) != 0)
		return false;
	slash = strchr(path + plen, '/');
	if (slash == NULL || slash == path + plen || (size_t)(slash - path - plen) >= nlen ||
	    strchr(slash + 1, '/') != NULL)
		return false;
	memcpy(name, path + plen, (size_t)(slash - path - plen));
	name[slash - path - plen] = '\0';
	*verb = slash + 1;
	return true;
}

bool console_action(struct console_ctx *c, const struct console_request *req,
                    struct console_response *resp)
{
	char name[256];
	const char *verb;

	if (strcmp(req->path, "/dead/redrive") == 0) {
		redrive_all(c, req, resp);
		return true;
	}
	if (split_path(req->path, "/jobs/", name, sizeof(name), &verb)) {
		if (strcmp(verb, "redrive") != 0)
			return console_job_action(c, req, resp, name, verb);
		redrive(c, req, resp, name);
		return true;
	}
	if (split_path(req->path, "/destinations/", name, sizeof(name), &verb) &&
	    (strcmp(verb, "pause") == 0 || strcmp(verb, "resume") == 0)) {
		set_paused(c, req, resp, name, strcmp(verb, "pause") == 0);
		return true;
	}
	return false;
}
