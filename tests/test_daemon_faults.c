/* test_daemon_faults.c - the real panocap daemon (2 fake cameras 320x240,
 * CPU backend, libx264 at 1 Mbit/s) with outputs that fail, each fault
 * reproduced for real:
 *  1. counted exactly: a recording on a full tmpfs, a segmented recording
 *     whose file system turns read-only mid-run (the permission fault root
 *     cannot override), UDP to an unreachable address, an SRT caller whose
 *     peer never answers, next to a good recording. The summary's per-output
 *     "dropped" and "errors" (the same counters as the Prometheus
 *     panocap_output_packets_dropped_total / panocap_output_errors_total)
 *     must be exact: an output that never wrote dropped every packet, and
 *     errors equal the failed opens/writes the debug log names.
 *  2. disk full, then space again: the recording says so once, other
 *     outputs go on, no empty -rN file is left per retry, and it resumes by
 *     itself soon after space returns (the delay is printed).
 *  3. retention: segments of 1 s with max_bytes = 1M, min_free = 16M (of a
 *     16 MiB tmpfs) and max_age = 5 s, each in turn: the oldest closed
 *     segments are deleted, each logged, the open one never.
 * The test re-executes itself under `unshare -rmn` (a private mount
 * namespace for the small tmpfs, a private network namespace with only lo)
 * and skips where that is not allowed. argv[1]: the panocap executable. */
#include "daemon_testutil.h"
#include "sanitizer.h"

#include <dirent.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

static const char *exe;
static char dir[256];

/* Lines of a log file that contain every one of the (up to 3) needles. */
static int count_lines(const char *path, const char *a, const char *b, const char *c)
{
    char *s = dt_slurp(path);
    int n = 0;
    for (char *line = s; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strstr(line, a) && (!b || strstr(line, b)) && (!c || strstr(line, c)))
            n++;
        line = nl ? nl + 1 : NULL;
    }
    free(s);
    return n;
}

/* "output N URL: W written, D dropped, E errors" of the summary. */
static int out_summary(const char *sum, int o, long *w, long *d, long *e)
{
    char key[32];
    snprintf(key, sizeof key, "\noutput %d ", o);
    const char *p = sum ? strstr(sum, key) : NULL;
    p = p ? strstr(p, ": ") : NULL;
    return p && sscanf(p, ": %ld written, %ld dropped, %ld errors", w, d, e) == 3 ? 0 : -1;
}

static int mount_tmpfs(const char *path, const char *opts)
{
    mkdir(path, 0755);
    return mount("tmpfs", path, "tmpfs", 0, opts);
}

/* Fills the file system of path up, leaving about `leave` bytes. */
static void fill(const char *path, long leave)
{
    FILE *f = fopen(path, "w");
    static char block[4096];
    struct statvfs v;
    char d[512];
    snprintf(d, sizeof d, "%s", path);
    *strrchr(d, '/') = '\0';
    while (f && statvfs(d, &v) == 0 && (long)(v.f_bavail * v.f_frsize) > leave + 4096 &&
           fwrite(block, 1, sizeof block, f) == sizeof block)
        fflush(f);
    if (f)
        fclose(f);
}

static void write_conf(const char *path, const char *outputs, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "capture = { source = \"fake\"; cameras = 2; width = 320; height = 240; };\n"
             "encode = { encoder = \"libx264\"; bitrate = \"1M\"; gop = 25; };\n"
             "outputs = ( %s );\n"
             "daemon = { log_level = \"debug\"; control = \"\"; stats_interval = 0.5; %s };\n",
             outputs, extra ? extra : "");
    dt_write_file(path, text);
}

