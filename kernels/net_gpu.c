/* net_gpu.c - builds the tensor-core kernels' weight blob from a pc_net
 * (net_gpu.h): the folds (pack into layer 1, residual and upsampler into
 * one map, the mosaic's colours into per-parity post weights, 1/255 into
 * both) in double precision, then one rounding to fp16 per weight. */
#include "net_gpu.h"

#include <stdio.h>
#include <string.h>

#include "errmsg.h"
#include "fp16.h"

static size_t take(size_t *at, size_t bytes)
{
    const size_t o = *at;
    *at += (bytes + 255) & ~(size_t)255;
    return o;
}

static int shape(const pc_net_conv *c, int cin, int cout, int k, const char *what, char *err, size_t errlen)
{
    if (!c->w || !c->b || c->cin != cin || c->cout != cout || c->k != k) {
        pc_set_err(err, errlen, "net on the GPU: %s is %dx%d k%d, the kernels take %dx%d k%d (cin x cout)", what,
                   c->cin, c->cout, c->k, cin, cout, k);
        return PC_EINVAL;
    }
    return 0;
}

int pc_netg_plan(const pc_net *net, pc_netg_layout *lay, char *err, size_t errlen)
{
    memset(lay, 0, sizeof *lay);
    if (!net) {
        pc_set_err(err, errlen, "net on the GPU: no weights");
        return PC_EINVAL;
    }
    const int D = net->depth, C = PC_NETG_C;
    if (net->width != C || D < 2 || D > PC_NET_MAX_DEPTH) {
        pc_set_err(err, errlen, "net on the GPU: the kernels take width %d and depth 2..%d (this model: width %d, "
                   "depth %d)", C, PC_NET_MAX_DEPTH, net->width, D);
        return PC_EINVAL;
    }
    char what[32];
    int rc = shape(&net->pack, 3, 4, 2, "pack", err, errlen);
    rc = rc ? rc : shape(&net->main[0], 4, C, 3, "main[0]", err, errlen);
    for (int i = 1; i < D - 1 && !rc; i++) {
        snprintf(what, sizeof what, "main[%d]", i);
        rc = shape(&net->main[i], C, C, 3, what, err, errlen);
    }
    snprintf(what, sizeof what, "main[%d]", D - 1);
    rc = rc ? rc : shape(&net->main[D - 1], C, 2 * C, 3, what, err, errlen);
    rc = rc ? rc : shape(&net->residual, C, 12, 1, "residual", err, errlen);
    rc = rc ? rc : shape(&net->up, 12, 3, 2, "up", err, errlen);
    rc = rc ? rc : shape(&net->post, 6, C, 3, "post", err, errlen);
    rc = rc ? rc : shape(&net->out, C, 3, 1, "out", err, errlen);
    if (rc)
        return rc;
    size_t at = 0;
    lay->depth = D;
    lay->nconv = D;
    lay->l1_frag = take(&at, 3 * 8 * 32 * 8);
    lay->l1_bias = take(&at, C * sizeof(float));
    for (int k = 0; k < D; k++) {
        lay->conv[k] = take(&at, 9 * C * C * 2);
        lay->bias[k] = take(&at, C * sizeof(float));
    }
    lay->r_frag = take(&at, 4 * 2 * 32 * 8);
    lay->r_bias = take(&at, 16 * sizeof(float));
    lay->post_frag = take(&at, 4 * 3 * 8 * 32 * 8);
    lay->post_bias = take(&at, C * sizeof(float));
    lay->out_w = take(&at, 3 * C * sizeof(float));
    lay->out_b = take(&at, 4 * sizeof(float));
    lay->bytes = at;
    return 0;
}

/* B (K x N, row k, column n, K a multiple of 16, N of 8) as per-lane
 * fragments: [K / 16][N / 8][32 lanes] x {u32 b0, u32 b1}. */
static void frags(const double *B, int K, int N, uint32_t *out)
{
    for (int kc = 0; kc < K / 16; kc++)
        for (int nt = 0; nt < N / 8; nt++)
            for (int l = 0; l < 32; l++) {
                const int g = l >> 2, t = l & 3, n = 8 * nt + g, k = 16 * kc + 2 * t;
                uint32_t *o = out + 2 * (((size_t)kc * (N / 8) + nt) * 32 + l);
                o[0] = pc_half_from_float((float)B[(size_t)k * N + n]) |
                       (uint32_t)pc_half_from_float((float)B[(size_t)(k + 1) * N + n]) << 16;
                o[1] = pc_half_from_float((float)B[(size_t)(k + 8) * N + n]) |
                       (uint32_t)pc_half_from_float((float)B[(size_t)(k + 9) * N + n]) << 16;
            }
}

