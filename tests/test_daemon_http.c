/* test_daemon_http.c - the HTTP metrics server (daemon.metrics_listen) of
 * the real panocap (fake cameras, CPU backend, output null), scraped over
 * TCP on 127.0.0.1:
 *   - GET /healthz: 200 "ok" while frame sets flow;
 *   - GET /metrics: 200, the Prometheus content type, a body that passes
 *     `promtool check metrics` (skipped when promtool is not installed:
 *     Debian's `prometheus` package) and the Python client's parser
 *     (python3-prometheus-client), with panocap_build_info and no NaN;
 *   - GET /status: the status line; GET /nope: 404; POST /metrics: 405
 *     with "Allow: GET, HEAD"; a control command sent over TCP is not run;
 *   - the server's front door (http_front.c) on this listener too: two
 *     Content-Lengths 400, a Content-Length past 2^64 one 413 (one status
 *     line), a path holding an encoded NUL 404, any Host served (the
 *     metrics listener does not check it); ten connections from 127.0.0.1
 *     holding an unfinished request (more than the 8 an address has) do
 *     not keep /status from answering, and are closed by the server
 *     within the request deadline (408, or 503 when one made room);
 *   - the same server on [::1] (IPv6); /healthz polled from the start
 *     answers 503 "unhealthy: ..." until the first frame set is done (that
 *     check is skipped when the first set beats the first poll), then 200.
 * After SIGTERM the port is closed. */
#include "daemon_testutil.h"
#include "http.h"
#include "tap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

static const char *exe;
static char dir[256];

static int free_port(int family)
{
    int fd = socket(family, SOCK_STREAM, 0);
    struct sockaddr_storage ss = {0};
    socklen_t l;
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        l = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        l = sizeof *a;
    }
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&ss, l) == 0 && getsockname(fd, (struct sockaddr *)&ss, &l) == 0)
        port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                        : ((struct sockaddr_in *)&ss)->sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static int status_code(const char *ans)
{
    int code = 0;
    if (sscanf(ans, "HTTP/1.%*d %d", &code) != 1)
        return -1;
    return code;
}

static const char *body_of(const char *ans)
{
    const char *b = strstr(ans, "\r\n\r\n");
    return b ? b + 4 : "";
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* n connections to 127.0.0.1:port, each having sent the start of a
 * request; fds into fd. */
static int open_slow(int port, int *fd, int n)
{
    for (int i = 0; i < n; i++) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        static const char start[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
        fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd[i] < 0 || connect(fd[i], (struct sockaddr *)&a, sizeof a) ||
            send(fd[i], start, sizeof start - 1, MSG_NOSIGNAL) < 0)
            return -1;
    }
    return 0;
}

/* The front door on the metrics listener: framing, an encoded NUL, Host,
 * and connections holding unfinished requests. */
static void front_door(int port)
{
    static char ans[64 * 1024];
    dt_http_raw(AF_INET, port, "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n"
                "Connection: close\r\n\r\n", ans, sizeof ans);
    TAP_CHECK(status_code(ans) == 400 && count_of(ans, "HTTP/1.") == 1 && strstr(ans, "Content-Length headers"),
              "two Content-Lengths: 400, one status line: %s", body_of(ans));
    dt_http_raw(AF_INET, port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n\r\n"
                "reload", ans, sizeof ans);
    TAP_CHECK(status_code(ans) == 413 && count_of(ans, "HTTP/1.") == 1,
              "Content-Length 2^64: 413 once (%d status lines): %s", count_of(ans, "HTTP/1."), body_of(ans));
    dt_http_raw(AF_INET, port, "GET /metrics%00.txt HTTP/1.0\r\n\r\n", ans, sizeof ans);
    TAP_CHECK(status_code(ans) == 404 && strstr(body_of(ans), "encoded NUL"), "GET /metrics%%00.txt: 404 %s",
              body_of(ans));
    dt_http_raw(AF_INET, port, "GET /status HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n", ans,
                sizeof ans);
    TAP_CHECK(status_code(ans) == 200, "the metrics listener answers any Host (scrapers name it as they like): %d",
              status_code(ans));

    enum { SLOW = 10 };
    int fd[SLOW], code[SLOW] = {0};
    double start = dt_now(), closed[SLOW] = {0};
    if (!TAP_CHECK(open_slow(port, fd, SLOW) == 0, "%d connections holding an unfinished request", SLOW))
        return;
    dt_sleep(0.5);
    double t0 = dt_now();
    int r = dt_http_raw(AF_INET, port, "GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", ans,
                        sizeof ans);
    TAP_CHECK(r > 0 && status_code(ans) == 200, "... GET /status from the same address meanwhile: %d in %.2f s",
              status_code(ans), dt_now() - t0);
    char got[SLOW][512];
    size_t off[SLOW] = {0};
    int open = SLOW;
    while (open && dt_now() < start + 30) {
        struct pollfd p[SLOW];
        for (int i = 0; i < SLOW; i++)
            p[i] = (struct pollfd){closed[i] ? -1 : fd[i], POLLIN, 0};
        if (poll(p, SLOW, 500) <= 0)
            continue;
        for (int i = 0; i < SLOW; i++) {
            if (!p[i].revents)
                continue;
            ssize_t k = recv(fd[i], got[i] + off[i], sizeof got[i] - 1 - off[i], 0);
            if (k > 0) {
                off[i] += (size_t)k;
                got[i][off[i]] = '\0';
                continue;
            }
            closed[i] = dt_now() - start;
            got[i][off[i]] = '\0';
            code[i] = status_code(got[i]);
            open--;
        }
    }
    int n408 = 0, n503 = 0, late = 0;
    for (int i = 0; i < SLOW; i++) {
        n408 += code[i] == 408;
        n503 += code[i] == 503 && strstr(got[i], "Retry-After: 1\r\n");
        late += !closed[i] || closed[i] > PC_HTTP_REQUEST_S + 10;
        close(fd[i]);
    }
    TAP_CHECK(!late && n408 + n503 == SLOW && n408 && n503, "... all closed by the server within %d s: %d with 408, "
              "%d with 503 and Retry-After (to make room)", PC_HTTP_REQUEST_S + 10, n408, n503);
}

