/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/console_pages.c: the overview (/) and the dead jobs (/dead), each
 * rendered from the documents of core/ops/ that outboxctl prints.
 */
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"
#include "daemon/console_internal.h"
#include "ops/dead.h"
#include "ops/pause.h"
#include "ops/status.h"

static const char *const job_states[] = {"PENDING", "CLAIMED", "SUCCEEDED", "DEAD"};
static const char *const dead_reasons[] = {"PERMANENT", "STALE", "DLQ", "UNROUTABLE",
                                           "CRASHED", "MAX_ATTEMPTS", "CANCELLED"};
#define N_DEAD_REASONS 7
/* The dead page lists at most this many jobs and events. */
#define DEAD_SHOWN 200

/* The page could not be made: the database's message, escaped. */
static void db_error_page(struct console_ctx *c, const struct console_request *req,
                          struct console_response *resp, const char *what, const char *err)
{
	char msg[1200];

	console_db_failed(c);
	snprintf(msg, sizeof(msg), "could not read %s: %s", what, err);
	html_message(resp, req, 503, "Database unavailable", msg);
}

static void errors_box(FILE *f, const json_t *errors)
{
	size_t i;
	json_t *e;

	if (json_array_size(errors) == 0)
		return;
	fputs("<div class=\"error\"><strong>Some parts could not be read:</strong><ul>", f);
	json_array_foreach(errors, i, e) {
		fputs("<li>", f);
		html_json(f, e);
		fputs("</li>", f);
	}
	fputs("</ul></div>\n", f);
}

static void age(FILE *f, const json_t *v)
{
	if (json_is_number(v))
		fprintf(f, "%.1f s", json_number_value(v));
	else
		fputs("-", f);
}

static void depth(FILE *f, const json_t *d)
{
	if (!json_is_object(d)) {
		fputs("<td class=\"n\">-</td>", f);
		return;
	}
	fprintf(f, "<td class=\"n\">%lld / %lld</td>",
	        (long long)json_integer_value(json_object_get(d, "visible")),
	        (long long)json_integer_value(json_object_get(d, "in_flight")));
}

/* This process's lanes and workers connected, from the metrics registry;
 * "-" for a destination this process does not run. */
static void connected(FILE *f, const char *name)
{
	for (size_t i = 0; i < metrics_n_destinations(); i++) {
		if (strcmp(metrics_destination(i), name) == 0) {
			fprintf(f, "<td class=\"n\">%ld</td><td class=\"n\">%ld</td>",
			        metrics_gauge_value(METRIC_LANES_UP, i),
			        metrics_gauge_value(METRIC_WORKERS_UP, i));
			return;
		}
	}
	fputs("<td class=\"n\">-</td><td class=\"n\">-</td>", f);
}

static void count_link(FILE *f, const char *dest, const char *state, const json_t *jobs)
{
	long long n = (long long)json_integer_value(json_object_get(jobs, state));

	fputs("<td class=\"n\">", f);
	if (n == 0) {
		fputs("0</td>", f);
		return;
	}
	fputs("<a href=\"/jobs?destination=", f);
	html_url(f, dest);
	fprintf(f, "&amp;status=%s\">%lld</a></td>", state, n);
}

static void destination_row(FILE *f, const struct console_request *req, const char *name,
                            const json_t *d)
{
	const json_t *jobs = json_object_get(d, "jobs"), *outbox = json_object_get(d, "outbox");
	bool paused = json_is_true(json_object_get(d, "paused"));
	char action[300];

	fputs("<tr><td><a href=\"/jobs?destination=", f);
	html_url(f, name);
	fputs("\">", f);
	html_esc(f, name);
	fputs("</a>", f);
	if (paused)
		fputs(" <span class=\"badge paused\">paused</span>", f);
	fputs("</td>", f);
	for (int i = 0; i < 4; i++)
		count_link(f, name, job_states[i], jobs);
	fprintf(f, "<td class=\"n\">%lld</td><td class=\"n\">",
	        (long long)json_integer_value(json_object_get(outbox, "NEW")));
	age(f, json_object_get(d, "oldest_new_age_seconds"));
	fputs("</td><td class=\"n\">", f);
	age(f, json_object_get(d, "oldest_due_pending_age_seconds"));
	fputs("</td>", f);
	depth(f, json_object_get(d, "queue_depth"));
	depth(f, json_object_get(d, "dlq_depth"));
	connected(f, name);
	fputs("<td>", f);
	snprintf(action, sizeof(action), "/destinations/%s/%s", name, paused ? "resume" : "pause");
	html_button(f, req, action, paused ? "Resume" : "Pause", NULL, NULL);
	fputs("</td></tr>\n", f);
}

