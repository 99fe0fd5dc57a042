/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source_container.c: the container credential endpoint of ECS tasks
 * and EKS Pod Identity (see aws/credential_sources.h).
 *
 * AWS_CONTAINER_CREDENTIALS_RELATIVE_URI is a path on 169.254.170.2;
 * AWS_CONTAINER_CREDENTIALS_FULL_URI is a whole URL, which must be https
 * or go to a loopback or the ECS/EKS link-local address (as the SDKs
 * require, so a token is never sent to an arbitrary host in clear): a host
 * name is resolved and every address checked, at every fetch, and curl is
 * pinned to those addresses.  Messages name the URL without its
 * user:password and query (docs/aws.md).  The
 * Authorization header comes from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE
 * (read again at every refresh: EKS rotates it), else
 * AWS_CONTAINER_AUTHORIZATION_TOKEN.
 */
#include "aws/credential_sources.h"
#include "aws/env.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "aws/credential_json.h"
#include "aws/fetch.h"

#define CONTAINER_HOST "http://169.254.170.2"
#define CONTAINER_TIMEOUT_MS 2000L

/* What one container endpoint needs at every fetch. */
struct container_ctx {
	char *url;     /* owned: the endpoint, as configured */
	char *log_url; /* owned: url without user:password and query */
	bool check;    /* plain HTTP: resolve and check the host at every fetch */
};

static void container_ctx_free(void *p)
{
	struct container_ctx *c = p;

	if (c == NULL)
		return;
	explicit_bzero(c->url, strlen(c->url));
	free(c->url);
	free(c->log_url);
	free(c);
}

/*
 * The addresses plain HTTP may go to, as the AWS SDKs allow: loopback
 * (127.0.0.0/8, ::1) and the ECS (169.254.170.2) and EKS Pod Identity
 * (169.254.170.23, fd00:ec2::23) hosts.  Anything else could be a host
 * that reads the authorization token and the credentials in clear.
 */
static bool allowed_v4(uint32_t a)
{
	return (a >> 24) == 127 || a == 0xa9feaa02u || a == 0xa9feaa17u;
}

static bool allowed_address(const struct sockaddr *sa)
{
	static const unsigned char eks6[16] = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0,
	                                       0, 0, 0, 0, 0, 0, 0, 0x23};

	if (sa->sa_family == AF_INET)
		return allowed_v4(ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		uint32_t v4;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(&v4, a->s6_addr + 12, sizeof(v4));
			return allowed_v4(ntohl(v4));
		}
		return IN6_IS_ADDR_LOOPBACK(a) || memcmp(a->s6_addr, eks6, 16) == 0;
	}
	return false;
}

/*
 * Resolves host (a numeric address or a name; IPv6 in brackets, as curl
 * gives it) and checks every address it has.  For a name, *pin becomes a
 * CURLOPT_RESOLVE entry holding exactly those addresses (caller frees), so
 * that curl's own lookup cannot be answered differently.
 */
