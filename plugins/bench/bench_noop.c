/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench_noop.c: the handler of outbox-bench and outbox-faultbench.
 *
 * execute() does nothing but, when plugin.runs_log names a file, append
 * one line "JOB_ID ATTEMPT GENERATION START_US" to it (START_US: CLOCK_REALTIME in
 * microseconds when execute() started; one write() on an O_APPEND
 * descriptor opened at init, so lines of concurrent workers and of forked
 * children never interleave).  It then sleeps plugin.sleep_ms.
 *
 * commit(), when plugin.effects_table is set, inserts the job id into
 * that table through tx_exec: the "business effect" whose duplicates
 * outbox-faultbench counts.  The table needs a column job_id text.
 *
 * With neither option it is a true no-op: what outbox-bench measures is
 * the host, not the handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <outbox/plugin.h>

struct bench_noop {
	const struct outbox_host *host; /* borrowed until destroy() */
	struct outbox_ctx *ctx;         /* borrowed until destroy() */
	int runs_fd;                    /* owned; -1 without runs_log */
	long long sleep_ms;
	char insert_sql[160];           /* "" without effects_table */
};

static const struct outbox_option options[] = {
	{"runs_log", OUTBOX_OPT_STRING, "-", 0, 0, 0,
	 "file that gets one line per execute(): job_id attempt generation start_us"},
	{"effects_table", OUTBOX_OPT_STRING, "-", 0, 0, 0,
	 "table (column job_id text) that commit() inserts the job id into (- for none)"},
	{"sleep_ms", OUTBOX_OPT_INT, "0", 0, 60000, 0, "milliseconds execute() sleeps"},
	{NULL, 0, NULL, 0, 0, 0, NULL},
};

/* [a-z0-9_] with at most one '.', not empty: safe to paste into SQL. */
static int valid_table(const char *t)
{
	int dots = 0;

	if (*t == '\0')
		return 0;
	for (const char *p = t; *p != '\0'; p++) {
		if (*p == '.')
			dots++;
		else if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	}
	return dots <= 1;
}

static int bn_init(const struct outbox_host *host, struct outbox_ctx *ctx, void **instance,
                   char *err, size_t errlen)
{
	struct bench_noop *b = calloc(1, sizeof(*b));
	const char *log, *table;

	*instance = b;
	if (b == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	b->host = host;
	b->ctx = ctx;
	b->runs_fd = -1;
	b->sleep_ms = host->option_int(ctx, "sleep_ms");
	log = host->option(ctx, "runs_log");
	table = host->option(ctx, "effects_table");
	if (strcmp(table, "-") == 0)
		table = "";
	if (*table != '\0' && !valid_table(table)) {
		snprintf(err, errlen, "plugin.effects_table \"%s\" is not a plain table name", table);
		return -1;
	}
	if (*table != '\0')
		snprintf(b->insert_sql, sizeof(b->insert_sql),
		         "INSERT INTO %s (job_id) VALUES ($1)", table);
	if (strcmp(log, "-") != 0) {
		b->runs_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (b->runs_fd < 0) {
			snprintf(err, errlen, "could not open \"%s\": %s", log, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void bn_destroy(void *instance)
{
	struct bench_noop *b = instance;

	if (b == NULL)
		return;
	if (b->runs_fd >= 0)
		close(b->runs_fd);
	free(b);
}

static void log_run(struct bench_noop *b, const struct outbox_job *job)
{
	struct timespec ts;
	char line[160];
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(line, sizeof(line), "%s %d %d %lld\n", job->job_id, job->attempt,
	             job->redrive_generation,
	             (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000);
	if (n > 0 && (size_t)n < sizeof(line) && write(b->runs_fd, line, (size_t)n) != n)
		b->host->log(b->ctx, OUTBOX_LOG_ERROR, "could not write the runs log");
}

static enum outbox_verdict bn_execute(void *instance, const struct outbox_job *job,
                                      struct outbox_result *result)
{
	struct bench_noop *b = instance;
	struct timespec ts = {b->sleep_ms / 1000, (b->sleep_ms % 1000) * 1000000L};

	(void)result;
	if (b->runs_fd >= 0)
		log_run(b, job);
	while (b->sleep_ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
	return OUTBOX_OK;
}

static enum outbox_verdict bn_commit(void *instance, const struct outbox_job *job,
                                     const json_t *output, struct outbox_tx *tx,
                                     char *err, size_t errlen)
{
	struct bench_noop *b = instance;
	const char *params[1] = {job->job_id};

	(void)output;
	if (b->insert_sql[0] == '\0')
		return OUTBOX_OK;
	if (b->host->tx_exec(tx, b->insert_sql, 1, params, NULL, err, errlen) < 0)
		return OUTBOX_RETRY;
	return OUTBOX_OK;
}

static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
	.name = "bench_noop",
	.version = "1",
	.description = "benchmark handler: does nothing, optionally logs runs and writes effects",
	.flags = OUTBOX_PLUGIN_CONCURRENT,
	.options = options,
	.init = bn_init,
	.destroy = bn_destroy,
	.execute = bn_execute,
	.commit = bn_commit,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
