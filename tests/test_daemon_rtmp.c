/* test_daemon_rtmp.c - end to end: an RTMP output to a local listener.
 *
 * The test re-executes itself in a private network namespace (`unshare
 * -rn`, capture/simulator.h; skips with the reason where that is not
 * allowed). An `ffmpeg -listen 1` RTMP server on 127.0.0.1 takes the
 * stream and writes it to MPEG-TS; panocap runs with fake cameras (CPU
 * backend, libx264, H.264) to that RTMP URL and to a recording:
 *   - the listener's file decodes with frames, H.264 at the picture's size;
 *   - the listener is killed: the output fails (errors counted), the
 *     recording keeps being written; a new listener on the same port: the
 *     output reconnects (its reconnect count, waited for with a generous
 *     bound) and the second file decodes too;
 *   - the stream key is in none of: the log, the summary, the control
 *     socket's status and metrics, the HTTP metrics and /api/status (the
 *     page's data); the masked URL (rtmp://.../live/ then ****) is.
 */
#include "daemon_testutil.h"
#include "simulator.h"

#define KEY "s3cr3t-StreamKey-42"
#define RTMP_PORT 19350
#define HTTP_PORT 18080
#define WAIT_S 120 /* generous: a busy 2-core machine */

/* The value of `name{output="o",...} v`, -1 when absent. */
static double metric(const char *text, const char *name, int o)
{
    char key[160];
    snprintf(key, sizeof key, "\n%s{output=\"%d\"", name, o);
    const char *p = strstr(text, key);
    if (!p || !(p = strchr(p, '}')))
        return -1;
    return strtod(p + 1, NULL);
}

/* The number after "key": in the JSON object of /api/status's outputs
 * whose "index" is o; -1 when absent. */
static double status_field(const char *json, int o, const char *key)
{
    char idx[40], k[80];
    snprintf(idx, sizeof idx, "\"index\":%d,", o);
    const char *p = strstr(json, "\"outputs\":[");
    p = p ? strstr(p, idx) : NULL;
    snprintf(k, sizeof k, "\"%s\":", key);
    if (!p || !(p = strstr(p, k)))
        return -1;
    return strtod(p + strlen(k), NULL);
}

static int http_get(const char *path, char *buf, size_t n)
{
    char req[200];
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\n\r\n", path);
    int r = dt_http_raw(AF_INET, HTTP_PORT, req, buf, n);
    if (r < 0)
        buf[0] = '\0';
    return r;
}

static int start_listener(dt_child *c, const char *dir, const char *name, const char *out)
{
    char *args[] = {"/usr/bin/ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "warning", "-listen", "1",
                    "-i", "rtmp://127.0.0.1:19350/live/" KEY, "-c", "copy", "-f", "mpegts", "-y", (char *)out,
                    NULL};
    return dt_spawn(c, dir, name, args, NULL);
}

/* Waits until the file at path holds something (the listener got the
 * stream's first packets). */
