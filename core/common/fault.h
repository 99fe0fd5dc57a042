/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/fault.h: compiled-in crash points, for outbox-faultbench and the tests.
 *
 * FAULT_POINT("relay.after_send") marks a place where a real process could
 * die.  Unarmed (the normal case) it costs one well-predicted branch.  Armed,
 * with OUTBOX_FAULT_POINT=NAME[:N] in the environment (read by fault_init())
 * or fault_arm(), the N-th time (default 1st) the process reaches NAME it
 * ends at once with _exit(137), as if killed by SIGKILL: no atexit
 * handlers, no buffered output, no COMMIT or ROLLBACK sent.
 *
 * The names in use are listed in docs/reliability.md.
 */
#ifndef OUTBOX_CORE_COMMON_FAULT_H
#define OUTBOX_CORE_COMMON_FAULT_H

#include "common/compiler.h"

/* Non-NULL while a fault point is armed; read without locking on purpose. */
extern const char *volatile fault_armed;

/* Arm from OUTBOX_FAULT_POINT; call once, before threads start. */
void fault_init(void);
/* Arm name (copied) to fire on its hits-th passage (>= 1); NULL disarms. */
void fault_arm(const char *name, int hits);
/* Called by FAULT_POINT when something is armed. */
void fault_reached(const char *name);

#define FAULT_POINT(name)                              \
	do {                                               \
		if (outbox_unlikely(fault_armed != NULL))      \
			fault_reached(name);                       \
	} while (0)

#endif
