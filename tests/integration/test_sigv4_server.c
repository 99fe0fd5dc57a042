/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * test_sigv4_server.c: requests signed by core/sigv4 and sent with libcurl
 * to tests/harness/sigv4-server.mjs, which checks them with its own SigV4
 * implementation.  The right secret must get 200; a wrong secret or a body
 * changed after signing must get 403 SignatureDoesNotMatch.
 *
 * Needs only node (exit 77 without it), not the PostgreSQL/SQS services.
 */
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aws/sigv4.h"
#include "common/hexdigest.h"

#define KEY_ID "AKIDTESTSERVER"
#define SECRET "c2VjcmV0L2tleStmb3IvdGVzdHM="
#define STARTUP_TIMEOUT_MS 10000

struct server {
	pid_t pid;
	int port;
};

struct response {
	long status;
	char body[4096];
	size_t body_len;
	char query_error[256];
};

static int failures;

#define CHECK(cond, ...)                                              \
	do {                                                              \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);      \
			fprintf(stderr, __VA_ARGS__);                             \
			fputc('\n', stderr);                                      \
			failures++;                                               \
		}                                                             \
	} while (0)

/* Full path of an executable "node" on PATH into out; 0 found, -1 not. */
static int find_node(char *out, size_t size)
{
	const char *path = getenv("PATH");
	const char *p = path != NULL ? path : "/usr/bin:/bin";

	while (*p != '\0') {
		size_t len = strcspn(p, ":");
		int n = snprintf(out, size, "%.*s/node", (int)len, p);
		if (n > 0 && (size_t)n < size && access(out, X_OK) == 0)
			return 0;
		p += len;
		if (*p == ':')
			p++;
	}
	return -1;
}