static void destinations_table(FILE *f, const struct console_request *req, const json_t *doc)
{
	const json_t *dests = json_object_get(doc, "destinations");
	const char *name;
	json_t *d;

	fputs("<h2>Destinations</h2><div class=\"scroll\"><table><thead><tr><th>destination</th>"
	      "<th class=\"n\">pending</th><th class=\"n\">claimed</th><th class=\"n\">succeeded</th>"
	      "<th class=\"n\">dead</th><th class=\"n\">NEW events</th><th class=\"n\">oldest NEW</th>"
	      "<th class=\"n\">oldest due</th><th class=\"n\">queue</th><th class=\"n\">DLQ</th>"
	      "<th class=\"n\">lanes</th><th class=\"n\">workers</th><th></th></tr></thead><tbody>\n",
	      f);
	json_object_foreach((json_t *)dests, name, d)
		destination_row(f, req, name, d);
	fputs("</tbody></table></div>\n<p class=\"hint\">Queue and DLQ: messages visible / in flight"
	      " (approximate, from SQS). Lanes and workers: those of this outboxd process connected"
	      " to the database now (0 when it does not run that role).</p>\n", f);
}

/* Sixty bars, succeeded below dead, scaled to the busiest minute. */
static void throughput(FILE *f, const json_t *pm)
{
	const json_t *ok = json_object_get(pm, "succeeded"), *dead = json_object_get(pm, "dead");
	long long peak = 1, total_ok = 0, total_dead = 0;

	for (size_t i = 0; i < json_array_size(ok); i++) {
		long long o = json_integer_value(json_array_get(ok, i));
		long long d = json_integer_value(json_array_get(dead, i));

		total_ok += o;
		total_dead += d;
		if (o + d > peak)
			peak = o + d;
	}
	fprintf(f, "<h2>Jobs per minute, last hour</h2><p>%lld succeeded, %lld dead; busiest minute"
	        " %lld.</p><svg class=\"spark\" viewBox=\"0 0 600 60\" preserveAspectRatio=\"none\""
	        " role=\"img\" aria-label=\"jobs finished per minute\">", total_ok, total_dead,
	        peak == 1 && total_ok + total_dead == 0 ? 0LL : peak);
	for (size_t i = 0; i < json_array_size(ok); i++) {
		long long o = json_integer_value(json_array_get(ok, i));
		long long d = json_integer_value(json_array_get(dead, i));
		double ho = 58.0 * (double)o / (double)peak, hd = 58.0 * (double)d / (double)peak;

		fprintf(f, "<rect class=\"ok\" x=\"%zu\" y=\"%.2f\" width=\"8\" height=\"%.2f\">"
		        "<title>%lld succeeded, %lld dead</title></rect>", i * 10 + 1, 60.0 - ho, ho,
		        o, d);
		if (d > 0)
			fprintf(f, "<rect class=\"dead\" x=\"%zu\" y=\"%.2f\" width=\"8\" height=\"%.2f\">"
			        "</rect>", i * 10 + 1, 60.0 - ho - hd, hd);
	}
	fputs("</svg>\n", f);
}

