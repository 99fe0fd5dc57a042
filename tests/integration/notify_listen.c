/*
 * tests/integration/notify_listen.c: a stand-in for systemd's notification
 * socket.  notify_listen PATH binds an AF_UNIX datagram socket at PATH (an
 * abstract name when PATH starts with '@'), prints "listening" once bound,
 * then every datagram it receives, each line prefixed with the sender's
 * pid when the kernel passes it, until SIGTERM.
 */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[4096];
	size_t len;
	int fd;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notify_listen PATH|@NAME\n");
		return 64;
	}
	len = strlen(argv[1]);
	memcpy(sa.sun_path, argv[1], len);
	if (argv[1][0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa,
	                   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
	                               (argv[1][0] != '@'))) < 0) {
		perror("notify_listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

		if (n < 0)
			continue;
		buf[n] = '\0';
		/* One datagram may hold several assignments, one per line. */
		for (char *line = buf, *next; line != NULL && *line != '\0'; line = next) {
			next = strchr(line, '\n');
			if (next != NULL)
				*next++ = '\0';
			printf("%s\n", line);
		}
		fflush(stdout);
	}
}
