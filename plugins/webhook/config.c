/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * config.c: the webhook plugin's plugin.* options.
 *
 * The host's option table already checks each key's type, range and line
 * (a bad URL, an unset secret variable, an out-of-range timeout); init()
 * adds what only the plugin knows: the secret's format, a readable CA file,
 * header names it may send.  The secret itself appears in no message.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "webhook.h"

#define WH_CA_SYSTEM "system"

/*
 * timeout_ms: the plugin cannot see handler_timeout_seconds (options of the
 * destination are not plugin options), so it bounds the value to what can
 * be sane: from 100 ms (less is a unit mistake, seconds for milliseconds)
 * to handler_timeout_seconds' own maximum, one day.  docs/webhook.md says
 * to keep it below handler_timeout_seconds.
 */
const struct outbox_option wh_options[] = {
	{.name = "url", .type = OUTBOX_OPT_URL,
	 .help = "the receiver's http:// or https:// URL"},
	{.name = "secret_env", .type = OUTBOX_OPT_STRING, .flags = OUTBOX_OPT_SECRET_ENV,
	 .help = "environment variable holding the Standard Webhooks secret whsec_<base64>"},
	{.name = "timeout_ms", .type = OUTBOX_OPT_INT, .default_value = "10000",
	 .min = 100, .max = 86400000,
	 .help = "per request, connection included; keep it below handler_timeout_seconds"},
	{.name = "ca_file", .type = OUTBOX_OPT_STRING, .default_value = WH_CA_SYSTEM,
	 .help = "PEM file of the CAs to trust for https://, or \"system\""},
	{.name = "max_response_bytes", .type = OUTBOX_OPT_INT, .default_value = "1048576",
	 .min = 0, .max = 1073741824,
	 .help = "response body bytes read at most; the rest is not read"},
	{.name = "header.", .type = OUTBOX_OPT_STRING, .flags = OUTBOX_OPT_PREFIX,
	 .help = "plugin.header.NAME = VALUE: a static request header"},
	{.name = NULL},
};

/* Headers the plugin sets itself; a static one must not replace them. */
static const char *const reserved_headers[] = {
	"webhook-id", "webhook-timestamp", "webhook-signature", "traceparent",
	"content-type", "content-length", "transfer-encoding", "host", "user-agent",
	"expect", "connection",
};

