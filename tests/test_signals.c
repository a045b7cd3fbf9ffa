/* test_signals.c - SIGHUP/SIGTERM/SIGINT arrive as events on the signal fd
 * (also when sent while another thread runs), requests from other threads
 * wake the waiter, SIGPIPE is ignored, and close restores the mask. */
#include "signals.h"
#include "clock.h"
#include "tap.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void *send_term(void *arg)
{
    (void)arg;
    usleep(50000);
    kill(getpid(), SIGTERM);
    return NULL;
}

static void *post_reload(void *arg)
{
    usleep(50000);
    pc_signals_request(arg, PC_SIG_RELOAD);
    return NULL;
}

int main(void)
{
    char err[256] = "";
    pc_signals *s = NULL;
    int rc = pc_signals_open(&s, err, sizeof err);
    TAP_CHECK(rc == 0, "open (%s)", rc ? err : "ok");

    int64_t t0 = pc_now_ns();
    int ev = pc_signals_wait(s, 50);
    int64_t el = (pc_now_ns() - t0) / 1000000;
    /* (the upper bound only tells a timeout from a wait that never ends: a
     * busy machine may run this thread late) */
    TAP_CHECK(ev == 0 && el >= 45 && el < 30000, "nothing pending: wait times out after %lld ms", (long long)el);

    kill(getpid(), SIGHUP);
    ev = pc_signals_wait(s, 30000);
    TAP_CHECK(ev == PC_SIG_RELOAD && !pc_signals_stop_requested(s) && pc_signals_last(s) == SIGHUP,
              "SIGHUP -> reload event");

    pthread_t th;
    pthread_create(&th, NULL, send_term, NULL);
    ev = pc_signals_wait(s, 30000); /* ends at the signal; the bound for a stuck one */
    pthread_join(th, NULL);
    TAP_CHECK(ev == PC_SIG_STOP && pc_signals_stop_requested(s) && pc_signals_stop_count(s) == 1 &&
                  pc_signals_last(s) == SIGTERM,
              "SIGTERM sent while another thread runs -> stop event");
    kill(getpid(), SIGINT);
    kill(getpid(), SIGHUP);
    usleep(10000);
    ev = pc_signals_read(s);
    TAP_CHECK(ev == (PC_SIG_STOP | PC_SIG_RELOAD) && pc_signals_stop_count(s) == 2,
              "SIGINT + SIGHUP pending: both events from one read, second stop counted");
    TAP_CHECK(pc_signals_read(s) == 0, "events are consumed");

    pthread_create(&th, NULL, post_reload, s);
    struct pollfd p = {pc_signals_fd(s), POLLIN, 0};
    int pr = poll(&p, 1, 30000);
    pthread_join(th, NULL);
    ev = pc_signals_read(s);
    TAP_CHECK(pr == 1 && ev == PC_SIG_RELOAD, "a request from another thread makes the fd readable -> reload");
    kill(getpid(), SIGHUP);
    pr = poll(&p, 1, 30000);
    ev = pc_signals_read(s);
    TAP_CHECK(pr == 1 && ev == PC_SIG_RELOAD, "a signal makes the same fd readable");
    pc_signals_request(s, PC_SIG_STOP);
    TAP_CHECK(pc_signals_stop_count(s) == 3 && pc_signals_wait(s, 0) == PC_SIG_STOP, "stop request");

    int fds[2];
    if (pipe(fds) == 0) {
        close(fds[0]);
        ssize_t w = write(fds[1], "x", 1);
        TAP_CHECK(w < 0 && errno == EPIPE, "SIGPIPE ignored: write to a closed pipe gives EPIPE");
        close(fds[1]);
    }

    pc_signals_close(s);
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    TAP_CHECK(!sigismember(&cur, SIGHUP) && !sigismember(&cur, SIGTERM), "close restores the signal mask");
    return tap_done();
}
