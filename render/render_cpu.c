/* render_cpu.c - the CPU backend's renderer (render.h): the reference's
 * pixel (render_host.h, render_formulas.h) computed 4, 8 or 16 pixels at
 * a time, bit-identical to it. The inner loops are render_cpu_lanes.h,
 * built three times: here with 4 lanes for any target (x86-64's baseline
 * SSE2, NEON), in render_cpu_avx2.c with 8 and in render_cpu_avx512.c
 * with 16; this file picks the best the CPU has at run time. Why it is
 * fast:
 *
 *   - SIMD lanes. Every step of the definition is plain float arithmetic
 *     (+ - * /, sqrt, min, compares, float <-> int truncation), which a
 *     vector unit rounds exactly as a scalar one (IEEE 754: each operation
 *     correctly rounded; -ffp-contract=off: nothing fused). So lanes that
 *     run the reference's operations in the reference's order give its
 *     bytes, a vector of pixels per instruction.
 *   - Rays and projections computed, not read: in the lanes the rotation,
 *     divide, square root and distortion polynomial cost a few
 *     instructions per sample, cheaper than reading the 8 bytes per sample
 *     of a precomputed map (100 MB a frame for a 8600x1300 panorama) on
 *     cores that share their memory bandwidth. The plan's maps
 *     (pc_render_options.maps) are the GPU's business and not read here.
 *   - Phases. A camera's work on a 32x8 tile (256 pixels) runs as
 *     phases, each a loop over the chunks of lanes: project, load the
 *     pixels, interpolate, look up the response, accumulate. One chunk
 *     from ray to sum is a chain of ~100 dependent operations (divide,
 *     square root, then loads whose addresses it computes, twice); loops
 *     of independent chunks let the out-of-order core overlap them.
 *   - Loads: the bilinear sample reads each row's two neighbours (RGBX32)
 *     as one 8-byte load, and each response lookup reads knots i and i+1
 *     as one 8-byte load (their difference is computed in the lanes: the
 *     same float the reference subtracts); plain scalar loads, which this
 *     kind of core issues faster than gather instructions (Zen 5: 0.17 ns
 *     a load against 0.47 ns an element of vpgatherdq), stored in an order
 *     that one shufps per half puts back in lane order.
 *   - Broadcasts once: each thread broadcasts the view's and cameras'
 *     parameters into vectors once per frame, so every use is a memory
 *     operand, not a broadcast instruction.
 *   - Tiles: only the cameras of a 32x8 tile's mask (one or two of five
 *     for a panorama) run over it, in ascending order, each adding to the
 *     tile's sums (4 KiB; with the phases' values 28 KiB, in L1), as the
 *     reference adds per pixel.
 *   - YUV in the lanes: the 8-bit RGB, Y and the 2x2 chroma sums go
 *     through spec §8's integer formulas a vector at a time and are stored
 *     as whole runs of bytes.
 *   - Threads take tile rows (8 output rows) from a shared counter, not
 *     fixed bands: rows above and below the cameras cost next to nothing,
 *     and a thread delayed by another process leaves its rows to the rest.
 * A multiband plan's strips around the seams are render_mb_host.c's
 * (pc_render_mb_cpu); everything else of it goes through these lanes.
 * Fisheye lenses take atan2f per lane (libm's, as the reference) and the
 * rest in the lanes; RGB24 cameras are read byte by byte, RGB24 outputs
 * stored block by block through the reference's store.
 *
 * Measured (5 x 2040x1080 -> 8600x1300 NV12, Hugin photometry on, CPU time
 * per frame on one thread of a shared Zen 5 EPYC, all in one run): the
 * scalar version before this one 526 ms (rays; 286 ms reading the plan's
 * maps); these lanes: baseline 176 ms, AVX2 93 ms, AVX-512 64 ms.
 */
#define PC_RENDER_LANES pc_render_lanes_base
#define PC_RENDER_VL 4 /* one SSE2 (or NEON) register */
#include "render_cpu_lanes.h"
#include "render_multiband.h"

#include "pool.h" /* pc_pool_run */
#include "errmsg.h"

#if defined(__x86_64__) && defined(__GNUC__)
void pc_render_lanes_avx2(pc_render_frame *f);   /* render_cpu_avx2.c */
void pc_render_lanes_avx512(pc_render_frame *f); /* render_cpu_avx512.c */
#define PC_RENDER_X86 1
#else
#define PC_RENDER_X86 0
#endif

/* The lanes' builds, best first. */
static const struct {
    const char *name;
    pc_render_lanes_fn run;
} lanes[] = {
#if PC_RENDER_X86
    {"avx512", pc_render_lanes_avx512},
    {"avx2", pc_render_lanes_avx2},
#endif
    {"baseline", pc_render_lanes_base},
};

