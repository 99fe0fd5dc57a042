/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/clock_skew.h: the time requests are signed with.
 *
 * AWS refuses a signature whose time is more than 15 minutes (5 for some
 * services) away from its own.  When a request is refused with a clock-skew
 * code and the answer's Date header shows the local clock is at least
 * AWS_CLOCK_SKEW_THRESHOLD seconds off, the difference becomes the offset
 * every later request of the process is signed with, and the refused
 * request is signed again (as the SDKs do).
 */
#ifndef OUTBOX_CORE_AWS_CLOCK_SKEW_H
#define OUTBOX_CORE_AWS_CLOCK_SKEW_H

#include <stdbool.h>

#define AWS_CLOCK_SKEW_THRESHOLD 300

/* Seconds since the epoch, corrected by the offset (thread-safe). */
long long aws_clock_now(void);

/* The current offset in seconds (server minus local). */
long long aws_clock_offset(void);

/*
 * date_header is the Date of an answer that refused the request with a
 * clock-skew code (borrowed; "" or NULL when absent).  Returns true when it
 * moved the offset, i.e. signing the request again can help.
 */
bool aws_clock_correct(const char *date_header);

/* Codes the SDKs treat as possibly caused by skew: RequestTimeTooSkewed,
 * RequestExpired, RequestInTheFuture, SignatureDoesNotMatch,
 * InvalidSignatureException, AuthFailure. */
bool aws_clock_is_skew_code(const char *code);

#endif
