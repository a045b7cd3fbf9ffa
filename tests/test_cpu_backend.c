/* test_cpu_backend.c - the multi-threaded CPU backend is bit-identical to
 * the C reference for every algorithm, CFA phase and output format, at
 * several sizes (the 2042x1082 slab-like size, and sizes whose row pairs do
 * not split evenly over the threads), with 1, 2, 3 and 7 threads; plus its
 * error paths. In a sanitizer build the slab-like size is 2042x166 (the
 * full width, 83 row pairs: uneven over 2, 3 and 7 threads; the same
 * checks, a sixth of the instrumented work; net, whose float reference
 * dominates, at 2042x38: 19 row pairs, uneven too). The learned demosaic (net)
 * sums in another order with fused multiply-adds: within one code value
 * of its reference on >= 99.9 % of the samples (tu_net_rule); its float
 * reference takes about a minute at the slab size, so it is checked at
 * 2042x166 there (the full width: the CPU's column strips).
 */
#include "debayer.h"
#include "debayer_test_util.h"
#include "sanitizer.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 0xc0ffee11u;

static size_t layout(pc_picture *p, int fmt, int w, int h, uint8_t *buf)
{
    int i420 = fmt == PC_FMT_I420;
    return tu_pic_layout(p, fmt, i420 ? PC_MATRIX_BT601 : PC_MATRIX_BT709, i420 ? PC_RANGE_FULL : PC_RANGE_LIMITED,
                         w, h, buf);
}

/* Natural-ish content: smooth gradients, edges and noise, so the
 * directional algorithms take every branch. */
static void make_raw(uint8_t *raw, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int v = (x * 7 + y * 3) & 255;
            if (((x / 37) ^ (y / 23)) & 1)
                v = 255 - v;
            if ((tu_rng(&rng_state) & 7) == 0)
                v = tu_rng(&rng_state) & 255;
            raw[(size_t)y * w + x] = (uint8_t)v;
        }
}

/* only: -1 every algorithm, else that one; skip: an algorithm left out */
static void compare(int w, int h, const int *threads, int nthreads, int only, int skip)
{
    size_t n = (size_t)w * h;
    uint8_t *raw = malloc(n), *ref = malloc(4 * n), *out = malloc(4 * n);
    make_raw(raw, w, h);
    pc_cpu *cpu[8] = {NULL};
    char err[256] = "";
    for (int t = 0; t < nthreads; t++)
        if (pc_cpu_open(&cpu[t], threads[t], w, h, err, sizeof err) != 0)
            tap_diag("pc_cpu_open: %s", err);
    for (int a = 0; a < PC_ALGO_COUNT; a++) {
        if ((only >= 0 && a != only) || a == skip)
            continue;
        int bad = 0, runs = 0;
        const int net = a == PC_ALGO_NET;
        /* MLRI's float reference takes seconds per megapixel, net's about a
         * minute: at the slab size (net: at the full width) one phase and
         * format (every band split is still checked); every phase and
         * format at the small sizes. */
        int few = (a == PC_ALGO_MLRI && n > 100000) || (a == PC_ALGO_NET && n > 20000);
        for (int cfa = 0; cfa < (few ? 1 : 4); cfa++)
            for (int fmt = few; fmt <= (few ? 1 : PC_FMT_RGBX32); fmt++) {
                pc_bayer b = {raw, (size_t)w, w, h, (pc_cfa)cfa, 0};
                pc_picture p;
                size_t bytes = layout(&p, fmt, w, h, ref);
                pc_ref_debayer((pc_algo_id)a, &b, &p, NULL, 0);
                for (int t = 0; t < nthreads; t++) {
                    memset(out, 0x5a, bytes);
                    pc_picture q;
                    layout(&q, fmt, w, h, out);
                    int rc = cpu[t] ? pc_cpu_debayer(cpu[t], (pc_algo_id)a, &b, &q, err, sizeof err) : -1;
                    if (net) {
                        int md = 0;
                        long nd = rc ? -1 : tu_compare(&q, &p, &md);
                        bad += !tu_net_rule(nd, md, &p);
                    } else {
                        bad += rc != 0 || memcmp(ref, out, bytes) != 0;
                    }
                    runs++;
                }
            }
        char tl[64] = "";
        for (int t = 0; t < nthreads; t++)
            snprintf(tl + strlen(tl), sizeof tl - strlen(tl), "%s%d", t ? "," : "", threads[t]);
        TAP_CHECK(bad == 0, "%s %dx%d: CPU backend %s reference, threads %s, %d runs over phases x formats (%d differ)",
                  pc_algo_get((pc_algo_id)a)->name, w, h, net ? "within 1 of the" : "==", tl, runs, bad);
    }
    for (int t = 0; t < nthreads; t++)
        pc_cpu_close(cpu[t]);
    free(raw);
    free(ref);
    free(out);
}

