/* test_quality_tool.c - runs the real panocap-quality executable (path in
 * argv[1]; no shell) on generated images: TSV header and rows, the crop
 * notice, the border note, means over several images, ref == cpu backend,
 * a missing and a foreign file (error naming it, others still measured,
 * exit status 1), usage errors (exit status 64), --list-algos.
 */
#include "debayer.h"
#include "image.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *exe;
static char dir[64];
static char out[1 << 16], errb[1 << 16];

static const char *tmp(const char *name)
{
    static char buf[4][160];
    static int k;
    k = (k + 1) & 3;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Runs exe with the NULL-terminated argument list; collects stdout and
 * stderr; returns the exit status (or -1). */
static int run(const char *const *args)
{
    int po[2], pe[2];
    if (pipe(po) || pipe(pe))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        close(po[1]);
        close(pe[1]);
        const char *argv[32];
        int n = 0;
        argv[n++] = exe;
        for (; args[n - 1] && n < 31; n++)
            argv[n] = args[n - 1];
        argv[n] = NULL;
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t no = 0, ne = 0;
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, 60000) <= 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char *b = i ? errb : out;
            size_t *nn = i ? &ne : &no;
            ssize_t r = read(fds[i].fd, b + *nn, sizeof out - 1 - *nn);
            if (r <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            } else {
                *nn += (size_t)r;
            }
        }
    }
    out[no] = errb[ne] = '\0';
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Parses the TSV on stdout: checks the header, returns the number of rows
 * and fills names/values. */
static int parse_tsv(char names[][32], double vals[][3], int max)
{
    char *save = NULL, *line = strtok_r(out, "\n", &save);
    if (!line || strcmp(line, "algo\tpsnr_g\tpsnr_rb\tcpsnr") != 0)
        return -1;
    int n = 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL && n < max) {
        if (sscanf(line, "%31[^\t]\t%lf\t%lf\t%lf", names[n], &vals[n][0], &vals[n][1], &vals[n][2]) != 4)
            return -2;
        n++;
    }
    return n;
}

/* Photograph-like content, odd size 67x51: a luminance pattern (ramps, a
 * disc with a sharp edge, fine stripes) times a slowly varying tint, so
 * the colour channels are correlated as in natural images (which is what
 * hq-linear and edge exploit). */
