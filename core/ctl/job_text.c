/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/job_text.c: see ctl/job_text.h.
 */
#include "ctl/job_text.h"

#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "db/db.h"
#include "ops/ops.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0; *cp its code point. */
static size_t utf8_seq(const unsigned char *s, size_t left, uint32_t *cp)
{
	size_t n = s[0] > 0xf4 ? 0 : s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	uint32_t v;

	if (n == 0 || n > left)
		return 0;
	v = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10ffff))
	    || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/* Code points that print nothing or reorder what follows: escaped too. */
static bool invisible(uint32_t cp)
{
	return cp < 0xa0 || cp == 0xad || (cp >= 0x200b && cp <= 0x200f)
	       || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f)
	       || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb);
}

static void print_escaped(FILE *out, const char *s, size_t max, bool json)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), i = 0;

	while (i < len && i < max) {
		uint32_t cp = 0;
		size_t n = u[i] >= 0x80 ? utf8_seq(u + i, len - i, &cp) : 0;

		if (n > 0 && i + n <= max && !invisible(cp)) {
			fwrite(u + i, 1, n, out);
			i += n;
			continue;
		}
		if (u[i] == '\\' && !json)
			fputs("\\\\", out);
		else if (u[i] == '\n')
			fputs("\\n", out);
		else if (u[i] == '\r')
			fputs("\\r", out);
		else if (u[i] == '\t')
			fputs("\\t", out);
		else if (u[i] >= 0x20 && u[i] < 0x7f)
			fputc(u[i], out);
		else
			fprintf(out, "\\x%02x", u[i]);
		i++;
	}
	if (len > max)
		fprintf(out, "... (%zu bytes)", len);
}

void ctl_print_escaped(FILE *out, const char *s, size_t max)
{
	print_escaped(out, s, max, false);
}

void ctl_print_escaped_json(FILE *out, const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);

	print_escaped(out, text != NULL ? text : "?", (size_t)-1, true);
	free(text);
}

void ctl_print_json(const json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	putchar('\n');
}

void ctl_actor(char *buf, size_t len)
{
	const struct passwd *pw = getpwuid(geteuid());

	if (pw != NULL && pw->pw_name != NULL)
		snprintf(buf, len, "outboxctl (user %s)", pw->pw_name);
	else
		snprintf(buf, len, "outboxctl (uid %ld)", (long)geteuid());
}

int ctl_ops_exit(int ops_rc, PGconn *conn)
{
	switch (ops_rc) {
	case OPS_OK:
		return CTL_EXIT_OK;
	case OPS_INVALID:
		return CTL_EXIT_USAGE;
	case OPS_DB:
		return conn != NULL && db_connection_lost(conn) ? CTL_EXIT_UNAVAILABLE
		                                                : CTL_EXIT_FAILURE;
	default:
		return CTL_EXIT_FAILURE;
	}
}

static void report(json_t *ok, json_t *failed, const char *job_id, const char *verb, int rc,
                   json_t *doc, const char *err)
{
	if (rc == OPS_OK) {
		if (ok != NULL)
			json_array_append(ok, doc);
		else
			printf("%s %s\n", job_id, json_string_value(json_object_get(doc, "outcome")));
		return;
	}
	ctl_error("could not %s job \"%s\": %s", verb, job_id, err);
	if (failed == NULL)
		return;
	if (doc == NULL)
		doc = json_pack("{s:s, s:n}", "job_id", job_id, "outcome");
	else
		json_incref(doc);
	json_object_set_new(doc, "error", json_string(err));
	json_array_append_new(failed, doc);
}

int ctl_run_job_action(struct ctl *ctl, char **job_ids, int n, const char *verb,
                       const char *ok_key, ctl_job_action_fn *action, void *ctx)
{
	int exit_code = CTL_EXIT_OK;
	char actor[128], err[1024];
	json_t *ok = ctl->json ? json_array() : NULL, *failed = ctl->json ? json_array() : NULL;
	PGconn *conn = ctl_db(ctl, &exit_code);

	if (conn == NULL)
		goto out;
	ctl_actor(actor, sizeof(actor));
	for (int i = 0; i < n; i++) {
		json_t *doc = NULL;
		int rc = action(conn, job_ids[i], actor, ctx, &doc, err, sizeof(err));

		report(ok, failed, job_ids[i], verb, rc, doc, err);
		json_decref(doc);
		if (rc != OPS_OK)
			exit_code = ctl_ops_exit(rc == OPS_INVALID ? OPS_REFUSED : rc, conn);
	}
	if (ctl->json) {
		json_t *doc = json_pack("{s:O, s:O}", ok_key, ok, "failed", failed);

		ctl_print_json(doc);
		json_decref(doc);
	}
out:
	json_decref(ok);
	json_decref(failed);
	return exit_code;
}
