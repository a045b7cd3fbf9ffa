/* test_daemon_notify.c - sd_notify from the real panocap daemon: the test
 * binds an AF_UNIX datagram socket (what systemd does for Type=notify),
 * runs panocap with NOTIFY_SOCKET pointing at it and WATCHDOG_USEC=3000000
 * (WATCHDOG_PID unset: the pings are for whoever reads the socket), sends a
 * SIGHUP once pings come, SIGTERM once enough has arrived, and checks what
 * arrives: EXTEND_TIMEOUT_USEC while starting, READY=1 with
 * STATUS=running..., periodic STATUS= status lines, WATCHDOG=1 pings from
 * the pipeline's progress never more than the watchdog period apart,
 * RELOADING=1 (with MONOTONIC_USEC) then READY=1 around the reload,
 * STOPPING=1 at the end, exit 0. Then a run with daemon.watchdog = false:
 * READY=1 but no pings while frames are encoded.
 * Nothing depends on the machine's speed but the pings' spacing, which is
 * what a watchdog is: the cameras are 512x216 (a 2040x5400 frame took
 * about a second on a loaded 2-core machine, longer than the period) and
 * the period 3 s, so a loop of the pipeline has 2 s to feed it. Every run
 * ends on events (so many pings, status lines, frames), not on a duration.
 * argv[1]: the panocap executable. */
#include "daemon_testutil.h"

#include <poll.h>

#include "sanitizer.h"

#define MAX_MSG 1024

typedef struct msg {
    double t;
    char text[512];
} msg;

static msg msgs[MAX_MSG];
static int nmsg;

static void drain(int fd, int timeout_ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    while (nmsg < MAX_MSG && poll(&p, 1, timeout_ms) > 0) {
        ssize_t r = recv(fd, msgs[nmsg].text, sizeof msgs[nmsg].text - 1, 0);
        if (r <= 0)
            break;
        msgs[nmsg].text[r] = '\0';
        msgs[nmsg].t = dt_now();
        nmsg++;
        timeout_ms = 0;
    }
}

/* A message on one line for the TAP output ("\n" shown as " | "). */
static const char *flat(int i)
{
    static char buf[4][600];
    static int k;
    char *b = buf[k++ % 4];
    if (i < 0)
        return "";
    size_t o = 0;
    for (const char *p = msgs[i].text; *p && o + 4 < sizeof buf[0]; p++) {
        if (*p == '\n') {
            memcpy(b + o, " | ", 3);
            o += 3;
        } else
            b[o++] = *p;
    }
    b[o] = '\0';
    return b;
}

/* Index of the first message at or after `from` with a line starting with
 * `field` (e.g. "READY=1"); -1 if none. */