/* Reads the port line the server prints, within STARTUP_TIMEOUT_MS. */
static int read_port(int fd)
{
	char buf[32];
	size_t len = 0;
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (len < sizeof(buf) - 1) {
		struct timespec now;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		clock_gettime(CLOCK_MONOTONIC, &now);
		long elapsed = (now.tv_sec - start.tv_sec) * 1000 +
		               (now.tv_nsec - start.tv_nsec) / 1000000;
		if (elapsed >= STARTUP_TIMEOUT_MS || poll(&pfd, 1, (int)(STARTUP_TIMEOUT_MS - elapsed)) <= 0)
			return -1;
		ssize_t n = read(fd, buf + len, 1);
		if (n <= 0)
			return -1;
		if (buf[len] == '\n')
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	char *end = NULL;
	long port = strtol(buf, &end, 10);
	if (end == buf || *end != '\0' || port <= 0 || port > 65535)
		return -1;
	return (int)port;
}

static int start_server(struct server *srv, const char *node)
{
	const char *src = getenv("OUTBOX_SRCDIR");
	char script[4096];
	int fds[2];
	int n = snprintf(script, sizeof(script), "%s/tests/harness/sigv4-server.mjs",
	                 src != NULL && src[0] != '\0' ? src : OUTBOX_SRCDIR);

	if (n < 0 || (size_t)n >= sizeof(script) || pipe(fds) < 0)
		return -1;
	srv->pid = fork();
	if (srv->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (srv->pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		setenv("SIGV4_ACCESS_KEY_ID", KEY_ID, 1);
		setenv("SIGV4_SECRET_ACCESS_KEY", SECRET, 1);
		execl(node, "node", script, "0", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	srv->port = read_port(fds[0]);
	close(fds[0]);
	return srv->port > 0 ? 0 : -1;
}

/* SIGTERM, then SIGKILL if it has not gone within 5 s; always reaped. */
static void stop_server(struct server *srv)
{
	if (srv->pid <= 0)
		return;
	kill(srv->pid, SIGTERM);
	for (int i = 0; i < 500; i++) {
		struct timespec tick = {0, 10 * 1000 * 1000};
		if (waitpid(srv->pid, NULL, WNOHANG) == srv->pid)
			goto out;
		nanosleep(&tick, NULL);
	}
	kill(srv->pid, SIGKILL);
	waitpid(srv->pid, NULL, 0);
out:
	srv->pid = 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct response *r = userdata;
	size_t n = size * nmemb;
	size_t room = sizeof(r->body) - 1 - r->body_len;
	size_t copy = n < room ? n : room;

	memcpy(r->body + r->body_len, data, copy);
	r->body_len += copy;
	r->body[r->body_len] = '\0';
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct response *r = userdata;
	size_t n = size * nmemb;
	const char *name = "x-amzn-query-error:";
	size_t name_len = strlen(name);

	if (n > name_len && strncasecmp(data, name, name_len) == 0) {
		size_t v = n - name_len;
		if (v >= sizeof(r->query_error))
			v = sizeof(r->query_error) - 1;
		memcpy(r->query_error, data + name_len, v);
		r->query_error[v] = '\0';
	}
	return n;
}

struct call {
	const char *method;
	const char *path;    /* as sent */
	const char *query;   /* as sent, may be unsorted; NULL if none */
	const char *service; /* "sqs" or "s3" (S3 path rules, x-amz-content-sha256) */
	const char *secret;  /* the secret we sign with */
	const char *token;   /* session token or NULL */
	const char *body;    /* the body we sign */
	const char *sent;    /* the body we send; NULL: body */
};

#define MAX_HDRS 6

/* Headers to sign and send for c; strings live in store. */
static size_t build_headers(const struct call *c, int port,
                            struct sigv4_header *h, char store[][256])
{
	size_t n = 0;
	bool s3 = strcmp(c->service, "s3") == 0;

	snprintf(store[0], 256, "127.0.0.1:%d", port);
	sigv4_format_date((long long)time(NULL), store[1]);
	h[n++] = (struct sigv4_header){"Host", store[0]};
	h[n++] = (struct sigv4_header){"X-Amz-Date", store[1]};
	h[n++] = (struct sigv4_header){"Content-Type", s3 ? "text/plain" : "application/x-amz-json-1.0"};
	if (!s3)
		h[n++] = (struct sigv4_header){"X-Amz-Target", "AmazonSQS.ListQueues"};
	if (c->token != NULL)
		h[n++] = (struct sigv4_header){SIGV4_SECURITY_TOKEN_HEADER, c->token};
	if (s3) {
		(void)sha256_hex(c->body, strlen(c->body), store[2]);
		h[n++] = (struct sigv4_header){SIGV4_CONTENT_SHA256_HEADER, store[2]};
	}
	return n;
}

static struct curl_slist *header_list(const struct sigv4_header *h, size_t n,
                                      const char *authz)
{
	struct curl_slist *list = NULL;
	char line[1024];

	for (size_t i = 0; i <= n; i++) {
		if (i < n)
			snprintf(line, sizeof(line), "%s: %s", h[i].name, h[i].value);
		else
			snprintf(line, sizeof(line), "Authorization: %s", authz);
		struct curl_slist *grown = curl_slist_append(list, line);
		if (grown == NULL) {
			curl_slist_free_all(list);
			return NULL;
		}
		list = grown;
	}
	/* no "Expect: 100-continue" round trip; unsigned headers are allowed */
	return curl_slist_append(list, "Expect:");
}

static int send_call(const struct call *c, int port, struct response *r)
{
	struct sigv4_header h[MAX_HDRS];
	char store[3][256];
	size_t n = build_headers(c, port, h, store);
	const char *sent = c->sent != NULL ? c->sent : c->body;
	struct sigv4_request req = {.method = c->method, .path = c->path, .query = c->query,
	                            .headers = h, .n_headers = n, .body = c->body,
	                            .body_len = strlen(c->body)};
	struct sigv4_scope scope = {.region = "us-east-1", .service = c->service,
	                            .s3_path_rules = strcmp(c->service, "s3") == 0};
	struct sigv4_credentials creds = {KEY_ID, c->secret, c->token};
	char url[2048];
	char *authz = sigv4_authorization(&req, &scope, &creds);
	struct curl_slist *list = NULL;
	CURL *curl = curl_easy_init();
	int rc = -1;

	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s%s%s", port, c->path,
	         c->query != NULL ? "?" : "", c->query != NULL ? c->query : "");
	if (authz == NULL || curl == NULL)
		goto out;
	list = header_list(h, n, authz);
	if (list == NULL)
		goto out;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, c->method);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
	if (strcmp(c->method, "GET") != 0) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, sent);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)strlen(sent));
	}
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
	if (curl_easy_perform(curl) != CURLE_OK)
		goto out;
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
	rc = 0;
