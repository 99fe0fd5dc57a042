/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/textfile.c: see common/textfile.h.
 */
#include "common/textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t mode)
{
	return S_ISDIR(mode) ? "a directory" : S_ISCHR(mode) ? "a character device"
	       : S_ISBLK(mode) ? "a block device" : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket" : "a special file";
}

FILE *textfile_open(const char *path, long max_bytes, char *why, size_t why_size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int saved;
	FILE *fp;

	if (fd < 0) {
		saved = errno;
		snprintf(why, why_size, "could not open file: %s", strerror(saved));
		errno = saved;
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		saved = errno;
		snprintf(why, why_size, "could not stat file: %s", strerror(saved));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		saved = EINVAL;
		snprintf(why, why_size, "could not read file: it is %s, not a regular file",
		         kind_of(st.st_mode));
		goto fail;
	}
	if (st.st_size > max_bytes) {
		saved = EFBIG;
		snprintf(why, why_size, "file is too large (%lld bytes, at most %ld)",
		         (long long)st.st_size, max_bytes);
		goto fail;
	}
	fp = fdopen(fd, "r");
	if (fp != NULL)
		return fp;
	saved = errno;
	snprintf(why, why_size, "could not open file: %s", strerror(saved));
fail:
	close(fd);
	errno = saved;
	return NULL;
}

size_t textfile_stored_len(const struct textfile_lines *r, ssize_t len)
{
	return (size_t)len < r->buf_size - 1 ? (size_t)len : r->buf_size - 1;
}

ssize_t textfile_next_line(struct textfile_lines *r)
{
	ssize_t len = 0;
	int c = EOF;

	r->nul_at = -1;
	while (!r->too_large && (c = getc(r->fp)) != EOF) {
		if (++r->bytes_read > r->max_bytes) {
			r->too_large = true;
			break;
		}
		if (c == '\0' && r->nul_at < 0)
			r->nul_at = (long)len;
		if ((size_t)len < r->buf_size - 1)
			r->buf[len] = (char)c;
		len++;
		if (c == '\n')
			break;
	}
	r->buf[textfile_stored_len(r, len)] = '\0';
	if (r->too_large || (len == 0 && c == EOF))
		return -1;
	return len;
}