static void test_counted(void)
{
    char conf[300], full[300], ro[300];
    snprintf(conf, sizeof conf, "%s/count.conf", dir);
    snprintf(full, sizeof full, "%s/full", dir);
    snprintf(ro, sizeof ro, "%s/ro", dir);
    if (!TAP_CHECK(mount_tmpfs(full, "size=1m") == 0 && mount_tmpfs(ro, "size=8m") == 0,
                   "a 1 MiB tmpfs (disk full) and a tmpfs to turn read-only"))
        return;
    char filler[400];
    snprintf(filler, sizeof filler, "%s/filler", full);
    fill(filler, 64 << 10); /* 64 KiB left: full within the first second */
    write_conf(conf,
               "\"good.ts\", \"full/rec.ts\", \"udp://192.0.2.1:5000\", \"srt://127.0.0.1:9\", "
               "{ url = \"ro/seg.ts\"; segment = 1; }",
               NULL);
    char *args[] = {(char *)exe, "--config", conf, "--frames", "400", NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "count", args, NULL) == 0, "panocap with 5 outputs, 4 of them failing"))
        return;
    /* the read-only fault: the next segment cannot be opened */
    /* (a read-only bind mount over the folder: new files fail with EROFS,
     * even for root, while the segment already open is written on) */
    int seg = dt_wait_for_text(ch.err, "output 4: new segment", tu_bound(60), &ch) != 0;
    if (seg && (mount(ro, ro, NULL, MS_BIND, NULL) != 0 ||
                mount(NULL, ro, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0))
        tap_diag("read-only bind mount: %s", strerror(errno));
    int rc = dt_wait(&ch, tu_bound(120));
    char *sum = dt_slurp(ch.out);
    long in = -1, enc = -1;
    int parsed = dt_parse_summary(sum, &in, &enc, NULL) == 0;
    TAP_CHECK(rc == 0 && parsed && enc == 400, "exit %d, %ld frames encoded", rc, enc);
    if (rc != 0)
        dt_diag_file("panocap stderr", ch.err, 3000);
    static const char *const what[] = {"good recording", "disk full (1 MiB tmpfs)", "UDP to an unreachable address",
                                       "SRT peer never connected", "read-only file system mid-run"};
    for (int o = 0; o < 5; o++) {
        long w = -1, d = -1, e = -1;
        int ok = out_summary(sum, o, &w, &d, &e) == 0;
        char key[32];
        snprintf(key, sizeof key, "output %d '", o);
        int logged = count_lines(ch.err, key, "retrying in", NULL);
        tap_diag("%s: %ld written, %ld dropped, %ld errors; %d failures in the log", what[o], w, d, e, logged);
        if (o == 0)
            TAP_CHECK(ok && w == enc && d == 0 && e == 0, "%s: every packet written (%ld of %ld), none dropped, "
                      "no error", what[o], w, enc);
        else if (o == 2 || o == 3)
            TAP_CHECK(ok && w == 0 && d == enc && e == logged && e >= 1,
                      "%s: counted exactly: all %ld packets dropped (of %ld), %ld errors = the %d failures "
                      "logged", what[o], d, enc, e, logged);
        else
            TAP_CHECK(ok && d >= 1 && d <= enc && e == logged && e >= 1,
                      "%s: counted exactly: %ld packets dropped, %ld errors = the %d failures logged", what[o], d,
                      e, logged);
    }
    free(sum);
    /* no empty recording per retry on the full disk */
    DIR *dd = opendir(full);
    int files = 0, empty = 0;
    struct dirent *de;
    while (dd && (de = readdir(dd))) {
        if (de->d_name[0] == '.' || !strcmp(de->d_name, "filler"))
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", full, de->d_name);
        files++;
        empty += dt_file_size(p) == 0;
        tap_diag("full/%s: %lld bytes", de->d_name, dt_file_size(p));
    }
    if (dd)
        closedir(dd);
    TAP_CHECK(files == 1 && empty == 0, "full disk: %d recording file(s), %d empty: no new file per retry",
              files, empty);
    umount2(ro, MNT_DETACH);
    umount2(ro, MNT_DETACH);
    umount2(full, MNT_DETACH);
}

