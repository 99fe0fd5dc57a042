/*
 * ctl/enqueue_lines.c: the JSON-lines loop of enqueue and enqueue-news
 * (see enqueue_lines.h).
 */
#include "ctl/enqueue_lines.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

struct enqueue_totals {
	int enqueued;
	int existing;
	int bad;
	json_t *jobs;     /* --json: one object per enqueued line */
	json_t *rejected; /* --json: one object per bad line */
};

void enqueue_print(const struct outbox_enqueued *out)
{
	printf("%s %s%s\n", out->job_id, out->event_id, out->created ? "" : " (already enqueued)");
}

static int enqueue_line(PGconn *conn, const char *line, enqueue_line_fn fn, void *arg,
                        struct outbox_enqueued *out, char *err, size_t errlen)
{
	if (db_exec(conn, "BEGIN", err, errlen) < 0)
		return -1;
	if (fn(conn, line, arg, out, err, errlen) < 0) {
		PQclear(PQexec(conn, "ROLLBACK"));
		return -1;
	}
	return db_exec(conn, "COMMIT", err, errlen);
}

static bool blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

struct line_reader {
	char *buf;       /* owned; max + 1 bytes */
	size_t max;
	bool too_long;   /* the last line had more than max bytes */
	bool has_nul;    /* the last line held a NUL byte */
};

/*
 * Reads one line into r->buf; a longer one is read to its end and dropped,
 * and r->too_long says so.  A NUL byte ends the text (json_loads() would
 * stop there too): r->has_nul says so.  Returns false at the end of the
 * input.
 */
static bool read_line(FILE *in, struct line_reader *r)
{
	size_t len = 0;
	int c = EOF;

	r->too_long = false;
	r->has_nul = false;
	while ((c = getc(in)) != EOF) {
		if (len < r->max)
			r->buf[len] = (char)c;
		else
			r->too_long = true;
		r->has_nul |= c == '\0';
		len++;
		if (c == '\n')
			break;
	}
	r->buf[len < r->max ? len : r->max] = '\0';
	return len > 0;
}

/* A line refused before it is parsed: false with err set. */
static bool line_ok(const struct line_reader *r, const char *what, char *err, size_t errlen)
{
	if (r->too_long)
		snprintf(err, errlen, "%s is too large (more than %zu bytes on one line)", what, r->max);
	else if (r->has_nul)
		snprintf(err, errlen, "line contains a NUL byte");
	return !r->too_long && !r->has_nul;
}

static void count_good(struct enqueue_totals *t, long lineno, const struct outbox_enqueued *out)
{
	if (out->created)
		t->enqueued++;
	else
		t->existing++;
	if (t->jobs)
		json_array_append_new(t->jobs, json_pack("{s:I, s:s, s:s, s:b}", "line",
		                      (json_int_t)lineno, "job_id", out->job_id,
		                      "event_id", out->event_id, "created", out->created));
	else
		enqueue_print(out);
}

static int enqueue_stream(PGconn *conn, FILE *in, const char *name, struct line_reader *r,
                          const char *what, enqueue_line_fn fn, void *arg,
                          struct enqueue_totals *t)
{
	long lineno = 0;
	char err[1024];
	struct outbox_enqueued out;

	while (read_line(in, r)) {
		bool ok = line_ok(r, what, err, sizeof(err));

		lineno++;
		if (ok && blank(r->buf))
			continue;
		if (ok && enqueue_line(conn, r->buf, fn, arg, &out, err, sizeof(err)) == 0) {
			count_good(t, lineno, &out);
			continue;
		}
		fprintf(stderr, "%s:%ld: %s\n", name, lineno, err);
		t->bad++;
		if (t->rejected)
			json_array_append_new(t->rejected, json_pack("{s:I, s:s}", "line",
			                      (json_int_t)lineno, "error", err));
		if (db_connection_lost(conn))
			return CTL_EXIT_UNAVAILABLE;
	}
	return CTL_EXIT_OK;
}

int enqueue_lines(struct ctl *ctl, PGconn *conn, const char *path, size_t line_max,
                  const char *what, enqueue_line_fn fn, void *arg)
{
	struct enqueue_totals totals = {0};
	struct line_reader reader = {malloc(line_max + 1), line_max, false, false};
	bool from_stdin = strcmp(path, "-") == 0;
	FILE *in = from_stdin ? stdin : fopen(path, "r");
	int exit_code;

	if (in == NULL || reader.buf == NULL) {
		if (in == NULL)
			ctl_error("could not open \"%s\": %s", path, strerror(errno));
		else
			ctl_error("out of memory");
		if (in != NULL && !from_stdin)
			fclose(in);
		free(reader.buf);
		return CTL_EXIT_FAILURE;
	}
	if (ctl->json) {
		totals.jobs = json_array();
		totals.rejected = json_array();
	}
	exit_code = enqueue_stream(conn, in, from_stdin ? "<stdin>" : path, &reader, what, fn, arg,
	                           &totals);
	free(reader.buf);
	if (!from_stdin)
		fclose(in);
	if (ctl->json) {
		json_t *doc = json_pack("{s:o, s:o, s:i, s:i, s:i}", "jobs", totals.jobs,
		                        "rejected", totals.rejected, "enqueued", totals.enqueued,
		                        "already_enqueued", totals.existing, "rejected_count", totals.bad);
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	}
	fprintf(stderr, "outboxctl: %d enqueued, %d already enqueued, %d rejected\n",
	        totals.enqueued, totals.existing, totals.bad);
	if (exit_code == CTL_EXIT_OK && totals.bad > 0)
		exit_code = CTL_EXIT_FAILURE;
	return exit_code;
}