out:
	curl_slist_free_all(list);
	curl_easy_cleanup(curl);
	free(authz);
	return rc;
}

static void expect_ok(const char *what, const struct call *c, int port)
{
	struct response r;

	CHECK(send_call(c, port, &r) == 0, "%s: request not sent", what);
	CHECK(r.status == 200, "%s: status %ld, body %s", what, r.status, r.body);
	CHECK(strstr(r.body, "\"ok\":true") != NULL, "%s: body %s", what, r.body);
}

static void expect_mismatch(const char *what, const struct call *c, int port)
{
	struct response r;

	CHECK(send_call(c, port, &r) == 0, "%s: request not sent", what);
	CHECK(r.status == 403, "%s: status %ld, body %s", what, r.status, r.body);
	CHECK(strstr(r.body, "\"__type\":\"com.amazonaws.sqs#SignatureDoesNotMatch\"") != NULL,
	      "%s: body %s", what, r.body);
	CHECK(strstr(r.query_error, "SignatureDoesNotMatch;Sender") != NULL,
	      "%s: x-amzn-query-error \"%s\"", what, r.query_error);
}

static void run_calls(int port)
{
	const char *json = "{\"QueueNamePrefix\":\"outbox\"}";
	struct call sqs = {"POST", "/", NULL, "sqs", SECRET, NULL, json, NULL};
	struct call c;
	char *key = sigv4_uri_encode("/outbox-bucket/events/2026 11/a+b=c~d.json", true);

	expect_ok("sqs post", &sqs, port);
	c = sqs;
	c.secret = "wrong-secret";
	expect_mismatch("sqs post with a wrong secret", &c, port);
	c = sqs;
	c.sent = "{\"QueueNamePrefix\":\"other\"}";
	expect_mismatch("sqs post with the body changed after signing", &c, port);
	c = sqs;
	c.token = "session/token+with=chars";
	expect_ok("sqs post with a session token", &c, port);
	c = sqs;
	c.method = "GET";
	c.body = "";
	c.query = "Version=2012-11-05&Action=ListQueues&QueueNamePrefix=a%2Fb&Empty";
	expect_ok("sqs get with an unsorted query", &c, port);

	CHECK(key != NULL, "sigv4_uri_encode failed");
	if (key == NULL)
		return;
	c = (struct call){"PUT", key, NULL, "s3", SECRET, NULL, "{\"event\":1}", NULL};
	expect_ok("s3 put with an encoded key", &c, port);
	c.secret = "wrong-secret";
	expect_mismatch("s3 put with a wrong secret", &c, port);
	free(key);
}

int main(void)
{
	char node[4096];
	struct server srv = {0};

	if (find_node(node, sizeof(node)) < 0) {
		fprintf(stderr, "SKIP: node not found on PATH\n");
		return 77;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return 1;
	if (start_server(&srv, node) < 0) {
		fprintf(stderr, "FAIL: sigv4-server.mjs did not start\n");
		failures++;
	} else {
		run_calls(srv.port);
	}
	stop_server(&srv);
	curl_global_cleanup();
	if (failures == 0)
		printf("PASS: signatures accepted by and rejected by an independent checker\n");
	return failures == 0 ? 0 : 1;
}
