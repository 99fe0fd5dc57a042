/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * verdict.c: what an answer (or the lack of one) means for the job.
 *
 *   2xx                          OK
 *   429 or 503 with Retry-After  RETRY, not before the time it asks
 *   408, 425, 429, 5xx           RETRY with the destination's backoff
 *   timeout, refused, reset ...  RETRY with the destination's backoff
 *   3xx                          FAIL: redirects are not followed
 *   any other 4xx                FAIL, with the status and the start of the body
 *   anything else (1xx, >= 600)  RETRY: not an answer we understand
 *
 * A body beyond max_response_bytes is not read; the status still decides.
 * Whatever the receiver sent is escaped before it reaches last_error.
 */
#include <stdio.h>
#include <string.h>

#include "webhook.h"

#define WH_RETRY_AFTER_MAX_S (365LL * 86400)

void wh_escape(const char *src, size_t n, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (outlen == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];
		/* Printable ASCII only: no control bytes, no invalid UTF-8 for a text column. */
		int plain = c >= 0x20 && c < 0x7f && c != '\\';
		size_t need = plain ? 1 : c == '\\' ? 2 : 4;
		if (o + need >= outlen)
			break;
		if (plain) {
			out[o++] = (char)c;
		} else if (c == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
}

static enum outbox_verdict transport_error(const struct wh_config *cfg,
                                           const struct wh_response *r,
                                           struct outbox_result *result)
{
	switch (r->rc) {
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(result->msg, result->msg_size, "webhook %s: no complete answer within "
		         "timeout_ms (%ld ms)", cfg->shown_url, cfg->timeout_ms);
		break;
	default:
		/* refused, reset, DNS, TLS: the receiver may be back soon */
		snprintf(result->msg, result->msg_size, "webhook %s: %s", cfg->shown_url,
		         curl_easy_strerror(r->rc));
		break;
	}
	return OUTBOX_RETRY;
}

static int transient_status(long status)
{
	return status == 408 || status == 425 || status == 429 || (status >= 500 && status <= 599);
}

enum outbox_verdict wh_verdict(const struct wh_config *cfg, const struct wh_response *r,
                               struct outbox_result *result)
{
	char body[4 * WH_EXCERPT_BYTES + 1];
	long st = r->status;

	if (r->rc != CURLE_OK && !(r->rc == CURLE_WRITE_ERROR && r->over_cap))
		return transport_error(cfg, r, result);
	if (st >= 200 && st <= 299)
		return OUTBOX_OK;
	if ((st == 429 || st == 503) && r->retry_after_s > 0) {
		/* The host caps it at the destination's backoff maximum; a year
		 * keeps a date far in the future from overflowing. */
		int64_t after = r->retry_after_s < WH_RETRY_AFTER_MAX_S ? r->retry_after_s
		                                                      : WH_RETRY_AFTER_MAX_S;
		result->retry_after_ms = after * 1000;
		snprintf(result->msg, result->msg_size, "webhook %s answered HTTP %ld, Retry-After "
		         "%lld s", cfg->shown_url, st, (long long)after);
		return OUTBOX_RETRY;
	}
	if (transient_status(st)) {
		snprintf(result->msg, result->msg_size, "webhook %s answered HTTP %ld",
		         cfg->shown_url, st);
		return OUTBOX_RETRY;
	}
	if (st >= 300 && st <= 399) {
		snprintf(result->msg, result->msg_size, "webhook %s answered HTTP %ld (redirect to "
		         "\"%s\"): redirects are not followed, set plugin.url to the final URL",
		         cfg->shown_url, st, r->location[0] != '\0' ? r->location : "?");
		return OUTBOX_FAIL;
	}
	if (st >= 400 && st <= 499) {
		wh_escape(r->excerpt, r->excerpt_len, body, sizeof(body));
		snprintf(result->msg, result->msg_size, "webhook %s refused the job with HTTP %ld: %s",
		         cfg->shown_url, st, body[0] != '\0' ? body : "(empty body)");
		return OUTBOX_FAIL;
	}
	snprintf(result->msg, result->msg_size, "webhook %s answered HTTP %ld, which is not a "
	         "final answer", cfg->shown_url, st);
	return OUTBOX_RETRY;
}