/* Runs cmd with the file on stdin; 0 when it exits 0; its output in out. */
static int run_check(const char *cmd, const char *file, char *out, size_t n)
{
    char full[1024];
    snprintf(full, sizeof full, "%s < '%s' 2>&1", cmd, file);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t k = fread(out, 1, n - 1, p);
    out[k] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void scrape(void)
{
    int port = free_port(AF_INET);
    char listen[64], sock[300];
    snprintf(listen, sizeof listen, "daemon.metrics_listen=127.0.0.1:%d", port);
    snprintf(sock, sizeof sock, "daemon.control=%s/ctl.sock", dir);
    char *args[] = {(char *)exe, "--source", "fake", "--output", "null", "--stats-interval", "0.5",
                    "-s", "debayer.backend=cpu", "-s", listen, "-s", sock, NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "http", args, NULL) == 0, "panocap started with %s", listen))
        return;
    static char ans[512 * 1024];
    int code = -1;
    for (double end = dt_now() + 60; dt_now() < end && !dt_exited(&ch); dt_sleep(0.2)) {
        if (dt_http_raw(AF_INET, port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", ans,
                     sizeof ans) > 0 && (code = status_code(ans)) == 200)
            break;
    }
    TAP_CHECK(code == 200 && !strcmp(body_of(ans), "ok\n"), "GET /healthz: 200 ok while frame sets flow (%d)",
              code);

    dt_http_raw(AF_INET, port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", ans, sizeof ans);
    const char *body = body_of(ans);
    TAP_CHECK(status_code(ans) == 200 && strstr(ans, "text/plain; version=0.0.4") &&
                  strstr(body, "panocap_frames_in_total ") && strstr(body, "panocap_build_info{version=\"") &&
                  !strstr(body, "NaN"),
              "GET /metrics: 200, Prometheus text with panocap_build_info, no NaN (%zu bytes)", strlen(body));
    char file[400], out[8192];
    snprintf(file, sizeof file, "%s/metrics.txt", dir);
    dt_write_file(file, body);
    if (system("command -v promtool >/dev/null 2>&1") == 0) {
        int r = run_check("promtool check metrics", file, out, sizeof out);
        TAP_CHECK(r == 0, "promtool check metrics: exit %d %s", r, out);
    } else {
        tap_skip("promtool not installed (Debian package prometheus)");
    }
    /* Debian's python3 (a python3 earlier on PATH may lack the package) */
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char probe[128];
    snprintf(probe, sizeof probe, "%s -c 'import prometheus_client' >/dev/null 2>&1", py);
    if (system(probe) == 0) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "%s -c 'import sys; from prometheus_client.parser import "
                 "text_string_to_metric_families as p; fs = list(p(sys.stdin.read())); "
                 "n = sum(len(f.samples) for f in fs); print(len(fs), \"families\", n, \"samples\"); "
                 "sys.exit(0 if n > 20 else 1)'", py);
        int r = run_check(cmd, file, out, sizeof out);
        out[strcspn(out, "\n")] = '\0';
        TAP_CHECK(r == 0, "the Python Prometheus parser reads it: %s", out);
    } else {
        tap_skip("python3-prometheus-client not installed");
    }

    dt_http_raw(AF_INET, port, "GET /status HTTP/1.0\r\n\r\n", ans, sizeof ans);
    TAP_CHECK(status_code(ans) == 200 && strstr(body_of(ans), "fps"), "GET /status: the status line: %.60s",
              body_of(ans));
    dt_http_raw(AF_INET, port, "HEAD /metrics HTTP/1.0\r\n\r\n", ans, sizeof ans);
    TAP_CHECK(status_code(ans) == 200 && body_of(ans)[0] == '\0', "HEAD /metrics: 200, no body");
    dt_http_raw(AF_INET, port, "GET /nope HTTP/1.0\r\n\r\n", ans, sizeof ans);
    TAP_CHECK(status_code(ans) == 404, "GET /nope: 404");
    dt_http_raw(AF_INET, port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nConnection: close\r\n\r\nreload",
             ans, sizeof ans);
    TAP_CHECK(status_code(ans) == 405 && strstr(ans, "Allow: GET, HEAD\r\n"),
              "POST /metrics: 405 with Allow: GET, HEAD (%.40s)", ans);
    dt_http_raw(AF_INET, port, "DELETE / HTTP/1.0\r\n\r\n", ans, sizeof ans);
    TAP_CHECK(status_code(ans) == 405, "DELETE: 405");
    int n = dt_http_raw(AF_INET, port, "reload\nstatus\n", ans, sizeof ans);
    TAP_CHECK(n >= 0 && strncmp(ans, "OK", 2) != 0 && !strstr(ans, "OK reload") &&
                  !dt_contains(ch.err, "reload requested"),
              "a control command over TCP is not run (answer: %.30s)", n > 0 ? ans : "(closed)");

    front_door(port);

    kill(ch.pid, SIGTERM);
    int rc = dt_wait(&ch, 30);
    TAP_CHECK(rc == 0, "SIGTERM: exit %d", rc);
    TAP_CHECK(dt_http_raw(AF_INET, port, "GET /metrics HTTP/1.0\r\n\r\n", ans, sizeof ans) < 0,
              "after the exit the port is closed");
    if (rc != 0)
        dt_diag_file("stderr", ch.err, 3000);
}