static int lanes_usable(int i)
{
#if PC_RENDER_X86
    if (lanes[i].run == pc_render_lanes_avx512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
    if (lanes[i].run == pc_render_lanes_avx2)
        return __builtin_cpu_supports("avx2");
#endif
    return 1;
}

const char *pc_render_cpu_best_lanes(void)
{
    int i = 0;
    while (!lanes_usable(i))
        i++;
    return lanes[i].name;
}

static int lanes_find(const char *name)
{
    for (int i = 0; name && i < (int)(sizeof lanes / sizeof lanes[0]); i++)
        if (strcmp(lanes[i].name, name) == 0)
            return i;
    return -1;
}

int pc_render_cpu_lanes_usable(const char *name)
{
    const int i = lanes_find(name);
    return i >= 0 && lanes_usable(i);
}

typedef struct job {
    pc_render_frame f;
    pc_render_lanes_fn run;
} job;

static void worker(void *arg, int index, int n)
{
    job *j = arg;
    j->run(&j->f);
}

/* sampler = bicubic: the reference's pixel (render_host.h) on the
 * threads, each tile row (8 output rows) by one thread in turn, each
 * pixel from its tile's cameras only; bit-identical to the reference.
 * Not in the lanes: 12 taps a sample are the GPU's job (the texture unit
 * filters them in 5 fetches); here a 1920x1080 view costs about 10x the
 * bilinear lanes (panocap-bench --render on 2 threads of the development
 * machine: 70.6 ms against 6.7 ms), which is why sampler = auto picks
 * bilinear on the CPU backend. */
typedef struct cubic_job {
    const pc_render_plan *p;
    pc_render_src s;
    const pc_picture *dst;
    pc_yuv_coeffs yc;
} cubic_job;

static void cubic_worker(void *arg, int index, int n)
{
    const cubic_job *j = arg;
    const pc_render_plan *p = j->p;
    for (int ty = index; ty < p->nty; ty += n) {
        const int y1 = (ty + 1) * PC_RENDER_TILE_H < p->view.h ? (ty + 1) * PC_RENDER_TILE_H : p->view.h;
        for (int y = ty * PC_RENDER_TILE_H; y < y1; y += 2)
            for (int x = 0; x < p->view.w; x += 2) {
                const unsigned mask = p->tmask[(size_t)ty * p->ntx + x / PC_RENDER_TILE_W];
                int v[2][2][3];
                for (int jj = 0; jj < 2; jj++)
                    for (int i = 0; i < 2; i++) {
                        if (!mask) {
                            v[jj][i][0] = v[jj][i][1] = v[jj][i][2] = 0;
                            continue;
                        }
                        float ray[3];
                        pc_view_ray(&p->view, (float)(x + i), (float)(y + jj), ray);
                        pc_render_px(p, &j->s, ray, x + i, y + jj, mask, p->seam, v[jj][i]);
                    }
                pc_ref_store_block(j->dst, &j->yc, x, y, v);
            }
    }
}

int pc_render_cpu_lanes(pc_pool *cpu, const char *name, const pc_render_plan *p, const pc_picture *src,
                        const pc_picture *dst, char *err, size_t errlen)
{
    const int li = lanes_find(name);
    if (li < 0 || !lanes_usable(li)) {
        pc_set_err(err, errlen, "render: the CPU lanes \"%s\" are %s", name ? name : "(null)",
                   li < 0 ? "not in this build (avx512 and avx2 on x86-64, baseline)" : "not supported by this CPU");
        return PC_EINVAL;
    }
    int rc = pc_render_check(p, src, dst, err, errlen);
    if (rc)
        return rc;
    /* multiband: its strips (render_mb_host.c), the rest through these
     * lanes again on a plan without them */
    if (p->mb)
        return pc_render_mb_cpu(cpu, lanes[li].name, p, src, dst, err, errlen);
    /* the lanes address a camera's bytes with int32 offsets: a camera of
     * 2 GiB or more (none that exists) takes the reference */
    if ((uint64_t)p->cam_h * src->pitch[0] >= (1ull << 31))
        return pc_render_ref(p, src, dst, err, errlen);
    const pc_render_src s = pc_render_src_of(src);
    if (p->sampler == PC_RENDER_BICUBIC) {
        cubic_job cj;
        memset(&cj, 0, sizeof cj);
        cj.p = p;
        cj.s = s;
        cj.dst = dst;
        pc_yuv_coeffs_get(dst->matrix, dst->range, &cj.yc);
        pc_pool_run(cpu, cubic_worker, &cj);
        return 0;
    }
    job j;
    memset(&j, 0, sizeof j);
    j.f.p = p;
    j.f.data = s.data;
    j.f.pitch = (int)s.pitch;
    j.f.bpp = s.bpp;
    j.f.dst = dst;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &j.f.yc);
    j.run = lanes[li].run;
    pc_pool_run(cpu, worker, &j);
    return 0;
}

int pc_render_cpu(pc_pool *cpu, const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err,
                  size_t errlen)
{
    return pc_render_cpu_lanes(cpu, pc_render_cpu_best_lanes(), p, src, dst, err, errlen);
}
