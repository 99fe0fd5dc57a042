/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ops/ops.h: what every operator action and query of core/ops/ shares.
 *
 * Each one returns a jansson document (the caller prints it as text, JSON
 * or HTML) and one of these codes, so that every front end maps a failure
 * to the same answer: outboxctl to its exit codes (ctl/ctl.h), the console
 * to HTTP statuses.
 */
#ifndef OUTBOX_CORE_OPS_OPS_H
#define OUTBOX_CORE_OPS_OPS_H

enum ops_result {
	OPS_OK = 0,
	OPS_INVALID = -1,   /* a bad argument (err says which): a usage error */
	OPS_NOT_FOUND = -2, /* no such job */
	OPS_REFUSED = -3,   /* the job's state forbids the action; the document says which */
	OPS_DB = -4,        /* the database failed; db_connection_lost() tells an outage */
};

#endif
