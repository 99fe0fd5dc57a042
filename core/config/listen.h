/*
 * config/listen.h: HOST:PORT listen addresses ([metrics] and [console] listen).
 */
#ifndef OUTBOX_CORE_CONFIG_LISTEN_H
#define OUTBOX_CORE_CONFIG_LISTEN_H

#include <stdbool.h>
#include <stddef.h>

/* Longest host part accepted (an IPv6 literal fits). */
#define CFG_LISTEN_HOST_MAX 64

struct cfg_listen {
	char host[CFG_LISTEN_HOST_MAX]; /* numeric IPv4 or IPv6 address, brackets removed */
	int port;                       /* 1..65535 */
	int family;                     /* AF_INET or AF_INET6 */
};

/*
 * Parses "IPV4:PORT" or "[IPV6]:PORT" (numeric addresses only: a name
 * would make the bound interface depend on the resolver).  Returns NULL and
 * fills *out, or what a valid value looks like (static storage).
 */
const char *cfg_listen_parse(const char *v, struct cfg_listen *out);

/* Whether l is 127.0.0.0/8 or ::1: reachable from this host only. */
bool cfg_listen_is_loopback(const struct cfg_listen *l);

#endif
