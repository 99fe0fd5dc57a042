/*
 * ctl/status.h: the parts of "outboxctl status" that are not the
 * database's counts (ctl/cmd_status.c): the queues' depths and the live
 * instances.  Each adds what it could read to the document and one line
 * per failure to errors (a JSON array of strings), so status prints what
 * it can when a service is down.
 */
#ifndef OUTBOX_CORE_CTL_STATUS_H
#define OUTBOX_CORE_CTL_STATUS_H

#include <jansson.h>
#include <libpq-fe.h>

#include "config/config.h"

/*
 * For every configured destination in dests (borrowed objects keyed by
 * name): "queue_depth" and "dlq_depth", each {"visible", "in_flight",
 * "delayed"} from one GetQueueAttributes, or null (no DLQ, or it failed).
 * Returns the number of failures.
 */
int status_queue_depths(const struct cfg *cfg, json_t *dests, json_t *errors);

/*
 * The registered instances (outbox.relay_instances) as a new array:
 * {"instance_id", "role", "destinations", "started_at",
 * "heartbeat_age_seconds", "live"}; NULL on failure (errors has why).
 */
json_t *status_instances(PGconn *conn, json_t *errors);

#endif
