/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * price/artifact.c: bars validation, the canonical artifact and its key (see
 * artifact.h and docs/price-path.md).
 *
 * No libcore dependencies (jansson and libcrypto only): the price_trigger
 * plugin compiles this file into itself with defined static.
 */
#include "price/artifact.h"
#include "common/hexdigest.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

/* Reads exactly n digits at *p (advancing it); -1 if they are not digits. */
static int read_digits(const char **p, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return v;
}

/* "Z", "+HH:MM", "+HHMM" or "+HH" at the end; offset in seconds east. */
static int parse_offset(const char *p, int64_t *offset)
{
	int sign, hh, mm = 0;

	if ((p[0] == 'Z' || p[0] == 'z') && p[1] == '\0') {
		*offset = 0;
		return 0;
	}
	if (p[0] != '+' && p[0] != '-')
		return -1;
	sign = p[0] == '-' ? -1 : 1;
	p++;
	hh = read_digits(&p, 2);
	if (*p == ':')
		p++;
	if (*p != '\0')
		mm = read_digits(&p, 2);
	if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || *p != '\0')
		return -1;
	*offset = sign * (hh * 3600 + mm * 60);
	return 0;
}

/* Optional ":SS" and ".000..." (zeros only). */
static int parse_seconds(const char **p)
{
	int ss = 0;

	if (**p == ':') {
		(*p)++;
		ss = read_digits(p, 2);
		if (ss < 0 || ss > 59)
			return -1;
	}
	if (**p == '.') {
		(*p)++;
		if (**p != '0')
			return -1;
		while (**p == '0')
			(*p)++;
	}
	return ss;
}

static int parse_time_any(const char *text, int64_t *out);

static const char year_problem[] = "the year (in UTC) must be from 1000 to 9999";

/*
 * Years 1000..9999 only: "%Y" gives fewer or more than 4 digits outside
 * them, so such a time would parse but never format as the 20-character
 * canonical text its key needs (and the reconciler could never match it).
 */
static int in_canonical_range(int64_t t)
{
	return t >= ARTIFACT_TIME_MIN && t <= ARTIFACT_TIME_MAX;
}

int artifact_parse_time(const char *text, int64_t *out)
{
	int64_t t;

	if (parse_time_any(text, &t) < 0 || !in_canonical_range(t))
		return -1;
	*out = t;
	return 0;
}

const char *artifact_time_problem(const char *text)
{
	int64_t t;

	if (parse_time_any(text, &t) < 0)
		return "expected an ISO 8601 timestamp";
	if (!in_canonical_range(t))
		return year_problem;
	return NULL;
}

/* Any ISO 8601 time of the accepted shape, whatever its year. */
static int parse_time_any(const char *text, int64_t *out)
{
	const char *p = text;
	int y, mo, d, hh, mi, ss;
	int64_t offset;

	if (text == NULL)
		return -1;
	y = read_digits(&p, 4);
	if (y < 0 || *p++ != '-')
		return -1;
	mo = read_digits(&p, 2);
	if (mo < 1 || mo > 12 || *p++ != '-')
		return -1;
	d = read_digits(&p, 2);
	if (d < 1 || d > days_in_month(y, mo) || (*p != 'T' && *p != 't' && *p != ' '))
		return -1;
	p++;
	hh = read_digits(&p, 2);
	if (hh < 0 || hh > 23 || *p++ != ':')
		return -1;
	mi = read_digits(&p, 2);
	if (mi < 0 || mi > 59)
		return -1;
	ss = parse_seconds(&p);
	if (ss < 0 || parse_offset(p, &offset) < 0)
		return -1;
	*out = days_from_civil(y, mo, d) * 86400 + hh * 3600 + mi * 60 + ss - offset;
	return 0;
}

void artifact_format_time(int64_t t, char out[ARTIFACT_TIME_LEN + 1])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!in_canonical_range(t) || gmtime_r(&tt, &tm) == NULL ||
	    strftime(out, ARTIFACT_TIME_LEN + 1, "%Y-%m-%dT%H:%M:%SZ", &tm) != ARTIFACT_TIME_LEN)
		out[0] = '\0';
}

