/* test_daemon_skew.c - end to end: frame-set skew in the daemon's reports.
 * panocap with 3 fake cameras (CPU backend, output null), camera 1 made
 * 6 ms late by the test hook PANOCAP_TEST_FAKE_DELAY=1:6 and
 * capture.max_skew = 3 ms: the metrics' histogram counts the sets, camera
 * 1's offset gauge is about +6 ms (the others at the median), sets over
 * the limit are counted, the log has one warning naming camera 1 (rate
 * limited: not one per set), and the exit summary has the skew line.
 * Waits are for events with generous bounds (no rate is asserted). */
#include "daemon_testutil.h"

/* `name{camera="c",...} v` (c >= 0) or `name v` (c < 0); -1 when absent. */
static double metric(const char *text, const char *name, int c)
{
    char key[160];
    if (c < 0)
        snprintf(key, sizeof key, "\n%s ", name);
    else
        snprintf(key, sizeof key, "\n%s{camera=\"%d\"", name, c);
    const char *p = strstr(text, key);
    if (!p)
        return -1;
    p = c < 0 ? p + strlen(key) : strchr(p, '}');
    return p ? strtod(c < 0 ? p : p + 1, NULL) : -1;
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)); p++)
        n++;
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_skew PANOCAP");
    dt_guard_children();
    char dir[256], sock[300];
    if (!dt_tmpdir(dir, sizeof dir, "skew"))
        return tap_skip_all("mkdtemp failed");
    snprintf(sock, sizeof sock, "%s/ctl.sock", dir);
    char *args[] = {argv[1], "--source", "fake", "-n", "3", "-s", "capture.width=256", "-s", "capture.height=128",
                    "-s", "capture.fps=25", "-s", "capture.max_skew=3", "--backend", "cpu", "--algo", "bilinear",
                    "-o", "null", "--control", sock, "--stats-interval", "0", NULL};
    char *env[] = {"PANOCAP_TEST_FAKE_DELAY=1:6", NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "panocap", args, env) == 0,
                   "panocap started: 3 fake cameras, camera 1 6 ms late, capture.max_skew 3 ms"))
        goto out;
    char ans[1 << 17];
    double count = -1, over = -1, off[3] = {-1, -1, -1}, lim = -1;
    double end = dt_now() + 120;
    while (dt_now() < end && !dt_exited(&ch)) {
        if (dt_control(sock, "metrics", ans, sizeof ans, 5) == 0 &&
            (count = metric(ans, "panocap_frameset_skew_seconds_count", -1)) >= 50)
            break;
        dt_sleep(0.2);
    }
    over = metric(ans, "panocap_frameset_skew_over_total", -1);
    lim = metric(ans, "panocap_frameset_skew_limit_seconds", -1);
    for (int c = 0; c < 3; c++)
        off[c] = metric(ans, "panocap_camera_skew_offset_seconds", c);
    TAP_CHECK(count >= 50 && strstr(ans, "panocap_frameset_skew_seconds_bucket{le=\"+Inf\"}"),
              "metrics: panocap_frameset_skew_seconds histogram, %.0f sets", count);
    TAP_CHECK(lim == 0.003 && over >= 1 && over <= count, "metrics: limit %.3f s, %.0f sets over it", lim, over);
    TAP_CHECK(off[1] > 0.004 && off[1] < 0.02 && fabs(off[0]) < 0.002 && fabs(off[2]) < 0.002,
              "metrics: camera 1's offset from the median %+.4f s; cameras 0 and 2 %+.4f %+.4f s", off[1], off[0],
              off[2]);
    kill(ch.pid, SIGTERM);
    int rc = dt_wait(&ch, 60);
    TAP_CHECK(rc == 0, "exit %d after SIGTERM", rc);
    char *log = dt_slurp(ch.err), *sum = dt_slurp(ch.out);
    int warnings = log ? count_of(log, "over capture.max_skew 3.00 ms") : 0;
    TAP_CHECK(warnings >= 1 && warnings * 25 < over + 25 && strstr(log, "camera 1") && strstr(log, "PTP"),
              "log: %d skew warning(s) for %.0f sets over (rate-limited), naming camera 1", warnings, over);
    TAP_CHECK(sum && strstr(sum, "frame-set skew: mean") && strstr(sum, "over capture.max_skew 3.000 ms"),
              "summary: the frame-set skew line");
    if (!sum || !strstr(sum, "frame-set skew"))
        dt_diag_file("panocap stdout", ch.out, 3000);
    free(log);
    free(sum);
out:
    dt_rmtree(dir);
    return tap_done();
}
