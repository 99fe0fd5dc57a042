/*
 * daemon/observe.h: what the daemon tells its operators while it runs
 * (docs/metrics.md): the metrics registry's destinations, the HTTP
 * endpoints of [metrics] listen, and systemd's notifications (READY=1 once
 * every lane and worker is connected, WATCHDOG=1 while they make progress,
 * STOPPING=1 at shutdown).
 */
#ifndef OUTBOX_CORE_DAEMON_OBSERVE_H
#define OUTBOX_CORE_DAEMON_OBSERVE_H

#include <signal.h>
#include <stdbool.h>

#include "config/config.h"

struct observe;

/*
 * Registers the destinations with the metrics registry and, with
 * [metrics] listen, starts the HTTP server.  Call before any lane or worker
 * starts.  relay/consumer: which halves this process runs.  Returns 0 and
 * *out (cfg borrowed, must outlive it), or -1 (logged).
 */
int observe_start(const struct cfg *cfg, bool relay, bool consumer, struct observe **out);

/*
 * Waits for a signal of set, meanwhile sending READY=1 once every lane and
 * worker is connected and WATCHDOG=1 while the process is alive.  Returns
 * the signal.
 */
int observe_sigwait(struct observe *o, const sigset_t *set);

/* Shutdown began: STOPPING=1, and /readyz answers 503 from now on. */
void observe_stopping(struct observe *o);

/* After the lanes and workers stopped: stops the server, frees; NULL is fine. */
void observe_stop(struct observe *o);

#endif
