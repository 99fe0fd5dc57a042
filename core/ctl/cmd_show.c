/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_show.c: outboxctl show JOB_ID [--full] [--json]
 * (docs/outboxctl.md).
 *
 * One job (ops_job_show()): its columns, its outbox events with their SQS
 * message ids, the dead-letter evidence, the payload cut at 4 KiB unless
 * --full.  Text prints "key: value" lines in the document's order, every
 * value escaped (a payload or an error may hold any bytes); --json prints
 * the document.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ctl/commands.h"
#include "ctl/job_text.h"
#include "ops/jobs.h"

/* Texts are already cut by ops_job_show() unless --full: no second cut. */
#define SHOW_ALL ((size_t)-1)

static void print_value(const json_t *v)
{
	if (json_is_string(v)) {
		ctl_print_escaped(stdout, json_string_value(v), SHOW_ALL);
		return;
	}
	if (json_is_null(v)) {
		fputs("-", stdout);
		return;
	}
	ctl_print_escaped_json(stdout, v);
}

/* The members of o as "key: value" lines, arrays of objects as blocks. */
static void print_object(const json_t *o, int indent)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)o, key, v) {
		if (json_is_array(v) && (json_array_size(v) == 0 || json_is_object(json_array_get(v, 0)))) {
			printf("%*s%s: %zu\n", indent, "", key, json_array_size(v));
			for (size_t i = 0; i < json_array_size(v); i++) {
				printf("%*s- #%zu\n", indent + 2, "", i + 1);
				print_object(json_array_get(v, i), indent + 4);
			}
			continue;
		}
		printf("%*s%s: ", indent, "", key);
		print_value(v);
		putchar('\n');
	}
}

int cmd_show(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"full", no_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	bool full = false;
	json_t *doc = NULL;
	int opt, exit_code = CTL_EXIT_OK, rc;
	char err[1024];

	optind = 1;
	opt = getopt_long(argc, argv, "", longopts, NULL);
	while (opt != -1) {
		if (opt != 'f')
			return CTL_EXIT_USAGE;
		full = true;
		opt = getopt_long(argc, argv, "", longopts, NULL);
	}
	if (optind + 1 != argc) {
		ctl_error("usage: show JOB_ID [--full] [--json]");
		return CTL_EXIT_USAGE;
	}
	PGconn *conn = ctl_db(ctl, &exit_code);
	if (conn == NULL)
		return exit_code;
	rc = ops_job_show(conn, argv[optind], full, &doc, err, sizeof(err));
	if (rc != OPS_OK) {
		ctl_error("could not show job: %s", err);
		return ctl_ops_exit(rc, conn);
	}
	if (ctl->json) {
		ctl_print_json(doc);
	} else {
		print_object(doc, 0);
		if (json_is_true(json_object_get(doc, "payload_truncated")))
			printf("(the payload is cut at %d of its %lld bytes; --full shows all of it)\n",
			       OPS_SHOW_CUT_BYTES,
			       (long long)json_integer_value(json_object_get(doc, "payload_bytes")));
	}
	json_decref(doc);
	return CTL_EXIT_OK;
}
