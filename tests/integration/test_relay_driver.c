/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_relay_driver.c: the relay as a process, for the shell tests:
 *   test_relay_driver -c relay.ini [--publisher sqs|null|fake]
 * Loads the file, arms OUTBOX_FAULT_POINT, runs relay_start() until
 * SIGTERM or SIGINT, then relay_stop() and exit 0.  The shell tests use
 * outboxd --role relay instead when it is built.
 */
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "common/fault.h"
#include "common/log.h"
#include "relay/relay.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int run(const char *path, const char *publisher)
{
	struct cfg_errors errs = {0};
	struct cfg *cfg = NULL;
	struct relay *r = NULL;
	char host[64], id[128];
	int rc = 1;

	if (cfg_load(path, &cfg, &errs) < 0) {
		cfg_errors_print(&errs, stderr);
		cfg_errors_free(&errs);
		return 78;
	}
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(id, sizeof(id), "%s:%ld", host, (long)getpid());
	if (relay_start_publisher(cfg, id, publisher, &r) < 0)
		goto out;
	while (!stop_requested)
		pause();
	relay_stop(r);
	rc = 0;
out:
	cfg_free(cfg);
	return rc;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	const char *path = NULL;
	const char *publisher = "sqs";
	int rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-c") == 0)
			path = argv[i + 1];
		else if (strcmp(argv[i], "--publisher") == 0)
			publisher = argv[i + 1];
	}
	if (path == NULL) {
		fprintf(stderr, "usage: %s -c FILE [--publisher sqs|null|fake]\n", argv[0]);
		return 64;
	}
	log_set_ident("relay-driver");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	fault_init();
	rc = run(path, publisher);
	curl_global_cleanup();
	return rc;
}
