/* signals.h - turns SIGTERM/SIGINT (stop) and SIGHUP (reload) into events
 * the main loop reads from a file descriptor (signalfd): no work in signal
 * handlers. SIGPIPE is ignored (broken network outputs report EPIPE).
 *
 * pc_signals_open blocks SIGTERM, SIGINT and SIGHUP in the calling thread:
 * call it in main() BEFORE any other thread is created (Aravis, CUDA,
 * libavcodec and our own threads inherit the mask), otherwise a signal may
 * be delivered to a thread that does not block it and kill the process.
 *
 * Other threads (the control socket's "reload", a --duration timer, a
 * fatal pipeline error) post the same events with pc_signals_request.
 */
#ifndef PANOCAP_SIGNALS_H
#define PANOCAP_SIGNALS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PC_SIG_NONE = 0,
    PC_SIG_STOP = 1 << 0,   /* SIGTERM, SIGINT, or a request */
    PC_SIG_RELOAD = 1 << 1, /* SIGHUP, or a request */
};

typedef struct pc_signals pc_signals;

int pc_signals_open(pc_signals **out, char *err, size_t errlen);
/* Restores the signal mask of the calling thread and closes the fds. */
void pc_signals_close(pc_signals *s);

/* A descriptor that becomes readable when an event is pending (for the
 * caller's own poll loop); then call pc_signals_read. */
int pc_signals_fd(const pc_signals *s);
/* Consumes pending events without blocking: a PC_SIG_* mask. */
int pc_signals_read(pc_signals *s);
/* Waits up to timeout_ms (-1: forever) for events: a PC_SIG_* mask, 0 on
 * timeout. */
int pc_signals_wait(pc_signals *s, int timeout_ms);

/* Posts events from any thread (async-signal-safe as well). */
void pc_signals_request(pc_signals *s, int events);

/* Readable from any thread without consuming anything. */
int pc_signals_stop_requested(const pc_signals *s);
/* How many stop signals arrived (a second Ctrl-C can mean "hurry"). */
int pc_signals_stop_count(const pc_signals *s);
/* The last signal number received (0: none), for the log line. */
int pc_signals_last(const pc_signals *s);

#ifdef __cplusplus
}
#endif
#endif