static int is_token_char(unsigned char c)
{
	return isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* "NAME=VALUE" from the prefix option to "NAME: VALUE" in *list. */
static int add_static_header(struct curl_slist **list, const char *line, size_t len,
                             char *err, size_t errlen)
{
	const char *eq = memchr(line, '=', len);
	size_t nlen = eq != NULL ? (size_t)(eq - line) : len;
	char *text = NULL;
	struct curl_slist *next;

	for (size_t i = 0; i < nlen; i++) {
		if (!is_token_char((unsigned char)line[i])) {
			snprintf(err, errlen, "plugin.header.%.*s: not a valid HTTP header name",
			         (int)nlen, line);
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(reserved_headers) / sizeof(reserved_headers[0]); i++) {
		if (strlen(reserved_headers[i]) == nlen &&
		    strncasecmp(line, reserved_headers[i], nlen) == 0) {
			snprintf(err, errlen, "plugin.header.%.*s: the plugin sets this header itself",
			         (int)nlen, line);
			return -1;
		}
	}
	if (asprintf(&text, "%.*s: %.*s", (int)nlen, line, (int)(len - nlen - 1), eq + 1) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	next = curl_slist_append(*list, text);
	free(text);
	if (next == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*list = next;
	return 0;
}

static int build_static_headers(const char *lines, struct curl_slist **list,
                                char *err, size_t errlen)
{
	static const char *const fixed[] = {"Content-Type: application/json", "Expect:"};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		struct curl_slist *next = curl_slist_append(*list, fixed[i]);
		if (next == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		*list = next;
	}
	for (const char *p = lines; p != NULL && *p != '\0';) {
		size_t len = strcspn(p, "\n");
		if (add_static_header(list, p, len, err, errlen) < 0)
			return -1;
		p += len;
		p += *p == '\n';
	}
	return 0;
}

/* Whether a URL's host is loopback: localhost (or *.localhost), 127.0.0.0/8, ::1. */
static int host_is_loopback(const char *host)
{
	char buf[256];
	size_t n = strlen(host);
	unsigned char addr[16];

	if (n == 0 || n >= sizeof(buf))
		return 0;
	if (host[0] == '[' && host[n - 1] == ']') {
		memcpy(buf, host + 1, n - 2);
		buf[n - 2] = '\0';
		return inet_pton(AF_INET6, buf, addr) == 1 && memcmp(addr, &in6addr_loopback, 16) == 0;
	}
	for (size_t i = 0; i <= n; i++)
		buf[i] = (char)tolower((unsigned char)host[i]);
	if (n > 1 && buf[n - 1] == '.')
		buf[--n] = '\0';
	if (strcmp(buf, "localhost") == 0 || (n > 10 && strcmp(buf + n - 10, ".localhost") == 0))
		return 1;
	return inet_pton(AF_INET, buf, addr) == 1 && addr[0] == 127;
}

/*
 * Checks the URL with libcurl's parser and prepares its loggable form:
 * scheme, host, port and path, without userinfo and with the query cut to
 * "?..." (a token may travel there).  *loopback says whether plaintext
 * http:// stays on this machine.
 */
static int parse_url(const char *url, char **shown, int *plain_remote, char *err, size_t errlen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL;
	int rc = -1;

	*shown = NULL;
	if (u == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		snprintf(err, errlen, "plugin.url is not a URL libcurl accepts");
		goto out;
	}
	curl_url_get(u, CURLUPART_PORT, &port, 0);
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	*plain_remote = strcasecmp(scheme, "http") == 0 && !host_is_loopback(host);
	if (asprintf(shown, "%s://%s%s%s%s%s", scheme, host, port != NULL ? ":" : "",
	             port != NULL ? port : "", path != NULL ? path : "/",
	             query != NULL ? "?..." : "") < 0) {
		*shown = NULL;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(query);
	curl_url_cleanup(u);
	return rc;
}

static int load_secret(const struct outbox_host *host, struct outbox_ctx *ctx,
                       struct wh_config *cfg, char *err, size_t errlen)
{
	const char *var = host->option(ctx, "secret_env");
	const char *secret = var != NULL ? getenv(var) : NULL;
	char why[200];

	if (secret == NULL || secret[0] == '\0') {
		snprintf(err, errlen, "environment variable \"%s\" named by plugin.secret_env is not "
		         "set or empty", var != NULL ? var : "");
		return -1;
	}
	if (wh_secret_decode(secret, &cfg->key, &cfg->key_len, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "environment variable \"%s\" (plugin.secret_env): %s", var, why);
		return -1;
	}
	return 0;
}

static int load_ca_file(const char *ca, struct wh_config *cfg, char *err, size_t errlen)
{
	if (ca == NULL || strcmp(ca, WH_CA_SYSTEM) == 0)
		return 0;
	if (access(ca, R_OK) != 0) {
		snprintf(err, errlen, "plugin.ca_file \"%s\" cannot be read", ca);
		return -1;
	}
	cfg->ca_file = strdup(ca);
	if (cfg->ca_file == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int wh_config_load(const struct outbox_host *host, struct outbox_ctx *ctx,
                   struct wh_config *cfg, char *err, size_t errlen)
{
	const char *url = host->option(ctx, "url");
	int plain_remote = 0;

	memset(cfg, 0, sizeof(*cfg));
	cfg->timeout_ms = (long)host->option_int(ctx, "timeout_ms");
	cfg->max_response_bytes = (size_t)host->option_int(ctx, "max_response_bytes");
	if (url == NULL || cfg->timeout_ms <= 0) {
		snprintf(err, errlen, "plugin.url and plugin.timeout_ms must be set");
		goto fail;
	}
	if (parse_url(url, &cfg->shown_url, &plain_remote, err, errlen) < 0 ||
	    load_secret(host, ctx, cfg, err, errlen) < 0 ||
	    load_ca_file(host->option(ctx, "ca_file"), cfg, err, errlen) < 0 ||
	    build_static_headers(host->option(ctx, "header."), &cfg->static_headers,
	                         err, errlen) < 0)
		goto fail;
	cfg->url = strdup(url);
	if (cfg->url == NULL || asprintf(&cfg->user_agent, "outboxd/%s", PACKAGE_VERSION) < 0) {
		cfg->user_agent = NULL;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (plain_remote)
		host->log(ctx, OUTBOX_LOG_WARNING, "webhook URL \"%s\" is plaintext http:// to a host "
		          "that is not loopback: every job's payload crosses the network unencrypted "
		          "and a man in the middle sees the signed requests (use https://)",
		          cfg->shown_url);
	host->log(ctx, OUTBOX_LOG_INFO, "webhook URL \"%s\", timeout %ld ms, responses read up to "
	          "%zu bytes", cfg->shown_url, cfg->timeout_ms, cfg->max_response_bytes);
	return 0;
fail:
	wh_config_clear(cfg);
	return -1;
}

void wh_config_clear(struct wh_config *cfg)
{
	wh_key_free(cfg->key, cfg->key_len);
	free(cfg->url);
	free(cfg->shown_url);
	free(cfg->ca_file);
	free(cfg->user_agent);
	/* A static header may carry a credential (Authorization: ...). */
	for (struct curl_slist *h = cfg->static_headers; h != NULL; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	curl_slist_free_all(cfg->static_headers);
	memset(cfg, 0, sizeof(*cfg));
}
