/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/console_html.c: the console's page frame, escaping and the
 * stylesheet (see daemon/console_internal.h).
 *
 * Everything a page shows from the database goes through html_esc() or
 * html_json(): payloads, errors, job types and DLQ bodies are hostile
 * input.  The Content-Security-Policy (default-src 'self') forbids inline
 * style and script, so the stylesheet is a file of its own and the pages
 * need no script at all: every action is a form.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/console_internal.h"

FILE *html_open(struct console_response *resp)
{
	resp->body = NULL;
	resp->len = 0;
	return open_memstream(&resp->body, &resp->len);
}

void html_close(FILE *f, struct console_response *resp, unsigned int status)
{
	if (fclose(f) != 0) {
		free(resp->body);
		resp->body = strdup("out of memory\n");
		resp->len = resp->body != NULL ? strlen(resp->body) : 0;
		resp->type = "text/plain; charset=utf-8";
		resp->status = 500;
		return;
	}
	resp->type = "text/html; charset=utf-8";
	resp->status = status;
}

void html_esc(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

void html_url(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '_' || ch == '.' || ch == '~')
			fputc(ch, f);
		else
			fprintf(f, "%%%02X", ch);
	}
}

void html_job_link(FILE *f, const char *job_id)
{
	char shown[13];

	fputs("<a class=\"mono\" href=\"/jobs/", f);
	html_url(f, job_id);
	fputs("\">", f);
	snprintf(shown, sizeof(shown), "%s", job_id != NULL ? job_id : "");
	html_esc(f, shown);
	fputs("&hellip;</a>", f);
}

void html_json(FILE *f, const json_t *v)
{
	char *text;

	if (v == NULL || json_is_null(v)) {
		fputs("-", f);
	} else if (json_is_string(v)) {
		html_esc(f, json_string_value(v));
	} else if (json_is_integer(v)) {
		fprintf(f, "%lld", (long long)json_integer_value(v));
	} else if (json_is_real(v)) {
		fprintf(f, "%.1f", json_real_value(v));
	} else if (json_is_boolean(v)) {
		fputs(json_is_true(v) ? "yes" : "no", f);
	} else {
		text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		html_esc(f, text);
		free(text);
	}
}

void html_begin(FILE *f, const struct console_request *req, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
	      "<link rel=\"stylesheet\" href=\"/console.css\"><title>", f);
	html_esc(f, title);
	fputs(" - outboxd</title></head><body><header><a class=\"brand\" href=\"/\">outboxd</a>"
	      "<nav><a href=\"/\">Overview</a><a href=\"/jobs\">Jobs</a>"
	      "<a href=\"/dead\">Dead</a></nav>", f);
	if (req->session)
		html_button(f, req, "/logout", "Sign out", NULL, NULL);
	else if (!req->signed_in)
		fputs("<a class=\"signin\" href=\"/login\">Sign in</a>", f);
	fputs("</header><main><h1>", f);
	html_esc(f, title);
	fputs("</h1>\n", f);
	if (req->signed_in && !req->can_write)
		fputs("<p class=\"note\">Read-only: no [console] token_env is configured.</p>\n", f);
}

void html_end(FILE *f)
{
	fputs("</main></body></html>\n", f);
}

void html_button(FILE *f, const struct console_request *req, const char *action,
                 const char *label, const char *name, const char *value)
{
	fputs("<form class=\"inline\" method=\"post\" action=\"", f);
	html_esc(f, action);
	fputs("\"><input type=\"hidden\" name=\"csrf\" value=\"", f);
	html_esc(f, req->csrf);
	fputs("\">", f);
	if (name != NULL) {
		fputs("<input type=\"hidden\" name=\"", f);
		html_esc(f, name);
		fputs("\" value=\"", f);
		html_esc(f, value);
		fputs("\">", f);
	}
	fputs("<button type=\"submit\"", f);
	if (!req->can_write)
		fputs(" disabled", f);
	fputs(">", f);
	html_esc(f, label);
	fputs("</button></form>", f);
}

void html_message(struct console_response *resp, const struct console_request *req,
                  unsigned int status, const char *title, const char *message)
{
	FILE *f = html_open(resp);

	if (f == NULL) {
		resp->status = 500;
		return;
	}
	html_begin(f, req, title);
	fputs("<p>", f);
	html_esc(f, message);
	fputs("</p>\n", f);
	html_end(f);
	html_close(f, resp, status);
}

