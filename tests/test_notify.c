/* test_notify.c - the sd_notify client against a real AF_UNIX datagram
 * socket standing in for systemd: READY=1, STATUS=, WATCHDOG=1 (rate-limited
 * pings from progress, none while a watched stage hangs), RELOADING=1 with
 * MONOTONIC_USEC, STOPPING=1; abstract "@" addresses; WATCHDOG_PID. */
#include "notify.h"
#include "clock.h"
#include "tap.h"

#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int bind_dgram(const char *name, int abstract)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    socklen_t len;
    if (abstract) {
        a.sun_path[0] = '\0';
        memcpy(a.sun_path + 1, name, strlen(name));
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
    } else {
        snprintf(a.sun_path, sizeof a.sun_path, "%s", name);
        len = sizeof a;
    }
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) != 0) {
        perror("bind");
        return -1;
    }
    return fd;
}

/* Next datagram within timeout_ms, "" when none. */
static const char *recv_msg(int fd, int timeout_ms)
{
    static char buf[4096];
    struct pollfd p = {fd, POLLIN, 0};
    buf[0] = '\0';
    if (poll(&p, 1, timeout_ms) == 1) {
        ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
    }
    return buf;
}

/* A message on one TAP line: newlines shown as \n. */
static const char *flat(const char *m)
{
    static char buf[8192];
    size_t o = 0;
    for (; *m && o + 3 < sizeof buf; m++) {
        if (*m == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else
            buf[o++] = *m;
    }
    buf[o] = '\0';
    return buf;
}

static int drain_count(int fd, const char *what)
{
    int n = 0;
    const char *m;
    while (*(m = recv_msg(fd, 0)))
        n += strcmp(m, what) == 0;
    return n;
}

int main(void)
{
    char dir[] = "/tmp/pc-notify-XXXXXX", path[128], err[256];
    if (!mkdtemp(dir))
        return tap_skip_all("mkdtemp failed");
    snprintf(path, sizeof path, "%s/notify.sock", dir);
    int fd = bind_dgram(path, 0);
    TAP_CHECK(fd >= 0, "bound a datagram socket at %s", path);

    setenv("NOTIFY_SOCKET", path, 1);
    setenv("WATCHDOG_USEC", "300000", 1);
    unsetenv("WATCHDOG_PID");
    pc_notify *n = NULL;
    int rc = pc_notify_open(&n, err, sizeof err);
    TAP_CHECK(rc == 0 && pc_notify_active(n) && pc_notify_watchdog_usec(n) == 300000,
              "open: active, watchdog 300000 us (%s)", rc ? err : "ok");

    pc_notify_ready(n, "5 cameras up\nencoder libx264");
    const char *m = recv_msg(fd, 1000);
    TAP_CHECK(strcmp(m, "READY=1\nSTATUS=5 cameras up encoder libx264") == 0, "READY=1 with STATUS on one line: [%s]", flat(m));
    pc_notify_status(n, "50.0 fps | drop 0");
    m = recv_msg(fd, 1000);
    TAP_CHECK(strcmp(m, "STATUS=50.0 fps | drop 0") == 0, "STATUS= arrives: [%s]", m);
    pc_notify_watchdog(n);
    m = recv_msg(fd, 1000);
    TAP_CHECK(strcmp(m, "WATCHDOG=1") == 0, "WATCHDOG=1 arrives: [%s]", m);

    /* Pings from progress: at most every third of the interval (100 ms).
     * Progress until 4 pings (a wait for events, bounded): the spacing is
     * checked on the clock around each call, from before the call that
     * pinged to after the next one that did (the notifier's own reading
     * lies between), so a busy machine cannot make it fail; how many calls
     * fit in a time is not checked. */
    int64_t t0 = pc_now_ns(), prev_before = 0, min_gap = INT64_MAX;
    int pinged = 0, calls = 0;
    while (pinged < 4 && pc_now_ns() - t0 < 30000000000LL) {
        int64_t before = pc_now_ns();
        int p = pc_notify_progress(n, 0);
        int64_t after = pc_now_ns();
        if (p) {
            if (pinged && after - prev_before < min_gap)
                min_gap = after - prev_before;
            prev_before = before;
        }
        pinged += p;
        calls++;
        usleep(2000);
    }
    int got = drain_count(fd, "WATCHDOG=1");
    TAP_CHECK(pinged == 4 && got == pinged && calls > pinged && min_gap >= 100000000LL,
              "progress: %d pings sent in %d calls, %d received, never closer than 100 ms (closest %.1f ms)",
              pinged, calls, got, min_gap == INT64_MAX ? -1.0 : min_gap / 1e6);

    /* Two watched stages: progress of stage 0 alone never pings. */
    pc_notify_watch_stages(n, 2);
    t0 = pc_now_ns();
    pinged = 0;
    while (pc_now_ns() - t0 < 350000000LL) {
        pinged += pc_notify_progress(n, 0);
        usleep(2000);
    }
    got = drain_count(fd, "WATCHDOG=1");
    TAP_CHECK(pinged == 0 && got == 0, "stage 1 hung: no pings in 350 ms (%d)", got);
    pc_notify_progress(n, 1);
    m = recv_msg(fd, 500);
    TAP_CHECK(strcmp(m, "WATCHDOG=1") == 0, "stage 1 progresses: ping [%s]", m);

    int64_t before = pc_now_ns() / 1000;
    pc_notify_reloading(n);
    m = recv_msg(fd, 1000);
    long long usec = 0;
    int ok = sscanf(m, "RELOADING=1\nMONOTONIC_USEC=%lld", &usec) == 1;
    TAP_CHECK(ok && usec >= before && usec <= pc_now_ns() / 1000, "RELOADING=1 with MONOTONIC_USEC: [%s]", flat(m));
    pc_notify_stopping(n, "draining");
    m = recv_msg(fd, 1000);
    TAP_CHECK(strcmp(m, "STOPPING=1\nSTATUS=draining") == 0, "STOPPING=1: [%s]", flat(m));
    pc_notify_extend_timeout(n, 5000000);
    m = recv_msg(fd, 1000);
    TAP_CHECK(strcmp(m, "EXTEND_TIMEOUT_USEC=5000000") == 0, "EXTEND_TIMEOUT_USEC: [%s]", m);
    pc_notify_close(n);
    close(fd);
    unlink(path);

    /* Abstract socket address. */
    char aname[64];
    snprintf(aname, sizeof aname, "pc-notify-test-%d", (int)getpid());
    fd = bind_dgram(aname, 1);
    char env[80];
    snprintf(env, sizeof env, "@%s", aname);
    setenv("NOTIFY_SOCKET", env, 1);
    rc = pc_notify_open(&n, err, sizeof err);
    pc_notify_ready(n, NULL);
    m = recv_msg(fd, 1000);
    TAP_CHECK(rc == 0 && strcmp(m, "READY=1") == 0, "abstract @ address: READY=1 arrives");
    pc_notify_close(n);
    close(fd);

    /* The watchdog belongs to another process. */
    setenv("WATCHDOG_PID", "1", 1);
    rc = pc_notify_open(&n, err, sizeof err);
    TAP_CHECK(rc == 0 && pc_notify_watchdog_usec(n) == 0 && pc_notify_progress(n, 0) == 0,
              "WATCHDOG_PID of another process: no watchdog");
    pc_notify_close(n);
    unsetenv("WATCHDOG_PID");

    /* Outside systemd: inert. */
    unsetenv("NOTIFY_SOCKET");
    rc = pc_notify_open(&n, err, sizeof err);
    TAP_CHECK(rc == 0 && !pc_notify_active(n) && pc_notify_ready(n, "x") == 0 && pc_notify_watchdog(n) == 0,
              "no NOTIFY_SOCKET: inert, calls succeed");
    pc_notify_close(n);
    setenv("NOTIFY_SOCKET", "relative/path", 1);
    rc = pc_notify_open(&n, err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "relative/path"), "malformed NOTIFY_SOCKET refused: %s", err);

    rmdir(dir);
    return tap_done();
}
