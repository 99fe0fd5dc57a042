/*
 * ctl/cmd_enqueue.c: a job of any type.
 *
 *   outboxctl enqueue --type T --destination D --identity JSON --payload JSON
 *                     [--traceparent TP]
 *   outboxctl enqueue [--type T] [--destination D] FILE|-
 *
 * The second form reads JSON lines, one job per line:
 * {"job_type":T, "destination":D, "identity":{...}, "payload":{...},
 *  "traceparent":TP} (the names of outbox.enqueue()'s arguments; job_type
 * and destination default to the options), with the error handling and
 * output of ctl/enqueue_lines.h.  Both go through liboutbox, which calls
 * outbox.enqueue(), so the ids are the ones every other producer gets.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ctl/commands.h"
#include "ctl/enqueue_lines.h"
#include "db/db.h"

/* Longest accepted JSON line, newline included (docs/outboxctl.md): payloads
 * are not bound by SQS (docs/producers.md), but a line is held in memory. */
#define ENQUEUE_LINE_MAX (16 * 1024 * 1024)

struct enqueue_args {
	const char *job_type;    /* --type; may be NULL in lines mode */
	const char *destination; /* --destination; may be NULL in lines mode */
	const char *identity;    /* --identity JSON text */
	const char *payload;     /* --payload JSON text */
	const char *traceparent; /* --traceparent; may be NULL */
	const struct cfg *cfg;
};

static const char usage_text[] =
	"usage: enqueue --type T --destination D --identity JSON --payload JSON [--traceparent TP]\n"
	"       enqueue [--type T] [--destination D] FILE|-";

static int check_destination(const struct cfg *cfg, const char *destination,
                             char *err, size_t errlen)
{
	if (cfg_find_destination(cfg, destination) != NULL)
		return 0;
	snprintf(err, errlen, "destination \"%s\" is not configured in \"%s\"", destination,
	         cfg->file);
	return -1;
}

/* A member of a line that must be a non-empty string, or the option's value. */
static const char *string_member(const json_t *line, const char *key, const char *fallback,
                                 char *err, size_t errlen)
{
	const json_t *v = json_object_get(line, key);

	if (v == NULL && fallback != NULL)
		return fallback;
	if (!json_is_string(v) || json_string_length(v) == 0) {
		snprintf(err, errlen, "line needs a non-empty string \"%s\"", key);
		return NULL;
	}
	return json_string_value(v);
}

static int enqueue_parsed(PGconn *conn, const json_t *line, const struct enqueue_args *a,
                          struct outbox_enqueued *out, char *err, size_t errlen)
{
	const char *type = string_member(line, "job_type", a->job_type, err, errlen);
	const char *dest = type ? string_member(line, "destination", a->destination, err, errlen)
	                        : NULL;
	const json_t *identity = json_object_get(line, "identity");
	const json_t *payload = json_object_get(line, "payload");
	const json_t *tp = json_object_get(line, "traceparent");

	if (dest == NULL)
		return -1;
	if (identity == NULL || payload == NULL) {
		snprintf(err, errlen, "line needs \"identity\" and \"payload\"");
		return -1;
	}
	if (tp != NULL && !json_is_string(tp)) {
		snprintf(err, errlen, "\"traceparent\" must be a string");
		return -1;
	}
	if (check_destination(a->cfg, dest, err, errlen) < 0)
		return -1;
	return outbox_enqueue_job_traced(conn, type, dest, identity, payload,
	                                 tp ? json_string_value(tp) : NULL, out, err, errlen);
}

static int enqueue_json_line(PGconn *conn, const char *text, void *arg,
                             struct outbox_enqueued *out, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *line = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	int rc = -1;

	if (line == NULL) {
		snprintf(err, errlen, "invalid JSON at column %d: %s", jerr.column, jerr.text);
		return -1;
	}
	/* the whole line: jansson would change such a number in the payload too */
	if (outbox_check_identity_numbers(text, err, errlen) < 0)
		;
	else if (!json_is_object(line))
		snprintf(err, errlen, "line must be a JSON object");
	else
		rc = enqueue_parsed(conn, line, arg, out, err, errlen);
	json_decref(line);
	return rc;
}

