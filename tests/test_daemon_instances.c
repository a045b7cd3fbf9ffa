/* test_daemon_instances.c - several pipelines on one host, as the
 * panocap@.service template runs them:
 *   - the template differs from panocap.service only in its instance lines
 *     (same hardening), reads NAME.conf, gives each instance its own
 *     control socket, state, runtime and recording folders, and passes
 *     systemd-analyze verify as panocap@a.service (skipped without it);
 *   - two instances side by side (fake cameras, CPU backend), each with its
 *     own config (control socket, metrics port, CPUs: capture on one CPU and
 *     encode on another, swapped in the second, output file): both answer
 *     `status` on their own socket while running, their threads run on the
 *     CPUs they were given, both exit 0 on SIGTERM once each has encoded
 *     6 s of frames (an event, not a duration: a busy machine only takes
 *     longer) and every frame each encoded decodes;
 *   - the outputs' libavformat options reach the muxer through the daemon:
 *     b's HLS output with options "hls_time=1,hls_list_size=2" keeps a
 *     playlist of 2 segments (without them: every segment of the run).
 * argv: panocap binary, panocap.service, panocap@.service. */
#include "daemon_testutil.h"
#include "panocap_config.h"
#include "sanitizer.h"
#include "tap.h"

#include <dirent.h>
#include <sched.h>

static const char *exe;
static char dir[256];

static int has_line(const char *text, const char *line)
{
    size_t l = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p += l)
        if ((p == text || p[-1] == '\n') && (p[l] == '\n' || p[l] == '\0'))
            return 1;
    return 0;
}

static void template_unit(const char *unit_path, const char *tmpl_path)
{
    char *unit = dt_slurp(unit_path), *tmpl = dt_slurp(tmpl_path);
    if (!TAP_CHECK(unit && tmpl, "read %s and %s", unit_path, tmpl_path))
        goto out;
    static const char *const inst[] = {"StateDirectory=panocap/%i", "RuntimeDirectory=panocap/%i",
                                       "WorkingDirectory=/var/lib/panocap/%i", "ReadWritePaths=/var/lib/panocap/%i"};
    int missing = 0;
    for (size_t i = 0; i < sizeof inst / sizeof *inst; i++)
        missing += !has_line(tmpl, inst[i]);
    TAP_CHECK(missing == 0 && strstr(tmpl, "/%i.conf --control /run/panocap/%i/control.sock"),
              "template: NAME.conf, its own control socket, state, runtime and working folders");
    /* every directive line of the unit is in the template, except the
     * instance ones: the same hardening */
    int differ = 0;
    char *save = NULL, *copy = strdup(unit);
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (l[0] == '#' || !strchr(l, '='))
            continue;
        if (!has_line(tmpl, l) && strncmp(l, "Description=", 12) && strncmp(l, "ExecStart=", 10) &&
            strcmp(l, "StateDirectory=panocap") && strcmp(l, "RuntimeDirectory=panocap") &&
            strcmp(l, "WorkingDirectory=/var/lib/panocap") && strcmp(l, "ReadWritePaths=/var/lib/panocap")) {
            tap_diag("template lacks: %s", l);
            differ++;
        }
    }
    free(copy);
    TAP_CHECK(differ == 0, "template carries every other line of panocap.service (hardening included)");
    if (access("/usr/bin/systemd-analyze", X_OK) == 0) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "sed 's|^ExecStart=[^ ]*|ExecStart=%s|' '%s' > '%s/panocap@.service' && "
                 "systemd-analyze verify '%s/panocap@a.service' > '%s/verify.log' 2>&1",
                 exe, tmpl_path, dir, dir, dir);
        int rc = system(cmd);
        snprintf(cmd, sizeof cmd, "%s/verify.log", dir);
        char *log = dt_slurp(cmd);
        TAP_CHECK(rc == 0, "systemd-analyze verify panocap@a.service: clean%s%s", log && *log ? ": " : "",
                  log ? log : "");
        free(log);
    } else {
        tap_skip("systemd-analyze not installed");
    }
out:
    free(unit);
    free(tmpl);
}