void html_redirect(struct console_response *resp, const char *location)
{
	resp->status = 303;
	snprintf(resp->location, sizeof(resp->location), "%s", location);
	resp->body = strdup("");
	resp->len = 0;
	resp->type = "text/plain; charset=utf-8";
}

const char console_css[] =
	":root{--fg:#1d2330;--mute:#5b6475;--line:#d8dde6;--bg:#f6f7f9;--card:#fff;"
	"--accent:#2457c5;--bad:#b3261e;--ok:#1e7a3c;--warn:#8a5a00}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;font:15px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;"
	"color:var(--fg);background:var(--bg)}\n"
	"header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;"
	"padding:.6rem 1rem;background:#1d2330;color:#fff}\n"
	"header a{color:#fff;text-decoration:none}\n"
	".brand{font-weight:700;letter-spacing:.02em}\n"
	"nav{display:flex;gap:1rem;flex:1}\n"
	"nav a:hover,.signin:hover{text-decoration:underline}\n"
	"main{max-width:1200px;margin:0 auto;padding:1rem}\n"
	"h1{font-size:1.4rem;margin:.3rem 0 1rem}\n"
	"h2{font-size:1.1rem;margin:1.5rem 0 .5rem}\n"
	".scroll{overflow-x:auto;background:var(--card);border:1px solid var(--line);"
	"border-radius:6px}\n"
	"table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\n"
	"th,td{padding:.4rem .6rem;border-bottom:1px solid var(--line);text-align:left;"
	"vertical-align:top;white-space:nowrap}\n"
	"td.wrap{white-space:normal;word-break:break-word;min-width:16rem}\n"
	"th{background:#eef1f5;font-weight:600;font-size:.85rem;color:var(--mute)}\n"
	"td.n,th.n{text-align:right}\n"
	"tr:last-child td{border-bottom:0}\n"
	"a{color:var(--accent)}\n"
	".mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}\n"
	"pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.6rem;"
	"overflow-x:auto;white-space:pre-wrap;word-break:break-word;font-size:.85rem}\n"
	".badge{display:inline-block;padding:0 .45rem;border-radius:999px;font-size:.8rem;"
	"font-weight:600;background:#e4e8ef}\n"
	".s-DEAD,.bad{color:var(--bad)}.s-SUCCEEDED,.ok{color:var(--ok)}"
	".s-PENDING,.s-CLAIMED,.warn{color:var(--warn)}\n"
	".paused{background:#fde7c2;color:var(--warn)}\n"
	".note{background:#fff6db;border:1px solid #f0d48a;padding:.5rem .75rem;border-radius:6px}\n"
	".error{background:#fde8e6;border:1px solid #f1b5ae;padding:.5rem .75rem;border-radius:6px}\n"
	"form.inline{display:inline;margin:0}\n"
	"form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.75rem 0 1rem}\n"
	"form.filters label,form.signin label{display:flex;flex-direction:column;font-size:.85rem;"
	"color:var(--mute)}\n"
	"form.signin{display:flex;flex-direction:column;gap:.75rem;max-width:22rem}\n"
	"input,select,button{font:inherit;padding:.35rem .6rem;border:1px solid var(--line);"
	"border-radius:5px;background:#fff;color:var(--fg)}\n"
	"button{background:var(--accent);border-color:var(--accent);color:#fff;cursor:pointer}\n"
	"button:disabled{background:#aab2c0;border-color:#aab2c0;cursor:not-allowed}\n"
	"button.danger{background:var(--bad);border-color:var(--bad)}\n"
	".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.75rem}\n"
	".card{background:var(--card);border:1px solid var(--line);border-radius:6px;"
	"padding:.75rem}\n"
	".card h3{margin:0 0 .4rem;font-size:1rem}\n"
	"dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem .8rem;margin:0}\n"
	"dt{color:var(--mute)}dd{margin:0;word-break:break-word}\n"
	"svg.spark{width:100%;height:64px;background:var(--card);border:1px solid var(--line);"
	"border-radius:6px}\n"
	"svg.spark rect.ok{fill:#3d7be0}svg.spark rect.dead{fill:#d0463b}\n"
	".pager{margin:.75rem 0}\n"
	".hint{color:var(--mute);font-size:.85rem;margin:.4rem 0}\n"
	"@media (max-width:640px){body{font-size:14px}main{padding:.6rem}"
	"th,td{padding:.35rem .45rem}}\n";
