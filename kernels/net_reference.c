/* net_reference.c - the C reference of the learned demosaic (--algo net):
 * the definition for the CPU backend and the CUDA kernels.
 *
 * The network is demosaicnet's BayerDemosaick (net.h, docs/net.md), run
 * here as plain float32 loops in the order of the PyTorch model, camera by
 * camera of the frame (net_impl.h: reflect-101 padding at each camera's
 * own edges, the CFA phase moved onto the network's GRBG grid):
 *   X     the masked mosaic, 3 channels at full resolution (input size)
 *   pack  Conv2d(3, 4, 2, stride 2)                        half resolution
 *   main  depth x (Conv2d 3x3, no padding, ReLU)           half resolution
 *   F     filters * masks: channels [0, width) times [width, 2 width)
 *   R     residual Conv2d(width, 12, 1)
 *   U     ConvTranspose2d(12, 3, 2, stride 2, groups 3)    full resolution
 *   post  Conv2d(6, width, 3) of cat(X cropped by 2 depth, U), ReLU
 *   out   Conv2d(width, 3, 1), then clamped, x 255, rounded (pc_net_u8)
 * Every output value is its bias plus the sum over input channel, kernel
 * row, kernel column (in that order) of weight times input, each product
 * rounded to float and added in turn (no fused multiply-add: the kernels
 * build with -ffp-contract=off). The loops run over a whole output row per
 * (output channel, input channel, ky, kx) so that the compiler may use
 * vectors across pixels, which leaves every pixel's order of operations as
 * written.
 */
#include "net_impl.h"

#include "errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pc_net_frame_setup(pc_net_frame *f, const pc_net *net, const pc_bayer *src, const pc_picture *dst, char *err,
                       size_t errlen)
{
    int rc = pc_debayer_check(PC_ALGO_NET, src, dst, err, errlen);
    if (rc)
        return rc;
    if (!net || net->depth < 1 || net->depth > PC_NET_MAX_DEPTH || net->width < 1 || net->width > PC_NET_MAX_WIDTH) {
        pc_set_err(err, errlen, "net: %s", net ? "the weights are not a loaded model (pc_net_load)"
                                                : "no weights (pc_net_load, then the backend's set_net)");
        return PC_EINVAL;
    }
    memset(f, 0, sizeof *f);
    f->net = net;
    f->w = src->width;
    f->h = src->height;
    f->cam_h = src->cam_rows ? src->cam_rows : src->height;
    f->ncam = f->h / f->cam_h;
    f->ox = src->cfa == PC_CFA_GRBG || src->cfa == PC_CFA_BGGR;
    f->oy = src->cfa == PC_CFA_GBRG || src->cfa == PC_CFA_BGGR;
    f->M = pc_net_margin(net);
    /* the network's GRBG block: red at its (1, 0), so the block starts at
     * bx = ox - 1, by = oy (mod 2); the input starts at -pad with
     * -pad = b (mod 2), pad >= M */
    const int bx = (f->ox + 1) & 1, by = f->oy;
    f->padx = f->M + ((bx + f->M) & 1);
    f->pady = f->M + ((by + f->M) & 1);
    f->win = f->w + 2 * f->padx;
    f->hin = f->cam_h + 2 * f->pady;
    f->raw = src->data;
    f->raw_pitch = src->pitch;
    f->dst = *dst;
    if (!pc_pixfmt_is_rgb(dst->fmt))
        pc_yuv_coeffs_get(dst->matrix, dst->range, &f->yc);
    return PC_OK;
}

void pc_net_store_rows(const pc_net_frame *f, int cam, int y, const uint8_t *rgb0, const uint8_t *rgb1)
{
    const int fy = cam * f->cam_h + y;
    pc_yuv_coeffs yc = f->yc;
    if (f->dst.bands) {
        const int b = fy / f->dst.band_rows;
        yc = f->dst.bands[b < f->dst.n_bands ? b : f->dst.n_bands - 1];
    }
    pc_ref_store_rgb_rows(&f->dst, &yc, fy, rgb0, rgb1, 3, f->w);
}

/* out[co][y][x] (ow x oh, channel planes) = relu?(b[co] + sum over ci, ky,
 * kx of w[co][ci][ky][kx] * in[ci][s y + ky][s x + kx]); in is iw wide. */