static int find(int from, const char *field)
{
    size_t n = strlen(field);
    for (int i = from < 0 ? 0 : from; i < nmsg; i++)
        for (const char *l = msgs[i].text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
            if (!strncmp(l, field, n))
                return i;
    return -1;
}

static int count(const char *field)
{
    int c = 0;
    for (int i = find(0, field); i >= 0; i = find(i + 1, field))
        c++;
    return c;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_notify PANOCAP");
    dt_guard_children();
    char dir[256];
    if (!dt_tmpdir(dir, sizeof dir, "e2e-notify"))
        return tap_skip_all("mkdtemp failed");
    char path[300], out[300], env_sock[400];
    snprintf(path, sizeof path, "%s/notify.sock", dir);
    snprintf(out, sizeof out, "%s/n.ts", dir);
    snprintf(env_sock, sizeof env_sock, "NOTIFY_SOCKET=%s", path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, path, strlen(path) + 1);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        dt_rmtree(dir);
        return tap_skip_all("cannot bind the notify socket");
    }

    /* small cameras: this test is about what the daemon tells systemd */
    int cam_w = 512, cam_h = 216;
    char set_w[64], set_h[64], running[128];
    snprintf(set_w, sizeof set_w, "capture.width=%d", cam_w);
    snprintf(set_h, sizeof set_h, "capture.height=%d", cam_h);
    snprintf(running, sizeof running, "\nSTATUS=running: 5 cameras %dx%d -> %dx%d", cam_w, cam_h, cam_w, 5 * cam_h);
    const double period = 3.0, bound = tu_bound(120);
    char *args[] = {argv[1], "--source", "fake", "--output", out, "--stats-interval", "1",
                    "--control", "", "--set", set_w, "--set", set_h, NULL};
    char *env[] = {env_sock, "WATCHDOG_USEC=3000000", NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "panocap", args, env) == 0, "panocap started with NOTIFY_SOCKET and "
                   "WATCHDOG_USEC=3000000")) {
        dt_rmtree(dir);
        return tap_done();
    }
    int hup_sent = 0, term_sent = 0;
    double t_hup = 0;
    while (!dt_exited(&ch) && dt_now() - ch.started < bound) {
        drain(fd, 50);
        /* a reload once it is running and feeding the watchdog */
        int ready = find(0, "READY=1");
        if (!hup_sent && ready >= 0 && find(ready + 1, "WATCHDOG=1") >= 0) {
            kill(ch.pid, SIGHUP);
            hup_sent = 1;
            t_hup = dt_now();
        }
        /* the end once the reload is done and the pings and status lines
         * to check have come */
        int rl = hup_sent ? find(0, "RELOADING=1") : -1;
        int lines = 0;
        for (int i = find(ready + 1, "STATUS="); ready >= 0 && i >= 0; i = find(i + 1, "STATUS="))
            lines += strstr(msgs[i].text, " fps | in ") != NULL;
        if (!term_sent && rl >= 0 && find(rl + 1, "READY=1") >= 0 && count("WATCHDOG=1") >= 6 && lines >= 3) {
            kill(ch.pid, SIGTERM);
            term_sent = 1;
        }
    }
    int rc = dt_wait(&ch, 1);
    drain(fd, 200);
    TAP_CHECK(rc == 0 && term_sent, "exit %d after %.1f s (SIGTERM %s), %d notify messages", rc,
              dt_now() - ch.started, term_sent ? "sent once all had come" : "never sent: not all came", nmsg);
    if (rc != 0)
        dt_diag_file("panocap stderr", ch.err, 3000);

    int ready = find(0, "READY=1");
    int ext = find(0, "EXTEND_TIMEOUT_USEC=");
    TAP_CHECK(ext >= 0 && ext < ready, "EXTEND_TIMEOUT_USEC= while starting, before READY=1");
    TAP_CHECK(ready >= 0 && strstr(msgs[ready].text, running),
              "READY=1 with STATUS=running: ... after %.2f s: \"%s\"", ready >= 0 ? msgs[ready].t - ch.started : -1.0,
              flat(ready));
    int stat_lines = 0;
    for (int i = find(ready + 1, "STATUS="); ready >= 0 && i >= 0; i = find(i + 1, "STATUS="))
        stat_lines += strstr(msgs[i].text, " fps | in ") != NULL;
    int sl = find(ready + 1, "STATUS=");
    TAP_CHECK(stat_lines >= 3, "%d STATUS= status lines after READY (e.g. \"%s\")", stat_lines, flat(sl));

    /* the watchdog: pings from the pipeline's progress, within the period */
    int pings = count("WATCHDOG=1");
    int first = find(0, "WATCHDOG=1"), stop = find(0, "STOPPING=1");
    double gap = 0, prev = ready >= 0 ? msgs[ready].t : 0;
    for (int i = find(ready + 1, "WATCHDOG=1"); ready >= 0 && i >= 0 && (stop < 0 || i < stop);
         i = find(i + 1, "WATCHDOG=1")) {
        if (msgs[i].t - prev > gap)
            gap = msgs[i].t - prev;
        prev = msgs[i].t;
    }
    if (stop >= 0 && msgs[stop].t - prev > gap)
        gap = msgs[stop].t - prev;
    TAP_CHECK(pings >= 5 && first > ready, "%d WATCHDOG=1 pings, the first after READY=1", pings);
    TAP_CHECK(pings >= 2 && gap < period, "pings never more than the %.0f s watchdog period apart (longest gap "
              "%.3f s, READY to STOPPING)", period, gap);

    /* reload */
    int rl = find(0, "RELOADING=1");
    int rready = rl >= 0 ? find(rl + 1, "READY=1") : -1;
    TAP_CHECK(hup_sent && rl > ready && strstr(msgs[rl].text, "\nMONOTONIC_USEC=") && rready > rl,
              "SIGHUP: RELOADING=1 with MONOTONIC_USEC %.2f s after the signal, then READY=1 (\"%s\")",
              rl >= 0 ? msgs[rl].t - t_hup : -1.0, flat(rready));
    TAP_CHECK(dt_contains(ch.err, "reload: nothing changed"), "log: reload: nothing changed (built-in defaults)");

    TAP_CHECK(stop > ready && stop >= nmsg - 3, "STOPPING=1 at the end: \"%s\"", flat(stop));

    /* daemon.watchdog = false: no pings even though WATCHDOG_USEC is set,
     * while the pipeline makes progress (until its status line says 5
     * frames encoded, then SIGTERM) */
    nmsg = 0;
    char *args2[] = {argv[1], "--source", "fake", "--output", out, "--stats-interval", "1",
                     "--control", "", "--set", "daemon.watchdog=false", "--set", set_w, "--set", set_h, NULL};
    if (TAP_CHECK(dt_spawn(&ch, dir, "nowd", args2, env) == 0, "panocap --set daemon.watchdog=false started")) {
        int stopped = 0;
        while (!dt_exited(&ch) && dt_now() - ch.started < bound) {
            drain(fd, 50);
            long shown = -1;
            for (int i = find(0, "STATUS="); i >= 0; i = find(i + 1, "STATUS="))
                if (strstr(msgs[i].text, " fps | in "))
                    shown = dt_status_encoded(msgs[i].text);
            if (!stopped && shown >= 5) {
                kill(ch.pid, SIGTERM);
                stopped = 1;
            }
        }
        rc = dt_wait(&ch, 1);
        drain(fd, 200);
        char *sum = dt_slurp(ch.out);
        long enc = -1;
        dt_parse_summary(sum, NULL, &enc, NULL);
        free(sum);
        TAP_CHECK(rc == 0 && stopped && find(0, "READY=1") >= 0 && enc >= 5 && count("WATCHDOG=1") == 0,
                  "daemon.watchdog = false: exit %d, READY=1 sent, %ld frames encoded, %d WATCHDOG=1 pings", rc, enc,
                  count("WATCHDOG=1"));
    }
    close(fd);
    dt_rmtree(dir);
    return tap_done();
}
