/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/clock_skew.c: clock-skew correction (see aws/clock_skew.h).
 */
#include "aws/clock_skew.h"

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"

static atomic_llong offset;

long long aws_clock_now(void)
{
	return (long long)time(NULL) + atomic_load_explicit(&offset, memory_order_relaxed);
}

long long aws_clock_offset(void)
{
	return atomic_load_explicit(&offset, memory_order_relaxed);
}

bool aws_clock_correct(const char *date_header)
{
	time_t server;
	long long local, diff, old;

	if (date_header == NULL || date_header[0] == '\0')
		return false;
	server = curl_getdate(date_header, NULL);
	if (server == (time_t)-1)
		return false;
	local = (long long)time(NULL);
	old = atomic_load_explicit(&offset, memory_order_relaxed);
	diff = (long long)server - local;
	if (llabs(diff - old) < AWS_CLOCK_SKEW_THRESHOLD)
		return false;
	atomic_store_explicit(&offset, diff, memory_order_relaxed);
	log_warning("the local clock is %lld s %s the AWS service's; signing with the service's time",
	            llabs(diff), diff > 0 ? "behind" : "ahead of");
	return true;
}

bool aws_clock_is_skew_code(const char *code)
{
	static const char *const codes[] = {
		"RequestTimeTooSkewed", "RequestExpired", "RequestInTheFuture",
		"SignatureDoesNotMatch", "InvalidSignatureException", "AuthFailure", NULL,
	};

	if (code == NULL)
		return false;
	for (size_t i = 0; codes[i] != NULL; i++) {
		if (strcmp(code, codes[i]) == 0)
			return true;
	}
	return false;
}
