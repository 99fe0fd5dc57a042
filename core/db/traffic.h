/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * db/traffic.h: how many round trips to PostgreSQL this process made, and
 * how many statements they carried (process-wide, relaxed atomics).
 *
 * A round trip is one libpq call that waits for the server's answer
 * (PQexec, PQexecParams, PQexecPrepared, PQprepare); a simple-protocol
 * string with several statements is one round trip and that many
 * statements; a PQprepare is a round trip and no statement.  outboxd
 * writes the totals to OUTBOX_STATS_FILE for outbox-bench's per-job
 * figures; nothing else depends on them.  liboutbox does not count (it
 * runs in its caller's process).
 */
#ifndef OUTBOX_CORE_DB_TRAFFIC_H
#define OUTBOX_CORE_DB_TRAFFIC_H

/* One round trip carrying statements statements (0 for a PQprepare). */
void db_traffic_note(unsigned statements);

/* One simple-protocol round trip: counts the statements of sql. */
void db_traffic_note_simple(const char *sql);

unsigned long db_traffic_round_trips(void);
unsigned long db_traffic_statements(void);

/* The statements of a simple-protocol string: its non-blank parts between
 * semicolons outside quotes (our own literals: no dollar quoting). */
unsigned db_traffic_count_statements(const char *sql);

#endif /* OUTBOX_CORE_DB_TRAFFIC_H */
