/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/fault.c: crash points (see fault.h).
 */
#include "common/fault.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

const char *volatile fault_armed;
static char armed_name[128];
static atomic_int remaining;

void fault_arm(const char *name, int hits)
{
	if (name == NULL || *name == '\0') {
		fault_armed = NULL;
		return;
	}
	snprintf(armed_name, sizeof(armed_name), "%s", name);
	atomic_store(&remaining, hits < 1 ? 1 : hits);
	fault_armed = armed_name;
}

void fault_init(void)
{
	const char *spec = getenv("OUTBOX_FAULT_POINT");
	char name[128];
	const char *colon;
	int hits = 1;

	if (spec == NULL || *spec == '\0')
		return;
	colon = strchr(spec, ':');
	if (colon != NULL) {
		hits = (int)strtol(colon + 1, NULL, 10);
		snprintf(name, sizeof(name), "%.*s", (int)(colon - spec), spec);
	} else {
		snprintf(name, sizeof(name), "%s", spec);
	}
	log_warning("fault point \"%s\" is armed: the process will exit with status 137 there",
	            name);
	fault_arm(name, hits);
}

void fault_reached(const char *name)
{
	const char *armed = fault_armed;

	if (armed == NULL || strcmp(armed, name) != 0)
		return;
	if (atomic_fetch_sub(&remaining, 1) == 1)
		_exit(137);
}
