/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/shutdown.h: the upper bound on how long outboxd takes to stop.
 *
 * A graceful stop waits for running handlers (shutdown_grace_seconds),
 * then releases the claims of those still running and gives them
 * CONSUMER_RELEASE_WAIT_SECONDS more (consumer/consumer.h); the rest of a
 * stop (receives in flight, relay batches, plugin destroy()) is normally
 * short but can hang on a service that stopped answering or on a plugin.
 * The watchdog ends the process at shutdown_grace_seconds +
 * SHUTDOWN_MARGIN_SECONDS whatever is still running.  Ending there loses
 * nothing: a claim not yet released is retried when its lease expires, a
 * received message reappears after its visibility timeout, a relay batch
 * not yet marked is sent again (docs/outboxd.md, "Stopping").
 */
#ifndef OUTBOX_CORE_DAEMON_SHUTDOWN_H
#define OUTBOX_CORE_DAEMON_SHUTDOWN_H

/* The hard bound is shutdown_grace_seconds plus this. */
#define SHUTDOWN_MARGIN_SECONDS 15

/*
 * Starts a detached thread that exits the process (status
 * consumer_exit_status(), after a log line) grace_seconds + SHUTDOWN_MARGIN_SECONDS from now unless it ended
 * before.  Call once, when the stop begins.  Returns 0, or -1 when the
 * thread could not be started (logged; the stop goes on unbounded).
 */
int shutdown_watchdog_arm(int grace_seconds);

#endif
