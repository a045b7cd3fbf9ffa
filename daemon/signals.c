/* signals.c - signalfd for SIGTERM/SIGINT/SIGHUP plus an eventfd for
 * requests from other threads (see signals.h). */
#include "signals.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

struct pc_signals {
    int sfd;                 /* signalfd */
    int efd;                 /* eventfd: requests from other threads */
    int epfd;                /* epoll over both: the one fd callers poll */
    sigset_t old_mask;
    _Atomic int pending;     /* events posted by pc_signals_request */
    _Atomic int stop;
    _Atomic int stop_count;
    _Atomic int last;
};

int pc_signals_open(pc_signals **out, char *err, size_t errlen)
{
    *out = NULL;
    pc_signals *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "signals: out of memory");
        return -1;
    }
    s->sfd = s->efd = s->epfd = -1;
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &ign, NULL) != 0) {
        snprintf(err, errlen, "signals: ignoring SIGPIPE: %s", strerror(errno));
        free(s);
        return -1;
    }
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGTERM);
    sigaddset(&m, SIGINT);
    sigaddset(&m, SIGHUP);
    int rc = pthread_sigmask(SIG_BLOCK, &m, &s->old_mask);
    if (rc != 0) {
        snprintf(err, errlen, "signals: pthread_sigmask: %s", strerror(rc));
        free(s);
        return -1;
    }
    s->sfd = signalfd(-1, &m, SFD_NONBLOCK | SFD_CLOEXEC);
    s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s->sfd < 0 || s->efd < 0 || s->epfd < 0) {
        snprintf(err, errlen, "signals: %s: %s", s->sfd < 0 ? "signalfd" : s->efd < 0 ? "eventfd" : "epoll",
                 strerror(errno));
        pc_signals_close(s);
        return -1;
    }
    struct epoll_event e1 = {.events = EPOLLIN, .data.fd = s->sfd}, e2 = {.events = EPOLLIN, .data.fd = s->efd};
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sfd, &e1) != 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->efd, &e2) != 0) {
        snprintf(err, errlen, "signals: epoll_ctl: %s", strerror(errno));
        pc_signals_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void pc_signals_close(pc_signals *s)
{
    if (!s)
        return;
    if (s->sfd >= 0)
        close(s->sfd);
    if (s->efd >= 0)
        close(s->efd);
    if (s->epfd >= 0)
        close(s->epfd);
    pthread_sigmask(SIG_SETMASK, &s->old_mask, NULL);
    free(s);
}

int pc_signals_fd(const pc_signals *s) { return s->epfd; }

void pc_signals_request(pc_signals *s, int events)
{
    if (!s || !events)
        return;
    atomic_fetch_or(&s->pending, events);
    if (events & PC_SIG_STOP) {
        atomic_store(&s->stop, 1);
        atomic_fetch_add(&s->stop_count, 1);
    }
    uint64_t one = 1;
    ssize_t r = write(s->efd, &one, sizeof one);
    (void)r;
}

int pc_signals_read(pc_signals *s)
{
    int ev = 0;
    struct signalfd_siginfo si;
    while (read(s->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
        atomic_store(&s->last, (int)si.ssi_signo);
        if (si.ssi_signo == SIGHUP)
            ev |= PC_SIG_RELOAD;
        else {
            ev |= PC_SIG_STOP;
            atomic_store(&s->stop, 1);
            atomic_fetch_add(&s->stop_count, 1);
        }
    }
    uint64_t v;
    while (read(s->efd, &v, sizeof v) == (ssize_t)sizeof v)
        ;
    ev |= atomic_exchange(&s->pending, 0);
    return ev;
}

int pc_signals_wait(pc_signals *s, int timeout_ms)
{
    int ev = pc_signals_read(s);
    if (ev)
        return ev;
    struct pollfd p = {s->epfd, POLLIN, 0};
    int r;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    return r > 0 ? pc_signals_read(s) : 0;
}

int pc_signals_stop_requested(const pc_signals *s) { return atomic_load(&s->stop); }
int pc_signals_stop_count(const pc_signals *s) { return atomic_load(&s->stop_count); }
int pc_signals_last(const pc_signals *s) { return atomic_load(&s->last); }
