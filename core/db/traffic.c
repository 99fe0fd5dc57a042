/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * db/traffic.c: round trips and statements to PostgreSQL (see traffic.h).
 */
#include "db/traffic.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

static atomic_ulong round_trips;
static atomic_ulong statements;

void db_traffic_note(unsigned n)
{
	atomic_fetch_add_explicit(&round_trips, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&statements, n, memory_order_relaxed);
}

void db_traffic_note_simple(const char *sql)
{
	db_traffic_note(db_traffic_count_statements(sql));
}

unsigned long db_traffic_round_trips(void)
{
	return atomic_load_explicit(&round_trips, memory_order_relaxed);
}

unsigned long db_traffic_statements(void)
{
	return atomic_load_explicit(&statements, memory_order_relaxed);
}

unsigned db_traffic_count_statements(const char *sql)
{
	unsigned n = 0;
	bool content = false;
	char quote = '\0';

	for (const char *p = sql; p != NULL && *p != '\0'; p++) {
		if (quote != '\0') {
			if (*p == quote)
				quote = '\0';
			continue;
		}
		if (*p == ';') {
			n += content;
			content = false;
		} else if (!isspace((unsigned char)*p)) {
			content = true;
			if (*p == '\'' || *p == '"')
				quote = *p;
		}
	}
	return n + content;
}