static void test_resume(void)
{
    char conf[300], full[300], filler[400];
    snprintf(conf, sizeof conf, "%s/resume.conf", dir);
    snprintf(full, sizeof full, "%s/full2", dir);
    snprintf(filler, sizeof filler, "%s/filler", full);
    if (!TAP_CHECK(mount_tmpfs(full, "size=2m") == 0, "a 2 MiB tmpfs"))
        return;
    fill(filler, 64 << 10);
    write_conf(conf, "\"good2.ts\", \"full2/rec.ts\"", NULL);
    char *args[] = {(char *)exe, "--config", conf, "--frames", "600", NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "resume", args, NULL) == 0, "panocap recording onto a nearly full disk"))
        return;
    int paused = dt_wait_for_text(ch.err, "recording paused", tu_bound(60), &ch) != 0;
    TAP_CHECK(paused, "disk full: the recording pauses (logged)");
    dt_sleep(2.0); /* several probe periods with the disk still full */
    double t_free = dt_now();
    unlink(filler);
    int resumed = dt_wait_for_text(ch.err, "output 1 'full2/rec-r1.ts' writing again", tu_bound(60), &ch) != 0;
    double resume_s = dt_now() - t_free;
    TAP_CHECK(resumed, "space back: writing resumes by itself after %.2f s (into full2/rec-r1.ts)", resume_s);
    int rc = dt_wait(&ch, tu_bound(120));
    char *sum = dt_slurp(ch.out);
    long in = -1, enc = -1, w0 = -1, d0 = -1, e0 = -1, w1 = -1, d1 = -1, e1 = -1;
    int parsed = dt_parse_summary(sum, &in, &enc, NULL) == 0 && out_summary(sum, 0, &w0, &d0, &e0) == 0 &&
                 out_summary(sum, 1, &w1, &d1, &e1) == 0;
    free(sum);
    TAP_CHECK(rc == 0 && parsed && w0 == enc && d0 == 0,
              "the other output goes on: %ld of %ld packets written, %ld dropped", w0, enc, d0);
    int err_lines = count_lines(ch.err, "<3>", "output 1 '", NULL);
    int pause_lines = count_lines(ch.err, "recording paused", NULL, NULL);
    TAP_CHECK(err_lines == 1 && pause_lines == 1, "said once: %d error line, %d pause line", err_lines,
              pause_lines);
    DIR *dd = opendir(full);
    int files = 0, empty = 0;
    struct dirent *de;
    while (dd && (de = readdir(dd))) {
        if (de->d_name[0] == '.')
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", full, de->d_name);
        files++;
        empty += dt_file_size(p) == 0;
    }
    if (dd)
        closedir(dd);
    char r1[400];
    snprintf(r1, sizeof r1, "%s/rec-r1.ts", full);
    dt_decoded d;
    int drc = dt_decode(r1, NULL, NULL, &d);
    TAP_CHECK(files == 2 && empty == 0 && drc == 0 && d.frames > 0 && d.errors == 0,
              "two files (rec.ts up to the fault, rec-r1.ts after it: %d frames decode), no empty one "
              "(%d files, %d empty)", d.frames, files, empty);
    tap_diag("disk full -> space back: resumed %.2f s after the space returned; %ld errors, %ld dropped", resume_s,
             e1, d1);
    umount2(full, MNT_DETACH);
}

/* One retention rule: 1 s segments on a 16 MiB tmpfs with `rule` set; every
 * deletion is logged with the rule's name, the open segment is never
 * deleted, and what is kept obeys the rule (checked by `kept_ok`). */
typedef int (*kept_check)(long long total, long long biggest, int present, time_t oldest, time_t now);

static int kept_max_bytes(long long total, long long biggest, int present, time_t oldest, time_t now)
{
    (void)present, (void)oldest, (void)now;
    return total <= 1000000 + 2 * biggest; /* plus the open one and the one closed last */
}
static int kept_min_free(long long total, long long biggest, int present, time_t oldest, time_t now)
{
    (void)present, (void)oldest, (void)now;
    return total <= 16 * 1048576LL - 16000000 + 2 * biggest; /* 16 MB stay free, but for those two */
}
static int kept_max_age(long long total, long long biggest, int present, time_t oldest, time_t now)
{
    (void)total, (void)biggest, (void)present;
    return now - oldest <= 5 + 3; /* closed segments older than 5 s are gone (a check every second) */
}

