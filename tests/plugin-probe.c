/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * outboxd-plugin-probe: load one plugin through the real loader and run it
 * once (installed for plugin authors; docs/outboxd-plugin-probe.1).
 *
 *   outboxd-plugin-probe DIR[:DIR...] NAME [KEY=VALUE...]
 *   outboxd-plugin-probe -V|--version | -h|--help
 *
 * DIR is searched like [outboxd] plugin_path, in order.
 * KEY=VALUE are the destination's plugin.KEY lines (without "plugin.").
 * Validates them, calls init, execute on a sample job, commit when the
 * verdict is OK (without database services), destroy, and prints
 *
 *   host ABI 1.0
 *   verdict: OK (MESSAGE)
 *
 * Exit status: 0 when a verdict was printed, 1 when the plugin was refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/version.h"
#include "plugin/loader.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: outboxd-plugin-probe DIR[:DIR...] NAME [KEY=VALUE...]\n"
	             "       outboxd-plugin-probe -V|--version\n"
	             "       outboxd-plugin-probe -h|--help\n"
	             "\n"
	             "Loads NAME.so from the first DIR that has it, as outboxd does, validates\n"
	             "KEY=VALUE (a destination's plugin.KEY lines without the prefix), runs it once\n"
	             "on a sample job and prints its verdict.\n"
	             "\n"
	             "  -V, --version  print the versions and the plugin ABI\n"
	             "  -h, --help     print this help\n");
}

/* --help / --version as the first argument; returns an exit code, or -1 to run. */
static int info_option(int argc, char **argv)
{
	if (argc < 2)
		return -1;
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		outbox_print_version(stdout, "outboxd-plugin-probe");
		return 0;
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "outboxd-plugin-probe: unrecognized option \"%s\"\n", argv[1]);
		usage(stderr);
		return 64;
	}
	return -1;
}

static void probe_report(void *arg, const struct cfg_plugin_option *opt, const char *msg)
{
	if (opt != NULL)
		fprintf(stderr, "outboxd-plugin-probe: argument %d: plugin.%s: %s\n", opt->line, opt->key, msg);
	else
		fprintf(stderr, "outboxd-plugin-probe: %s\n", msg);
}

static int parse_options(int argc, char **argv, struct cfg_plugin_option *opts)
{
	for (int k = 0; k < argc; k++) {
		const char *eq = strchr(argv[k], '=');
		if (eq == NULL || eq == argv[k]) {
			fprintf(stderr, "outboxd-plugin-probe: expected KEY=VALUE, got \"%s\"\n", argv[k]);
			return -1;
		}
		opts[k].key = strndup(argv[k], (size_t)(eq - argv[k]));
		opts[k].value = strdup(eq + 1);
		opts[k].line = k + 3; /* argv position, so messages point somewhere */
		if (opts[k].key == NULL || opts[k].value == NULL)
			return -1;
	}
	return 0;
}

static int run_once(struct plugin_instance *inst)
{
	char msg[512];
	char err[256];
	struct outbox_result result = {.msg = msg, .msg_size = sizeof(msg)};
	json_t *payload = json_pack("{s:[i,i,i]}", "items", 1, 2, 3);
	struct outbox_job job = {
		.job_id = "0000000000000000000000000000000000000000000000000000000000000001",
		.job_type = "probe",
		.destination = plugin_instance_destination(inst),
		.payload = payload,
		.attempt = 1,
	};
	/* Only compared by the host, never dereferenced: no database here. */
	static char fake_tx;

	if (payload == NULL)
		return -1;
	enum outbox_verdict v = plugin_instance_execute(inst, &job, &result);
	if (v == OUTBOX_OK) {
		v = plugin_instance_commit(inst, &job, result.output,
		                           (struct outbox_tx *)&fake_tx, err, sizeof(err));
		if (v != OUTBOX_OK)
			snprintf(msg, sizeof(msg), "commit: %s", err);
	}
	printf("verdict: %s (%s)\n", plugin_verdict_name(v), msg);
	json_decref(result.output);
	json_decref(payload);
	return 0;
}

int main(int argc, char **argv)
{
	struct plugin_registry *reg = NULL;
	struct plugin_instance *inst = NULL;
	struct plugin_diag diag = {.report = probe_report};
	struct cfg_plugin_option *opts = NULL;
	int n = argc - 3;
	int rc = 1;

	rc = info_option(argc, argv);
	if (rc >= 0)
		return rc;
	rc = 1;
	if (argc < 3) {
		usage(stderr);
		return 64;
	}
	opts = calloc((size_t)n + 1, sizeof(*opts));
	if (opts == NULL || parse_options(n, argv + 3, opts) < 0)
		goto out;
	if (plugin_registry_create(argv[1], &reg) < 0)
		goto out;
	printf("host ABI %d.%d\n", OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR);
	struct plugin_instance_spec spec = {
		.destination = "probe", .plugin = argv[2], .options = opts, .n_options = (size_t)n,
	};
	if (plugin_instance_create(reg, &spec, &diag, &inst) < 0)
		goto out;
	if (run_once(inst) == 0)
		rc = 0;
out:
	plugin_instance_destroy(inst);
	plugin_registry_free(reg);
	for (int k = 0; opts != NULL && k < n; k++) {
		free(opts[k].key);
		free(opts[k].value);
	}
	free(opts);
	return rc;
}
