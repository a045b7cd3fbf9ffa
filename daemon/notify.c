/* notify.c - the sd_notify datagram protocol, spoken directly (see notify.h). */
#include "notify.h"

#include "clock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct pc_notify {
    int fd; /* -1: inert */
    struct sockaddr_un addr;
    socklen_t addrlen;
    uint64_t watchdog_usec;
    uint32_t stage_mask;        /* bits of the watched stages */
    _Atomic uint32_t progressed; /* stages that progressed since the last ping */
    _Atomic int64_t last_ping_ns;
};

int pc_notify_open(pc_notify **out, char *err, size_t errlen)
{
    pc_notify *n = calloc(1, sizeof *n);
    *out = NULL;
    if (!n) {
        snprintf(err, errlen, "notify: out of memory");
        return -1;
    }
    n->fd = -1;
    n->stage_mask = 1;
    atomic_store(&n->last_ping_ns, pc_now_ns());

    const char *wd = getenv("WATCHDOG_USEC"), *wpid = getenv("WATCHDOG_PID");
    if (wd && *wd) {
        char *end;
        unsigned long long v = strtoull(wd, &end, 10);
        int mine = 1;
        if (wpid && *wpid)
            mine = strtol(wpid, NULL, 10) == (long)getpid();
        if (*end == '\0' && v > 0 && mine)
            n->watchdog_usec = v;
    }

    const char *sock = getenv("NOTIFY_SOCKET");
    if (!sock || !*sock) {
        *out = n;
        return 0;
    }
    size_t len = strlen(sock);
    if ((sock[0] != '/' && sock[0] != '@') || len >= sizeof n->addr.sun_path) {
        snprintf(err, errlen,
                 "NOTIFY_SOCKET=\"%s\": not an absolute path or @abstract name of at most %zu characters",
                 sock, sizeof n->addr.sun_path - 1);
        free(n);
        return -1;
    }
    n->addr.sun_family = AF_UNIX;
    memcpy(n->addr.sun_path, sock, len);
    if (sock[0] == '@')
        n->addr.sun_path[0] = '\0'; /* abstract namespace: no terminating NUL counted */
    n->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (sock[0] == '/'));
    n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (n->fd < 0) {
        snprintf(err, errlen, "NOTIFY_SOCKET: socket(AF_UNIX, SOCK_DGRAM): %s", strerror(errno));
        free(n);
        return -1;
    }
    *out = n;
    return 0;
}

void pc_notify_close(pc_notify *n)
{
    if (!n)
        return;
    if (n->fd >= 0)
        close(n->fd);
    free(n);
}

int pc_notify_active(const pc_notify *n) { return n && n->fd >= 0; }

int pc_notify_send(pc_notify *n, const char *msg)
{
    if (!n || n->fd < 0)
        return 0;
    ssize_t r;
    do
        r = sendto(n->fd, msg, strlen(msg), MSG_NOSIGNAL, (const struct sockaddr *)&n->addr, n->addrlen);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -1 : 0;
}

int pc_notify_sendf(pc_notify *n, const char *fmt, ...)
{
    char buf[2048];
    if (!n || n->fd < 0)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return pc_notify_send(n, buf);
}

/* STATUS= must stay on one line. */
static void one_line(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < len; i++)
        dst[i] = (src[i] == '\n' || src[i] == '\r') ? ' ' : src[i];
    dst[i] = '\0';
}

int pc_notify_ready(pc_notify *n, const char *status)
{
    char s[1024];
    if (!status)
        return pc_notify_send(n, "READY=1");
    one_line(s, sizeof s, status);
    return pc_notify_sendf(n, "READY=1\nSTATUS=%s", s);
}

int pc_notify_status(pc_notify *n, const char *status)
{
    char s[1024];
    one_line(s, sizeof s, status);
    return pc_notify_sendf(n, "STATUS=%s", s);
}

int pc_notify_reloading(pc_notify *n)
{
    return pc_notify_sendf(n, "RELOADING=1\nMONOTONIC_USEC=%lld", (long long)(pc_now_ns() / 1000));
}

int pc_notify_stopping(pc_notify *n, const char *status)
{
    char s[1024];
    if (!status)
        return pc_notify_send(n, "STOPPING=1");
    one_line(s, sizeof s, status);
    return pc_notify_sendf(n, "STOPPING=1\nSTATUS=%s", s);
}

int pc_notify_extend_timeout(pc_notify *n, uint64_t usec)
{
    return pc_notify_sendf(n, "EXTEND_TIMEOUT_USEC=%llu", (unsigned long long)usec);
}

uint64_t pc_notify_watchdog_usec(const pc_notify *n) { return n ? n->watchdog_usec : 0; }

int pc_notify_watchdog(pc_notify *n)
{
    if (!n || n->fd < 0)
        return 0;
    atomic_store(&n->last_ping_ns, pc_now_ns());
    return pc_notify_send(n, "WATCHDOG=1");
}

void pc_notify_watch_stages(pc_notify *n, int stages)
{
    if (!n)
        return;
    if (stages < 1)
        stages = 1;
    if (stages > 32)
        stages = 32;
    n->stage_mask = stages == 32 ? 0xffffffffu : (1u << stages) - 1;
    atomic_store(&n->progressed, 0);
}

int pc_notify_progress(pc_notify *n, int stage)
{
    if (!n || n->fd < 0 || !n->watchdog_usec || stage < 0 || stage > 31)
        return 0;
    uint32_t bit = 1u << stage;
    uint32_t seen = atomic_fetch_or(&n->progressed, bit) | bit;
    if ((seen & n->stage_mask) != n->stage_mask)
        return 0;
    int64_t now = pc_now_ns();
    int64_t last = atomic_load(&n->last_ping_ns);
    if (now - last < (int64_t)(n->watchdog_usec * 1000 / 3))
        return 0;
    /* One thread wins the right to ping for this period. */
    if (!atomic_compare_exchange_strong(&n->last_ping_ns, &last, now))
        return 0;
    atomic_store(&n->progressed, 0);
    pc_notify_send(n, "WATCHDOG=1");
    return 1;
}
