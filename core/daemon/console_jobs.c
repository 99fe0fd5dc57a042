/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/console_jobs.c: the job list (/jobs), one job (/jobs/JOB_ID) and
 * its cancel and retry actions, rendered from and done by core/ops/jobs.h
 * and core/ops/job_actions.h, as outboxctl jobs, show, cancel and retry.
 *
 * The list pages by keyset: "Older" carries the last row's cursor as
 * ?before=, so a page costs the same at any depth of the ledger.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "daemon/console_internal.h"
#include "ops/job_actions.h"
#include "ops/jobs.h"

static const char *const job_states[] = {"PENDING", "CLAIMED", "SUCCEEDED", "DEAD"};
#define N_JOB_STATES 4
/* Rows per page of /jobs. */
#define JOBS_PAGE 50

static const char *nonempty(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

static void filter_link_part(FILE *f, const char *name, const char *value, bool *first)
{
	if (value == NULL)
		return;
	fputs(*first ? "?" : "&amp;", f);
	*first = false;
	fputs(name, f);
	fputc('=', f);
	html_url(f, value);
}

static void status_select(FILE *f, const char *value)
{
	fputs("<label>status<select name=\"status\"><option value=\"\">any</option>", f);
	for (int i = 0; i < N_JOB_STATES; i++)
		fprintf(f, "<option%s>%s</option>",
		        value != NULL && strcmp(value, job_states[i]) == 0 ? " selected" : "",
		        job_states[i]);
	fputs("</select></label>", f);
}

static void jobs_filters(FILE *f, const struct cfg *cfg, const struct ops_jobs_filter *flt)
{
	fputs("<form class=\"filters\" method=\"get\" action=\"/jobs\"><label>destination"
	      "<select name=\"destination\"><option value=\"\">any</option>", f);
	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const char *n = cfg->destinations[i].name;

		fputs("<option", f);
		if (flt->destination != NULL && strcmp(flt->destination, n) == 0)
			fputs(" selected", f);
		fputs(">", f);
		html_esc(f, n);
		fputs("</option>", f);
	}
	fputs("</select></label>", f);
	status_select(f, flt->status);
	fputs("<label>type<input name=\"type\" value=\"", f);
	html_esc(f, flt->job_type);
	fputs("\"></label><button type=\"submit\">Filter</button></form>\n", f);
}

