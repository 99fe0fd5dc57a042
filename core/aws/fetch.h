/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/fetch.h: one unsigned HTTP request to a credential endpoint (STS's
 * web-identity call, the container endpoint, IMDS).  These endpoints are
 * not SigV4-signed, so they do not go through aws/http.h; the request is
 * short (a new CURL handle each time: credentials are fetched rarely).
 *
 * Error texts name the URL and what went wrong, never a header value or
 * the body (they may carry tokens).
 */
#ifndef OUTBOX_CORE_AWS_FETCH_H
#define OUTBOX_CORE_AWS_FETCH_H

#include <stddef.h>

#include "common/compiler.h"

/* Credential answers are small; anything larger is refused. */
#define AWS_FETCH_MAX_BYTES ((size_t)64 * 1024)
#define AWS_FETCH_MAX_HEADERS 6

/* All pointers borrowed. */
struct aws_fetch_request {
	const char *method;  /* "GET", "PUT", "POST" */
	const char *url;
	/* Up to AWS_FETCH_MAX_HEADERS "Name: value" lines; NULL-terminated or
	 * shorter than the array. */
	const char *headers[AWS_FETCH_MAX_HEADERS];
	const char *body;    /* NULL: no body */
	size_t body_len;
	long timeout_ms;     /* total, also the connect timeout */
	/* The URL as error texts name it (without user:password or query, which
	 * may be secrets); NULL: url. */
	const char *log_url;
	/* NULL, or a CURLOPT_RESOLVE entry "host:port:address[,address]" that
	 * pins the host to addresses the caller has checked, so that a second
	 * lookup cannot lead elsewhere. */
	const char *resolve;
};

struct aws_fetch_response {
	long status;  /* 0 when no answer arrived */
	char *body;   /* NUL-terminated; owned, free with aws_fetch_response_free() */
	size_t body_len;
};

/*
 * Sends req.  Returns 0 when an answer arrived (any status; check
 * resp->status) and -1 when none did, with the reason in err.  resp is
 * always initialised; free it in both cases.
 */
int aws_fetch(const struct aws_fetch_request *req, struct aws_fetch_response *resp, char *err,
              size_t err_size) OUTBOX_MUSTCHECK;
void aws_fetch_response_free(struct aws_fetch_response *resp);

/* Reads a small text file (a token file) into a new string without its
 * trailing newline; NULL with the reason in err. Caller frees (it may hold
 * a secret: wipe it). */
char *aws_read_small_file(const char *path, char *err, size_t err_size) OUTBOX_MUSTCHECK;

#endif
