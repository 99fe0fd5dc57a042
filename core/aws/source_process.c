/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source_process.c: credential_process, a program that prints the
 * credentials as JSON on its standard output (see aws/credential_sources.h).
 * It runs with /bin/sh -c, as in the SDKs; its standard error is ours.
 */
#include "aws/credential_sources.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aws/credential_json.h"
#include "aws/fetch.h"

extern char **environ;

/* Reads fd to EOF into buf (at most cap bytes); returns the length or -1. */
static ssize_t read_all(int fd, char *buf, size_t cap)
{
	size_t len = 0;

	for (;;) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return (ssize_t)len;
		len += (size_t)n;
		if (len == cap)
			return -1;
	}
}

static int spawn(const char *command, int *out_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int fds[2];
	char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};
	int rc;

	if (pipe(fds) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	rc = posix_spawn(pid, "/bin/sh", &fa, NULL, argv, environ);
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
	char *buf = malloc(AWS_FETCH_MAX_BYTES);
	ssize_t len = -1;
	int fd = -1, status = 0, rc = -1;
	pid_t pid;

	*out = NULL;
	if (buf == NULL) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	if (spawn(command, &fd, &pid) < 0) {
		snprintf(err, err_size, "could not run credential_process: %s", strerror(errno));
		free(buf);
		return -1;
	}
	len = read_all(fd, buf, AWS_FETCH_MAX_BYTES);
	close(fd);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
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
