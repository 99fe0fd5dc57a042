/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/shutdown.c: the shutdown watchdog (see shutdown.h).
 */
#include "daemon/shutdown.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "consumer/consumer.h"

static struct timespec deadline;
static int bound_seconds;

static void *watchdog_main(void *arg)
{
	(void)arg;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR)
		continue;
	log_error("shutdown did not finish within %d s; exiting now (claims not released are"
	          " retried when their leases expire, received messages reappear)",
	          bound_seconds);
	_exit(consumer_exit_status());
}

int shutdown_watchdog_arm(int grace_seconds)
{
	pthread_attr_t attr;
	pthread_t thread;
	int rc;

	bound_seconds = grace_seconds + SHUTDOWN_MARGIN_SECONDS;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += bound_seconds;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thread, &attr, watchdog_main, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		log_error("could not start the shutdown watchdog; the stop is not bounded");
		return -1;
	}
	log_info("stopping: outboxd exits within %d s", bound_seconds);
	return 0;
}
