/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/internal.h: what the files of the relay.ini parser share, and
 * nothing outside config/ may use: the option table (options.c), the
 * parser's state (config.c), the error helpers (errors.c), the line reader
 * (reader.c) and the checks across sections (checks.c).
 *
 * Calls go one way: config.c calls the reader, the checks and the option
 * setters; those call errors.c and nothing above them.
 */
#ifndef OUTBOX_CORE_CONFIG_INTERNAL_H
#define OUTBOX_CORE_CONFIG_INTERNAL_H

#include <ini.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/compiler.h"
#include "common/textfile.h"
#include "config/config.h"

enum cfg_type {
	CFG_T_STR,      /* any non-empty text */
	CFG_T_URL,      /* http:// or https:// URL */
	CFG_T_CONNINFO, /* a libpq conninfo string or URI */
	CFG_T_PLUGIN,   /* plugin name, [a-z0-9_]+; also sets plugin_line */
	CFG_T_INT,      /* decimal integer within [min, max] */
	CFG_T_PATHS,    /* colon-separated absolute directories */
	CFG_T_LISTEN,   /* HOST:PORT (config/listen.h) */
	CFG_T_BOOL,     /* on/off, true/false, yes/no, 1/0, as PostgreSQL; stored as int */
	CFG_T_LOG_LEVEL,  /* error, warning, info or debug (common/log.h) */
	CFG_T_LOG_FORMAT, /* text or json */
	CFG_T_ENV,      /* an environment variable's name, [A-Za-z_][A-Za-z0-9_]* */
};

#define CFG_F_REQUIRED 0x1u
#define CFG_F_SECRET 0x2u /* the value never appears in a message */

/* Options of [destination:NAME] sections use this section name. */
#define CFG_DEST "destination"
#define CFG_DEST_PREFIX "destination:"
#define CFG_PLUGIN_PREFIX "plugin."
#define CFG_DEST_NAME_MAX 40
/* Options of [schedule:NAME] sections use this section name. */
#define CFG_SCHED "schedule"
#define CFG_SCHED_PREFIX "schedule:"
#define CFG_SCHED_NAME_MAX 40

/*
 * Hard limits of the reader, so that "-c /dev/zero" or a runaway file can
 * never grow memory: a relay.ini is a few kilobytes.  Lines longer than
 * inih's limit are refused anyway; the buffer only needs to hold enough of
 * one to say so.
 */
#define CFG_MAX_FILE_BYTES (1024L * 1024L)
#define CFG_LINE_BUF (2 * INI_MAX_LINE)

struct cfg_opt {
	const char *section;
	const char *name;
	enum cfg_type type;
	unsigned flags;
	size_t offset; /* into struct cfg, struct cfg_destination (CFG_DEST) or cfg_schedule (CFG_SCHED) */
	const char *def_str;
	int def_int, min, max;
};

/*
 * The option table (options.c), in file order.  CFG_N_OPTS is a constant
 * because the parser keeps one line number per option; options.c checks
 * at compile time that it matches the table.
 */
#define CFG_N_OPTS 60
extern const struct cfg_opt cfg_opts[CFG_N_OPTS];

/* Fixed sections (config.c); [database], the first, is the only required one. */
#define CFG_N_FIXED 11
extern const char *const cfg_fixed_sections[CFG_N_FIXED];

enum cfg_sect_kind {
	CFG_SECT_NONE,    /* before the first header */
	CFG_SECT_IGNORED, /* unknown, duplicate or malformed: already reported */
	CFG_SECT_FIXED,
	CFG_SECT_DEST,
	CFG_SECT_SCHED,
};

/* Which struct an option is a member of. */
enum cfg_base {
	CFG_BASE_CFG,
	CFG_BASE_DEST,
	CFG_BASE_SCHED,
};