int artifact_check_symbol(const char *symbol, char *err, size_t errlen)
{
	size_t n = symbol != NULL ? strlen(symbol) : 0;

	if (n == 0 || n > ARTIFACT_SYMBOL_MAX ||
	    strspn(symbol, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n ||
	    symbol[0] == '.') {
		snprintf(err, errlen, "invalid symbol \"%s\": use 1 to %d of A-Z, a-z, 0-9, \".\", \"_\" "
		         "and \"-\", not starting with \".\"", symbol != NULL ? symbol : "",
		         ARTIFACT_SYMBOL_MAX);
		return -1;
	}
	return 0;
}

/* A price member of bar i: a finite number > 0. */
static int bar_price(const json_t *bar, size_t i, const char *name, double *out,
                     char *err, size_t errlen)
{
	const json_t *v = json_object_get(bar, name);

	if (!json_is_number(v)) {
		snprintf(err, errlen, "bar %zu: \"%s\" must be a number", i, name);
		return -1;
	}
	*out = json_number_value(v);
	if (!isfinite(*out) || *out <= 0) {
		snprintf(err, errlen, "bar %zu: \"%s\" must be a positive price, not %g", i, name, *out);
		return -1;
	}
	return 0;
}

/* The members of bar i, each checked on its own. */
static int bar_members(const json_t *bar, size_t i, struct artifact_bar *b,
                       char *err, size_t errlen)
{
	const char *name;
	const json_t *v;

	if (!json_is_object(bar)) {
		snprintf(err, errlen, "bar %zu: must be an object", i);
		return -1;
	}
	json_object_foreach((json_t *)bar, name, v) {
		if (strlen(name) != 1 || strchr("tohlcv", name[0]) == NULL) {
			snprintf(err, errlen, "bar %zu: unknown member \"%s\" (a bar has t, o, h, l, c, v)",
			         i, name);
			return -1;
		}
	}
	v = json_object_get(bar, "t");
	if (!json_is_string(v) || artifact_parse_time(json_string_value(v), &b->t) < 0) {
		const char *why = json_is_string(v) ? artifact_time_problem(json_string_value(v)) : NULL;

		if (why == year_problem)
			snprintf(err, errlen, "bar %zu: \"t\": %s", i, why);
		else
			snprintf(err, errlen, "bar %zu: \"t\" must be an ISO 8601 timestamp", i);
		return -1;
	}
	if (bar_price(bar, i, "o", &b->o, err, errlen) < 0 ||
	    bar_price(bar, i, "h", &b->h, err, errlen) < 0 ||
	    bar_price(bar, i, "l", &b->l, err, errlen) < 0 ||
	    bar_price(bar, i, "c", &b->c, err, errlen) < 0)
		return -1;
	v = json_object_get(bar, "v");
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		snprintf(err, errlen, "bar %zu: \"v\" must be an integer >= 0", i);
		return -1;
	}
	b->v = json_integer_value(v);
	return 0;
}

/* Checks bar i against its neighbour and the window. */
static int bar_consistent(const struct artifact_bar *b, const struct artifact_bar *prev,
                          size_t i, int64_t window_start, int64_t window_seconds,
                          char *err, size_t errlen)
{
	char t[ARTIFACT_TIME_LEN + 1];

	artifact_format_time(b->t, t);
	if (b->t % 60 != 0) {
		snprintf(err, errlen, "bar %zu: \"t\" %s is not a whole minute", i, t);
		return -1;
	}
	if (b->t < window_start || (window_seconds > 0 && b->t >= window_start + window_seconds)) {
		snprintf(err, errlen, "bar %zu: \"t\" %s is outside the window", i, t);
		return -1;
	}
	if (prev != NULL && b->t <= prev->t) {
		snprintf(err, errlen, "bar %zu: \"t\" %s is not after the previous bar's", i, t);
		return -1;
	}
	if (b->l > b->h) {
		snprintf(err, errlen, "bar %zu: low %g is above high %g", i, b->l, b->h);
		return -1;
	}
	if (b->o < b->l || b->o > b->h || b->c < b->l || b->c > b->h) {
		snprintf(err, errlen, "bar %zu: open %g and close %g must lie within low %g and high %g",
		         i, b->o, b->c, b->l, b->h);
		return -1;
	}
	return 0;
}