static void test_retention(const char *rule, const char *name, const char *how, kept_check kept_ok,
                           const char *what)
{
    char conf[300], seg[300], out[200];
    snprintf(conf, sizeof conf, "%s/ret.conf", dir);
    snprintf(seg, sizeof seg, "%s/seg", dir);
    if (!TAP_CHECK(mount_tmpfs(seg, "size=16m") == 0, "a tmpfs for segments (%s)", name))
        return;
    snprintf(out, sizeof out, "{ url = \"seg/pano.ts\"; segment = 1; %s; }", rule);
    write_conf(conf, out, NULL);
    char *args[] = {(char *)exe, "--config", conf, strchr(how, 's') ? "--duration" : "--frames",
                    (char *)how + (strchr(how, 's') ? 1 : 0), NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "ret", args, NULL) == 0, "panocap, 1 s segments, %s", rule))
        return;
    int rc = dt_wait(&ch, tu_bound(240));
    char tag[64];
    snprintf(tag, sizeof tag, "retention (%s): deleted", name);
    int opened = 1 + count_lines(ch.err, "output 0: new segment", NULL, NULL);
    int deleted = count_lines(ch.err, tag, NULL, NULL);
    DIR *dd = opendir(seg);
    int present = 0;
    long long total = 0, biggest = 0;
    time_t now = time(NULL), oldest = now, newest = 0;
    struct dirent *de;
    struct stat sb;
    while (dd && (de = readdir(dd))) {
        if (de->d_name[0] == '.')
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", seg, de->d_name);
        long long s = dt_file_size(p);
        present++;
        total += s;
        if (s > biggest)
            biggest = s;
        if (stat(p, &sb) == 0 && sb.st_mtime < oldest)
            oldest = sb.st_mtime;
        if (stat(p, &sb) == 0 && sb.st_mtime > newest)
            newest = sb.st_mtime;
    }
    if (dd)
        closedir(dd);
    /* "the end" is the last segment's last write, not the moment the test
     * saw the exit (draining and exiting take longer on a busy machine) */
    if (present)
        now = newest;
    TAP_CHECK(rc == 0 && deleted > 0 && opened == present + deleted,
              "retention (%s): %d segments written, %d deleted (each logged), %d kept", name, opened, deleted,
              present);
    TAP_CHECK(kept_ok(total, biggest, present, oldest, now), "retention (%s): kept %d segments, %lld bytes, the "
              "oldest written %ld s before the end (%s)", name, present, total, (long)(now - oldest), what);
    umount2(seg, MNT_DETACH);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_faults PANOCAP");
    if (!getenv("PC_FAULTS_NS")) {
        setenv("PC_FAULTS_NS", "1", 1);
        char *nargv[16] = {"unshare", "-rmn", "--"};
        int k = 3;
        for (int i = 0; i < argc && k < 15; i++)
            nargv[k++] = argv[i];
        nargv[k] = NULL;
        fflush(NULL);
        execvp("unshare", nargv);
        return tap_skip_all("cannot run unshare -rmn (user namespaces disabled?)");
    }
    if (system("ip link set lo up") != 0)
        tap_diag("ip link set lo up failed");
    exe = argv[1];
    dt_guard_children();
    if (!dt_tmpdir(dir, sizeof dir, "faults"))
        return tap_skip_all("mkdtemp failed");
    double t0 = dt_now();
    test_counted();
    double t1 = dt_now();
    test_resume();
    double t2 = dt_now();
    test_retention("max_bytes = \"1M\"", "max_bytes", "900", kept_max_bytes,
                   "max_bytes 1000000, plus the open one and the one closed last");
    test_retention("min_free = \"16M\"", "min_free", "600", kept_min_free,
                   "16 MB of the 16 MiB tmpfs stay free, but for the open one and the one closed last");
    test_retention("max_age = 5", "max_age", "s12", kept_max_age, "none older than 5 s, checked each second");
    tap_diag("timings: counted %.1f s, resume %.1f s, retention %.1f s", t1 - t0, t2 - t1, dt_now() - t2);
    dt_rmtree(dir);
    return tap_done();
}
