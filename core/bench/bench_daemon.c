/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench_daemon.c: what the bench runs outboxd with: its queues, the
 * generated relay.ini, and the daemon process itself (started, waited for,
 * stopped, with its peak RSS, CPU time and request counts).
 */
#include "bench/bench.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "db/db.h"
#include "common/log.h"
#include "db/migrate.h"
#include "relay/relay.h"
#include "aws/sqs.h"

static int make_queue(struct bench *b, const char *name, char *url_out)
{
	struct aws_result res;
	char qname[96];
	char *url = NULL;

	snprintf(qname, sizeof(qname), "%.60s", name);
	for (char *p = qname; *p != '\0'; p++)
		*p = *p == '_' ? '-' : *p;
	if (sqs_create_queue(b->sqs, qname, NULL, 0, &url, &res) < 0) {
		log_error("could not create queue \"%s\": %s %s", qname, res.code, res.message);
		return -1;
	}
	snprintf(url_out, BENCH_PATH_MAX, "%s", url);
	free(url);
	return 0;
}

int bench_setup_queues(struct bench *b)
{
	char name[96];

	for (int k = 0; k < b->dests; k++) {
		snprintf(b->names[k], sizeof(b->names[k]), "bench_%.20s_%d", b->run, k);
		snprintf(b->relay_names[k], sizeof(b->relay_names[k]), "bench_%.20s_r%d", b->run, k);
		/* From a copy: source and destination are members of one struct (-Wrestrict). */
		snprintf(name, sizeof(name), "%s", b->names[k]);
		snprintf(b->queues[k], BENCH_PATH_MAX, "http://null.invalid/%s", name);
		snprintf(b->relay_queues[k], BENCH_PATH_MAX, "http://null.invalid/%s-relay", name);
		if (strcmp(b->publisher, "sqs") != 0)
			continue;
		snprintf(name, sizeof(name), "outbox-%s", b->names[k]);
		if (make_queue(b, name, b->queues[k]) < 0)
			return -1;
		snprintf(name, sizeof(name), "outbox-%s-relay", b->names[k]);
		if (make_queue(b, name, b->relay_queues[k]) < 0)
			return -1;
	}
	return 0;
}

/* Decimal text of v into one of the slots of buf. */
static const char *num(char (*buf)[16], int *used, int v)
{
	snprintf(buf[*used], sizeof(buf[0]), "%d", v);
	return buf[(*used)++];
}

/* The user's value, or NULL (left out) when it is the default: a daemon
 * older than the key (--baseline-outboxd) would reject it. */
static const char *num_unless(char (*buf)[16], int *used, int v, int dflt)
{
	return v == dflt ? NULL : num(buf, used, v);
}

/* [relay] and [consumer]: FILE's settings merged with the variant's. */
static void write_pipeline(const struct bench *b, FILE *f)
{
	const struct cfg *c = b->cfg;
	const struct bench_settings *over = b->variant != NULL ? b->variant->settings : NULL;
	char buf[16][16];
	int used = 0;
	static const char *const relay_keys[] = {
		"batch_size", "poll_interval_ms", "retry_base_seconds", "retry_max_seconds",
		"claim_lease_seconds", "claim_max", "send_concurrency", "linger_max_ms",
		"synchronous_commit"};
	const char *relay_values[] = {
		num(buf, &used, c->relay.batch_size), num(buf, &used, c->relay.poll_interval_ms),
		num(buf, &used, c->relay.retry_base_seconds),
		num(buf, &used, c->relay.retry_max_seconds),
		num(buf, &used, c->relay.claim_lease_seconds),
		num_unless(buf, &used, c->relay.claim_max, 500),
		num_unless(buf, &used, c->relay.send_concurrency, 8),
		num_unless(buf, &used, c->relay.linger_max_ms, 20),
		c->relay.synchronous_commit ? "on" : NULL};
	static const char *const consumer_keys[] = {
		"workers", "wait_time_seconds", "visibility_timeout_seconds", "lease_seconds",
		"shutdown_grace_seconds", "claim_max", "linger_max_ms"};
	const char *consumer_values[] = {
		num(buf, &used, b->workers), num(buf, &used, c->consumer.wait_time_seconds),
		num(buf, &used, c->consumer.visibility_timeout_seconds),
		num(buf, &used, c->consumer.lease_seconds),
		num(buf, &used, c->consumer.shutdown_grace_seconds),
		num_unless(buf, &used, c->consumer.claim_max, 100),
		num_unless(buf, &used, c->consumer.linger_max_ms, 20)};

	bench_settings_write(f, "relay", relay_keys, relay_values, 9, over);
	bench_settings_write(f, "consumer", consumer_keys, consumer_values, 7, over);
}