void pc_netg_build(const pc_net *net, const pc_netg_layout *lay, void *blob)
{
    const int D = lay->depth, C = PC_NETG_C;
    uint8_t *b = (uint8_t *)blob;
    memset(b, 0, lay->bytes);
    /* layer 1: K slot tap * 4 + r (tap = ky * 3 + kx over the 3x3 cells, r
     * = ry * 2 + rx the sample in the cell), the sample's colour from the
     * GRBG block; bias + the pack bias through conv 1 */
    {
        double B[48 * PC_NETG_C];
        memset(B, 0, sizeof B);
        const pc_net_conv *p = &net->pack, *c1 = &net->main[0];
        float *bias = (float *)(b + lay->l1_bias);
        for (int o = 0; o < C; o++) {
            double bs = c1->b[o];
            for (int tap = 0; tap < 9; tap++)
                for (int q = 0; q < 4; q++)
                    bs += (double)c1->w[(o * 4 + q) * 9 + tap] * p->b[q];
            bias[o] = (float)bs;
            for (int tap = 0; tap < 9; tap++)
                for (int r = 0; r < 4; r++) {
                    const int ry = r >> 1, rx = r & 1, col = pc_netg_colour(rx, ry);
                    double s = 0;
                    for (int q = 0; q < 4; q++)
                        s += (double)c1->w[(o * 4 + q) * 9 + tap] * p->w[((q * 3 + col) * 2 + ry) * 2 + rx];
                    B[(size_t)(tap * 4 + r) * C + o] = s / 255.0;
                }
        }
        frags(B, 48, C, (uint32_t *)(b + lay->l1_frag));
    }
    /* the trunk: [tap][cout][cin] */
    for (int k = 0; k < D; k++) {
        const pc_net_conv *c = &net->main[k < D - 2 ? k + 1 : D - 1];
        const int co0 = k == D - 1 ? C : 0; /* the masks: channels C .. 2C - 1 */
        uint16_t *w = (uint16_t *)(b + lay->conv[k]);
        float *bias = (float *)(b + lay->bias[k]);
        for (int co = 0; co < C; co++) {
            bias[co] = c->b[co0 + co];
            for (int ci = 0; ci < C; ci++)
                for (int tap = 0; tap < 9; tap++)
                    w[((size_t)tap * C + co) * C + ci] = pc_half_from_float(c->w[((size_t)(co0 + co) * C + ci) * 9 + tap]);
        }
    }
    /* U channel u = 4 c + 2 ky + kx: the upsampler's group c (residual
     * channels 4c .. 4c + 3) at its kernel position (ky, kx) */
    {
        double B[64 * 16];
        memset(B, 0, sizeof B);
        float *bias = (float *)(b + lay->r_bias);
        const pc_net_conv *r = &net->residual, *up = &net->up;
        for (int u = 0; u < 12; u++) {
            const int c = u >> 2, ky = (u >> 1) & 1, kx = u & 1;
            double bs = up->b[c];
            for (int g = 4 * c; g < 4 * c + 4; g++)
                bs += (double)up->w[(g * 2 + ky) * 2 + kx] * r->b[g];
            bias[u] = (float)bs;
            for (int f = 0; f < C; f++) {
                double s = 0;
                for (int g = 4 * c; g < 4 * c + 4; g++)
                    s += (double)up->w[(g * 2 + ky) * 2 + kx] * r->w[g * C + f];
                B[(size_t)f * 16 + u] = s;
            }
        }
        frags(B, 64, 16, (uint32_t *)(b + lay->r_frag));
    }
    /* post per parity of the output pixel (px, py: its position in the
     * network's input block): K order of pc_netg_post_k */
    {
        double B[48 * PC_NETG_C];
        const pc_net_conv *p = &net->post;
        for (int par = 0; par < 4; par++) {
            const int py = par >> 1, px = par & 1;
            memset(B, 0, sizeof B);
            for (int k = 0; k < 48; k++) {
                int tap, v;
                pc_netg_post_k(k, &tap, &v);
                if (tap == 9 && v < 2) { /* the bias, against A's {1, 1}: in two fp16, high then low */
                    for (int o = 0; o < C; o++) {
                        const double hi = pc_half_to_float(pc_half_from_float(p->b[o]));
                        B[(size_t)k * C + o] = v == 0 ? hi : (double)p->b[o] - hi;
                    }
                    continue;
                }
                if (tap >= 9)
                    continue;
                const int ky = tap / 3, kx = tap % 3;
                const int ch = v == 0 ? pc_netg_colour((px + kx - 1) & 1, (py + ky - 1) & 1) : 2 + v;
                for (int o = 0; o < C; o++)
                    B[(size_t)k * C + o] = (double)p->w[((o * 6 + ch) * 3 + ky) * 3 + kx] / (v == 0 ? 255.0 : 1.0);
            }
            frags(B, 48, C, (uint32_t *)(b + lay->post_frag) + (size_t)2 * 3 * 8 * 32 * par);
        }
        memcpy(b + lay->post_bias, p->b, C * sizeof(float));
        memcpy(b + lay->out_w, net->out.w, 3 * C * sizeof(float));
        memcpy(b + lay->out_b, net->out.b, 3 * sizeof(float));
    }
}
