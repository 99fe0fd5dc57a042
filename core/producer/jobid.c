/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * producer/jobid.c: canonical JSON, job ids, event ids and timestamp normalisation.
 *
 * The canonical form is what jansson prints for an object built in a fixed
 * member order with JSON_COMPACT: no white space, members in insertion
 * order, strings escaped only where JSON requires (\" \\ and control
 * characters), non-ASCII left as UTF-8.  docs/identifiers.md is the
 * normative description; tests/unit/test_jobid.c checks it against
 * sha256sum.
 */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hexdigest.h"
#include "outbox/producer.h"

char *outbox_canonical_json(const json_t *identity)
{
	if (!json_is_object(identity))
		return NULL;
	return json_dumps(identity, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

void outbox_job_id(const char *canonical, char out[OUTBOX_JOB_ID_LEN + 1])
{
	/* Only fails if OpenSSL itself is broken; an empty id fails every CHECK. */
	(void)sha256_hex(canonical, strlen(canonical), out);
}

/*
 * The significant digits of a JSON number's text, without leading or
 * trailing zeros, into digits (as long as the text), and the decimal
 * exponent of the first of them; returns how many there are (0 for zero).
 */
static size_t significant_digits(const char *num, size_t len, char *digits, long long *exp10)
{
	size_t i = 0, n = 0, leading = 0;
	long long point = -1, written = 0, e = 0;
	int seen_nonzero = 0;

	if (i < len && num[i] == '-')
		i++;
	for (; i < len && num[i] != 'e' && num[i] != 'E'; i++) {
		if (num[i] == '.') {
			point = written;
			continue;
		}
		written++;
		if (!seen_nonzero && num[i] == '0') {
			leading++;
			continue;
		}
		seen_nonzero = 1;
		digits[n++] = num[i];
	}
	if (point < 0)
		point = written;
	if (i < len) {
		/* clamped: a double's exponent is far inside either bound */
		long long v = strtoll(num + i + 1, NULL, 10);
		e = v > 1000000 ? 1000000 : v < -1000000 ? -1000000 : v;
	}
	while (n > 0 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	*exp10 = point - 1 - (long long)leading + e;
	return n;
}

/*
 * Whether the double that num (a JSON number with a fraction or an
 * exponent) reads as, printed with as many significant digits as num has,
 * gives num back; *as_read is that double.  Runs in the C locale.
 */
static int number_survives(const char *num, size_t len, double *as_read)
{
	char *text = malloc(len + 1), *want = malloc(len + 1), *got = malloc(len + 32);
	long long want_exp, got_exp;
	size_t k;
	int ok = 0;

	if (text == NULL || want == NULL || got == NULL)
		goto out;
	memcpy(text, num, len);
	text[len] = '\0';
	*as_read = strtod(text, NULL);
	k = significant_digits(num, len, want, &want_exp);
	if (k == 0) {
		ok = 1; /* zero, which a double holds with either sign */
		goto out;
	}
	if (!isfinite(*as_read) || *as_read == 0.0)
		goto out;
	snprintf(got, len + 32, "%.*e", (int)(k - 1), *as_read);
	{
		char *e = strchr(got, 'e');
		char *dot = strchr(got, '.');

		if (e == NULL)
			goto out;
		got_exp = strtoll(e + 1, NULL, 10);
		*e = '\0';
		if (dot != NULL)
			memmove(dot, dot + 1, strlen(dot + 1) + 1);
	}
	ok = strcmp(got + (got[0] == '-'), want) == 0 && got_exp == want_exp;
out:
	free(got);
	free(want);
	free(text);
	return ok;
}

/* The shortest "%.*g" that reads back as d, for a message. */
static void shortest(double d, char *out, size_t outlen)
{
	for (int p = 1; p <= 17; p++) {
		snprintf(out, outlen, "%.*g", p, d);
		if (strtod(out, NULL) == d)
			return;
	}
}

static int check_numbers(const char *json_text, char *err, size_t errlen)
{
	const char *p = json_text;

	while (*p != '\0') {
		if (*p == '"') {
			for (p++; *p != '\0' && *p != '"'; p++)
				if (*p == '\\' && p[1] != '\0')
					p++;
			if (*p != '\0')
				p++;
			continue;
		}
		if (*p != '-' && (*p < '0' || *p > '9')) {
			p++;
			continue;
		}
		size_t n = strspn(p, "+-0123456789.eE");
		double d = 0.0;

		if (strcspn(p, ".eE") < n && !number_survives(p, n, &d)) {
			char as_read[32];

			shortest(d, as_read, sizeof(as_read));
			snprintf(err, errlen, "number %.*s%s in a job identity does not survive a round trip"
			         " through a double: it is read as %s, which other numbers are read as too",
			         n > 40 ? 40 : (int)n, p, n > 40 ? "..." : "", as_read);
			return -1;
		}
		p += n;
	}
	return 0;
}

int outbox_check_identity_numbers(const char *json_text, char *err, size_t errlen)
{
	/* "." whatever the caller's locale, as jansson reads numbers */
	locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	locale_t old;
	int rc;

	if (c == (locale_t)0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	old = uselocale(c);
	rc = check_numbers(json_text, err, errlen);
	uselocale(old);
	freelocale(c);
	return rc;
}

int outbox_event_id(const char *event_type, const char *job_id,
                    int redrive_generation, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s:%s:%d", event_type, job_id, redrive_generation);

	return (n < 0 || (size_t)n >= outlen) ? -1 : 0;
}

static int require_string(const json_t *item, const char *key, char *err, size_t errlen)
{
	const json_t *v = json_object_get(item, key);

	if (!json_is_string(v) || json_string_length(v) == 0) {
		snprintf(err, errlen, "news item needs a non-empty string \"%s\"", key);
		return -1;
	}
	return 0;
}

static int check_symbols(const json_t *item, char *err, size_t errlen)
{
	const json_t *symbols = json_object_get(item, "symbols");
	size_t i;
	json_t *s;

	if (symbols == NULL || json_is_null(symbols))
		return 0;
	if (!json_is_array(symbols)) {
		snprintf(err, errlen, "news item \"symbols\" must be an array of strings");
		return -1;
	}
	json_array_foreach(symbols, i, s) {
		if (!json_is_string(s) || json_string_length(s) == 0) {
			snprintf(err, errlen, "news item \"symbols\" element %zu is not a non-empty string", i);
			return -1;
		}
	}
	return 0;
}

json_t *outbox_news_identity(const json_t *item, char *err, size_t errlen)
{
	static const char *const required[] = {"source", "url", "published_at", "title", "body"};

	if (!json_is_object(item)) {
		snprintf(err, errlen, "news item must be a JSON object");
		return NULL;
	}
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (require_string(item, required[i], err, errlen) < 0)
			return NULL;
	}
	if (check_symbols(item, err, errlen) < 0)
		return NULL;
	return json_pack("{s:s, s:O, s:O}", "type", "news",
	                 "source", json_object_get(item, "source"),
	                 "url", json_object_get(item, "url"));
}

/* Parses "+HH:MM", "+HHMM", "+HH", "Z" or "" into seconds east of UTC. */
static int parse_offset(const char *p, long *offset)
{
	int hh = 0, mm = 0, n = 0;
	int sign;

	if (*p == '\0' || strcmp(p, "Z") == 0 || strcmp(p, "z") == 0) {
		*offset = 0;
		return 0;
	}
	if (*p != '+' && *p != '-')
		return -1;
	sign = (*p == '-') ? -1 : 1;
	p++;
	if (sscanf(p, "%2d:%2d%n", &hh, &mm, &n) == 2 && p[n] == '\0')
		;
	else if (sscanf(p, "%2d%2d%n", &hh, &mm, &n) == 2 && n == 4 && p[n] == '\0')
		;
	else if (sscanf(p, "%2d%n", &hh, &n) == 1 && n == 2 && p[n] == '\0')
		mm = 0;
	else
		return -1;
	if (hh > 23 || mm > 59)
		return -1;
	*offset = sign * (hh * 3600L + mm * 60L);
	return 0;
}

int outbox_normalize_timestamp(const char *in, char out[21])
{
	struct tm tm;
	int y, mo, d, h, mi, s = 0, n = 0;
	long offset;
	const char *rest;

	if (sscanf(in, "%4d-%2d-%2d%*1[Tt ]%2d:%2d%n", &y, &mo, &d, &h, &mi, &n) != 5 || n != 16)
		return -1;
	rest = in + n;
	if (rest[0] == ':') {
		int m = 0;
		if (sscanf(rest, ":%2d%n", &s, &m) != 1 || m != 3)
			return -1;
		rest += m;
		if (*rest == '.') /* fractions are dropped: windows start on whole seconds */
			while (*++rest >= '0' && *rest <= '9')
				;
	}
	if (parse_offset(rest, &offset) < 0)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	time_t local = timegm(&tm);
	/* timegm normalises 2026-02-31 into March: refuse such dates. */
	if (gmtime_r(&local, &tm) == NULL || tm.tm_mday != d || tm.tm_mon != mo - 1)
		return -1;
	time_t t = local - offset;
	if (gmtime_r(&t, &tm) == NULL)
		return -1;
	return strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm) == 20 ? 0 : -1;
}
