/*
 * config/listen.c: HOST:PORT listen addresses (see config/listen.h).
 */
#include "config/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static const char listen_expected[] =
	"must be HOST:PORT with a numeric IPv4 address or a bracketed IPv6 address and a port"
	" 1..65535 (e.g. 127.0.0.1:9187)";

static int parse_port(const char *s)
{
	char *end = NULL;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > 65535)
		return -1;
	return (int)v;
}

const char *cfg_listen_parse(const char *v, struct cfg_listen *out)
{
	unsigned char addr[sizeof(struct in6_addr)];
	const char *colon, *host = v;
	size_t host_len;

	memset(out, 0, sizeof(*out));
	if (*v == '[') {
		const char *close = strchr(v, ']');
		if (close == NULL || close[1] != ':')
			return listen_expected;
		host = v + 1;
		host_len = (size_t)(close - host);
		colon = close + 1;
		out->family = AF_INET6;
	} else {
		colon = strrchr(v, ':');
		if (colon == NULL)
			return listen_expected;
		host_len = (size_t)(colon - v);
		out->family = AF_INET;
	}
	if (host_len == 0 || host_len >= sizeof(out->host))
		return listen_expected;
	memcpy(out->host, host, host_len);
	out->host[host_len] = '\0';
	if (inet_pton(out->family, out->host, addr) != 1)
		return listen_expected;
	out->port = parse_port(colon + 1);
	if (out->port < 0)
		return listen_expected;
	return NULL;
}

bool cfg_listen_is_loopback(const struct cfg_listen *l)
{
	unsigned char a[sizeof(struct in6_addr)];

	if (inet_pton(l->family, l->host, a) != 1)
		return false;
	if (l->family == AF_INET)
		return a[0] == 127;
	return memcmp(a, &in6addr_loopback, sizeof(in6addr_loopback)) == 0;
}