/* IPv6; /healthz before and after the first frame set. */
static void ipv6(void)
{
    int port = free_port(AF_INET6);
    if (port < 0) {
        tap_skip("no IPv6 loopback here");
        return;
    }
    char listen[64];
    snprintf(listen, sizeof listen, "daemon.metrics_listen=[::1]:%d", port);
    char *args[] = {(char *)exe, "--source", "fake", "--output", "null", "--control", "",
                    "-s", "debayer.backend=cpu", "-s", listen, NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "http6", args, NULL) == 0, "panocap started with %s", listen))
        return;
    static char ans[256 * 1024];
    int seen503 = 0, code = -1;
    for (double end = dt_now() + 60; dt_now() < end && !dt_exited(&ch); dt_sleep(0.05)) {
        if (dt_http_raw(AF_INET6, port, "GET /healthz HTTP/1.0\r\n\r\n", ans, sizeof ans) <= 0)
            continue;
        code = status_code(ans);
        if (code == 503 && strstr(body_of(ans), "unhealthy: "))
            seen503 = 1;
        if (code == 200)
            break;
    }
    TAP_CHECK(code == 200, "[::1]: /healthz 200 once frame sets flow");
    if (seen503)
        TAP_CHECK(1, "[::1]: /healthz said 503 \"unhealthy: ...\" before the first frame set");
    else
        tap_skip("the first frame set came before the first /healthz poll");
    dt_http_raw(AF_INET6, port, "GET /metrics HTTP/1.0\r\n\r\n", ans, sizeof ans);
    TAP_CHECK(status_code(ans) == 200 && strstr(body_of(ans), "panocap_fps"), "[::1]: GET /metrics 200");
    kill(ch.pid, SIGTERM);
    TAP_CHECK(dt_wait(&ch, 30) == 0, "[::1]: SIGTERM: clean exit");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_http PANOCAP");
    exe = argv[1];
    dt_guard_children();
    if (!dt_tmpdir(dir, sizeof dir, "e2e-http"))
        return tap_skip_all("mkdtemp failed");
    scrape();
    ipv6();
    dt_rmtree(dir);
    return tap_done();
}