struct cfg_parser {
	struct cfg *cfg;          /* being built; owned until handed out */
	struct cfg_errors *errs;  /* borrowed */
	struct textfile_lines rd; /* rd.fp owned; rd.buf is buf */
	char buf[CFG_LINE_BUF];   /* the current line, cut at CFG_LINE_BUF - 1 bytes */
	int line;                 /* line the reader returned last */
	bool key_seen;            /* a key line since the last header */
	/* Only for messages; a key can never be longer than one inih line. */
	char prev_key[INI_MAX_LINE];
	enum cfg_sect_kind kind;
	char section[sizeof(CFG_DEST_PREFIX) + CFG_DEST_NAME_MAX]; /* as written between the brackets (the longest prefix) */
	int section_line;
	size_t dest_idx;          /* current destination when kind == CFG_SECT_DEST */
	size_t sched_idx;         /* current schedule when kind == CFG_SECT_SCHED */
	int fixed_line[CFG_N_FIXED]; /* header line of each fixed section, 0 if absent */
	int opt_line[CFG_N_OPTS];    /* line each option was set on (destination: current one) */
	struct cfg_url_lines *url_lines; /* per destination, in file order; owned */
};

/* Where a destination set its queue URLs, for the checks across destinations. */
struct cfg_url_lines {
	int queue_url, dlq_url;
};

/* ---- errors.c ---- */

/*
 * Appends "FILE[:LINE]: [[SECTION]][ KEY]: problem"; line 0 means the file
 * as a whole, and an empty or NULL section or key is left out.
 */
void cfg_verror(struct cfg_errors *errs, const char *file, int line,
		const char *section, const char *key, const char *fmt, va_list ap)
	OUTBOX_PRINTF(6, 0);
/* The same, for the file p is parsing. */
void cfg_error(struct cfg_parser *p, int line, const char *section,
	       const char *key, const char *fmt, ...) OUTBOX_PRINTF(5, 6);

/* ---- options.c ---- */

/* Whether s is 1..max bytes of [a-z0-9] and the characters of extra. */
bool cfg_matches_charset(const char *s, const char *extra, size_t max);
/* Whether the option belongs to [destination:NAME] sections. */
bool cfg_opt_is_dest(const struct cfg_opt *o);
/* Which struct the option is a member of. */
enum cfg_base cfg_opt_base(const struct cfg_opt *o);
/* Sets every option of base (a struct of kind) to its default; -1 when
 * memory ran out. */
int cfg_apply_defaults(void *base, enum cfg_base kind);
/* Frees the string options of base (a struct of kind). */
void cfg_free_strings(void *base, enum cfg_base kind);
/* Checks and stores value v of option cfg_opts[i] into base, reporting a
 * duplicate or an invalid value at p's current line. */
void cfg_set_opt(struct cfg_parser *p, size_t i, void *base, const char *v);

/* ---- reader.c ---- */

/* Opens path for parsing; NULL after reporting why it cannot be read. */
FILE *cfg_open(struct cfg_parser *p, const char *path);
/* Reads the next line into p->buf and returns its whole length, or -1 at
 * the end (see reader.c). */
ssize_t cfg_next_line(struct cfg_parser *p);
/* Bytes of a line of length len that p->buf holds. */
size_t cfg_stored_len(ssize_t len);
/* Refuses (and reports) a line with a NUL, a control character or bad UTF-8. */
bool cfg_line_bytes_ok(struct cfg_parser *p, size_t len);
/* The line in p->buf without its end-of-line characters or BOM; modifies p->buf. */
char *cfg_line_content(struct cfg_parser *p, size_t len);
/* Whether s has inih's "=" or ":" before any inline " ;" comment. */
bool cfg_has_separator(const char *s);

/* ---- schedule.c ---- */

/* A [schedule:NAME] header: a new schedule with its defaults. */
void cfg_schedule_start(struct cfg_parser *p, const char *name);
/* The checks of the schedule section just ended. */
void cfg_schedule_finish(struct cfg_parser *p);
/* The checks that need the whole file: each schedule's destination. */
void cfg_check_schedules(struct cfg_parser *p);

/* ---- checks.c ---- */

/* Records the lines of the queue URLs of the destination just ended. */
void cfg_remember_url_lines(struct cfg_parser *p);
/* The checks that need the whole file: required sections, queue URLs
 * across destinations, retention against the horizon, retry bounds. */
void cfg_check_file(struct cfg_parser *p);

#endif
