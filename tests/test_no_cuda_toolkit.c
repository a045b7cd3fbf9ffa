/* test_no_cuda_toolkit.c - one panocap binary runs everywhere: built with
 * CUDA, it does not depend on the CUDA toolkit's shared libraries (the
 * runtime is linked statically; the driver, libcuda.so, is never linked:
 * the static runtime loads it at run time), and it starts and runs with the
 * toolkit hidden: in a private user + mount namespace with an empty folder
 * bind-mounted over the toolkit's folder and LD_LIBRARY_PATH cleared, it
 * prints --version and demosaics 5 frame sets of a raw file into output
 * null, on the CUDA backend where a driver and device exist, else on the
 * CPU backend with exactly one warning line saying so.
 * argv[1]: panocap, argv[2]: the CUDA toolkit folder ("-": built without
 * CUDA, skipped). */
#include "capture.h"
#include "run_testutil.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

static char dir[] = "/tmp/pc-nocuda-XXXXXX";

/* Writes 10 sets of 5 cameras, 64x32 each, RGGB. */
static int write_raw(const char *path)
{
    char err[256] = "";
    pc_raw_writer *w;
    if (pc_raw_writer_open(&w, path, 64, 32, 5, PC_CFA_RGGB, 50, err, sizeof err) != 0) {
        tap_diag("raw writer: %s", err);
        return -1;
    }
    static uint8_t buf[5][64 * 32];
    pc_frameset s;
    memset(&s, 0, sizeof s);
    s.n = 5;
    s.width = 64;
    s.height = 32;
    for (int i = 0; i < 10; i++) {
        for (int k = 0; k < 5; k++) {
            for (int p = 0; p < 64 * 32; p++)
                buf[k][p] = (uint8_t)(p * 7 + i * 13 + k * 50);
            s.slab[k] = buf[k];
            s.pitch[k] = 64;
            s.camera[k] = k;
        }
        s.index = (uint64_t)i;
        s.pts_ns = (int64_t)i * 20000000;
        if (pc_raw_writer_write(w, &s, err, sizeof err) != 0) {
            tap_diag("raw writer: %s", err);
            return -1;
        }
    }
    return pc_raw_writer_close(w, err, sizeof err);
}

/* The NEEDED entries of the executable's dynamic section, via readelf. */
static int needed_libs(const char *exe, char *buf, size_t n)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "readelf -d '%s' 2>/dev/null", exe);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t k = 0;
    char line[512];
    buf[0] = '\0';
    while (fgets(line, sizeof line, p)) {
        char *a = strstr(line, "(NEEDED)");
        char *l = a ? strchr(a, '[') : NULL;
        if (l && k + strlen(l) < n)
            k += (size_t)snprintf(buf + k, n - k, "%.*s ", (int)strcspn(l + 1, "]"), l + 1);
    }
    return pclose(p) == 0 && k > 0 ? 0 : -1;
}

/* Child side, before exec: a private user + mount namespace with an empty
 * folder over the toolkit's, and no LD_LIBRARY_PATH. */
static const char *hide_dir;
static char empty[sizeof dir + 8];
static void hide_toolkit(void)
{
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        _exit(90);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        _exit(91);
    if (mount(empty, hide_dir, NULL, MS_BIND, NULL) != 0)
        _exit(92);
    unsetenv("LD_LIBRARY_PATH");
}

static int count_lines(const char *text, const char *a, const char *b)
{
    int n = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        size_t len = strcspn(l, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
        n += strstr(line, a) && (!b || strstr(line, b));
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_no_cuda_toolkit PANOCAP CUDA_ROOT|-\n");
        return 2;
    }
    const char *exe = argv[1];
    hide_dir = argv[2];
    if (!strcmp(hide_dir, "-"))
        return tap_skip_all("this build has no CUDA (nothing to link statically)");

    char needed[4096];
    if (needed_libs(exe, needed, sizeof needed) != 0) {
        tap_skip("readelf not available: dynamic section not checked");
    } else {
        tap_diag("NEEDED: %s", needed);
        TAP_CHECK(!strstr(needed, "libcudart"), "no libcudart among the needed libraries");
        TAP_CHECK(!strstr(needed, "libcuda.so"), "the driver (libcuda.so) is not linked");
        TAP_CHECK(!strstr(needed, "libnpp") && !strstr(needed, "libnvrtc"), "no other CUDA toolkit library");
    }

    if (!mkdtemp(dir) || (snprintf(empty, sizeof empty, "%s/empty", dir), mkdir(empty, 0700)) != 0)
        return tap_skip_all("no temp dir");
    char raw[128];
    snprintf(raw, sizeof raw, "%s/five.pcraw", dir);
    TAP_CHECK(write_raw(raw) == 0, "raw file of 10 sets written");

    /* probe: can this machine make a user + mount namespace? */
    rt_result *r = calloc(1, sizeof *r);
    char *probe[] = {"/bin/true", NULL};
    if (rt_run_with(r, probe, hide_toolkit) != 0) {
        tap_skip("no private user + mount namespace here (unshare refused): toolkit not hidden");
        unlink(raw);
        rmdir(empty);
        rmdir(dir);
        free(r);
        return tap_done();
    }

    char *ver[] = {(char *)exe, "--version", NULL};
    rt_run_with(r, ver, hide_toolkit);
    TAP_CHECK(r->status == 0 && strstr(r->out, "cuda yes"), "--version with %s hidden: exit %d, %.*s", hide_dir,
              r->status, (int)strcspn(r->out, "\n"), r->out);

    char src[160];
    snprintf(src, sizeof src, "file:%s", raw);
    char *runv[] = {(char *)exe, "--source", src, "--frames", "5", "--output", "null", "--control", "",
                    "--stats-interval", "0", "--fps", "50", NULL};
    rt_run_with(r, runv, hide_toolkit);
    int cuda = count_lines(r->err, "running:", "cuda backend");
    int cpu = count_lines(r->err, "running:", "cpu backend");
    int warnings = count_lines(r->err, "<4>", "using the cpu backend"); /* device/backend.c's note */
    TAP_CHECK(r->status == 0 && strstr(r->out, "summary: 5 frame sets in"),
              "--frames 5 --output null with the toolkit hidden: exit %d", r->status);
    if (cuda)
        TAP_CHECK(warnings == 0, "CUDA backend (driver and device present), no CPU-fallback warning");
    else
        TAP_CHECK(cpu == 1 && warnings == 1, "no device: the CPU backend runs, with one warning line (%d)",
                  warnings);
    if (r->status != 0 || (!cuda && warnings != 1))
        for (char *l = strtok(r->err, "\n"); l; l = strtok(NULL, "\n"))
            tap_diag("stderr: %.300s", l); /* one diagnostic a line: TAP */
    unlink(raw);
    rmdir(empty);
    rmdir(dir);
    free(r);
    return tap_done();
}
