/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_dead.c: outboxctl dead [--destination D] [--evidence] [--json]
 * (docs/outboxctl.md).
 *
 * Lists dead jobs (job_id, destination, dead_reason, last_error,
 * attempt_count, finished_at; the JSON adds job_type), read by ops/dead.c
 * as the console reads them, and dead outbox events (event_id,
 * destination, dead_reason, last_error), oldest first.  --json prints
 * {"jobs": [...], "events": [...]} with those keys (attempt_count a
 * number, finished_at ISO 8601 UTC, absent values null).  --evidence adds
 * to each job the outbox.dlq_messages rows that name it (what the DLQ
 * reader saw: the message, its receive count and the outcome), oldest
 * first; in text the body is escaped and cut, since it may be hostile.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/commands.h"
#include "db/db.h"
#include "ops/dead.h"

/* Text output shows at most this much of a body. */
#define EVIDENCE_BODY_SHOWN 200

/* A string member, "-" when null or absent; numbers as text. */
static const char *cell(const json_t *o, const char *key, char *buf, size_t len)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_integer(v)) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return json_is_string(v) ? json_string_value(v) : "-";
}

/* A message body as printable ASCII: a hostile body cannot drive the terminal. */
static void print_escaped(const char *s, size_t max)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\')
			fputs("\\\\", stdout);
		else if (c >= 0x20 && c < 0x7f)
			putchar(c);
		else
			printf("\\x%02x", c);
	}
	if (len > max)
		printf("... (%zu bytes)", len);
}

static void print_evidence_text(const json_t *evidence)
{
	size_t n = json_array_size(evidence), i;
	char b1[32], b2[32];
	json_t *e;

	printf("    evidence: %zu dead-letter message%s\n", n, n == 1 ? "" : "s");
	json_array_foreach(evidence, i, e) {
		const char *body = json_string_value(json_object_get(e, "body"));

		printf("      %s  outcome=%s queue_message=%s receive_count=%s event_id=%s\n"
		       "        body: ", cell(e, "received_at", b1, sizeof(b1)),
		       cell(e, "outcome", b1, sizeof(b1)), cell(e, "sqs_message_id", b1, sizeof(b1)),
		       cell(e, "receive_count", b2, sizeof(b2)), cell(e, "event_id", b1, sizeof(b1)));
		print_escaped(body != NULL ? body : "", EVIDENCE_BODY_SHOWN);
		putchar('\n');
	}
}

static void print_text(const json_t *doc)
{
	const json_t *jobs = json_object_get(doc, "jobs"), *events = json_object_get(doc, "events");
	char b[32];
	size_t i;
	json_t *j;

	printf("dead jobs: %zu\n", json_array_size(jobs));
	json_array_foreach(jobs, i, j) {
		printf("  %s  dest=%s reason=%s attempts=%s finished_at=%s\n    last_error: %s\n",
		       cell(j, "job_id", b, sizeof(b)), cell(j, "destination", b, sizeof(b)),
		       cell(j, "dead_reason", b, sizeof(b)), cell(j, "attempt_count", b, sizeof(b)),
		       cell(j, "finished_at", b, sizeof(b)), cell(j, "last_error", b, sizeof(b)));
		if (json_object_get(j, "evidence") != NULL)
			print_evidence_text(json_object_get(j, "evidence"));
	}
	printf("dead events: %zu\n", json_array_size(events));
	json_array_foreach(events, i, j)
		printf("  %s  dest=%s reason=%s\n    last_error: %s\n",
		       cell(j, "event_id", b, sizeof(b)), cell(j, "destination", b, sizeof(b)),
		       cell(j, "dead_reason", b, sizeof(b)), cell(j, "last_error", b, sizeof(b)));
}

int cmd_dead(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"destination", required_argument, NULL, 'd'},
		{"evidence", no_argument, NULL, 'e'},
		{NULL, 0, NULL, 0},
	};
	struct ops_dead_filter filter = {0};
	int opt, exit_code = CTL_EXIT_OK;
	char err[1024];
	json_t *doc;

	optind = 1;
	opt = getopt_long(argc, argv, "", longopts, NULL);
	while (opt != -1) {
		if (opt == 'd')
			filter.destination = optarg;
		else if (opt == 'e')
			filter.evidence = true;
		else
			return CTL_EXIT_USAGE;
		opt = getopt_long(argc, argv, "", longopts, NULL);
	}
	if (optind != argc) {
		ctl_error("usage: dead [--destination D] [--evidence] [--json]");
		return CTL_EXIT_USAGE;
	}
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	doc = ops_dead(conn, &filter, err, sizeof(err));
	if (doc == NULL) {
		ctl_error("could not list dead jobs: %s", err);
		return db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
	}
	if (ctl->json) {
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
	} else {
		print_text(doc);
	}
	json_decref(doc);
	return exit_code;
}
