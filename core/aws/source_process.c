/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source_process.c: credential_process, a program that prints the
 * credentials as JSON on its standard output (see aws/credential_sources.h).
 * It runs with /bin/sh -c, as in the SDKs; its standard error is ours.
 * A run is bounded (30 s, OUTBOX_CREDENTIAL_PROCESS_TIMEOUT; docs/aws.md):
 * a program that never answers would otherwise hang --check-config and
 * every refresh.  Past the bound its whole process group is killed and
 * reaped.
 */
#include "aws/credential_sources.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aws/credential_json.h"
#include "aws/env.h"
#include "aws/fetch.h"
#include "common/clock.h"

extern char **environ;

/* Default bound of one run, and the most OUTBOX_CREDENTIAL_PROCESS_TIMEOUT may set. */
#define PROCESS_TIMEOUT_DEFAULT_S 30
#define PROCESS_TIMEOUT_MAX_S 3600

/* The bound of one run in ms; -1 with the reason when the variable is bad. */
static int64_t process_timeout_ms(char *err, size_t err_size)
{
	const char *v = aws_env_get("OUTBOX_CREDENTIAL_PROCESS_TIMEOUT");
	char *end;
	long s;

	if (v == NULL)
		return PROCESS_TIMEOUT_DEFAULT_S * 1000;
	errno = 0;
	s = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || s < 1 || s > PROCESS_TIMEOUT_MAX_S) {
		snprintf(err, err_size, "invalid OUTBOX_CREDENTIAL_PROCESS_TIMEOUT \"%.40s\": must be"
		         " 1 to %d seconds", v, PROCESS_TIMEOUT_MAX_S);
		return -1;
	}
	return (int64_t)s * 1000;
}

/*
 * Reads fd to EOF into buf (at most cap bytes) until deadline (now_ms());
 * returns the length, -1 on an error or a full buffer, -2 at the deadline.
 */
static ssize_t read_all(int fd, char *buf, size_t cap, int64_t deadline)
{
	size_t len = 0;

	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - now_ms();
		int n;

		if (left <= 0)
			return -2;
		n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n <= 0)
			continue;
		ssize_t got = read(fd, buf + len, cap - len);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			return (ssize_t)len;
		len += (size_t)got;
		if (len == cap)
			return -1;
	}
}

/*
 * Waits for pid until deadline; past it (or when kill_now), kills its
 * whole process group (the shell and whatever it started) and reaps it.
 * Returns 0 with *status set, or -2 when it had to be killed.
 */
static int reap(pid_t pid, int64_t deadline, bool kill_now, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return 0; /* not our child any more: nothing to wait for */
		if (kill_now || now_ms() >= deadline)
			break;
		usleep(10000); /* it closed its output; exiting takes a moment */
	}
	(void)kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return -2;
}

/* Runs command in a process group of its own, its standard output a pipe. */
static int spawn(const char *command, int *out_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int fds[2];
	char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};
	int rc;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawn(pid, "/bin/sh", &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		errno = rc;
		return -1;
	}
	*out_fd = fds[0];
	return 0;
}

int aws_run_credential_process(const char *command, struct aws_creds **out, char *err,
                               size_t err_size)
{
	int64_t timeout = process_timeout_ms(err, err_size), deadline;
	char *buf;
	ssize_t len = -1;
	int fd = -1, status = 0, rc = -1;
	pid_t pid;

	*out = NULL;
	if (timeout < 0)
		return -1;
	buf = malloc(AWS_FETCH_MAX_BYTES);
	if (buf == NULL) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	if (spawn(command, &fd, &pid) < 0) {
		snprintf(err, err_size, "could not run credential_process: %s", strerror(errno));
		free(buf);
		return -1;
	}
	deadline = now_ms() + timeout;
	len = read_all(fd, buf, AWS_FETCH_MAX_BYTES, deadline);
	close(fd);
	if (reap(pid, deadline, len == -2, &status) < 0 || len == -2)
		snprintf(err, err_size, "credential_process did not finish within %lld s and was killed"
		         " (OUTBOX_CREDENTIAL_PROCESS_TIMEOUT)", (long long)(timeout / 1000));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		snprintf(err, err_size, "credential_process exited with status %d",
		         WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	else if (len < 0)
		snprintf(err, err_size, "could not read the output of credential_process");
	else
		rc = aws_creds_from_json(buf, (size_t)len, out, err, err_size);
	if (len > 0)
		explicit_bzero(buf, (size_t)len);
	free(buf);
	return rc;
}

static int process_fetch(void *ctx, struct aws_creds **out, char *err, size_t err_size)
{
	return aws_run_credential_process(ctx, out, err, err_size);
}

enum aws_source_result aws_source_process(const char *name, const char *command,
                                          struct aws_credential_source **src,
                                          struct aws_creds **first, char *why,
                                          size_t why_size)
{
	char *cmd = strdup(command);

	if (cmd == NULL) {
		snprintf(why, why_size, "out of memory");
		return AWS_SOURCE_FAILED;
	}
	return aws_source_make(name, process_fetch, free, cmd, true, src, first, why, why_size);
}