/* The CPU list of every thread of pid whose name starts with prefix: 1
 * when all of them are exactly `cpus` (and there is at least one). */
static int threads_on(pid_t pid, const char *prefix, const char *cpus)
{
    char path[512], line[256];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    int seen = 0, bad = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char comm[64] = "", list[64] = "";
        snprintf(path, sizeof path, "/proc/%d/task/%s/comm", (int)pid, e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = '\0';
        if (f)
            fclose(f);
        if (strncmp(comm, prefix, strlen(prefix)))
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%s/status", (int)pid, e->d_name);
        f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "Cpus_allowed_list: %63s", list) == 1)
                break;
        if (f)
            fclose(f);
        seen++;
        bad += strcmp(list, cpus) != 0;
    }
    if (d)
        closedir(d);
    return seen > 0 && bad == 0;
}

typedef struct instance {
    char name[16], conf[400], sock[400], out[400], hls[400];
    int port;
    dt_child ch;
} instance;

static void write_instance(instance *in, const char *name, int port, const char *cap_cpus, const char *enc_cpus)
{
    snprintf(in->name, sizeof in->name, "%s", name);
    snprintf(in->conf, sizeof in->conf, "%s/%s.conf", dir, name);
    snprintf(in->sock, sizeof in->sock, "%s/%s.sock", dir, name);
    snprintf(in->out, sizeof in->out, "%s/%s/rec.ts", dir, name);
    snprintf(in->hls, sizeof in->hls, "%s/%s/hls/live.m3u8", dir, name);
    in->port = port;
    char text[2048], metrics[128] = "";
    if (PANOCAP_HAVE_HTTP)
        snprintf(metrics, sizeof metrics, " metrics_listen = \"127.0.0.1:%d\";", port);
    snprintf(text, sizeof text,
             "# instance %s, written by test_daemon_instances\n"
             "capture = { source = \"fake\"; cameras = 2; width = 640; height = 360; fps = 25.0; };\n"
             "debayer = { backend = \"cpu\"; cpu_threads = 1; };\n"
             "encode = { encoder = \"libx264\"; bitrate = \"2M\"; cpus = \"%s\"; };\n"
             "outputs = ( \"%s\", { url = \"%s\"; options = \"hls_time=1,hls_list_size=2\"; } );\n"
             "daemon = { control = \"%s\"; capture_cpus = \"%s\"; stats_interval = 0.5;%s };\n",
             name, enc_cpus, in->out, in->hls, in->sock, cap_cpus, metrics);
    dt_write_file(in->conf, text);
}

