/*
 * daemon/console.h: the web console ([console] listen; docs/console.md).
 *
 * Server-rendered HTML over the operator functions of core/ops/ (the same
 * code as outboxctl), served by libmicrohttpd on a thread of its own with
 * one database connection of its own.  Pages: /, /jobs, /jobs/JOB_ID,
 * /dead; actions (POST): /jobs/JOB_ID/redrive|cancel|retry,
 * /destinations/NAME/pause|resume, /dead/redrive.
 */
#ifndef OUTBOX_CORE_DAEMON_CONSOLE_H
#define OUTBOX_CORE_DAEMON_CONSOLE_H

#include "common/compiler.h"
#include "config/config.h"

struct console;

/*
 * With [console] listen set: reads the token from the environment variable
 * [console] token_env names, binds and starts serving.  cfg is borrowed
 * and must outlive the console.  Returns 0 and *out (NULL when the console
 * is off), or -1 (logged: the address is in use, the token is missing).
 */
int console_start(const struct cfg *cfg, struct console **out) OUTBOX_MUSTCHECK;

/* Stops serving, closes the connection, frees; NULL is fine. */
void console_stop(struct console *c);

#endif