static void instances_table(FILE *f, const json_t *instances)
{
	size_t i;
	json_t *in;

	fputs("<h2>Instances</h2>", f);
	if (!json_is_array(instances)) {
		fputs("<p>-</p>\n", f);
		return;
	}
	if (json_array_size(instances) == 0) {
		fputs("<p>No instance is registered.</p>\n", f);
		return;
	}
	fputs("<div class=\"scroll\"><table><thead><tr><th>instance</th><th>role</th>"
	      "<th>started</th><th class=\"n\">heartbeat</th><th>live</th><th>destinations</th>"
	      "</tr></thead><tbody>", f);
	json_array_foreach(instances, i, in) {
		bool live = json_is_true(json_object_get(in, "live"));

		fputs("<tr><td class=\"mono\">", f);
		html_json(f, json_object_get(in, "instance_id"));
		fputs("</td><td>", f);
		html_json(f, json_object_get(in, "role"));
		fputs("</td><td>", f);
		html_json(f, json_object_get(in, "started_at"));
		fputs("</td><td class=\"n\">", f);
		age(f, json_object_get(in, "heartbeat_age_seconds"));
		fprintf(f, " ago</td><td class=\"%s\">%s</td><td>", live ? "ok" : "bad",
		        live ? "yes" : "no");
		html_json(f, json_object_get(in, "destinations"));
		fputs("</td></tr>", f);
	}
	fputs("</tbody></table></div>\n", f);
}

static void maintenance_cards(FILE *f, const json_t *runs)
{
	static const char *const tasks[] = {"sweeper", "pruner"};

	fputs("<h2>Maintenance</h2><div class=\"cards\">", f);
	for (int i = 0; i < 2; i++) {
		const json_t *r = json_object_get(runs, tasks[i]);

		fprintf(f, "<div class=\"card\"><h3>%s</h3>", tasks[i]);
		if (!json_is_object(r)) {
			fputs("<p>never ran</p></div>", f);
			continue;
		}
		fprintf(f, "<dl><dt>last run</dt><dd>");
		html_json(f, json_object_get(r, "finished_at"));
		fputs(" (", f);
		age(f, json_object_get(r, "age_seconds"));
		fputs(" ago)</dd><dt>on</dt><dd class=\"mono\">", f);
		html_json(f, json_object_get(r, "instance_id"));
		fprintf(f, "</dd><dt>result</dt><dd class=\"%s\">%s</dd><dt>counts</dt><dd>",
		        json_is_true(json_object_get(r, "ok")) ? "ok" : "bad",
		        json_is_true(json_object_get(r, "ok")) ? "ok" : "failed");
		html_json(f, json_object_get(r, "counts"));
		fputs("</dd><dt>runs</dt><dd>", f);
		html_json(f, json_object_get(r, "runs"));
		fputs("</dd>", f);
		if (json_is_string(json_object_get(r, "error"))) {
			fputs("<dt>error</dt><dd class=\"bad\">", f);
			html_json(f, json_object_get(r, "error"));
			fputs("</dd>", f);
		}
		fputs("</dl></div>", f);
	}
	fputs("</div>\n", f);
}

/* The paused flags as they are now: a pause or resume just made shows at once. */
static void overlay_paused(struct console_ctx *c, json_t *doc)
{
	char err[1024];
	PGconn *conn = console_db(c, err, sizeof(err));
	json_t *paused = conn != NULL ? ops_paused_destinations(conn, err, sizeof(err)) : NULL;
	json_t *d, *name;
	const char *dest;
	size_t i;

	if (paused == NULL) {
		console_db_failed(c);
		return;
	}
	json_object_foreach(json_object_get(doc, "destinations"), dest, d) {
		bool p = false;

		json_array_foreach(paused, i, name)
			p = p || strcmp(json_string_value(name), dest) == 0;
		if (json_is_boolean(json_object_get(d, "paused")))
			json_object_set_new(d, "paused", json_boolean(p));
	}
	json_decref(paused);
}

/* The first snapshot after a quiet minute may take this long. */
#define OVERVIEW_WAIT_MS 30000

void console_page_overview(struct console_ctx *c, const struct console_request *req,
                           struct console_response *resp)
{
	double age = 0;
	json_t *snap = console_snapshot_get(&c->snapshot, OVERVIEW_WAIT_MS, &age);
	json_t *doc = snap != NULL ? json_deep_copy(json_object_get(snap, "status")) : NULL;
	const json_t *pm = json_object_get(snap, "per_minute");
	bool counted;
	FILE *f;