static void jobs_table(FILE *f, const json_t *rows)
{
	size_t i;
	json_t *j;

	if (json_array_size(rows) == 0) {
		fputs("<p>No job matches.</p>\n", f);
		return;
	}
	fputs("<div class=\"scroll\"><table><thead><tr><th>job</th><th>destination</th>"
	      "<th>type</th><th>status</th><th class=\"n\">attempts</th><th class=\"n\">gen</th>"
	      "<th>created</th><th>next attempt</th></tr></thead><tbody>\n", f);
	json_array_foreach(rows, i, j) {
		const char *st = json_string_value(json_object_get(j, "status"));

		fputs("<tr><td>", f);
		html_job_link(f, json_string_value(json_object_get(j, "job_id")));
		fputs("</td><td>", f);
		html_json(f, json_object_get(j, "destination"));
		fputs("</td><td>", f);
		html_json(f, json_object_get(j, "job_type"));
		fputs("</td><td class=\"s-", f);
		html_esc(f, st);
		fputs("\">", f);
		html_esc(f, st);
		if (json_is_string(json_object_get(j, "dead_reason"))) {
			fputs(" (", f);
			html_json(f, json_object_get(j, "dead_reason"));
			fputs(")", f);
		}
		fputs("</td><td class=\"n\">", f);
		html_json(f, json_object_get(j, "attempt_count"));
		fputs("</td><td class=\"n\">", f);
		html_json(f, json_object_get(j, "redrive_generation"));
		fputs("</td><td>", f);
		html_json(f, json_object_get(j, "created_at"));
		fputs("</td><td>", f);
		html_json(f, json_object_get(j, "next_attempt_at"));
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

/* "Older" (the next page) when this one was full, and "Newest". */
static void pager(FILE *f, const struct ops_jobs_filter *flt, const json_t *rows)
{
	const json_t *last = json_array_get(rows, json_array_size(rows) - 1);
	bool first = true;

	fputs("<p class=\"pager\">", f);
	if (flt->before != NULL) {
		fputs("<a href=\"/jobs", f);
		filter_link_part(f, "destination", flt->destination, &first);
		filter_link_part(f, "status", flt->status, &first);
		filter_link_part(f, "type", flt->job_type, &first);
		fputs("\">&laquo; Newest</a> ", f);
	}
	if (json_array_size(rows) == (size_t)flt->limit && last != NULL) {
		first = true;
		fputs("<a href=\"/jobs", f);
		filter_link_part(f, "destination", flt->destination, &first);
		filter_link_part(f, "status", flt->status, &first);
		filter_link_part(f, "type", flt->job_type, &first);
		filter_link_part(f, "before", json_string_value(json_object_get(last, "cursor")),
		                 &first);
		fputs("\">Older &raquo;</a>", f);
	}
	fputs("</p>\n", f);
}

void console_page_jobs(struct console_ctx *c, const struct console_request *req,
                       struct console_response *resp)
{
	struct ops_jobs_filter flt = {
		.destination = nonempty(console_query(req, "destination")),
		.status = nonempty(console_query(req, "status")),
		.job_type = nonempty(console_query(req, "type")),
		.before = nonempty(console_query(req, "before")),
		.limit = JOBS_PAGE,
	};
	char err[1024] = "";
	PGconn *conn = console_db(c, err, sizeof(err));
	json_t *rows = NULL;
	int rc = OPS_DB;
	FILE *f;

	if (conn != NULL)
		rc = ops_jobs_list(conn, &flt, &rows, err, sizeof(err));
	if (rc == OPS_DB)
		console_db_failed(c);
	f = html_open(resp);
	if (f == NULL) {
		json_decref(rows);
		return;
	}
	html_begin(f, req, "Jobs");
	jobs_filters(f, c->cfg, &flt);
	if (rc != OPS_OK) {
		fputs("<p class=\"error\">", f);
		html_esc(f, err);
		fputs("</p>\n", f);
	} else {
		jobs_table(f, rows);
		pager(f, &flt, rows);
	}
	html_end(f);
	html_close(f, resp, rc == OPS_OK ? 200 : rc == OPS_INVALID ? 400 : 503);
	json_decref(rows);
}

/* One <dt>/<dd> pair per key of the job that is not null. */
static void job_fields(FILE *f, const json_t *job)
{
	static const char *const keys[] = {
		"job_id", "job_type", "destination", "status", "dead_reason", "attempt_count",
		"crash_count", "redrive_generation", "claimed_by", "lease_until", "run_at",
		"next_attempt_at", "created_at", "updated_at", "finished_at", "window_symbol",
		"window_start", "window_generation", "payload_bytes",
	};

	fputs("<div class=\"card\"><dl>", f);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *v = json_object_get(job, keys[i]);

		if (v == NULL || json_is_null(v))
			continue;
		fprintf(f, "<dt>%s</dt><dd%s>", keys[i],
		        strcmp(keys[i], "status") == 0 ? " id=\"job-status\"" : "");
		html_json(f, v);
		fputs("</dd>", f);
	}
	fputs("</dl></div>\n", f);
}

/* A JSON value pretty-printed (escaped) in a <pre>; a string as it is. */
static void pre_json(FILE *f, const char *title, const json_t *v)
{
	char *text = json_is_string(v) ? NULL : json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	                                                   JSON_ENCODE_ANY);

	fprintf(f, "<h2>%s</h2><pre>", title);
	html_esc(f, text != NULL ? text : json_string_value(v));
	fputs("</pre>\n", f);
	free(text);
}