static void conv(const pc_net_conv *c, int stride, const float *in, int iw, int ih, float *out, int ow, int oh,
                 int relu, float *acc)
{
    const int k = c->k;
    for (int co = 0; co < c->cout; co++)
        for (int y = 0; y < oh; y++) {
            for (int x = 0; x < ow; x++)
                acc[x] = c->b[co];
            for (int ci = 0; ci < c->cin; ci++)
                for (int ky = 0; ky < k; ky++)
                    for (int kx = 0; kx < k; kx++) {
                        const float wv = c->w[((co * c->cin + ci) * k + ky) * k + kx];
                        const float *row = in + ((size_t)ci * ih + (size_t)(stride * y + ky)) * iw + kx;
                        if (stride == 1)
                            for (int x = 0; x < ow; x++)
                                acc[x] = acc[x] + wv * row[x];
                        else
                            for (int x = 0; x < ow; x++)
                                acc[x] = acc[x] + wv * row[stride * x];
                    }
            float *o = out + ((size_t)co * oh + y) * ow;
            for (int x = 0; x < ow; x++)
                o[x] = relu && acc[x] < 0.0f ? 0.0f : acc[x];
        }
}

/* One camera: X (3 x hin x win) in the first plane set, the result as
 * RGB24 rows into rgb (w x cam_h). */
static void ref_camera(const pc_net_frame *f, int cam, float *X, float *A, float *B, float *acc, uint8_t *rgb)
{
    const pc_net *n = f->net;
    const int D = n->depth, W = n->width, win = f->win, hin = f->hin;
    for (int iy = 0; iy < hin; iy++)
        for (int ix = 0; ix < win; ix++) {
            int colour;
            const float v = pc_net_in(pc_net_sample(f, cam, ix, iy, &colour));
            for (int c = 0; c < 3; c++)
                X[((size_t)c * hin + iy) * win + ix] = c == colour ? v : 0.0f;
        }
    /* half resolution: pack, then the main layers (A -> B, swapped) */
    int hw = win / 2, hh = hin / 2;
    conv(&n->pack, 2, X, win, hin, A, hw, hh, 0, acc);
    for (int l = 0; l < D; l++) {
        conv(&n->main[l], 1, A, hw, hh, B, hw - 2, hh - 2, 1, acc);
        hw -= 2;
        hh -= 2;
        float *t = A;
        A = B;
        B = t;
    }
    /* filters * masks, in place into A's first W planes */
    const size_t np = (size_t)hw * hh;
    for (int c = 0; c < W; c++)
        for (size_t i = 0; i < np; i++)
            A[c * np + i] = A[c * np + i] * A[(W + c) * np + i];
    pc_net_conv fil = n->residual;
    float *R = B;
    conv(&fil, 1, A, hw, hh, R, hw, hh, 0, acc);
    /* full resolution: U = the transposed convolution (each group g of 4
     * residual channels -> output channel g; stride 2 = kernel size, so
     * every output pixel has one input pixel), into A's planes 3..5 of a
     * 6-plane (X cropped, U) stack P */
    const int uw = 2 * hw, uh = 2 * hh;
    float *P = A;
    const size_t up = (size_t)uw * uh;
    for (int g = 0; g < 3; g++)
        for (int y = 0; y < uh; y++)
            for (int x = 0; x < uw; x++) {
                const int ky = y & 1, kx = x & 1;
                float s = n->up.b[g];
                for (int ci = 4 * g; ci < 4 * g + 4; ci++)
                    s = s + n->up.w[(ci * 2 + ky) * 2 + kx] * R[(size_t)ci * np + (size_t)(y / 2) * hw + x / 2];
                P[(3 + g) * up + (size_t)y * uw + x] = s;
            }
    const int crop = 2 * D; /* (input - U) / 2 on each side */
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < uh; y++)
            memcpy(P + c * up + (size_t)y * uw, X + ((size_t)c * hin + y + crop) * win + crop,
                   (size_t)uw * sizeof(float));
    /* post (3x3, ReLU) then out (1x1), one output row at a time */
    const int ow = uw - 2, oh = uh - 2;
    float *Q = B; /* W planes of one row: post's output */
    const int sx = f->padx - f->M, sy = f->pady - f->M;
    for (int y = sy; y < sy + f->cam_h; y++) {
        for (int co = 0; co < W; co++) {
            for (int x = 0; x < ow; x++)
                acc[x] = n->post.b[co];
            for (int ci = 0; ci < 6; ci++)
                for (int ky = 0; ky < 3; ky++)
                    for (int kx = 0; kx < 3; kx++) {
                        const float wv = n->post.w[((co * 6 + ci) * 3 + ky) * 3 + kx];
                        const float *row = P + ci * up + (size_t)(y + ky) * uw + kx;
                        for (int x = 0; x < ow; x++)
                            acc[x] = acc[x] + wv * row[x];
                    }
            for (int x = 0; x < ow; x++)
                Q[(size_t)co * ow + x] = acc[x] < 0.0f ? 0.0f : acc[x];
        }
        uint8_t *o = rgb + (size_t)(y - sy) * f->w * 3;
        for (int k = 0; k < 3; k++) {
            for (int x = 0; x < ow; x++)
                acc[x] = n->out.b[k];
            for (int ci = 0; ci < W; ci++) {
                const float wv = n->out.w[k * W + ci];
                for (int x = 0; x < ow; x++)
                    acc[x] = acc[x] + wv * Q[(size_t)ci * ow + x];
            }
            for (int x = 0; x < f->w; x++)
                o[3 * x + k] = pc_net_u8(acc[x + sx]);
        }
    }
    (void)oh;
}