int artifact_bars_from_json(const json_t *bars, int64_t window_start,
                                         int64_t window_seconds, struct artifact_bars *out,
                                         char *err, size_t errlen)
{
	size_t n = json_array_size(bars);

	memset(out, 0, sizeof(*out));
	if (!json_is_array(bars) || n == 0) {
		snprintf(err, errlen, "bars must be a non-empty JSON array");
		return -1;
	}
	out->bars = calloc(n, sizeof(*out->bars));
	if (out->bars == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct artifact_bar *b = &out->bars[i];
		if (bar_members(json_array_get(bars, i), i, b, err, errlen) < 0 ||
		    bar_consistent(b, i > 0 ? b - 1 : NULL, i, window_start, window_seconds,
		                   err, errlen) < 0) {
			artifact_bars_free(out);
			return -1;
		}
	}
	out->n = n;
	return 0;
}

void artifact_bars_free(struct artifact_bars *b)
{
	free(b->bars);
	memset(b, 0, sizeof(*b));
}

void artifact_free(struct artifact *a)
{
	artifact_bars_free(&a->bars);
	free(a->body);
	free(a->key);
	memset(a, 0, sizeof(*a));
}

/* The canonical text of a's symbol, window and bars into a->body. */
static int canonical_body(struct artifact *a)
{
	json_t *bars = json_array();
	json_t *doc = NULL;
	int rc = -1;

	if (bars == NULL)
		return -1;
	for (size_t i = 0; i < a->bars.n; i++) {
		const struct artifact_bar *b = &a->bars.bars[i];
		char t[ARTIFACT_TIME_LEN + 1];
		artifact_format_time(b->t, t);
		if (json_array_append_new(bars, json_pack("{s:s, s:f, s:f, s:f, s:f, s:I}", "t", t,
		                                          "o", b->o, "h", b->h, "l", b->l, "c", b->c,
		                                          "v", (json_int_t)b->v)) < 0)
			goto out;
	}
	doc = json_pack("{s:s, s:s, s:O}", "symbol", a->symbol,
	                "window_start", a->window_start_text, "bars", bars);
	if (doc == NULL)
		goto out;
	a->body = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	if (a->body == NULL)
		goto out;
	a->len = strlen(a->body);
	(void)sha256_hex(a->body, a->len, a->sha256);
	rc = 0;
out:
	json_decref(doc);
	json_decref(bars);
	return rc;
}

/* Symbol and window start of a, checked. */
static int set_identity(struct artifact *a, const char *symbol, const char *window_start,
                        char *err, size_t errlen)
{
	if (artifact_check_symbol(symbol, err, errlen) < 0)
		return -1;
	snprintf(a->symbol, sizeof(a->symbol), "%s", symbol);
	if (artifact_parse_time(window_start, &a->window_start) < 0) {
		snprintf(err, errlen, "invalid window start \"%s\": %s",
		         window_start != NULL ? window_start : "", artifact_time_problem(window_start));
		return -1;
	}
	if (a->window_start % 60 != 0) {
		snprintf(err, errlen, "window start \"%s\" is not a whole minute", window_start);
		return -1;
	}
	artifact_format_time(a->window_start, a->window_start_text);
	return 0;
}

