/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws_stub.h: start and stop tests/harness/http-stub.mjs, and make an AWS
 * client that talks to a given endpoint.  Header-only (static) because
 * only the two AWS integration tests use it.
 */
#ifndef OUTBOX_TESTS_AWS_STUB_H
#define OUTBOX_TESTS_AWS_STUB_H

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aws/env.h"
#include "aws/http.h"

struct aws_stub {
	pid_t pid;
	int stdin_fd; /* closing it makes the stub exit even if we crash */
	char endpoint[64];
};

/* Reads the port line the stub prints, waiting at most 10 s. */
static inline int aws_stub_read_port(int fd, char *buf, size_t size)
{
	size_t used = 0;
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (used + 1 < size) {
		struct pollfd p = {fd, POLLIN, 0};
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 10 || poll(&p, 1, 200) < 0)
			return -1;
		if (p.revents == 0)
			continue;
		ssize_t n = read(fd, buf + used, 1);
		if (n <= 0)
			return -1;
		if (buf[used] == '\n')
			break;
		used++;
	}
	buf[used] = '\0';
	return used > 0 ? 0 : -1;
}

static inline int aws_stub_start(struct aws_stub *s)
{
	int out[2];
	int in[2];
	char port[16];

	if (pipe(out) < 0)
		return -1;
	if (pipe(in) < 0) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execlp("node", "node", OUTBOX_SRCDIR "/tests/harness/http-stub.mjs", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->stdin_fd = in[1];
	int rc = aws_stub_read_port(out[0], port, sizeof(port));
	close(out[0]);
	if (rc < 0)
		return -1;
	snprintf(s->endpoint, sizeof(s->endpoint), "http://127.0.0.1:%s", port);
	return 0;
}

static inline void aws_stub_stop(struct aws_stub *s)
{
	if (s->pid <= 0)
		return;
	close(s->stdin_fd);
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	s->pid = 0;
}

/*
 * A port on 127.0.0.1 that refuses connections for as long as *fd stays
 * open: the socket is bound but never listens, so nobody else can take the
 * port in the meantime.
 */
static inline int aws_stub_closed_port(int *fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	if (*fd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(*fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(*fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	return ntohs(a.sin_port);
}

/*
 * Common start of the AWS integration tests' main(): 77 (SKIP) without
 * fauxqs, 99 when curl cannot be initialised, else 0 after
 * curl_global_init() (the caller runs curl_global_cleanup() at the end).
 */
static inline int aws_stub_prepare(void)
{
	if (getenv("OUTBOX_TEST_AWS_ENDPOINT") == NULL) {
		fprintf(stderr, "OUTBOX_TEST_AWS_ENDPOINT is not set: skipping\n");
		return 77;
	}
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : 99;
}

/* An SQS or S3 client for endpoint, with the test credentials. */
static inline struct aws_http *aws_stub_client(const char *endpoint, enum aws_service svc)
{
	struct aws_env env;
	struct aws_http *c = NULL;

	if (aws_env_load(&env, NULL, endpoint, endpoint) == 0 && aws_http_new(&env, svc, &c) < 0)
		c = NULL;
	aws_env_free(&env);
	return c;
}

#endif
