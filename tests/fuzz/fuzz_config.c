/*
 * fuzz_config.c: libFuzzer harness for the relay.ini parser
 * (core/config/).
 *
 * The input is the file.  cfg_load() takes a path and refuses anything but
 * a regular file, so the bytes go into a memfd (a regular file in memory)
 * opened as /proc/self/fd/N: no disk I/O per run.  Checked: a load either
 * succeeds with no error or fails with at least one, every message starts
 * with the file name, and a loaded cfg is sane (destinations with their
 * required keys, unique queues).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config/config.h"
#include "config/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_config: invariant violated: %s\n", what);
		abort();
	}
}

static void check_loaded(const struct cfg *cfg)
{
	require(cfg->database.conninfo != NULL, "a loaded file has a conninfo");
	require(cfg->n_destinations > 0, "a loaded file has a destination");
	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const struct cfg_destination *d = &cfg->destinations[i];

		require(d->queue_url != NULL && d->plugin != NULL, "required destination keys");
		require(cfg_find_destination(cfg, d->name) == d, "destination names are unique");
		for (size_t j = 0; j < i; j++)
			require(strcmp(d->queue_url, cfg->destinations[j].queue_url) != 0,
			        "queue URLs are unique");
		require(cfg_text_utf8_error(d->queue_url, strlen(d->queue_url)) < 0,
		        "a loaded URL is UTF-8");
	}
}

/* The text checks on their own, on a NUL-terminated copy. */
static void fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	long bad;

	require(s != NULL, "malloc works");
	memcpy(s, data, size);
	s[size] = '\0';
	bad = cfg_text_utf8_error(s, size);
	require(bad < (long)size, "a bad byte is inside the text");
	if (bad < 0 && size > 0)
		require(cfg_text_utf8_error(s, size - 1) <= (long)size - 1, "prefixes stay in bounds");
	(void)cfg_text_looks_like_secret(s);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	struct cfg_errors errs = {0};
	struct cfg *cfg = NULL;
	int rc;

	if (fd < 0) {
		fd = memfd_create("relay.ini", 0);
		require(fd >= 0, "memfd_create works");
	}
	require(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size,
	        "the input is written");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = cfg_load(path, &cfg, &errs);
	if (rc == 0) {
		require(cfg != NULL && cfg_errors_count(&errs) == 0, "success has no errors");
		check_loaded(cfg);
	} else {
		require(cfg == NULL && cfg_errors_count(&errs) > 0, "failure has an error");
	}
	for (size_t i = 0; i < errs.n; i++)
		require(strncmp(errs.msgs[i], path, strlen(path)) == 0, "messages start with FILE");
	cfg_free(cfg);
	cfg_errors_free(&errs);
	fuzz_text(data, size);
	return 0;
}
