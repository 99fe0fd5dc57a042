/*
 * daemon/sd_notify.c: see daemon/sd_notify.h.
 */
#include "daemon/sd_notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int sd_notify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	socklen_t salen;
	ssize_t sent;
	int fd, saved;

	if (path == NULL || *path == '\0')
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(sa.sun_path, path, len);
	/* An abstract name starts with a NUL byte and is not NUL-terminated. */
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	saved = errno;
	close(fd);
	errno = saved;
	return sent == (ssize_t)strlen(state) ? 1 : -1;
}

uint64_t sd_watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end = NULL;
	unsigned long long v;

	if (usec == NULL || *usec == '\0')
		return 0;
	if (pid != NULL && *pid != '\0' && strtol(pid, NULL, 10) != (long)getpid())
		return 0;
	errno = 0;
	v = strtoull(usec, &end, 10);
	if (errno != 0 || *end != '\0')
		return 0;
	return (uint64_t)v;
}