	if (doc == NULL) {
		json_decref(snap);
		html_message(resp, req, 503, "Overview", "the counts are not ready yet: reload in a moment");
		return;
	}
	counted = json_is_object(json_object_get(json_object_get(doc, "totals"), "jobs"));
	overlay_paused(c, doc);
	f = html_open(resp);
	if (f != NULL) {
		html_begin(f, req, "Overview");
		errors_box(f, json_object_get(doc, "errors"));
		fprintf(f, "<p class=\"hint\">Counts as of %.1f s ago (recounted every 5 s or more while"
		        " this page is watched).</p>\n", age);
		destinations_table(f, req, doc);
		if (json_is_object(pm))
			throughput(f, pm);
		instances_table(f, json_object_get(doc, "instances"));
		maintenance_cards(f, json_object_get(doc, "maintenance"));
		html_end(f);
		html_close(f, resp, counted ? 200 : 503);
	}
	json_decref(doc);
	json_decref(snap);
}

/* A <select> of the options; value (may be NULL) selected. */
static void select_of(FILE *f, const char *label, const char *name, const char *const *opts,
                      size_t n, const char *value)
{
	fprintf(f, "<label>%s<select name=\"%s\"><option value=\"\">any</option>", label, name);
	for (size_t i = 0; i < n; i++) {
		fputs("<option value=\"", f);
		html_esc(f, opts[i]);
		fputs(value != NULL && strcmp(value, opts[i]) == 0 ? "\" selected>" : "\">", f);
		html_esc(f, opts[i]);
		fputs("</option>", f);
	}
	fputs("</select></label>", f);
}

/* The configured destinations' names, borrowed from cfg (caller frees the array). */
static const char **destination_names(const struct cfg *cfg)
{
	const char **names = calloc(cfg->n_destinations + 1, sizeof(*names));

	for (size_t i = 0; names != NULL && i < cfg->n_destinations; i++)
		names[i] = cfg->destinations[i].name;
	return names;
}

static void dead_filters(FILE *f, const struct cfg *cfg, const struct ops_dead_filter *flt)
{
	const char **names = destination_names(cfg);

	fputs("<form class=\"filters\" method=\"get\" action=\"/dead\">", f);
	if (names != NULL)
		select_of(f, "destination", "destination", names, cfg->n_destinations,
		          flt->destination);
	select_of(f, "reason", "reason", dead_reasons, N_DEAD_REASONS, flt->reason);
	fputs("<button type=\"submit\">Filter</button></form>\n", f);
	free(names);
}

static void reasons_table(FILE *f, const json_t *reasons)
{
	size_t i;
	json_t *r;

	fputs("<h2>By reason</h2>", f);
	if (json_array_size(reasons) == 0) {
		fputs("<p>No dead jobs.</p>\n", f);
		return;
	}
	fputs("<div class=\"scroll\"><table><thead><tr><th>destination</th><th>reason</th>"
	      "<th class=\"n\">jobs</th></tr></thead><tbody>", f);
	json_array_foreach(reasons, i, r) {
		const char *d = json_string_value(json_object_get(r, "destination"));
		const char *why = json_string_value(json_object_get(r, "dead_reason"));

		fputs("<tr><td>", f);
		html_esc(f, d);
		fputs("</td><td><a href=\"/dead?destination=", f);
		html_url(f, d);
		fputs("&amp;reason=", f);
		html_url(f, why);
		fputs("\">", f);
		html_esc(f, why);
		fputs("</a></td><td class=\"n\">", f);
		html_json(f, json_object_get(r, "count"));
		fputs("</td></tr>", f);
	}
	fputs("</tbody></table></div>\n", f);
}