static int check_http_host(const char *host, long port, char **pin, char *why, size_t why_size)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
	struct addrinfo *res = NULL;
	char bare[256], addrs[1024] = "";
	size_t n = strlen(host), used = 0;
	int rc;

	*pin = NULL;
	if (n >= sizeof(bare)) { /* a pin for a cut name would not match curl's */
		snprintf(why, why_size, "plain HTTP to \"%.40s...\" is refused: the host name is too long",
		         host);
		return -1;
	}
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']')
		snprintf(bare, sizeof(bare), "%.*s", (int)(n - 2), host + 1);
	else
		snprintf(bare, sizeof(bare), "%s", host);
	rc = getaddrinfo(bare, NULL, &hints, &res);
	bool numeric = rc == 0;
	if (!numeric) {
		hints.ai_flags = 0;
		rc = getaddrinfo(bare, NULL, &hints, &res);
	}
	if (rc != 0) {
		snprintf(why, why_size, "plain HTTP to \"%.200s\" is refused: the name does not resolve"
		         " (%s), so its addresses cannot be checked", host, gai_strerror(rc));
		return -1;
	}
	rc = 0;
	for (const struct addrinfo *ai = res; ai != NULL && rc == 0; ai = ai->ai_next) {
		char text[INET6_ADDRSTRLEN] = "?";

		(void)getnameinfo(ai->ai_addr, ai->ai_addrlen, text, sizeof(text), NULL, 0,
		                  NI_NUMERICHOST);
		if (!allowed_address(ai->ai_addr)) {
			snprintf(why, why_size, "plain HTTP to \"%.200s\" is refused: %s is neither loopback"
			         " nor the ECS/EKS container host", host, text);
			rc = -1;
		} else if (!numeric && strstr(addrs, text) == NULL) {
			int w = snprintf(addrs + used, sizeof(addrs) - used, "%s%s%s%s", used ? "," : "",
			                 ai->ai_family == AF_INET6 ? "[" : "", text,
			                 ai->ai_family == AF_INET6 ? "]" : "");
			if (w < 0 || (size_t)w >= sizeof(addrs) - used) {
				snprintf(why, why_size, "\"%.200s\" has too many addresses", host);
				rc = -1;
			} else {
				used += (size_t)w;
			}
		}
	}
	freeaddrinfo(res);
	if (rc == 0 && !numeric && asprintf(pin, "%s:%ld:%s", bare, port, addrs) < 0) {
		*pin = NULL;
		snprintf(why, why_size, "out of memory");
		rc = -1;
	}
	return rc;
}

/* scheme://host[:port]/path of a URL: user:password and the query may be secrets. */
static char *loggable_url(CURLU *u)
{
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *user = NULL, *query = NULL;
	char *out = NULL;

	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		(void)curl_url_get(u, CURLUPART_PORT, &port, 0);
		(void)curl_url_get(u, CURLUPART_PATH, &path, 0);
		(void)curl_url_get(u, CURLUPART_USER, &user, 0);
		(void)curl_url_get(u, CURLUPART_QUERY, &query, 0);
		if (asprintf(&out, "%s://%s%s%s%s%s%s", scheme, user ? "(redacted)@" : "", host,
		             port ? ":" : "", port ? port : "", path ? path : "",
		             query ? "?(redacted)" : "") < 0)
			out = NULL;
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	if (user != NULL)
		explicit_bzero(user, strlen(user));
	curl_free(user);
	if (query != NULL)
		explicit_bzero(query, strlen(query));
	curl_free(query);
	return out;
}

static char *log_url_of(const char *url)
{
	CURLU *u = curl_url();
	char *out = NULL;

	if (u != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK)
		out = loggable_url(u);
	curl_url_cleanup(u);
	return out;
}

/* Fills c->log_url and c->check; refuses plain HTTP to any other host. */
static int check_full_uri(struct container_ctx *c, char *why, size_t why_size)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *pin = NULL;
	int rc = -1;

	if (u == NULL || curl_url_set(u, CURLUPART_URL, c->url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		snprintf(why, why_size, "AWS_CONTAINER_CREDENTIALS_FULL_URI is not a URL");
		goto out;
	}
	if ((c->log_url = loggable_url(u)) == NULL) {
		snprintf(why, why_size, "out of memory");
		goto out;
	}
	c->check = strcmp(scheme, "http") == 0;
	if (strcmp(scheme, "https") != 0 && !c->check)
		snprintf(why, why_size, "AWS_CONTAINER_CREDENTIALS_FULL_URI \"%s\" must use https, or"
		         " http to a loopback address or the ECS/EKS container host", c->log_url);
	else if (c->check && check_http_host(host, strtol(port, NULL, 10), &pin, why, why_size) < 0)
		;
	else
		rc = 0;
out:
	free(pin);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return rc;
}

/* The Authorization header line, or NULL without one; *line_out set to a
 * new string (wipe it).  -1 when the token file cannot be read. */
