/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * recorder.c: a test plugin the consumer tests steer through plugin.*
 * options.
 *
 * execute() appends "JOB_ID ATTEMPT GENERATION NOW_MS" to plugin.log_file
 * (every execution, whatever happens next), logs plugin.log_info (if not
 * "-") at info level through the host, sleeps plugin.sleep_ms (only
 * while the attempt <= plugin.sleep_until_attempt, when that is set, and
 * only for the job plugin.sleep_job, when that is set), then
 * returns:
 *   FAIL   if the job's redrive_generation < plugin.fail_before_generation
 *   RETRY  if the attempt <= plugin.retry_until_attempt (asking, when
 *          plugin.retry_after_ms > 0, for no next attempt before that:
 *          struct outbox_result's retry_after_ms, ABI 1.1)
 *   else   plugin.verdict (ok, retry, fail)
 * commit() inserts one row (job_id, attempt, generation) into
 * public.recorder_runs through tx_exec, sleeps plugin.commit_sleep_ms (as
 * a hung commit() would; same attempts as sleep_ms), then runs
 * plugin.commit_sql (any
 * statement, e.g. COMMIT, to test what the host allows; "-": none) through
 * tx_exec (plugin.commit_sql_file: the statement is that file's text, for
 * statements an ini value cannot hold; plugin.commit_sql_job: only for
 * that job; plugin.commit_sql_first: before the insert instead, so that
 * it is the first statement of the job's commit()), then returns RETRY when
 * plugin.fail_commit is true (so the row must be rolled back), else OK.
 * A failed tx_exec returns RETRY, except that for the job plugin.poison_job
 * commit() runs a failing statement (a division by zero) and returns OK
 * anyway, as a careless plugin could.
 *
 * For the operations tests: execute() of the job plugin.hang_job never
 * returns (a handler stuck for good); execute() of plugin.abort_job calls
 * abort() after logging the execution and plugin.abort_delay_ms (a handler
 * that kills the process);
 * plugin.hang_destroy makes destroy() never return.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <outbox/plugin.h>

struct recorder {
	const struct outbox_host *host;
	struct outbox_ctx *ctx;
	long long sleep_ms;
	long long commit_sleep_ms;
	long long sleep_until_attempt;
	const char *sleep_job;
	long long retry_until_attempt;
	long long retry_after_ms;
	long long fail_before_generation;
	int fail_commit;
	enum outbox_verdict verdict;
	const char *log_file;
	const char *commit_sql;
	char *commit_sql_buf;         /* owned: plugin.commit_sql_file's text */
	const char *poison_job;
	const char *commit_sql_job;
	int commit_sql_first;
	const char *log_info;
	const char *hang_job;
	const char *abort_job;
	int abort_delay_ms;
	int hang_destroy;
};

static const struct outbox_option options[] = {
	{"sleep_ms", OUTBOX_OPT_INT, "0", 0, 600000, 0, "milliseconds execute() sleeps"},
	{"commit_sleep_ms", OUTBOX_OPT_INT, "0", 0, 600000, 0,
	 "milliseconds commit() sleeps after its insert"},
	{"sleep_until_attempt", OUTBOX_OPT_INT, "0", 0, 1000, 0,
	 "both sleeps only while attempt <= N; 0: every attempt"},
	{"sleep_job", OUTBOX_OPT_STRING, "-", 0, 0, 0, "job_id that alone sleeps; - for every job"},
	{"verdict", OUTBOX_OPT_STRING, "ok", 0, 0, 0, "ok, retry or fail"},
	{"retry_until_attempt", OUTBOX_OPT_INT, "0", 0, 1000, 0, "RETRY while attempt <= N"},
	{"retry_after_ms", OUTBOX_OPT_INT, "0", 0, 86400000, 0,
	 "with those RETRYs, the earliest next attempt in ms; 0: the host's backoff"},
	{"fail_before_generation", OUTBOX_OPT_INT, "0", 0, 1000, 0,
	 "FAIL while redrive_generation < N"},
	{"fail_commit", OUTBOX_OPT_BOOL, "false", 0, 0, 0, "commit() writes, then asks for RETRY"},
	{"log_file", OUTBOX_OPT_STRING, "-", 0, 0, 0, "file that gets one line per execution"},
	{"commit_sql", OUTBOX_OPT_STRING, "-", 0, 0, 0, "statement commit() also runs; - for none"},
	{"commit_sql_file", OUTBOX_OPT_STRING, "-", 0, 0, 0, "file holding commit_sql; - for none"},
	{"commit_sql_job", OUTBOX_OPT_STRING, "-", 0, 0, 0,
	 "job_id whose commit() alone runs commit_sql; - for every job"},
	{"commit_sql_first", OUTBOX_OPT_BOOL, "false", 0, 0, 0,
	 "commit() runs commit_sql before its insert"},
	{"log_info", OUTBOX_OPT_STRING, "-", 0, 0, 0, "line execute() logs at info level; - for none"},
	{"poison_job", OUTBOX_OPT_STRING, "-", 0, 0, 0,
	 "job_id whose commit() hits an SQL error and returns OK"},
	{"hang_job", OUTBOX_OPT_STRING, "-", 0, 0, 0, "job_id whose execute() never returns"},
	{"abort_job", OUTBOX_OPT_STRING, "-", 0, 0, 0, "job_id whose execute() calls abort()"},
	{"abort_delay_ms", OUTBOX_OPT_INT, "0", 0, 600000, 0,
	 "milliseconds that execute() of abort_job sleeps before abort()"},
	{"hang_destroy", OUTBOX_OPT_BOOL, "false", 0, 0, 0, "destroy() never returns"},
	{NULL, 0, NULL, 0, 0, 0, NULL},
};

/* Reads path into r->commit_sql_buf (owned by r). */
static int read_sql_file(struct recorder *r, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	long n = -1;

	if (f == NULL) {
		snprintf(err, errlen, "could not open \"%s\": %s", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) == 0)
		n = ftell(f);
	if (n >= 0 && fseek(f, 0, SEEK_SET) != 0)
		n = -1;
	r->commit_sql_buf = n >= 0 ? calloc(1, (size_t)n + 1) : NULL;
	if (r->commit_sql_buf == NULL || fread(r->commit_sql_buf, 1, (size_t)n, f) != (size_t)n) {
		snprintf(err, errlen, "could not read \"%s\"", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	r->commit_sql_buf[strcspn(r->commit_sql_buf, "\n")] = '\0';
	r->commit_sql = r->commit_sql_buf;
	return 0;
}

static int rec_init(const struct outbox_host *host, struct outbox_ctx *ctx, void **instance,
                    char *err, size_t errlen)
{
	struct recorder *r = calloc(1, sizeof(*r));
	const char *verdict;

	*instance = r;
	if (r == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->host = host;
	r->ctx = ctx;
	r->sleep_ms = host->option_int(ctx, "sleep_ms");
	r->commit_sleep_ms = host->option_int(ctx, "commit_sleep_ms");
	r->sleep_until_attempt = host->option_int(ctx, "sleep_until_attempt");
	r->sleep_job = host->option(ctx, "sleep_job");
	r->retry_until_attempt = host->option_int(ctx, "retry_until_attempt");
	r->retry_after_ms = host->option_int(ctx, "retry_after_ms");
	r->fail_before_generation = host->option_int(ctx, "fail_before_generation");
	r->fail_commit = host->option_bool(ctx, "fail_commit");
	r->log_file = host->option(ctx, "log_file");
	r->commit_sql = host->option(ctx, "commit_sql");
	r->poison_job = host->option(ctx, "poison_job");
	r->log_info = host->option(ctx, "log_info");
	r->commit_sql_job = host->option(ctx, "commit_sql_job");
	r->commit_sql_first = host->option_bool(ctx, "commit_sql_first");
	r->hang_job = host->option(ctx, "hang_job");
	r->abort_job = host->option(ctx, "abort_job");
	r->abort_delay_ms = host->option_int(ctx, "abort_delay_ms");
	r->hang_destroy = host->option_bool(ctx, "hang_destroy");
	if (strcmp(host->option(ctx, "commit_sql_file"), "-") != 0 &&
	    read_sql_file(r, host->option(ctx, "commit_sql_file"), err, errlen) < 0)
		return -1;
	verdict = host->option(ctx, "verdict");
	if (strcmp(verdict, "ok") == 0) {
		r->verdict = OUTBOX_OK;
	} else if (strcmp(verdict, "retry") == 0) {
		r->verdict = OUTBOX_RETRY;
	} else if (strcmp(verdict, "fail") == 0) {
		r->verdict = OUTBOX_FAIL;
	} else {
		snprintf(err, errlen, "plugin.verdict must be ok, retry or fail");
		return -1;
	}
	return 0;
}

static void rec_destroy(void *instance)
{
	struct recorder *r = instance;

	while (r != NULL && r->hang_destroy)
		pause();
	if (r != NULL)
		free(r->commit_sql_buf);
	free(r);
}

static void log_execution(struct recorder *r, const struct outbox_job *job)
{
	char line[256];
	int fd, n;

	if (strcmp(r->log_file, "-") == 0)
		return;
	n = snprintf(line, sizeof(line), "%s %d %d %lld\n", job->job_id, job->attempt,
	             job->redrive_generation, (long long)r->host->now_ms(r->ctx));
	fd = open(r->log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		r->host->log(r->ctx, OUTBOX_LOG_ERROR, "could not open \"%s\": %s", r->log_file,
		             strerror(errno));
		return;
	}
	if (n > 0 && write(fd, line, (size_t)n) != n)
		r->host->log(r->ctx, OUTBOX_LOG_ERROR, "could not write \"%s\"", r->log_file);
	close(fd);
}

/* Sleeps ms, whatever signals come. */
static void sleep_ms(long long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
}

/* Sleeps ms on the attempts plugin.sleep_until_attempt allows, for the
 * job plugin.sleep_job (every job when "-"). */
static void rec_sleep(const struct recorder *r, const struct outbox_job *job, long long ms)
{
	if ((r->sleep_until_attempt > 0 && job->attempt > r->sleep_until_attempt) ||
	    (strcmp(r->sleep_job, "-") != 0 && strcmp(r->sleep_job, job->job_id) != 0))
		return;
	sleep_ms(ms);
}

static enum outbox_verdict rec_execute(void *instance, const struct outbox_job *job,
                                       struct outbox_result *result)
{
	struct recorder *r = instance;

	log_execution(r, job);
	if (strcmp(r->log_info, "-") != 0)
		r->host->log(r->ctx, OUTBOX_LOG_INFO, "%s", r->log_info);
	if (strcmp(r->abort_job, job->job_id) == 0) {
		sleep_ms(r->abort_delay_ms);
		abort();
	}
	while (strcmp(r->hang_job, job->job_id) == 0)
		pause();
	rec_sleep(r, job, r->sleep_ms);
	if (job->redrive_generation < r->fail_before_generation) {
		snprintf(result->msg, result->msg_size, "recorder: generation %d fails",
		         job->redrive_generation);
		return OUTBOX_FAIL;
	}
	if (job->attempt <= r->retry_until_attempt) {
		snprintf(result->msg, result->msg_size, "recorder: attempt %d retries", job->attempt);
		result->retry_after_ms = r->retry_after_ms;
		return OUTBOX_RETRY;
	}
	if (r->verdict != OUTBOX_OK)
		snprintf(result->msg, result->msg_size, "recorder: configured verdict");
	return r->verdict;
}

/* plugin.commit_sql, when set and meant for job.  Returns 0, or -1 as
 * tx_exec did. */
static int run_commit_sql(const struct recorder *r, const struct outbox_job *job,
                          struct outbox_tx *tx, char *err, size_t errlen)
{
	if (strcmp(r->commit_sql, "-") == 0 ||
	    (strcmp(r->commit_sql_job, "-") != 0 && strcmp(r->commit_sql_job, job->job_id) != 0))
		return 0;
	return r->host->tx_exec(tx, r->commit_sql, 0, NULL, NULL, err, errlen);
}

static enum outbox_verdict rec_commit(void *instance, const struct outbox_job *job,
                                      const json_t *output, struct outbox_tx *tx,
                                      char *err, size_t errlen)
{
	struct recorder *r = instance;
	char attempt[16], gen[16];
	const char *params[3] = {job->job_id, attempt, gen};

	snprintf(attempt, sizeof(attempt), "%d", job->attempt);
	snprintf(gen, sizeof(gen), "%d", job->redrive_generation);
	if (r->commit_sql_first && run_commit_sql(r, job, tx, err, errlen) < 0)
		return OUTBOX_RETRY;
	if (r->host->tx_exec(tx, "INSERT INTO public.recorder_runs (job_id, attempt, generation)"
	                         " VALUES ($1, $2::integer, $3::integer)",
	                     3, params, NULL, err, errlen) < 0)
		return OUTBOX_RETRY;
	/* A hung commit(): its transaction sits idle (holding the job's row
	 * when the completion locked it first). */
	rec_sleep(r, job, r->commit_sleep_ms);
	if (strcmp(r->poison_job, job->job_id) == 0) {
		(void)r->host->tx_exec(tx, "SELECT 1 / 0", 0, NULL, NULL, err, errlen);
		err[0] = '\0';
		return OUTBOX_OK;
	}
	if (!r->commit_sql_first && run_commit_sql(r, job, tx, err, errlen) < 0)
		return OUTBOX_RETRY;
	if (r->fail_commit) {
		snprintf(err, errlen, "recorder: commit asked for a retry");
		return OUTBOX_RETRY;
	}
	return OUTBOX_OK;
}

/* Built twice: recorder, and recorder_serial (RECORDER_SERIAL), the same
 * without OUTBOX_PLUGIN_CONCURRENT, whose execute() the host serialises. */
static const struct outbox_plugin descriptor = {
	OUTBOX_PLUGIN_INIT,
#ifdef RECORDER_SERIAL
	.name = "recorder_serial",
	.flags = 0,
#else
	.name = "recorder",
	.flags = OUTBOX_PLUGIN_CONCURRENT,
#endif
	.version = "1",
	.description = "consumer test plugin: records executions and commits",
	.options = options,
	.init = rec_init,
	.destroy = rec_destroy,
	.execute = rec_execute,
	.commit = rec_commit,
};

const struct outbox_plugin *outbox_plugin_describe(void)
{
	return &descriptor;
}
