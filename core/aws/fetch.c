/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/fetch.c: unsigned requests to credential endpoints (see aws/fetch.h).
 */
#include "aws/fetch.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/textfile.h"

struct sink {
	char *p;
	size_t len;
	bool overflow;
};

static size_t on_data(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct sink *s = userdata;
	size_t n = size * nmemb;
	char *grown;

	if (n > AWS_FETCH_MAX_BYTES - s->len) {
		s->overflow = true;
		return 0;
	}
	grown = realloc(s->p, s->len + n + 1);
	if (grown == NULL)
		return 0;
	s->p = grown;
	memcpy(s->p + s->len, data, n);
	s->len += n;
	s->p[s->len] = '\0';
	return n;
}

static int setup(CURL *h, const struct aws_fetch_request *req, struct curl_slist *hdrs,
                 struct curl_slist *pin, struct sink *s)
{
	CURLcode rc = curl_easy_setopt(h, CURLOPT_URL, req->url);

	if (rc == CURLE_OK && pin != NULL)
		rc = curl_easy_setopt(h, CURLOPT_RESOLVE, pin);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, req->timeout_ms);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, req->timeout_ms);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
	if (rc == CURLE_OK && strcmp(req->method, "GET") != 0)
		rc = curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
	if (rc == CURLE_OK && (req->body != NULL || strcmp(req->method, "GET") != 0)) {
		rc = curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		if (rc == CURLE_OK)
			rc = curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body != NULL ? req->body : "");
	}
	return rc == CURLE_OK ? 0 : -1;
}

int aws_fetch(const struct aws_fetch_request *req, struct aws_fetch_response *resp, char *err,
              size_t err_size)
{
	struct sink s = {0};
	struct curl_slist *hdrs = NULL, *pin = NULL;
	CURL *h = curl_easy_init();
	CURLcode cc = CURLE_FAILED_INIT;
	const char *url = req->log_url != NULL ? req->log_url : req->url;
	int rc = -1;

	memset(resp, 0, sizeof(*resp));
	hdrs = curl_slist_append(NULL, "Expect:");
	for (size_t i = 0; hdrs != NULL && i < AWS_FETCH_MAX_HEADERS && req->headers[i] != NULL; i++) {
		struct curl_slist *l = curl_slist_append(hdrs, req->headers[i]);
		if (l == NULL) {
			curl_slist_free_all(hdrs);
			hdrs = NULL;
		}
		hdrs = l;
	}
	if (req->resolve != NULL)
		pin = curl_slist_append(NULL, req->resolve);
	if (h == NULL || hdrs == NULL || (req->resolve != NULL && pin == NULL) ||
	    setup(h, req, hdrs, pin, &s) < 0) {
		snprintf(err, err_size, "could not set up the request to \"%s\"", url);
		goto out;
	}
	cc = curl_easy_perform(h);
	if (s.overflow) {
		snprintf(err, err_size, "the answer of \"%s\" exceeds %zu bytes", url,
		         AWS_FETCH_MAX_BYTES);
		goto out;
	}
	if (cc != CURLE_OK) {
		snprintf(err, err_size, "could not reach \"%s\": %s", url, curl_easy_strerror(cc));
		goto out;
	}
	(void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
	resp->body = s.p != NULL ? s.p : strdup("");
	resp->body_len = s.len;
	s.p = NULL;
	rc = resp->body != NULL ? 0 : -1;
	if (rc < 0)
		snprintf(err, err_size, "out of memory");
out:
	if (s.p != NULL)
		explicit_bzero(s.p, s.len);
	free(s.p);
	curl_slist_free_all(hdrs);
	curl_slist_free_all(pin);
	if (h != NULL)
		curl_easy_cleanup(h);
	return rc;
}

void aws_fetch_response_free(struct aws_fetch_response *resp)
{
	if (resp->body != NULL)
		explicit_bzero(resp->body, resp->body_len);
	free(resp->body);
	memset(resp, 0, sizeof(*resp));
}

char *aws_read_small_file(const char *path, char *err, size_t err_size)
{
	/* never blocks: a FIFO in the token's place is refused at once */
	char why[256];
	FILE *f = textfile_open(path, (long)AWS_FETCH_MAX_BYTES, why, sizeof(why));
	char *buf;
	size_t n;

	if (f == NULL) {
		snprintf(err, err_size, "\"%s\": %s", path, why);
		return NULL;
	}
	buf = malloc(AWS_FETCH_MAX_BYTES + 1);
	if (buf == NULL) {
		fclose(f);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	n = fread(buf, 1, AWS_FETCH_MAX_BYTES + 1, f);
	fclose(f);
	if (n > AWS_FETCH_MAX_BYTES) {
		explicit_bzero(buf, AWS_FETCH_MAX_BYTES + 1);
		free(buf);
		snprintf(err, err_size, "\"%s\" is larger than %zu bytes", path, AWS_FETCH_MAX_BYTES);
		return NULL;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	if (n == 0) {
		free(buf);
		snprintf(err, err_size, "\"%s\" is empty", path);
		return NULL;
	}
	return buf;
}
