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
#include <stdio.h>
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
