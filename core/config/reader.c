/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config/reader.c: opening relay.ini and reading it one line at a time,
 * with hard limits on the file and the line, and refusing bytes that have
 * no place in a configuration file.  What a line means is config.c's.
 */
#include "config/config.h"
#include "config/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config/text.h"

/* ---- opening ---- */

/*
 * Opens path for reading without blocking (common/textfile.h), refusing
 * anything but a regular file of at most CFG_MAX_FILE_BYTES: a device or a
 * FIFO never ends (and opening a FIFO would wait for a writer), and a
 * relay.ini that large is a mistake.
 */
FILE *cfg_open(struct cfg_parser *p, const char *path)
{
	char why[256];
	FILE *fp = textfile_open(path, CFG_MAX_FILE_BYTES, why, sizeof(why));

	if (fp == NULL) {
		cfg_error(p, 0, NULL, NULL, "%s", why);
		return NULL;
	}
	p->rd = (struct textfile_lines){.fp = fp, .buf = p->buf, .buf_size = sizeof(p->buf),
	                                .max_bytes = CFG_MAX_FILE_BYTES, .nul_at = -1};
	return fp;
}

/* ---- lines ---- */

/* Mirrors inih's search for "=" or ":" that stops at an inline " ;" comment. */
bool cfg_has_separator(const char *s)
{
	bool was_space = false;

	for (; *s; s++) {
		if (*s == '=' || *s == ':')
			return true;
		if (was_space && *s == ';')
			return false;
		was_space = isspace((unsigned char)*s);
	}
	return false;
}

/* Returns the line's content without its end-of-line characters or BOM. */
char *cfg_line_content(struct cfg_parser *p, size_t len)
{
	char *s = p->buf;

	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = '\0';
	if (p->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3;
	return s;
}

/* Bytes of a line of length len that the buffer holds. */
size_t cfg_stored_len(ssize_t len)
{
	return (size_t)len < CFG_LINE_BUF - 1 ? (size_t)len : CFG_LINE_BUF - 1;
}

/*
 * Reads one line, its newline included, into p->buf (cut at CFG_LINE_BUF - 1
 * bytes, NUL-terminated) and returns its whole length, or -1 at the end of
 * the file, on a read error, or once the file passed CFG_MAX_FILE_BYTES.
 * Unlike getline() it never allocates: a file without newlines costs
 * nothing but the time to read CFG_MAX_FILE_BYTES.  NUL bytes are kept
 * (p->rd.nul_at) so that the caller can refuse them: inih would silently
 * cut the value at the first one.
 */
ssize_t cfg_next_line(struct cfg_parser *p)
{
	return textfile_next_line(&p->rd);
}

/* Refuses a line with a NUL byte or bytes that are not UTF-8, by column. */
bool cfg_line_bytes_ok(struct cfg_parser *p, size_t len)
{
	long bad;

	if (p->rd.nul_at >= 0) {
		cfg_error(p, p->line, p->section, NULL,
			  "line contains a NUL byte (column %ld)", p->rd.nul_at + 1);
		return false;
	}
	if (len >= CFG_LINE_BUF - 1)
		return true; /* too long: refused as such, and its end is not in buf */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p->buf[i];

		/* Tab is white space, CR and LF end the line; the rest has no
		 * place in a value and would only fail later, far from here. */
		if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f) {
			cfg_error(p, p->line, p->section, NULL,
				  "line contains the control character 0x%02x (column %zu)", c, i + 1);
			return false;
		}
	}
	bad = cfg_text_utf8_error(p->buf, len);
	if (bad < 0)
		return true;
	/* As PostgreSQL says it, but with the first offending byte only: the
	 * bytes after it may be part of a secret. */
	cfg_error(p, p->line, p->section, NULL,
		  "invalid byte sequence for encoding \"UTF8\": 0x%02x (column %ld)",
		  (unsigned char)p->buf[bad], bad + 1);
	return false;
}

