/* notify.h - systemd service notification (sd_notify protocol) without
 * libsystemd: READY=1, STATUS=, RELOADING=1, STOPPING=1, WATCHDOG=1 sent as
 * datagrams to $NOTIFY_SOCKET (a path, or "@name" for an abstract socket).
 *
 * Outside systemd (no NOTIFY_SOCKET) the notifier is inert: every call
 * succeeds and sends nothing. All calls are thread-safe.
 *
 * Watchdog: when $WATCHDOG_USEC is set (and $WATCHDOG_PID, if set, is this
 * process), pc_notify_progress() pings WATCHDOG=1 at most every third of
 * the interval. The pipeline calls it as frames make progress, so a hung
 * stage stops the pings and systemd restarts the service. With several
 * stages registered (pc_notify_watch_stages), a ping needs progress from
 * every one of them since the previous ping.
 */
#ifndef PANOCAP_NOTIFY_H
#define PANOCAP_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_notify pc_notify;

/* Reads NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID. Returns 0 (inert when
 * NOTIFY_SOCKET is unset) or -1 with err for a malformed address or a
 * socket that cannot be created. */
int pc_notify_open(pc_notify **out, char *err, size_t errlen);
void pc_notify_close(pc_notify *n);

/* 1 when notifications go somewhere. */
int pc_notify_active(const pc_notify *n);

/* Sends one message ("KEY=VALUE" lines separated by '\n'). 0 or -1. */
int pc_notify_send(pc_notify *n, const char *msg);
int pc_notify_sendf(pc_notify *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* READY=1 with an optional STATUS= (NULL: none). */
int pc_notify_ready(pc_notify *n, const char *status);
/* STATUS=text (newlines replaced by spaces). */
int pc_notify_status(pc_notify *n, const char *status);
/* RELOADING=1 with MONOTONIC_USEC= (systemd >= 253 wants it for
 * Type=notify-reload; harmless before). Send READY=1 when done. */
int pc_notify_reloading(pc_notify *n);
/* STOPPING=1 with an optional STATUS=. */
int pc_notify_stopping(pc_notify *n, const char *status);
/* Asks systemd for more start/stop time: EXTEND_TIMEOUT_USEC=. */
int pc_notify_extend_timeout(pc_notify *n, uint64_t usec);

/* Watchdog interval in microseconds, 0 when no watchdog applies. */
uint64_t pc_notify_watchdog_usec(const pc_notify *n);
/* Unconditional WATCHDOG=1 (start-up steps, reloads). */
int pc_notify_watchdog(pc_notify *n);
/* Number of stages whose progress a ping needs (1..32, default 1). */
void pc_notify_watch_stages(pc_notify *n, int stages);
/* Stage `stage` (0-based) made progress. Pings WATCHDOG=1 when every
 * watched stage progressed and a third of the interval passed since the
 * last ping. Lock-free, cheap enough per frame. Returns 1 if it pinged. */
int pc_notify_progress(pc_notify *n, int stage);

#ifdef __cplusplus
}
#endif
#endif