static int wait_grows(const char *path, long long min, double timeout_s, dt_child *c)
{
    double end = dt_now() + timeout_s;
    while (dt_now() < end && !dt_exited(c)) {
        if (dt_file_size(path) >= min)
            return 1;
        dt_sleep(0.1);
    }
    return dt_file_size(path) >= min;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_rtmp PANOCAP");
    char err[512];
    if (access("/usr/bin/ffmpeg", X_OK) != 0)
        return tap_skip_all("no /usr/bin/ffmpeg for the RTMP listener");
    if (pc_netns_enter(argc, argv, 1, err, sizeof err) != 0)
        return tap_skip_all(err);
    dt_guard_children();
    char dir[256];
    if (!dt_tmpdir(dir, sizeof dir, "rtmp"))
        return tap_skip_all("mkdtemp failed");
    char out1[300], out2[300], rec[300], sock[300];
    snprintf(out1, sizeof out1, "%s/got1.ts", dir);
    snprintf(out2, sizeof out2, "%s/got2.ts", dir);
    snprintf(rec, sizeof rec, "%s/rec.ts", dir);
    snprintf(sock, sizeof sock, "%s/ctl.sock", dir);

    dt_child lis = {0}, lis2 = {0}, ch = {0};
    if (!TAP_CHECK(start_listener(&lis, dir, "listener1", out1) == 0, "ffmpeg -listen 1 on rtmp://127.0.0.1:%d",
                   RTMP_PORT))
        goto out;
    dt_sleep(0.5); /* its socket: a connect before it listens is only retried */
    char *args[] = {argv[1], "--source", "fake", "-n", "2", "-s", "capture.width=320", "-s",
                    "capture.height=240", "-s", "capture.fps=25", "-s", "encode.codec=h264", "-s", "encode.gop=25",
                    "--backend", "cpu", "--algo", "bilinear",
                    "-o", "rtmp://127.0.0.1:19350/live/" KEY, "-o", rec, "--control", sock,
                    "-s", "daemon.http_listen=127.0.0.1:18080", "--stats-interval", "0", NULL};
    if (!TAP_CHECK(dt_spawn(&ch, dir, "panocap", args, NULL) == 0,
                   "panocap started: output 0 rtmp://127.0.0.1:%d/live/KEY, output 1 a recording", RTMP_PORT))
        goto out;

    /* 1. the stream reaches the listener */
    int got = wait_grows(out1, 64 * 1024, WAIT_S, &ch);
    TAP_CHECK(got, "the listener receives the stream: %lld bytes in %s", dt_file_size(out1), out1);
    char ans[1 << 17], st[1 << 17];
    double w0 = -1, e0 = -1, r0 = -1;
    if (dt_control(sock, "metrics", ans, sizeof ans, 5) == 0)
        w0 = metric(ans, "panocap_output_packets_written_total", 0);
    TAP_CHECK(w0 > 0, "metrics: output 0 packets written %.0f", w0);

    /* 2. the listener goes: the output fails, the recording goes on */
    kill(lis.pid, SIGKILL);
    dt_wait(&lis, 10);
    double end = dt_now() + WAIT_S;
    while (dt_now() < end && !dt_exited(&ch)) {
        if (dt_control(sock, "metrics", ans, sizeof ans, 5) == 0 &&
            (e0 = metric(ans, "panocap_output_errors_total", 0)) >= 1)
            break;
        dt_sleep(0.2);
    }
    double rec_at_fail = metric(ans, "panocap_output_packets_written_total", 1);
    TAP_CHECK(e0 >= 1, "listener killed: output 0 fails (errors_total %.0f)", e0);
    /* the recording keeps going while the RTMP output is down */
    double rec_later = -1;
    end = dt_now() + WAIT_S;
    while (dt_now() < end && !dt_exited(&ch)) {
        if (dt_control(sock, "metrics", ans, sizeof ans, 5) == 0 &&
            (rec_later = metric(ans, "panocap_output_packets_written_total", 1)) >= rec_at_fail + 25)
            break;
        dt_sleep(0.2);
    }
    TAP_CHECK(rec_at_fail > 0 && rec_later >= rec_at_fail + 25,
              "while output 0 is down the recording goes on: %.0f -> %.0f packets", rec_at_fail, rec_later);

    /* 3. a new listener: the output reconnects */
    if (!TAP_CHECK(start_listener(&lis2, dir, "listener2", out2) == 0, "a new listener on the same port"))
        goto stop;
    double t_listen = dt_now();
    end = dt_now() + WAIT_S;
    while (dt_now() < end && !dt_exited(&ch)) {
        if (http_get("/api/status", st, sizeof st) > 0 && (r0 = status_field(st, 0, "reconnects")) >= 1)
            break;
        dt_sleep(0.1);
    }
    double took = dt_now() - t_listen;
    if (!TAP_CHECK(r0 >= 1, "output 0 reconnects (reconnects %.0f, %.1f s after the listener came back; the "
              "backoff is at most 5 s)", r0, took))
        tap_diag("/api/status: %.1500s", st);
    got = wait_grows(out2, 64 * 1024, WAIT_S, &ch);
    TAP_CHECK(got, "the new listener receives the stream: %lld bytes", dt_file_size(out2));

    /* 4. the key is never shown */
    http_get("/api/status", st, sizeof st);
    TAP_CHECK(st[0] && !strstr(st, KEY) && strstr(st, "rtmp://127.0.0.1:19350/live/****"),
              "/api/status (the page's data) names output 0 rtmp://127.0.0.1:19350/live/**** and not the key");
    http_get("/metrics", ans, sizeof ans);
    TAP_CHECK(ans[0] && !strstr(ans, KEY) && strstr(ans, "url=\"rtmp://127.0.0.1:19350/live/****\""),
              "HTTP /metrics: url label masked, no key");
    int c1 = dt_control(sock, "metrics", ans, sizeof ans, 5);
    int c2 = dt_control(sock, "status", st, sizeof st, 5);
    TAP_CHECK(c1 == 0 && c2 == 0 && !strstr(ans, KEY) && !strstr(st, KEY),
              "control socket metrics and status: no key");

stop:
    kill(ch.pid, SIGTERM);
    int rc = dt_wait(&ch, 60);
    TAP_CHECK(rc == 0, "panocap exits 0 after SIGTERM (%d)", rc);
    if (rc != 0)
        dt_diag_file("panocap stderr", ch.err, 3000);
    if (lis2.pid > 0) {
        kill(lis2.pid, SIGTERM);
        dt_wait(&lis2, 20);
    }
    char *log = dt_slurp(ch.err), *sum = dt_slurp(ch.out);
    TAP_CHECK(log && !strstr(log, KEY) && strstr(log, "live/****"),
              "the log names output 0 by its masked URL and never shows the key");
    TAP_CHECK(sum && !strstr(sum, KEY) && strstr(sum, "live/****"), "the exit summary: masked URL, no key");
    TAP_CHECK(sum && strstr(sum, "frame-set skew: mean") && strstr(sum, "0 over capture.max_skew 20.000 ms"),
              "the exit summary has the frame-set skew line (2 fake cameras in step: none over the limit)");
    if (log && strstr(log, KEY))
        dt_diag_file("panocap stderr", ch.err, 4000);
    free(log);
    free(sum);

    dt_decoded d1, d2;
    int k1 = dt_decode(out1, NULL, NULL, &d1);
    TAP_CHECK(k1 == 0 && d1.frames >= 25 && d1.width == 320 && d1.height == 480,
              "the first listener's file decodes: %d frames %dx%d (%d errors at the cut)", d1.frames, d1.width,
              d1.height, d1.errors);
    int k2 = dt_decode(out2, NULL, NULL, &d2);
    TAP_CHECK(k2 == 0 && d2.frames >= 25 && d2.errors == 0 && d2.width == 320 && d2.height == 480,
              "after the reconnect the second file decodes: %d frames %dx%d, %d errors", d2.frames, d2.width,
              d2.height, d2.errors);
out:
    dt_rmtree(dir);
    return tap_done();
}