int artifact_build(const char *symbol, const char *window_start,
                                int64_t window_seconds, const char *bars_text, size_t len,
                                const char *prefix, struct artifact *out,
                                char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *bars = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (set_identity(out, symbol, window_start, err, errlen) < 0)
		goto out;
	bars = json_loadb(bars_text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (bars == NULL) {
		snprintf(err, errlen, "invalid JSON at line %d, column %d: %s", jerr.line,
		         jerr.column, jerr.text);
		goto out;
	}
	if (artifact_bars_from_json(bars, out->window_start, window_seconds, &out->bars,
	                            err, errlen) < 0)
		goto out;
	if (canonical_body(out) < 0 || out->sha256[0] == '\0') {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (prefix != NULL) {
		out->key = artifact_make_key(prefix, out->symbol, out->window_start_text, out->sha256);
		if (out->key == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(bars);
	if (rc < 0)
		artifact_free(out);
	return rc;
}

int artifact_parse(const char *body, size_t len, struct artifact *out,
                                char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *doc;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(doc)) {
		snprintf(err, errlen, "artifact is not a JSON object");
		goto out;
	}
	if (set_identity(out, json_string_value(json_object_get(doc, "symbol")),
	                 json_string_value(json_object_get(doc, "window_start")), err, errlen) < 0 ||
	    artifact_bars_from_json(json_object_get(doc, "bars"), out->window_start, 0,
	                            &out->bars, err, errlen) < 0)
		goto out;
	(void)sha256_hex(body, len, out->sha256);
	rc = 0;
out:
	json_decref(doc);
	if (rc < 0)
		artifact_free(out);
	return rc;
}

char *artifact_make_key(const char *prefix, const char *symbol,
                                     const char *window_start_text, const char *sha256)
{
	char *key = NULL;

	if (asprintf(&key, "%s%s/%s/%s.json", prefix != NULL ? prefix : "", symbol,
	             window_start_text, sha256) < 0)
		return NULL;
	return key;
}

/* Why "TIME/SHA.json" (p) is not the tail of an artifact key, or NULL. */
static const char *key_tail_problem(const char *p)
{
	const char *slash = strchr(p, '/');
	char ts[ARTIFACT_TIME_LEN + 1], canon[ARTIFACT_TIME_LEN + 1];
	int64_t t;

	if (slash == NULL || strchr(slash + 1, '/') != NULL)
		return "expected PREFIX/SYMBOL/WINDOW_START/SHA256.json";
	if (slash - p != ARTIFACT_TIME_LEN)
		return "the window start is not of the form YYYY-MM-DDTHH:MM:SSZ";
	snprintf(ts, sizeof(ts), "%.*s", ARTIFACT_TIME_LEN, p);
	if (artifact_parse_time(ts, &t) < 0)
		return artifact_time_problem(ts) == year_problem
		       ? "the window start's year is not from 1000 to 9999"
		       : "the window start is not a valid time";
	artifact_format_time(t, canon);
	if (strcmp(ts, canon) != 0)
		return "the window start is not in canonical form (YYYY-MM-DDTHH:MM:SSZ)";
	p = slash + 1;
	if (strlen(p) != ARTIFACT_SHA256_HEX_LEN + 5 ||
	    strspn(p, "0123456789abcdef") != ARTIFACT_SHA256_HEX_LEN)
		return "the file name is not the artifact's SHA-256 in lower-case hex";
	return NULL;
}

enum artifact_key_kind artifact_key_classify(const char *prefix, const char *key,
                                             const char **problem)
{
	size_t plen = prefix != NULL ? strlen(prefix) : 0;
	size_t klen = strlen(key);
	const char *p, *slash;
	char sym[ARTIFACT_SYMBOL_MAX + 1];
	char err[8];

	*problem = NULL;
	if (strncmp(key, prefix != NULL ? prefix : "", plen) != 0)
		return ARTIFACT_KEY_FOREIGN;
	p = key + plen;
	slash = strchr(p, '/');
	/* Ours only if it is SYMBOL/.../NAME.json: anything else under the prefix
	 * (a README, another tool's files) is none of our business. */
	if (slash == NULL || (size_t)(slash - p) > ARTIFACT_SYMBOL_MAX ||
	    klen < 5 || strcmp(key + klen - 5, ".json") != 0)
		return ARTIFACT_KEY_FOREIGN;
	snprintf(sym, sizeof(sym), "%.*s", (int)(slash - p), p);
	if (artifact_check_symbol(sym, err, sizeof(err)) < 0)
		return ARTIFACT_KEY_FOREIGN;
	*problem = key_tail_problem(slash + 1);
	return *problem != NULL ? ARTIFACT_KEY_UNPARSEABLE : ARTIFACT_KEY_ARTIFACT;
}

int artifact_key_is_artifact(const char *prefix, const char *key)
{
	const char *problem;

	return artifact_key_classify(prefix, key, &problem) == ARTIFACT_KEY_ARTIFACT;
}
