/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * consumer/pause.c: obeying outboxctl pause (see pause.h).
 */
#include "consumer/pause.h"

#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "consumer/session.h"
#include "db/db.h"

static const char paused_sql[] =
	"SELECT EXISTS (SELECT 1 FROM outbox.paused_destinations WHERE destination = $1)";

/* 1 paused, 0 not, -1 on a database error (logged at debug level: the
 * worker's next statement reports a lost connection anyway). */
static int read_paused(struct consumer_worker *w)
{
	const char *params[1] = {w->dest->name};
	char err[512];
	PGresult *res = db_query(w->conn, paused_sql, 1, params, err, sizeof(err));
	int rc;

	if (res == NULL) {
		log_debug("could not read whether the destination is paused: %s dest=%s", err,
		          w->dest->name);
		consumer_worker_db_failed(w);
		return -1;
	}
	rc = strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? 1 : 0;
	PQclear(res);
	return rc;
}

bool consumer_paused(struct consumer_worker *w)
{
	int64_t now = now_ms();
	int rc;

	if (w->conn == NULL || (w->pause_read_ms != 0 && now - w->pause_read_ms < CONSUMER_PAUSE_READ_MS))
		return w->paused;
	rc = read_paused(w);
	if (rc < 0)
		return w->paused;
	w->pause_read_ms = now;
	if ((rc == 1) != w->paused)
		log_info(rc == 1 ? "destination paused: not receiving or claiming dest=%s"
		                 : "destination resumed dest=%s", w->dest->name);
	w->paused = rc == 1;
	return w->paused;
}

void consumer_leave_paused(struct consumer_worker *w, const struct sqs_messages *msgs)
{
	int vis = w->c->cfg->consumer.visibility_timeout_seconds;

	for (size_t i = 0; i < msgs->n; i++) {
		struct aws_result res;

		if (w->port.ops->change_visibility(w->port.ctx, &msgs->items[i], vis, &res) < 0)
			log_warning("could not leave a message of a paused destination: %s %s dest=%s",
			            res.code, res.message, w->dest->name);
	}
	if (msgs->n > 0)
		log_info("destination paused: %zu received message(s) left for later dest=%s",
		         msgs->n, w->dest->name);
}