static int auth_line(char **line_out, char *err, size_t err_size)
{
	const char *file = aws_env_get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *value = aws_env_get("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	char *from_file = NULL;
	int rc = 0;

	*line_out = NULL;
	if (file != NULL) {
		from_file = aws_read_small_file(file, err, err_size);
		if (from_file == NULL)
			return -1;
		value = from_file;
	}
	if (value != NULL && strpbrk(value, "\r\n") != NULL) {
		snprintf(err, err_size, "the container authorization token contains a line break");
		rc = -1;
	} else if (value != NULL && asprintf(line_out, "Authorization: %s", value) < 0) {
		*line_out = NULL;
		snprintf(err, err_size, "out of memory");
		rc = -1;
	}
	if (from_file != NULL) {
		explicit_bzero(from_file, strlen(from_file));
		free(from_file);
	}
	return rc;
}

/* The pin of a plain-HTTP endpoint, looked up again at every fetch: a
 * name's addresses may change, and each must still be allowed. */
static int container_pin(const struct container_ctx *c, char **pin, char *err, size_t err_size)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL;
	int rc = -1;

	*pin = NULL;
	if (u == NULL || curl_url_set(u, CURLUPART_URL, c->url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
		snprintf(err, err_size, "\"%s\" is not a URL", c->log_url);
	else
		rc = check_http_host(host, strtol(port, NULL, 10), pin, err, err_size);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return rc;
}

static int container_fetch(void *ctx, struct aws_creds **out, char *err, size_t err_size)
{
	const struct container_ctx *c = ctx;
	struct aws_fetch_request req = {.method = "GET", .url = c->url, .log_url = c->log_url,
	                                .timeout_ms = CONTAINER_TIMEOUT_MS};
	struct aws_fetch_response resp;
	char *auth = NULL, *pin = NULL;
	int rc;

	*out = NULL;
	if (c->check && container_pin(c, &pin, err, err_size) < 0)
		return -1;
	if (auth_line(&auth, err, err_size) < 0) {
		free(pin);
		return -1;
	}
	req.headers[0] = auth;
	req.resolve = pin;
	rc = aws_fetch(&req, &resp, err, err_size);
	if (rc == 0 && resp.status != 200) {
		snprintf(err, err_size, "\"%s\" answered HTTP %ld", c->log_url, resp.status);
		rc = -1;
	}
	if (rc == 0)
		rc = aws_creds_from_json(resp.body, resp.body_len, out, err, err_size);
	aws_fetch_response_free(&resp);
	if (auth != NULL) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	free(pin);
	return rc;
}

enum aws_source_result aws_source_container(const struct aws_source_ctx *ctx,
                                            struct aws_credential_source **src,
                                            struct aws_creds **first, char *why,
                                            size_t why_size)
{
	const char *rel = aws_env_get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = aws_env_get("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	struct container_ctx *c;
	char name[512];

	(void)ctx;
	if (rel == NULL && full == NULL) {
		snprintf(why, why_size, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and "
		                        "AWS_CONTAINER_CREDENTIALS_FULL_URI are not set");
		return AWS_SOURCE_NOT_SET;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL ||
	    (rel != NULL ? asprintf(&c->url, "%s%s%s", CONTAINER_HOST, rel[0] == '/' ? "" : "/", rel) < 0
	                 : (c->url = strdup(full)) == NULL)) {
		free(c);
		snprintf(why, why_size, "out of memory");
		return AWS_SOURCE_FAILED;
	}
	/* the relative URI's host is the ECS one: fixed, numeric, allowed */
	if (rel != NULL ? (c->log_url = log_url_of(c->url)) == NULL
	                : check_full_uri(c, why, why_size) < 0) {
		if (rel != NULL)
			snprintf(why, why_size, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI is not a URL path");
		container_ctx_free(c);
		return AWS_SOURCE_FAILED;
	}
	snprintf(name, sizeof(name), "container endpoint \"%.400s\"", c->log_url);
	return aws_source_make(name, container_fetch, container_ctx_free, c, true, src, first, why,
	                       why_size);
}