static void side_by_side(void)
{
    int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    const char *c0 = "0", *c1 = ncpu > 1 ? "1" : "0";
    instance a, b;
    write_instance(&a, "a", 19464 + (int)(getpid() % 500) * 2, c0, c1);
    write_instance(&b, "b", a.port + 1, c1, c0);
    char *aa[] = {(char *)exe, "--config", a.conf, NULL};
    char *ba[] = {(char *)exe, "--config", b.conf, NULL};
    int started = dt_spawn(&a.ch, dir, "a", aa, NULL) == 0 && dt_spawn(&b.ch, dir, "b", ba, NULL) == 0;
    if (!TAP_CHECK(started, "two instances started (a.conf, b.conf)"))
        return;
    char ans[4096];
    int sa = -1, sb = -1;
    for (double end = dt_now() + tu_bound(60); dt_now() < end && (sa != 0 || sb != 0); dt_sleep(0.2)) {
        if (sa != 0)
            sa = dt_control(a.sock, "status", ans, sizeof ans, 30) == 0 && dt_status_encoded(ans) > 0 ? 0 : -1;
        if (sb != 0)
            sb = dt_control(b.sock, "status", ans, sizeof ans, 30) == 0 && dt_status_encoded(ans) > 0 ? 0 : -1;
    }
    TAP_CHECK(sa == 0 && sb == 0, "each answers `status` on its own control socket while both encode");
    TAP_CHECK(threads_on(a.ch.pid, "pc-cam", c0) && threads_on(b.ch.pid, "pc-cam", c1),
              "capture threads on the CPUs each was given (a: %s, b: %s)", c0, c1);
    if (PANOCAP_HAVE_HTTP) {
        char ra_[512], rb_[512];
        int ha = dt_http_raw(AF_INET, a.port, "GET /healthz HTTP/1.0\r\n\r\n", ra_, sizeof ra_) > 0 &&
                 strstr(ra_, " 200 ") && strstr(ra_, "\r\n\r\nok") ? 0 : -1;
        int hb = dt_http_raw(AF_INET, b.port, "GET /healthz HTTP/1.0\r\n\r\n", rb_, sizeof rb_) > 0 &&
                 strstr(rb_, " 200 ") && strstr(rb_, "\r\n\r\nok") ? 0 : -1;
        TAP_CHECK(ha == 0 && hb == 0, "each serves /healthz on its own port (%d, %d)", a.port, b.port);
    } else {
        tap_skip("built without libmicrohttpd: no metrics port");
    }
    /* 6 s of video each (150 frames at 25 fps: b's HLS makes more segments
     * than its list keeps), then SIGTERM */
    long ea = 0, eb = 0;
    for (double end = dt_now() + tu_bound(120); dt_now() < end && (ea < 150 || eb < 150); dt_sleep(0.2)) {
        if (ea < 150 && dt_control(a.sock, "status", ans, sizeof ans, 30) == 0)
            ea = dt_status_encoded(ans);
        if (eb < 150 && dt_control(b.sock, "status", ans, sizeof ans, 30) == 0)
            eb = dt_status_encoded(ans);
    }
    kill(a.ch.pid, SIGTERM);
    kill(b.ch.pid, SIGTERM);
    int ra = dt_wait(&a.ch, tu_bound(60)), rb = dt_wait(&b.ch, tu_bound(60));
    TAP_CHECK(ra == 0 && rb == 0 && ea >= 150 && eb >= 150,
              "both exit 0 on SIGTERM once each encoded 150 frames (a %d after %ld, b %d after %ld)", ra, ea, rb, eb);
    if (ra || rb) {
        dt_diag_file("a stderr", a.ch.err, 2000);
        dt_diag_file("b stderr", b.ch.err, 2000);
    }
    dt_decoded da, db;
    long enc_a = -1, enc_b = -1;
    char *sa_ = dt_slurp(a.ch.out), *sb_ = dt_slurp(b.ch.out);
    dt_parse_summary(sa_, NULL, &enc_a, NULL);
    dt_parse_summary(sb_, NULL, &enc_b, NULL);
    free(sa_);
    free(sb_);
    int rda = dt_decode(a.out, NULL, NULL, &da), rdb = dt_decode(b.out, NULL, NULL, &db);
    TAP_CHECK(rda == 0 && rdb == 0 && da.frames == enc_a && db.frames == enc_b && enc_a >= 150 && enc_b >= 150 &&
                  da.errors == 0 && db.errors == 0 && da.width == 640 && da.height == 720 && db.width == 640 &&
                  db.height == 720,
              "both recordings decode, every frame encoded: a %d frames (%ld encoded) %dx%d, b %d frames (%ld "
              "encoded) %dx%d (folders made by each)", da.frames, enc_a, da.width, da.height, db.frames, enc_b,
              db.width, db.height);
    char *pl = dt_slurp(b.hls);
    int extinf = 0;
    for (const char *q = pl; q && (q = strstr(q, "#EXTINF")); q++)
        extinf++;
    TAP_CHECK(pl && extinf == 2 && strstr(pl, "#EXT-X-ENDLIST"),
              "HLS options reach the muxer: 6 s of video or more keep %d segments in the playlist (hls_list_size=2)", extinf);
    free(pl);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return tap_skip_all("usage: test_daemon_instances PANOCAP UNIT TEMPLATE");
    exe = argv[1];
    dt_guard_children();
    if (!dt_tmpdir(dir, sizeof dir, "instances"))
        return tap_skip_all("mkdtemp failed");
    template_unit(argv[2], argv[3]);
    side_by_side();
    dt_rmtree(dir);
    return tap_done();
}
