/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * schedule/list.h: the configured schedules with their last and next slots
 * (outboxctl schedules; docs/outboxctl.md).
 */
#ifndef OUTBOX_CORE_SCHEDULE_LIST_H
#define OUTBOX_CORE_SCHEDULE_LIST_H

#include <stddef.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "common/compiler.h"
#include "config/config.h"

/*
 * *out receives a new reference to a JSON array, one object per schedule
 * of cfg (borrowed) in file order: name, cron, every, timezone, job_type,
 * destination, catch_up, and from outbox.schedules last_slot, last_job_id,
 * last_enqueued_by, last_enqueued_at (null when no slot was enqueued yet),
 * then next_slot, the first slot after the database's now().  Times are
 * RFC 3339 UTC.  Returns 0, or -1 with err set (*out NULL).
 */
int schedule_list(PGconn *conn, const struct cfg *cfg, json_t **out, char *err,
                  size_t errlen) OUTBOX_MUSTCHECK;

#endif