static void dead_jobs_table(FILE *f, const struct console_request *req, const json_t *jobs)
{
	size_t i;
	json_t *j;

	fprintf(f, "<h2>Dead jobs (%zu shown)</h2>", json_array_size(jobs));
	if (json_array_size(jobs) == 0)
		return;
	fputs("<div class=\"scroll\"><table><thead><tr><th>job</th><th>destination</th>"
	      "<th>type</th><th>reason</th><th class=\"n\">attempts</th><th>finished</th>"
	      "<th>last error</th><th></th></tr></thead><tbody>\n", f);
	json_array_foreach(jobs, i, j) {
		const char *id = json_string_value(json_object_get(j, "job_id"));
		char action[128];

		fputs("<tr><td>", f);
		html_job_link(f, id);
		fputs("</td><td>", f);
		html_json(f, json_object_get(j, "destination"));
		fputs("</td><td>", f);
		html_json(f, json_object_get(j, "job_type"));
		fputs("</td><td class=\"s-DEAD\">", f);
		html_json(f, json_object_get(j, "dead_reason"));
		fputs("</td><td class=\"n\">", f);
		html_json(f, json_object_get(j, "attempt_count"));
		fputs("</td><td>", f);
		html_json(f, json_object_get(j, "finished_at"));
		fputs("</td><td class=\"wrap\">", f);
		html_json(f, json_object_get(j, "last_error"));
		fputs("</td><td>", f);
		snprintf(action, sizeof(action), "/jobs/%s/redrive", id != NULL ? id : "");
		html_button(f, req, action, "Redrive", "back", "/dead");
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

static void dead_events_table(FILE *f, const json_t *events)
{
	size_t i;
	json_t *e;

	if (json_array_size(events) == 0)
		return;
	fprintf(f, "<h2>Dead outbox events (%zu shown)</h2>", json_array_size(events));
	fputs("<div class=\"scroll\"><table><thead><tr><th>event</th><th>destination</th>"
	      "<th>reason</th><th>last error</th></tr></thead><tbody>\n", f);
	json_array_foreach(events, i, e) {
		fputs("<tr><td class=\"mono\">", f);
		html_json(f, json_object_get(e, "event_id"));
		fputs("</td><td>", f);
		html_json(f, json_object_get(e, "destination"));
		fputs("</td><td class=\"s-DEAD\">", f);
		html_json(f, json_object_get(e, "dead_reason"));
		fputs("</td><td class=\"wrap\">", f);
		html_json(f, json_object_get(e, "last_error"));
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

/* "Redrive all matching": a form that first asks to confirm. */
static void redrive_all_form(FILE *f, const struct console_request *req,
                             const struct ops_dead_filter *flt)
{
	fputs("<form class=\"filters\" method=\"post\" action=\"/dead/redrive\">"
	      "<input type=\"hidden\" name=\"csrf\" value=\"", f);
	html_esc(f, req->csrf);
	fputs("\"><input type=\"hidden\" name=\"destination\" value=\"", f);
	html_esc(f, flt->destination);
	fputs("\"><input type=\"hidden\" name=\"reason\" value=\"", f);
	html_esc(f, flt->reason);
	fputs("\"><button class=\"danger\" type=\"submit\"", f);
	if (!req->can_write)
		fputs(" disabled", f);
	fputs(">Redrive all matching&hellip;</button></form>\n", f);
}

static const char *nonempty(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

void console_page_dead(struct console_ctx *c, const struct console_request *req,
                       struct console_response *resp)
{
	struct ops_dead_filter flt = {
		.destination = nonempty(console_query(req, "destination")),
		.reason = nonempty(console_query(req, "reason")),
		.limit = DEAD_SHOWN,
	};
	char err[1024] = "";
	PGconn *conn = console_db(c, err, sizeof(err));
	json_t *doc = NULL, *reasons = NULL;
	FILE *f;

	if (conn != NULL)
		reasons = ops_dead_reasons(conn, err, sizeof(err));
	if (reasons != NULL)
		doc = ops_dead(conn, &flt, err, sizeof(err));
	if (doc == NULL) {
		json_decref(reasons);
		db_error_page(c, req, resp, "the dead jobs", err);
		return;
	}
	f = html_open(resp);
	if (f != NULL) {
		html_begin(f, req, "Dead jobs");
		dead_filters(f, c->cfg, &flt);
		reasons_table(f, reasons);
		if (json_array_size(json_object_get(doc, "jobs")) > 0)
			redrive_all_form(f, req, &flt);
		dead_jobs_table(f, req, json_object_get(doc, "jobs"));
		dead_events_table(f, json_object_get(doc, "events"));
		html_end(f);
		html_close(f, resp, 200);
	}
	json_decref(reasons);
	json_decref(doc);
}