int bench_write_ini(const struct bench *b, const char *path, char (*names)[48],
                    char (*queues)[BENCH_PATH_MAX], const char *runs_log,
                    const char *sections, const char *dest_lines)
{
	const struct cfg *c = b->cfg;
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	/* bench_noop is installed apart from the production plugins. */
	fprintf(f, "[outboxd]\nplugin_path = %s\n\n", BENCHPLUGINDIR);
	fprintf(f, "[database]\nconninfo = %s\n\n[aws]\nregion = %s\n", c->database.conninfo,
	        c->aws.region != NULL ? c->aws.region : "us-east-1");
	if (c->aws.endpoint_url != NULL)
		fprintf(f, "endpoint_url = %s\n", c->aws.endpoint_url);
	write_pipeline(b, f);
	if (sections != NULL)
		fprintf(f, "\n%s", sections);
	for (int k = 0; k < b->dests; k++)
		fprintf(f, "\n[destination:%s]\nqueue_url = %s\nplugin = bench_noop\n"
		           "plugin.runs_log = %s\n%s", names[k], queues[k], runs_log,
		        dest_lines != NULL ? dest_lines : "");
	return fclose(f) == 0 ? 0 : -1;
}

static long read_hwm_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmHWM:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	}
	fclose(f);
	return kib;
}

/* Says so when the daemon pid has already ended (not reaped here), so a
 * daemon that could not start is not reported as a timeout alone. */
static void report_early_exit(pid_t pid, const char *outboxd, const char *log)
{
	siginfo_t info = {0};

	if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid)
		return;
	if (info.si_code == CLD_EXITED)
		log_error("\"%s\" exited with status %d before its workers connected; see \"%s\"",
		          outboxd, info.si_status, log);
	else
		log_error("\"%s\" was killed by signal %d before its workers connected; see \"%s\"",
		          outboxd, info.si_status, log);
}

int bench_daemon_start(struct bench *b, const char *ini, const char *tag, struct daemon *d)
{
	const char *outboxd = b->variant != NULL ? b->variant->outboxd : b->outboxd;
	char log[BENCH_PATH_MAX + 32];

	memset(d, 0, sizeof(*d));
	snprintf(d->stats, sizeof(d->stats), "%.400s/%s.stats", b->dir, tag);
	snprintf(log, sizeof(log), "%.400s/%s.log", b->dir, tag);
	fflush(NULL);
	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid == 0) {
		if (freopen(log, "a", stdout) == NULL || freopen(log, "a", stderr) == NULL)
			_exit(127);
		setenv("OUTBOX_STATS_FILE", d->stats, 1);
		execlp(outboxd, outboxd, "-c", ini, "--log-level", "warning", (char *)NULL);
		fprintf(stderr, "could not run \"%s\": %s\n", outboxd, strerror(errno));
		fflush(stderr); /* _exit() flushes nothing */
		_exit(127);
	}
	char sql[256];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_stat_activity"
	                           " WHERE application_name = 'outboxd consumer'"
	                           "   AND datname = current_database()");
	/* Ready when every worker holds its connection (made at its first receive). */
	if (bench_wait_count(b, sql, (long)b->dests * b->workers, false, 30) == 0)
		return 0;
	report_early_exit(d->pid, outboxd, log);
	/* No caller stops a daemon that did not start: end it (it has no work
	 * to finish) and reap it. */
	kill(d->pid, SIGKILL);
	while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
		continue;
	return -1;
}

int bench_daemon_stop(struct daemon *d)
{
	int status = 0;
	FILE *f;

	d->peak_rss_kib = read_hwm_kib(d->pid);
	d->cpu_seconds = bench_proc_cpu_seconds(d->pid, false);
	kill(d->pid, SIGTERM);
	while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
		continue;
	d->db_round_trips = d->db_statements = -1;
	f = fopen(d->stats, "r");
	if (f != NULL) {
		json_t *stats = json_loadf(f, 0, NULL);
		json_t *trips = json_object_get(stats, "db_round_trips");
		json_t *statements = json_object_get(stats, "db_statements");

		if (json_is_integer(trips) && json_is_integer(statements)) {
			d->db_round_trips = (long long)json_integer_value(trips);
			d->db_statements = (long long)json_integer_value(statements);
		}

		d->aws_requests = (unsigned long)json_integer_value(
			json_object_get(stats, "aws_requests"));
		d->sqs = json_incref(json_object_get(stats, "sqs"));
		json_decref(stats);
		fclose(f);
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
