/* render_cpu.c - the CPU backend's renderer (render.h): the reference's
 * pixel (render_host.h, render_formulas.h) computed 8 pixels at a time,
 * bit-identical to it. The inner loops are render_cpu_lanes.h, built
 * twice: here for any target (x86-64's baseline SSE2), and in
 * render_cpu_avx2.c for AVX2, chosen at run time. Why it is fast:
 *
 *   - SIMD lanes. Every step of the definition is plain float arithmetic
 *     (+ - * /, sqrt, min, compares, float <-> int truncation), which a
 *     vector unit rounds exactly as a scalar one (IEEE 754: each operation
 *     correctly rounded; -ffp-contract=off: nothing fused). So 8 lanes
 *     that run the reference's operations in the reference's order give
 *     its bytes, 8 pixels per instruction.
 *   - Rays and projections computed, not read: in the lanes the rotation,
 *     divide, square root and distortion polynomial cost about 6
 *     instructions per sample, cheaper than reading the 8 bytes per sample
 *     of a precomputed map (100 MB a frame for a 8600x1300 panorama) on
 *     cores that share their memory bandwidth. The plan's maps
 *     (pc_render_options.maps) are the GPU's business and not read here.
 *   - Phases. A camera's work on a tile row pair (64 pixels) runs as
 *     phases, each a loop over the 8 chunks: project, load the pixels,
 *     interpolate, look up the response, accumulate. One chunk from ray
 *     to sum is a chain of ~100 dependent operations (divide, square root,
 *     then loads whose addresses it computes, twice); loops of
 *     independent chunks let the out-of-order core overlap them.
 *   - Loads: the bilinear sample reads each row's two neighbours (RGBX32)
 *     as one 8-byte load, and each response lookup reads knots i and i+1
 *     as one 8-byte load (their difference is computed in the lanes: the
 *     same float the reference subtracts); plain scalar loads, which this
 *     kind of core issues faster than gather instructions (Zen 5: 0.17 ns
 *     a load against 0.47 ns an element of vpgatherdq).
 *   - Tiles: only the cameras of a 32x8 tile's mask (one or two of five
 *     for a panorama) run over it, in ascending order, each adding to the
 *     tile's sums in 1 KiB of L1, as the reference adds per pixel.
 *   - YUV in the lanes: the 8-bit RGB, Y and the 2x2 chroma sums go
 *     through spec §8's integer formulas 8 pixels at a time and are stored
 *     as whole runs of bytes.
 *   - Threads take tile rows (8 output rows) from a shared counter, not
 *     fixed bands: rows above and below the cameras cost next to nothing,
 *     and a thread delayed by another process leaves its rows to the rest.
 * Fisheye lenses take atan2f per lane (libm's, as the reference) and the
 * rest in the lanes; RGB24 cameras are read byte by byte, RGB24 outputs
 * stored block by block through the reference's store.
 *
 * Measured (panocap-bench --render, 5 x 2040x1080 -> 8600x1300 NV12,
 * Hugin photometry on, 2 threads of a shared 2-core EPYC): the scalar
 * version before this one took 452 ms per frame.
 */
#define PC_RENDER_LANES pc_render_lanes_base
#include "render_cpu_lanes.h"

#include "algo_impl.h" /* pc_cpu_parallel */
#include "errmsg.h"

#if defined(__x86_64__) && defined(__GNUC__)
extern const tile_row_fn pc_render_lanes_avx2[2][2]; /* render_cpu_avx2.c */
#endif

static void worker(void *arg, int index, int n)
{
    frame *f = arg;
    tile_work tw __attribute__((aligned(64)));
    for (;;) {
        const int ty = __atomic_fetch_add(&f->next_row, 1, __ATOMIC_RELAXED);
        if (ty >= f->nty)
            break;
        f->row_fn(f, &tw, ty);
    }
}

static void broadcast(vf *d, const float *s, int n)
{
    for (int i = 0; i < n; i++)
        d[i] = splat(s[i]);
}