static void errors(void)
{
    char err[256] = "";
    pc_cpu *cpu = NULL;
    err[0] = 0;
    TAP_CHECK(pc_cpu_open(&cpu, 2, 7, 8, err, sizeof err) == PC_EINVAL && cpu == NULL && err[0],
              "pc_cpu_open refuses 7x8: %s", err);
    TAP_CHECK(pc_cpu_open(NULL, 2, 64, 64, err, sizeof err) == PC_EINVAL, "pc_cpu_open refuses a NULL out pointer");
    if (pc_cpu_open(&cpu, 0, 64, 32, err, sizeof err) != 0) {
        TAP_CHECK(0, "pc_cpu_open(threads=0): %s", err);
        return;
    }
    TAP_CHECK(pc_cpu_threads(cpu) >= 1, "threads = 0 means one per CPU (%d)", pc_cpu_threads(cpu));
    uint8_t *raw = calloc(128 * 64, 1), *out = calloc(3 * 128 * 64, 1);
    pc_bayer b = {raw, 128, 128, 64, PC_CFA_RGGB, 0};
    pc_picture p;
    layout(&p, PC_FMT_RGB24, 128, 64, out);
    err[0] = 0;
    TAP_CHECK(pc_cpu_debayer(cpu, PC_ALGO_EDGE, &b, &p, err, sizeof err) == PC_EINVAL && strstr(err, "64x32"),
              "frame larger than the opened size refused: %s", err);
    b.width = 32;
    b.height = 64; /* same pixel count as 64x32: fits the temporaries */
    layout(&p, PC_FMT_RGB24, 32, 64, out);
    TAP_CHECK(pc_cpu_debayer(cpu, PC_ALGO_HOMOGENEOUS_EDGE, &b, &p, err, sizeof err) == 0,
              "frame of another shape with no more pixels accepted");
    err[0] = 0;
    TAP_CHECK(pc_cpu_debayer(cpu, (pc_algo_id)42, &b, &p, err, sizeof err) == PC_EINVAL && strstr(err, "unknown"),
              "unknown algorithm refused: %s", err);
    err[0] = 0;
    TAP_CHECK(pc_cpu_debayer(cpu, PC_ALGO_EDGE, NULL, &p, err, sizeof err) == PC_EINVAL && err[0],
              "NULL source refused: %s", err);
    err[0] = 0;
    TAP_CHECK(pc_cpu_debayer(NULL, PC_ALGO_EDGE, &b, &p, err, sizeof err) == PC_EINVAL && err[0],
              "NULL context refused: %s", err);
    b.width = 30;
    err[0] = 0;
    TAP_CHECK(pc_cpu_debayer(cpu, PC_ALGO_EDGE, &b, &p, err, sizeof err) == PC_EINVAL && err[0],
              "size mismatch between source and destination refused: %s", err);
    pc_cpu_close(cpu);
    pc_cpu_close(NULL);
    TAP_CHECK(1, "pc_cpu_close(NULL) is harmless");
    free(raw);
    free(out);
}

int main(void)
{
    static const int all[] = {1, 2, 3, 7};
    /* 19 row pairs: uneven over 2, 3 and 7 threads */
    compare(200, 38, all, 4, -1, -1);
    /* narrower than the vector interior; 5 row pairs over 7 threads
     * leaves some threads without rows */
    compare(36, 10, all, 4, -1, -1);
    /* near the slab size (541 row pairs: uneven over 2, 3 and 7) */
    if (tu_sanitized()) {
        tap_diag("sanitizer build: 2042x166, not 2042x1082, and net at 2042x38 (same checks)");
        compare(2042, 166, all, 4, -1, PC_ALGO_NET);
        compare(2042, 38, all, 4, PC_ALGO_NET, -1);
    } else {
        compare(2042, 1082, all, 4, -1, PC_ALGO_NET);
        compare(2042, 166, all, 4, PC_ALGO_NET, -1);
    }
    errors();
    return tap_done();
}