static void events_table(FILE *f, const json_t *events)
{
	size_t i;
	json_t *e;

	fputs("<h2>Outbox events</h2><div class=\"scroll\"><table><thead><tr><th>event</th>"
	      "<th>status</th><th class=\"n\">gen</th><th class=\"n\">attempts</th>"
	      "<th>SQS message</th><th>created</th><th>published</th><th>last error</th></tr>"
	      "</thead><tbody>\n", f);
	json_array_foreach(events, i, e) {
		static const char *const keys[] = {"event_id", "status", "redrive_generation",
		                                   "attempts", "sqs_message_id", "created_at",
		                                   "published_at", "last_error"};

		fputs("<tr>", f);
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			fputs(k == 7 ? "<td class=\"wrap\">" : k == 0 || k == 4 ? "<td class=\"mono\">"
			      : "<td>", f);
			html_json(f, json_object_get(e, keys[k]));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

static void evidence_table(FILE *f, const json_t *evidence)
{
	size_t i;
	json_t *e;

	fputs("<h2>Dead-letter evidence</h2>", f);
	if (json_array_size(evidence) == 0) {
		fputs("<p>None: no message of this job reached its DLQ.</p>\n", f);
		return;
	}
	fputs("<div class=\"scroll\"><table><thead><tr><th>received</th><th>outcome</th>"
	      "<th class=\"n\">receives</th><th>SQS message</th><th>body</th></tr></thead><tbody>", f);
	json_array_foreach(evidence, i, e) {
		fputs("<tr><td>", f);
		html_json(f, json_object_get(e, "received_at"));
		fputs("</td><td>", f);
		html_json(f, json_object_get(e, "outcome"));
		fputs("</td><td class=\"n\">", f);
		html_json(f, json_object_get(e, "receive_count"));
		fputs("</td><td class=\"mono\">", f);
		html_json(f, json_object_get(e, "sqs_message_id"));
		fputs("</td><td class=\"wrap mono\">", f);
		html_json(f, json_object_get(e, "body"));
		fputs("</td></tr>", f);
	}
	fputs("</tbody></table></div>\n", f);
}

/* The buttons the job's state allows (each action is idempotent anyway). */
static void job_actions(FILE *f, const struct console_request *req, const json_t *job)
{
	const char *id = json_string_value(json_object_get(job, "job_id"));
	const char *st = json_string_value(json_object_get(job, "status"));
	char action[128];

	if (id == NULL || st == NULL)
		return;
	fputs("<p>", f);
	if (strcmp(st, "DEAD") == 0) {
		snprintf(action, sizeof(action), "/jobs/%s/redrive", id);
		html_button(f, req, action, "Redrive", NULL, NULL);
	}
	if (strcmp(st, "PENDING") == 0) {
		snprintf(action, sizeof(action), "/jobs/%s/retry", id);
		html_button(f, req, action, "Retry now", NULL, NULL);
		fputs(" ", f);
	}
	if (strcmp(st, "PENDING") == 0 || strcmp(st, "CLAIMED") == 0) {
		snprintf(action, sizeof(action), "/jobs/%s/cancel", id);
		html_button(f, req, action, "Cancel", NULL, NULL);
	}
	fputs("</p>\n", f);
}

void console_page_job(struct console_ctx *c, const struct console_request *req,
                      struct console_response *resp, const char *job_id)
{
	char err[1024] = "";
	PGconn *conn = console_db(c, err, sizeof(err));
	bool full = nonempty(console_query(req, "full")) != NULL;
	json_t *job = NULL;
	int rc = OPS_DB;
	FILE *f;

	if (conn != NULL)
		rc = ops_job_show(conn, job_id, full, &job, err, sizeof(err));
	if (rc != OPS_OK) {
		if (rc == OPS_DB)
			console_db_failed(c);
		html_message(resp, req, rc == OPS_NOT_FOUND ? 404 : rc == OPS_INVALID ? 400 : 503,
		             "Job", err);
		return;
	}
	f = html_open(resp);
	if (f != NULL) {
		html_begin(f, req, "Job");
		job_actions(f, req, job);
		job_fields(f, job);
		if (json_is_string(json_object_get(job, "last_error"))) {
			fputs("<h2>Last error</h2><pre class=\"bad\">", f);
			html_json(f, json_object_get(job, "last_error"));
			fputs("</pre>\n", f);
		}
		pre_json(f, "Payload", json_object_get(job, "payload"));
		if (json_is_true(json_object_get(job, "payload_truncated"))) {
			fputs("<p>Cut: <a href=\"/jobs/", f);
			html_url(f, job_id);
			fputs("?full=1\">show all of it</a>.</p>\n", f);
		}
		pre_json(f, "Identity", json_object_get(job, "identity"));
		events_table(f, json_object_get(job, "events"));
		evidence_table(f, json_object_get(job, "dlq_evidence"));
		html_end(f);
		html_close(f, resp, 200);
	}
	json_decref(job);
}

bool console_job_action(struct console_ctx *c, const struct console_request *req,
                        struct console_response *resp, const char *job_id, const char *verb)
{
	bool cancel = strcmp(verb, "cancel") == 0;
	char err[1024] = "", actor[160], msg[1200];
	PGconn *conn;
	json_t *out = NULL;
	int rc;

	if (!cancel && strcmp(verb, "retry") != 0)
		return false;
	conn = console_db(c, err, sizeof(err));
	if (conn == NULL) {
		snprintf(msg, sizeof(msg), "could not reach the database: %s", err);
		html_message(resp, req, 503, "Database unavailable", msg);
		return true;
	}
	snprintf(actor, sizeof(actor), "console (%s)", req->who);
	rc = cancel ? ops_cancel(conn, job_id, 0, actor, &out, err, sizeof(err))
	            : ops_retry_now(conn, job_id, actor, &out, err, sizeof(err));
	if (rc == OPS_OK || rc == OPS_REFUSED) {
		/* Refused (claimed, finished) is an answer, not a failure: the
		 * page shows the job as it is. */
		if (rc == OPS_REFUSED)
			log_info("console: %s of job \"%s\" refused: %s, by %s", verb, job_id, err,
			         req->who);
		snprintf(msg, sizeof(msg), "/jobs/%.70s", job_id);
		console_action_done(req, resp, out, msg);
		return true;
	}
	json_decref(out);
	if (rc == OPS_DB)
		console_db_failed(c);
	log_warning("console: %s of job \"%.70s\" failed: %s, by %s", verb, job_id, err, req->who);
	snprintf(msg, sizeof(msg), "could not %s the job: %s", verb, err);
	html_message(resp, req, rc == OPS_NOT_FOUND ? 404 : rc == OPS_INVALID ? 400 : 503,
	             "Action failed", msg);
	return true;
}
