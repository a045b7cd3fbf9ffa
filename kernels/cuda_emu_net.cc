/* cuda_emu_net.cc - runs the learned demosaic's CUDA kernels (cuda_net.cuh)
 * on the CPU through cuda_emu.h, for tests/test_cuda_emu_net.c: the same
 * launch sequence as the device (pc_net_sequence), the same weight blob
 * (net_gpu.h), planes poisoned with fp16 NaN so that a valid output that
 * reads a cell no layer wrote shows. */
#include "cuda_emu.h"

#include "cuda_emu_api.h"
#include "cuda_net.cuh"
#include "debayer_cuda.h" /* pc_gpu_dst_align */
#include "errmsg.h"

#include <stdio.h>
#include <stdlib.h>

namespace {

struct emu_launcher {
    bool trunk = true; /* false: the tail only (the planes hold a frame already) */
    int l1(int grid, const pc_net_l1p &p)
    {
        if (!trunk)
            return 0;
        return pc_emu::launch(dim3(grid), dim3(PC_NET_L1_NT), PC_NET_L1_SMEM,
                              [&]() { pc_net_l1_body(p); });
    }
    template <int WR, int NBUF, int WG>
    int conv_cfg(int mode, int grid, const pc_net_lp &p)
    {
        return pc_emu::launch(dim3(grid), dim3(32 * WR), pc_net_conv_smem<WR, NBUF>(), [&]() {
            if (mode)
                pc_net_conv_body<WR, NBUF, 1, WG>(p);
            else
                pc_net_conv_body<WR, NBUF, 0, WG>(p);
        });
    }
    int conv(int mode, int wg, int wr, int nbuf, int grid, const pc_net_lp &p)
    {
        if (!trunk)
            return 0;
        if (wg && wr == 8 && nbuf == 2)
            return conv_cfg<8, 2, 1>(mode, grid, p);
        if (wg && wr == 4 && nbuf == 1)
            return conv_cfg<4, 1, 1>(mode, grid, p);
        if (wg)
            return -2;
        if (wr == 8 && nbuf == 2)
            return conv_cfg<8, 2, 0>(mode, grid, p);
        if (wr == 4 && nbuf == 2)
            return conv_cfg<4, 2, 0>(mode, grid, p);
        if (wr == 4 && nbuf == 1)
            return conv_cfg<4, 1, 0>(mode, grid, p);
        if (wr == 2 && nbuf == 1)
            return conv_cfg<2, 1, 0>(mode, grid, p);
        return -2;
    }
    int tail(int grid, const pc_net_tp &p)
    {
        return pc_emu::launch(dim3(grid), dim3(PC_NET_XNT), PC_NET_X_SMEM, [&]() { pc_net_tail_body(p); });
    }
};

} // namespace

extern "C" int pc_emu_net(const pc_net *net, const pc_bayer *src, int cam_rows, const pc_picture *const *dst, int ndst,
                          int wg, int wr, int nbuf, char *err, size_t errlen)
{
    pc_netg_layout lay;
    int rc = pc_netg_plan(net, &lay, err, errlen);
    if (rc)
        return rc;
    const int W = src->width, H = src->height, ch = cam_rows ? cam_rows : H;
    if (ch < 2 || (ch & 1) || H % ch || H / ch > 16 || W < 2 || (W & 1)) {
        pc_set_err(err, errlen, "pc_emu_net: %dx%d frame of %d-row cameras (even, dividing the height, 1..16 of them)",
                   W, H, ch);
        return PC_EINVAL;
    }
    if (!pc_net_tile_ok(wg, wr, nbuf)) {
        pc_set_err(err, errlen, "pc_emu_net: no %s CONV kernel of %d warps and %d buffers", wg ? "wgmma" : "mma.sync",
                   wr, nbuf);
        return PC_EINVAL;
    }
    for (int i = 0; i < ndst; i++) {
        const size_t align = pc_gpu_dst_align(dst[i]->fmt);
        for (int k = 0; k < pc_pixfmt_planes(dst[i]->fmt); k++)
            if (((uintptr_t)dst[i]->plane[k] | dst[i]->pitch[k]) & (align - 1)) {
                pc_set_err(err, errlen, "pc_emu_net: destination %d plane %d not aligned to %zu bytes", i, k, align);
                return PC_EINVAL;
            }
    }
    const int ncam = H / ch;
    pc_net_frame_args f;
    memset(&f, 0, sizeof f);
    f.depth = net->depth;
    pc_net_geo_set(f.g, net->depth, W, ch, ncam, src->cfa);
    const size_t cells = pc_net_plane_cells(net->depth, W, H, ncam);
    std::vector<uint16_t> act0(cells * 64, 0x7E00), act1(cells * 64, 0x7E00), up(cells * PC_NET_UCH, 0x7E00);
    unsigned char *blob = (unsigned char *)aligned_alloc(256, lay.bytes);
    if (!blob) {
        pc_set_err(err, errlen, "pc_emu_net: out of memory");
        return PC_ENOMEM;
    }
    pc_netg_build(net, &lay, blob);
    f.src = src->data;
    f.pitch = src->pitch;
    f.act[0] = act0.data();
    f.act[1] = act1.data();
    f.uplane = up.data();
    f.blob = blob;
    f.lay = &lay;
    f.wg = wg;
    f.wr = wr;
    f.nbuf = nbuf;
    /* a few CTAs each, so that they walk several tiles (the prefetch) */
    f.ctas_conv = 3;
    f.ctas_l1 = 4;
    f.ctas_tail = 3;
    emu_launcher L;
    for (int i = 0; i < ndst && !rc; i++) {
        pc_yuv_coeffs yc;
        pc_yuv_coeffs_get(dst[i]->matrix, dst[i]->range, &yc);
        memset(&f.o, 0, sizeof f.o);
        if (pc_mlri_set_dst(f.o, dst[i], yc)) {
            pc_set_err(err, errlen, "pc_emu_net: %d colour bands (at most %d)", dst[i]->n_bands, PC_KMAX_BANDS);
            rc = PC_EINVAL;
            break;
        }
        f.o.W = W;
        f.o.H = H;
        rc = pc_net_sequence(L, f);
        L.trunk = false;
        if (rc) {
            pc_set_err(err, errlen, "pc_emu_net: a kernel's threads disagree on barriers or warp collectives (%d)", rc);
            rc = PC_EINVAL;
        }
    }
    free(blob);
    return rc;
}

extern "C" void pc_emu_counts_get(pc_emu_counts *c, int reset)
{
    const pc_emu::counters &s = pc_emu::stats();
    c->ldsm_phases = s.ldsm_phases;
    c->ldsm_wavefronts = s.ldsm_wavefronts;
    c->mma = s.mma;
    c->collectives = s.collectives;
    c->wgmma = s.wgmma;
    if (reset)
        pc_emu::stats() = pc_emu::counters{};
}