static void make_images(void)
{
    const int w = 67, h = 51;
    uint8_t *rgb = malloc(3 * w * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = rgb + 3 * (y * w + x);
            int inside = (x - 30) * (x - 30) + (y - 25) * (y - 25) < 15 * 15;
            double lum = inside ? 190 : 50 + 1.5 * x + y;
            if (x > 50 && ((x + y / 4) % 5) < 2)
                lum *= 0.6;
            double tint[3] = {1.0, 0.9 - 0.002 * y, 0.75 + 0.002 * x};
            for (int c = 0; c < 3; c++)
                p[c] = (uint8_t)(lum * tint[c] > 255 ? 255 : lum * tint[c]);
        }
    pc_image_write_ppm(tmp("photo.ppm"), rgb, 3 * w, w, h, NULL, 0);
    if (pc_image_have_png())
        pc_image_write_png(tmp("photo.png"), rgb, 3 * w, w, h, NULL, 0);
    FILE *f = fopen(tmp("notes.txt"), "w");
    if (f) {
        fputs("not an image\n", f);
        fclose(f);
    }
    free(rgb);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_quality_tool PATH-TO-panocap-quality");
    exe = argv[1];
    snprintf(dir, sizeof dir, "/tmp/panocap-test-quality-XXXXXX");
    if (!mkdtemp(dir))
        return tap_skip_all("cannot create a temporary folder");
    make_images();
    char names[64][32];
    double v[64][3];

    /* one image, TSV */
    const char *a1[] = {"--algo", "all", "--format", "tsv", tmp("photo.ppm"), NULL};
    int rc = run(a1);
    TAP_CHECK(strstr(errb, "67x51 cropped to 66x50") != NULL, "odd size cropped, and it says so: %.80s", errb);
    TAP_CHECK(strstr(errb, "# ") && strstr(errb, "border of 8 pixels excluded"), "TSV: border note on stderr as a # comment");
    int n = parse_tsv(names, v, 64);
    TAP_CHECK(rc == 0 && n == PC_ALGO_COUNT, "TSV: exact header and one row per algorithm (exit %d, %d rows)", rc, n);
    int order = 1, finite = 1;
    for (int i = 0; i < n && i < PC_ALGO_COUNT; i++) {
        order &= strcmp(names[i], pc_algo_get((pc_algo_id)i)->name) == 0;
        for (int c = 0; c < 3; c++)
            finite &= v[i][c] > 15 && v[i][c] < 99;
    }
    TAP_CHECK(order && finite, "TSV rows name the algorithms in table order, figures plausible");
    double one[PC_ALGO_COUNT][3];
    memcpy(one, v, sizeof one);
    TAP_CHECK(n == PC_ALGO_COUNT && one[PC_ALGO_BILINEAR][2] < one[PC_ALGO_HQ_LINEAR][2] &&
                  one[PC_ALGO_BILINEAR][2] < one[PC_ALGO_EDGE][2],
              "CPSNR: bilinear %.2f below hq-linear %.2f and edge %.2f", one[0][2], one[2][2], one[3][2]);

    /* the CPU backend gives the same figures */
    const char *a2[] = {"--format", "tsv", "--backend", "cpu", "--threads", "3", tmp("photo.ppm"), NULL};
    char ref_out[sizeof out];
    run(a1);
    memcpy(ref_out, out, sizeof out);
    rc = run(a2);
    TAP_CHECK(rc == 0 && strcmp(ref_out, out) == 0, "--backend cpu prints the same table as the reference");

    /* two images: per algorithm, two rows then the mean */
    const char *second = pc_image_have_png() ? tmp("photo.png") : tmp("photo.ppm");
    const char *a3[] = {"--format", "tsv", tmp("photo.ppm"), second, NULL};
    rc = run(a3);
    n = parse_tsv(names, v, 64);
    int means_ok = n == 3 * PC_ALGO_COUNT;
    for (int i = 0; means_ok && i < PC_ALGO_COUNT; i++)
        for (int c = 0; c < 3; c++)
            means_ok &= strcmp(names[3 * i + 2], pc_algo_get((pc_algo_id)i)->name) == 0 &&
                        v[3 * i][c] == one[i][c] && v[3 * i + 1][c] == one[i][c] && v[3 * i + 2][c] == one[i][c];
    TAP_CHECK(rc == 0 && means_ok, "two images (%s): per algorithm 2 rows + the mean, the PPM and %s agree (%d rows)",
              pc_image_have_png() ? "PPM + PNG" : "PPM twice", pc_image_have_png() ? "PNG" : "PPM", n);

    /* a missing and a foreign file: named, others measured, exit 1 */
    const char *a4[] = {"--format", "tsv", tmp("nothere.png"), tmp("photo.ppm"), tmp("notes.txt"), NULL};
    rc = run(a4);
    int named = strstr(errb, "nothere.png") != NULL && strstr(errb, "notes.txt") != NULL;
    n = parse_tsv(names, v, 64);
    TAP_CHECK(rc == 1 && named && n == PC_ALGO_COUNT,
              "missing and foreign files: errors name them, the good image is still measured, exit 1 (exit %d, %d rows)",
              rc, n);

    /* table format */
    const char *a5[] = {"--algo", "edge", "--pattern", "GBRG", tmp("photo.ppm"), NULL};
    rc = run(a5);
    TAP_CHECK(rc == 0 && strstr(out, "edge") && strstr(out, "border of 8 pixels excluded") && strstr(out, "GBRG") &&
                  !strstr(out, "bilinear"),
              "table format: one algorithm, the pattern and the border note");

    /* usage errors */
    const char *a6[] = {"--algo", "nope", tmp("photo.ppm"), NULL};
    rc = run(a6);
    TAP_CHECK(rc == 64 && strstr(errb, "unknown algorithm 'nope'"), "unknown algorithm: exit 64, message: %.60s", errb);
    const char *a7[] = {"--pattern", "RGBG", tmp("photo.ppm"), NULL};
    rc = run(a7);
    TAP_CHECK(rc == 64 && strstr(errb, "unknown pattern"), "unknown pattern: exit 64");
    const char *a8[] = {"--format", "csv", tmp("photo.ppm"), NULL};
    rc = run(a8);
    TAP_CHECK(rc == 64 && strstr(errb, "unknown format"), "unknown format: exit 64");
    const char *a9[] = {NULL};
    rc = run(a9);
    TAP_CHECK(rc == 64 && strstr(errb, "no image"), "no image: exit 64");

    const char *a10[] = {"--list-algos", NULL};
    rc = run(a10);
    int listed = 0;
    for (int i = 0; i < PC_ALGO_COUNT; i++)
        listed += strstr(out, pc_algo_get((pc_algo_id)i)->name) != NULL;
    TAP_CHECK(rc == 0 && listed == PC_ALGO_COUNT, "--list-algos lists the %d algorithms of the table", listed);
    const char *a11[] = {"--help", NULL};
    rc = run(a11);
    TAP_CHECK(rc == 0 && strstr(out, "--pattern") && strstr(out, "--format"), "--help");

    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            unlink(tmp(e->d_name));
    if (d)
        closedir(d);
    rmdir(dir);
    return tap_done();
}
