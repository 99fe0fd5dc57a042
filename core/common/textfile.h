/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/textfile.h: opening a configuration file without blocking, and
 * reading it one bounded line at a time.  relay.ini (config/reader.c) and
 * the AWS shared files (aws/profile.c) are read with it.
 *
 * Opening never blocks: a FIFO or a device put where a file was expected
 * is refused at once instead of holding the caller in open(2) until
 * someone writes to it (the daemon's main thread at SIGHUP, which then
 * could not even stop).  Reading never allocates: a line longer than the
 * caller's buffer is cut there and its full length reported, so that the
 * caller can refuse it by line number.
 */
#ifndef OUTBOX_CORE_COMMON_TEXTFILE_H
#define OUTBOX_CORE_COMMON_TEXTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/compiler.h"

/*
 * Opens path for reading with O_NONBLOCK, then fstat(2): anything but a
 * regular file of at most max_bytes is refused.  Returns the stream (close
 * with fclose()), or NULL with errno set and, in why, the problem as a
 * message ("could not open file: ...", "could not read file: it is a FIFO,
 * not a regular file", "file is too large (...)").
 */
FILE *textfile_open(const char *path, long max_bytes, char *why, size_t why_size)
	OUTBOX_MUSTCHECK;

/* The state of one file's lines; fill fp, buf, buf_size, max_bytes. */
struct textfile_lines {
	FILE *fp;        /* borrowed */
	char *buf;       /* borrowed: the current line, cut at buf_size - 1 bytes, NUL-terminated */
	size_t buf_size;
	long max_bytes;  /* of the whole file */
	long bytes_read;
	bool too_large;  /* stopped reading at max_bytes */
	long nul_at;     /* offset of the current line's first NUL byte, or -1 */
};

/*
 * Reads one line, its newline included, into r->buf and returns its whole
 * length (which may exceed what buf holds), or -1 at the end of the file,
 * on a read error (ferror(r->fp)), or once the file passed r->max_bytes.
 * NUL bytes are kept and the first one's offset noted in r->nul_at.
 */
ssize_t textfile_next_line(struct textfile_lines *r);

/* Bytes of a line of length len that r->buf holds. */
size_t textfile_stored_len(const struct textfile_lines *r, ssize_t len);

#endif
