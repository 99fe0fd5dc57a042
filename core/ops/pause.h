/*
 * ops/pause.h: pause and resume a destination, for "outboxctl
 * pause|resume" and the console (docs/outboxd.md, "Pausing a destination").
 *
 * A row in outbox.paused_destinations pauses the destination for every
 * instance that shares the database: relays claim none of its events,
 * consumers receive and claim nothing for it (each reads the row at most a
 * second old).  Resuming deletes the row and wakes the relays.
 */
#ifndef OUTBOX_CORE_OPS_PAUSE_H
#define OUTBOX_CORE_OPS_PAUSE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "config/config.h"

/* ops_set_paused()'s result besides 0 and 1. */
#define OPS_PAUSE_FAILED (-1)
#define OPS_PAUSE_NOT_CONFIGURED (-2)

/*
 * Pauses (pause true) or resumes dest, which must be configured in cfg.
 * Returns 1 when the row changed, 0 when it already was so (both
 * success: repeating a request changes nothing), OPS_PAUSE_NOT_CONFIGURED,
 * or OPS_PAUSE_FAILED with err set.
 */
int ops_set_paused(const struct cfg *cfg, PGconn *conn, const char *dest, bool pause,
                   char *err, size_t errlen);

/*
 * The paused destinations' names, as a new array of strings; NULL with
 * err set.
 */
json_t *ops_paused_destinations(PGconn *conn, char *err, size_t errlen);

#endif