int pc_net_ref(const pc_net *net, const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen)
{
    pc_net_frame f;
    int rc = pc_net_frame_setup(&f, net, src, dst, err, errlen);
    if (rc)
        return rc;
    const size_t nx = 3 * (size_t)f.win * f.hin;
    const size_t half = (size_t)(f.win / 2) * (f.hin / 2);
    /* A, B: each holds the widest half-resolution layer (2 width planes)
     * or post's 6 full-resolution input planes (24 half-resolution ones),
     * whichever is larger */
    size_t planes = 2 * (size_t)net->width * half;
    if (6 * 4 * half > planes)
        planes = 6 * 4 * half;
    const size_t nacc = (size_t)f.win;
    const size_t bytes = (nx + 2 * planes + nacc) * sizeof(float) + 3 * (size_t)f.w * f.cam_h;
    float *mem = malloc(bytes);
    if (!mem) {
        pc_set_err(err, errlen, "net %dx%d: cannot allocate %zu bytes of temporaries", f.w, f.h, bytes);
        return PC_ENOMEM;
    }
    float *X = mem, *A = X + nx, *B = A + planes, *acc = B + planes;
    uint8_t *rgb = (uint8_t *)(acc + nacc);
    for (int cam = 0; cam < f.ncam; cam++) {
        ref_camera(&f, cam, X, A, B, acc, rgb);
        for (int y = 0; y < f.cam_h; y += 2)
            pc_net_store_rows(&f, cam, y, rgb + (size_t)y * f.w * 3, rgb + (size_t)(y + 1) * f.w * 3);
    }
    free(mem);
    return PC_OK;
}

/* --- the descriptor's impl (algo_impl.h) ------------------------------ */

/* pc_ref_debayer(PC_ALGO_NET, ...): the reference with the default
 * weights file, loaded for the call (its errors name the file). */
static int net_ref_run(const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen)
{
    pc_net *net = NULL;
    int rc = pc_net_load(&net, pc_net_default_path(), err, errlen);
    if (rc)
        return rc;
    rc = pc_net_ref(net, src, dst, err, errlen);
    pc_net_free(net);
    return rc;
}

/* The CPU backend: its weights (pc_cpu_set_net, else the default file)
 * and its scratch (pc_cpu_net_scratch), on its pool. */
static int net_cpu_prepare(pc_cpu *cpu, char *err, size_t errlen)
{
    const pc_net *net = pc_cpu_get_net(cpu, err, errlen);
    if (!net)
        return PC_EINVAL;
    size_t need = pc_net_cpu_temp_bytes(net, pc_cpu_width(cpu), pc_cpu_threads(cpu));
    return pc_cpu_net_scratch(cpu, need, NULL, err, errlen);
}

static int net_cpu_run(pc_cpu *cpu, uint8_t *temp, const pc_bayer *src, const pc_picture *dst, char *err,
                       size_t errlen)
{
    (void)temp;
    const pc_net *net = pc_cpu_get_net(cpu, err, errlen);
    if (!net)
        return PC_EINVAL;
    size_t need = pc_net_cpu_temp_bytes(net, src->width, pc_cpu_threads(cpu));
    uint8_t *scratch = NULL;
    int rc = pc_cpu_net_scratch(cpu, need, &scratch, err, errlen);
    if (rc)
        return rc;
    return pc_net_cpu(cpu, net, NULL, scratch, need, src, dst, err, errlen);
}

const pc_algo_impl pc_net_impl = {net_ref_run, NULL, net_cpu_run, net_cpu_prepare};