/* Parses the JSON text of option name; prints why not and returns NULL. */
static json_t *option_json(const char *name, const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);

	char err[256];

	if (v == NULL) {
		ctl_error("invalid JSON in \"--%s\" at column %d: %s", name, jerr.column, jerr.text);
	} else if (outbox_check_identity_numbers(text, err, sizeof(err)) < 0) {
		ctl_error("\"--%s\": %s", name, err);
		json_decref(v);
		v = NULL;
	}
	return v;
}

static int enqueue_one(struct ctl *ctl, PGconn *conn, const struct enqueue_args *a)
{
	json_t *identity = option_json("identity", a->identity);
	json_t *payload = identity ? option_json("payload", a->payload) : NULL;
	struct outbox_enqueued out;
	char err[1024];
	int rc = CTL_EXIT_USAGE;

	if (payload == NULL)
		goto out;
	rc = CTL_EXIT_FAILURE;
	if (db_exec(conn, "BEGIN", err, sizeof(err)) < 0 ||
	    outbox_enqueue_job_traced(conn, a->job_type, a->destination, identity, payload,
	                              a->traceparent, &out, err, sizeof(err)) < 0 ||
	    db_exec(conn, "COMMIT", err, sizeof(err)) < 0) {
		ctl_error("%s", err);
		PQclear(PQexec(conn, "ROLLBACK"));
		rc = db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
		goto out;
	}
	if (ctl->json) {
		json_t *doc = json_pack("{s:s, s:s, s:b}", "job_id", out.job_id,
		                        "event_id", out.event_id, "created", out.created);
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	} else {
		enqueue_print(&out);
	}
	rc = CTL_EXIT_OK;
out:
	json_decref(identity);
	json_decref(payload);
	return rc;
}

static int parse_options(int argc, char **argv, struct enqueue_args *a)
{
	static const struct option longopts[] = {
		{"type", required_argument, NULL, 't'},
		{"destination", required_argument, NULL, 'd'},
		{"identity", required_argument, NULL, 'i'},
		{"payload", required_argument, NULL, 'p'},
		{"traceparent", required_argument, NULL, 'r'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 't': a->job_type = optarg; break;
		case 'd': a->destination = optarg; break;
		case 'i': a->identity = optarg; break;
		case 'p': a->payload = optarg; break;
		case 'r': a->traceparent = optarg; break;
		default: return -1;
		}
	}
	return 0;
}

/* Which form the arguments ask for: 1 lines, 0 one job, -1 neither (printed). */
static int lines_mode(int argc, const struct enqueue_args *a)
{
	if (optind + 1 == argc && a->identity == NULL && a->payload == NULL && a->traceparent == NULL)
		return 1;
	if (optind == argc && a->job_type && a->destination && a->identity && a->payload)
		return 0;
	ctl_error("%s", usage_text);
	return -1;
}

int cmd_enqueue(struct ctl *ctl, int argc, char **argv)
{
	struct enqueue_args a = {0};
	char err[1024];
	int mode, exit_code = CTL_EXIT_OK;

	if (parse_options(argc, argv, &a) < 0 || (mode = lines_mode(argc, &a)) < 0)
		return CTL_EXIT_USAGE;
	a.cfg = ctl_config(ctl);
	if (a.cfg == NULL)
		return CTL_EXIT_CONFIG;
	if (a.destination && check_destination(a.cfg, a.destination, err, sizeof(err)) < 0) {
		ctl_error("%s", err);
		return CTL_EXIT_USAGE;
	}
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	if (mode == 1)
		return enqueue_lines(ctl, conn, argv[optind], ENQUEUE_LINE_MAX, "job", enqueue_json_line,
		                     &a);
	return enqueue_one(ctl, conn, &a);
}