static void frame_setup(frame *f, const pc_render_plan *p, const pc_picture *src, const pc_picture *dst,
                        const tile_row_fn (*fns)[2])
{
    const pc_render_src s = pc_render_src_of(src);
    view_vec *vw = &f->view;
    broadcast(vw->R, p->view.R, 9);
    vw->f = splat(p->view.f);
    vw->inv_feather = splat(p->inv_feather);
    vw->inv_seam = splat(p->inv_seam);
    vw->proj = p->view.proj;
    vw->rotated = p->view.rotated;
    vw->general = p->view.rotated || p->view.proj != PC_PROJ_CYLINDRICAL;
    vw->w = p->view.w;
    vw->h = p->view.h;
    for (int c = 0; c < p->ncam; c++) {
        const pc_cam_model *g = &p->cam[c].geo;
        const pc_vig_model *v = &p->cam[c].vig;
        cam_vec *cv = &f->cam[c];
        broadcast(cv->R, g->R, 9);
        const float gs[] = {g->f,    g->rn_inv, g->rmax, g->a,  g->b,  g->c,  g->d,   g->sx_d,
                            g->sy_e, g->g_h,    g->t_w,  g->cx, g->cy, g->x0, g->x1,  g->y0,
                            g->y1,   g->ccx,    g->ccy,  g->cr2, sqrtf(g->cr2)};
        vf *gd[] = {&cv->f,    &cv->rn_inv, &cv->rmax, &cv->a,  &cv->b,  &cv->c,  &cv->d,  &cv->sx_d,
                    &cv->sy_e, &cv->g_h,    &cv->t_w,  &cv->cx, &cv->cy, &cv->x0, &cv->x1, &cv->y0,
                    &cv->y1,   &cv->ccx,    &cv->ccy,  &cv->cr2, &cv->sqrt_cr2};
        for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++)
            *gd[i] = splat(gs[i]);
        const float vs[] = {v->va, v->vb, v->vc, v->vd, v->vcx, v->vcy, v->vq};
        vf *vd[] = {&cv->va, &cv->vb, &cv->vc, &cv->vd, &cv->vcx, &cv->vcy, &cv->vq};
        for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
            *vd[i] = splat(vs[i]);
        broadcast(cv->gain, p->cam[c].gain, 3);
        cv->fisheye = g->fisheye;
        cv->circle = g->circle;
        cv->vig = v->on;
        cv->inv = p->inv_knots[c];
        cv->data = s.data + (size_t)c * p->cam_h * s.pitch;
    }
    f->col = p->col;
    f->row = p->row;
    f->seam = p->seam;
    f->out_resp = p->out_resp;
    f->tmask = p->tmask;
    f->ntx = p->ntx;
    f->nty = p->nty;
    f->cam_w = p->cam_w;
    f->cam_h = p->cam_h;
    f->pitch = (int)s.pitch;
    f->dst = dst;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &f->yc);
    f->row_fn = fns[s.bpp == 4][p->photo != 0];
    f->next_row = 0;
}

/* The lanes' builds, best first. */
static const struct {
    const char *name;
    const tile_row_fn (*fns)[2];
} lanes[] = {
#if defined(__x86_64__) && defined(__GNUC__)
    {"avx2", pc_render_lanes_avx2},
#endif
    {"baseline", pc_render_lanes_base},
};

static int lanes_usable(int i)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (lanes[i].fns == pc_render_lanes_avx2)
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

int pc_render_cpu_lanes(pc_cpu *cpu, const char *name, const pc_render_plan *p, const pc_picture *src,
                        const pc_picture *dst, char *err, size_t errlen)
{
    int li = -1;
    for (int i = 0; li < 0 && i < (int)(sizeof lanes / sizeof lanes[0]); i++)
        if (strcmp(lanes[i].name, name) == 0)
            li = i;
    if (li < 0 || !lanes_usable(li)) {
        pc_set_err(err, errlen, "render: the CPU lanes \"%s\" are %s", name,
                   li < 0 ? "not in this build (avx2 on x86-64, baseline)" : "not supported by this CPU");
        return PC_EINVAL;
    }
    int rc = pc_render_check(p, src, dst, err, errlen);
    if (rc)
        return rc;
    /* the lanes address a camera's bytes with int32 offsets: a camera of
     * 2 GiB or more (none that exists) takes the reference */
    if ((uint64_t)p->cam_h * src->pitch[0] >= (1ull << 31))
        return pc_render_ref(p, src, dst, err, errlen);
    frame f; /* 22 KiB with 16 cameras */
    frame_setup(&f, p, src, dst, lanes[li].fns);
    pc_cpu_parallel(cpu, worker, &f);
    return 0;
}

int pc_render_cpu(pc_cpu *cpu, const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err,
                  size_t errlen)
{
    return pc_render_cpu_lanes(cpu, pc_render_cpu_best_lanes(), p, src, dst, err, errlen);
}
