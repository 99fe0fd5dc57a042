/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * price/artifact.h: the price path's window artifact (docs/price-path.md).
 *
 * A bars file is a JSON array of one-minute bars
 *   {"t": ISO 8601 minute, "o": n, "h": n, "l": n, "c": n, "v": integer >= 0}
 * sorted by t, all inside [window_start, window_start + window length).
 * The artifact stored in S3 is the canonical compact JSON
 *   {"symbol":S,"window_start":T,"bars":[{"t":..,"o":..,"h":..,"l":..,"c":..,"v":..},...]}
 * (fixed member order, UTC timestamps "YYYY-MM-DDTHH:MM:SSZ", prices with
 * up to 15 significant digits) and its key is content-addressed:
 *   <prefix><symbol>/<window_start>/<sha256 of the artifact>.json
 *
 * The code depends on jansson and OpenSSL's libcrypto only, so that the
 * price_trigger plugin can compile artifact.c into itself as one of its
 * sources (plugins never link libcore); the plugin's export list keeps
 * these functions private to it.
 */
#ifndef OUTBOX_CORE_PRICE_ARTIFACT_H
#define OUTBOX_CORE_PRICE_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define ARTIFACT_SHA256_HEX_LEN 64
#define ARTIFACT_TIME_LEN 20     /* "YYYY-MM-DDTHH:MM:SSZ" without the NUL */
#define ARTIFACT_SYMBOL_MAX 32   /* longest symbol accepted */
#define ARTIFACT_DEFAULT_WINDOW_SECONDS 300

struct artifact_bar {
	int64_t t;   /* seconds since the epoch, a whole minute */
	double o, h, l, c;
	long long v;
};

/* Bars in time order; bars is owned, free with artifact_bars_free(). */
struct artifact_bars {
	struct artifact_bar *bars;
	size_t n;
};

/* A built artifact.  body and key are owned; free with artifact_free(). */
struct artifact {
	char symbol[ARTIFACT_SYMBOL_MAX + 1];
	int64_t window_start;
	char window_start_text[ARTIFACT_TIME_LEN + 1];
	struct artifact_bars bars;
	char *body;      /* the canonical JSON text (NUL-terminated) */
	size_t len;      /* strlen(body) */
	char sha256[ARTIFACT_SHA256_HEX_LEN + 1];
	char *key;       /* NULL unless built with a prefix */
};

/* 1000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the times with a 4-digit year. */
#define ARTIFACT_TIME_MIN INT64_C(-30610224000)
#define ARTIFACT_TIME_MAX INT64_C(253402300799)

/*
 * Parses an ISO 8601 timestamp "YYYY-MM-DD[T ]HH:MM[:SS[.000]]" followed by
 * "Z" or an offset (+HH:MM, +HHMM, +HH) into seconds since the epoch.
 * A fraction of a second other than zero is refused, and so is a time
 * outside [ARTIFACT_TIME_MIN, ARTIFACT_TIME_MAX] (after the offset), which
 * could not be formatted back.  Returns 0 or -1.
 */
int artifact_parse_time(const char *text, int64_t *out);

/* Why artifact_parse_time() refuses text (a static string), or NULL. */
const char *artifact_time_problem(const char *text);

/* Formats t as "YYYY-MM-DDTHH:MM:SSZ" into out (21 bytes); "" outside
 * [ARTIFACT_TIME_MIN, ARTIFACT_TIME_MAX]. */
void artifact_format_time(int64_t t, char out[ARTIFACT_TIME_LEN + 1]);

/* 0 if symbol is 1..32 characters of [A-Za-z0-9._-]; else -1 with err set. */
int artifact_check_symbol(const char *symbol, char *err, size_t errlen);

/*
 * Validates a JSON array of bars (borrowed) strictly: objects with exactly
 * t, o, h, l, c, v; t a whole minute, strictly increasing, inside
 * [window_start, window_start + window_seconds) (window_seconds 0: no upper
 * bound); prices finite and > 0 with l <= o, c <= h; v an integer >= 0.
 * Errors name the bar by its 0-based index ("bar 3: ...").  On success
 * fills *out (caller frees with artifact_bars_free()).
 */
int artifact_bars_from_json(const json_t *bars, int64_t window_start,
                                         int64_t window_seconds, struct artifact_bars *out,
                                         char *err, size_t errlen);
void artifact_bars_free(struct artifact_bars *b);

/*
 * Builds the artifact of symbol's window from the text of a bars file
 * (borrowed, len bytes).  prefix (may be NULL: no key) is the [s3] prefix.
 * Returns 0 and fills *out (caller frees with artifact_free()), or -1 with
 * a message in err.
 */
int artifact_build(const char *symbol, const char *window_start,
                                int64_t window_seconds, const char *bars_text, size_t len,
                                const char *prefix, struct artifact *out,
                                char *err, size_t errlen);

/*
 * Parses a stored artifact (borrowed body of len bytes): the canonical
 * object with symbol, window_start and bars (bars checked as above, with
 * no upper bound on t).  Computes its sha256.  key stays NULL.  Returns 0
 * and fills *out (caller frees with artifact_free()), or -1 with err set.
 */
int artifact_parse(const char *body, size_t len, struct artifact *out,
                                char *err, size_t errlen);

/* Frees what *a owns and zeroes it; safe on a zeroed struct. */
void artifact_free(struct artifact *a);

/*
 * The key of an artifact: prefix + symbol + "/" + window_start_text + "/" +
 * sha256 + ".json".  Returns a string the caller frees with free(), or NULL
 * when out of memory.
 */
char *artifact_make_key(const char *prefix, const char *symbol,
                                     const char *window_start_text, const char *sha256);

/*
 * True when key has the shape artifact_make_key() gives under prefix
 * (reconcile-artifacts never touches anything else).
 */
int artifact_key_is_artifact(const char *prefix, const char *key);

enum artifact_key_kind {
	ARTIFACT_KEY_FOREIGN,     /* not ours: outside prefix, or not PREFIX/SYMBOL/....json */
	ARTIFACT_KEY_ARTIFACT,    /* the exact shape artifact_make_key() gives */
	ARTIFACT_KEY_UNPARSEABLE, /* PREFIX/SYMBOL/....json, but not that shape */
};

/*
 * Sorts key (borrowed) under prefix (borrowed, may be NULL).  For
 * ARTIFACT_KEY_UNPARSEABLE *problem says why (a static string, never
 * quoting the key); otherwise it is NULL.
 */
enum artifact_key_kind artifact_key_classify(const char *prefix, const char *key,
                                             const char **problem);

#endif
