/*
 * daemon/sd_notify.h: the systemd notification protocol (sd_notify(3)),
 * spoken directly: one datagram per message to the AF_UNIX socket named by
 * $NOTIFY_SOCKET (a path, or an abstract name when it starts with '@').
 * Implemented here rather than linking libsystemd for one sendto(): the
 * daemon then runs the same with and without systemd, and the protocol is
 * a stable, documented interface.
 */
#ifndef OUTBOX_CORE_DAEMON_SD_NOTIFY_H
#define OUTBOX_CORE_DAEMON_SD_NOTIFY_H

#include <stdint.h>

/*
 * Sends state ("READY=1", "STOPPING=1", "WATCHDOG=1", "STATUS=...", lines
 * joined by '\n') to $NOTIFY_SOCKET.  Returns 1 sent, 0 when NOTIFY_SOCKET
 * is not set, -1 on failure (errno set).
 */
int sd_notify_send(const char *state);

/*
 * The watchdog interval systemd asks for ($WATCHDOG_USEC, honoured only
 * when $WATCHDOG_PID is unset or ours), in microseconds; 0 when none.
 */
uint64_t sd_watchdog_usec(void);

#endif
