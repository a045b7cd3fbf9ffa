/* test_daemon_outputs.c - end to end: one output failing must not hold back
 * the others' figures (issue: during a disk-full fault frames_encoded_total
 * and the healthy output's packets_written_total stopped for 25 s while that
 * output received every frame).
 *
 * The test enters a private user + mount namespace (skips with the reason
 * where that is not allowed) and mounts a 64 KiB tmpfs: a recording there
 * fails at its first keyframe and on every retry. A second recording on the
 * normal disk is healthy. panocap runs with fake cameras (2 x 640x240, CPU
 * backend, libx264); while it runs, its `metrics` over the control socket
 * must show the encoded count keeping up with the frame sets taken in and
 * the healthy output's written count keeping up with the encoded count
 * (both bounded by the pipeline's depth, not by a ring of 128 frames); after
 * SIGTERM the summary and a decode of the healthy file agree.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <sys/mount.h>

#include "daemon_testutil.h"

/* The process's own user + mount namespace, uid/gid mapped to root inside. */
static int enter_mount_ns(char *why, size_t n)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        snprintf(why, n, "unshare(CLONE_NEWUSER | CLONE_NEWNS): %s", strerror(errno));
        return -1;
    }
    char map[64];
    snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
    if (dt_write_file("/proc/self/setgroups", "deny") || dt_write_file("/proc/self/uid_map", map)) {
        snprintf(why, n, "cannot write the uid map");
        return -1;
    }
    snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
    if (dt_write_file("/proc/self/gid_map", map)) {
        snprintf(why, n, "cannot write the gid map");
        return -1;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        snprintf(why, n, "mount --make-rprivate /: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* The value of `name{...output="o"...}` (o >= 0) or of `name ` (o < 0). */
static double metric(const char *text, const char *name, int o)
{
    char key[160];
    if (o < 0)
        snprintf(key, sizeof key, "\n%s ", name);
    else
        snprintf(key, sizeof key, "\n%s{output=\"%d\"", name, o);
    const char *p = strstr(text, key);
    if (!p)
        return -1;
    p = o < 0 ? p + strlen(key) : strchr(p, '}');
    return p ? strtod(o < 0 ? p : p + 1, NULL) : -1;
}

/* Structural bounds (frames, not time): a set counted in and not yet encoded
 * is in the stage thread, a picture slot (in_flight <= 8) or the encoder; a
 * packet encoded and not yet written waits in the healthy output's queue,
 * which a file on the normal disk empties as fast as packets come. The
 * fault this test reproduces showed gaps above 128. */
#define MAX_ENCODE_GAP 16
#define MAX_WRITE_GAP 64
#define SAMPLE_AFTER 300 /* frame sets in: well past the 128-entry ring */

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_outputs PANOCAP");
    char why[256], msg[400];
    if (enter_mount_ns(why, sizeof why)) {
        snprintf(msg, sizeof msg, "no private mount namespace for a small tmpfs: %s", why);
        return tap_skip_all(msg);
    }
    dt_guard_children();
    char dir[256];
    if (!dt_tmpdir(dir, sizeof dir, "outputs"))
        return tap_skip_all("mkdtemp failed");
    char full[300], bad[320], good[300], sock[300];
    snprintf(full, sizeof full, "%s/full", dir);
    snprintf(bad, sizeof bad, "%s/rec.ts", full);
    snprintf(good, sizeof good, "%s/good.ts", dir);
    snprintf(sock, sizeof sock, "%s/ctl.sock", dir);
    if (mkdir(full, 0755) != 0 || mount("tmpfs", full, "tmpfs", 0, "size=64k") != 0) {
        snprintf(msg, sizeof msg, "cannot mount a 64 KiB tmpfs on %s: %s", full, strerror(errno));
        dt_rmtree(dir);
        return tap_skip_all(msg);
    }

    char *args[] = {argv[1], "--source", "fake", "-n", "2", "-s", "capture.width=640", "-s",
                    "capture.height=240", "--backend", "cpu", "--algo", "bilinear", "-o", bad, "-o", good,
                    "--control", sock, "--stats-interval", "0", NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "panocap", args, NULL) == 0,
                   "panocap started: output 0 on a full 64 KiB tmpfs, output 1 on the disk"))
        goto out;

    /* metrics while it runs, once SAMPLE_AFTER sets are in */
    char ans[65536];
    double in = -1, enc = -1, w0 = -1, w1 = -1;
    double end = dt_now() + 120;
    while (dt_now() < end && !dt_exited(&ch)) {
        if (dt_control(sock, "metrics", ans, sizeof ans, 3) == 0) {
            in = metric(ans, "panocap_frames_in_total", -1);
            if (in >= SAMPLE_AFTER) {
                enc = metric(ans, "panocap_frames_encoded_total", -1);
                w0 = metric(ans, "panocap_output_packets_written_total", 0);
                w1 = metric(ans, "panocap_output_packets_written_total", 1);
                break;
            }
        }
        dt_sleep(0.1);
    }
    TAP_CHECK(in >= SAMPLE_AFTER, "control `metrics` while running: %.0f frame sets in", in);
    TAP_CHECK(dt_contains(ch.err, "No space left on device"), "output 0 failed: no space left on device");
    int sampled = in >= SAMPLE_AFTER && enc >= 0 && w1 >= 0;
    TAP_CHECK(sampled && enc >= in - MAX_ENCODE_GAP,
              "while output 0 fails, frames_encoded_total keeps up: %.0f encoded of %.0f in (at most %d "
              "behind)", enc, in, MAX_ENCODE_GAP);
    TAP_CHECK(sampled && w1 >= enc - MAX_WRITE_GAP && w1 >= in - MAX_ENCODE_GAP - MAX_WRITE_GAP && w1 <= enc,
              "while output 0 fails, the healthy output's packets_written_total keeps up: %.0f written of "
              "%.0f encoded, %.0f in (at most %d behind encoded, %d behind in)", w1, enc, in, MAX_WRITE_GAP,
              MAX_ENCODE_GAP + MAX_WRITE_GAP);
    TAP_CHECK(sampled && w0 >= 0 && w0 < enc / 2, "the failing output's packets_written_total: %.0f", w0);

    kill(ch.pid, SIGTERM);
    int rc = dt_wait(&ch, 60);
    TAP_CHECK(rc == 0, "exit %d after SIGTERM", rc);
    if (rc != 0)
        dt_diag_file("panocap stderr", ch.err, 3000);
    char *sum = dt_slurp(ch.out);
    long s_in = -1, s_enc = -1;
    dt_parse_summary(sum, &s_in, &s_enc, NULL);
    char want[400];
    snprintf(want, sizeof want, "output 1 %s: %ld written, 0 dropped", good, s_enc);
    TAP_CHECK(s_enc > 0 && s_enc == s_in && sum && strstr(sum, want),
              "summary: %ld in, %ld encoded, \"%s\"", s_in, s_enc, want);
    if (!sum || !strstr(sum, want))
        tap_diag("stdout: %s", sum ? sum : "");
    free(sum);
    dt_decoded d;
    rc = dt_decode(good, NULL, NULL, &d);
    TAP_CHECK(rc == 0 && d.errors == 0 && d.frames == s_enc && d.width == 640 && d.height == 480,
              "the healthy recording decodes: %d frames %dx%d, %d errors (summary: %ld encoded)", d.frames,
              d.width, d.height, d.errors, s_enc);
out:
    umount2(full, MNT_DETACH);
    dt_rmtree(dir);
    dir[0] = '\0';
    return tap_done();
}
