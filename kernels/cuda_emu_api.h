/* cuda_emu_api.h - C entry of the host emulation of the CUDA kernels
 * (cuda_emu.cc), used by tests/test_cuda_emu.c. Not part of the public API. */
#ifndef PANOCAP_CUDA_EMU_API_H
#define PANOCAP_CUDA_EMU_API_H

#include "colour.h"
#include "debayer.h"
#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when algo has a fused CUDA kernel that the emulation runs; 0 for an
 * algorithm with its own CUDA implementation (cuda_launch.h). */
int pc_emu_supports(pc_algo_id algo);

/* Runs the CUDA kernel of algo/variant with tile height th on the CPU. */
int pc_emu_debayer(pc_algo_id algo, pc_variant variant, int th, const pc_bayer *src,
                   const pc_picture *dst, char *err, size_t errlen);
/* Runs the CUDA colour pass (cuda_colour.cuh) over one slab on the CPU;
 * with ml/mr > 0 it also fills that many bytes left of each row's dst and
 * right of its W pixels with the reflect-101 mirror (the device margins). */
int pc_emu_colour(const pc_rawfmt *f, const pc_colour_tables *t, const uint8_t *src, int W, int rows,
                  uint8_t *dst, size_t dst_pitch, int ml, int mr, char *err, size_t errlen);

/* The same for the stacked slabs of ncam cameras in one launch (the
 * device's per-frame pass): camera k's stream at src + k * src_cam, its
 * tables t[k], its rows from dst + k * rows * dst_pitch. */
int pc_emu_colour_cams(const pc_rawfmt *f, const pc_colour_tables *const *t, int ncam, const uint8_t *src,
                       size_t src_cam, int W, int rows, uint8_t *dst, size_t dst_pitch, int ml, int mr, char *err,
                       size_t errlen);

/* Runs the MLRI kernels (cuda_mlri.cuh) on the CPU into dst. */
int pc_emu_mlri(const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen);
/* The same with the measurement knobs of pc_gpu_mlri_set_tiles: rows per
 * CTA of DIR and RB (0 = the default) and DIR's lean variant (0, 1). */
int pc_emu_mlri_tiles(const pc_bayer *src, const pc_picture *dst, int dir_rows, int rb_rows, int dir_lean, char *err,
                      size_t errlen);

/* Runs the learned demosaic's kernels (cuda_net.cuh) with net's weights on
 * the CPU: src is cameras of cam_rows rows (0: one image) stacked, the
 * network once, then its last kernel (the full-resolution tail and the
 * writer) into each of the ndst destinations; CONV's kernel: wg 1 wgmma
 * (Hopper) or 0 mma.sync, with wr warps and nbuf buffers (pc_net_tile_ok:
 * the ones the device instantiates). */
int pc_emu_net(const pc_net *net, const pc_bayer *src, int cam_rows, const pc_picture *const *dst, int ndst, int wg,
               int wr, int nbuf, char *err, size_t errlen);

/* What the emulated warp instructions did since the last reset: ldmatrix
 * phases (8 rows of 16 bytes) and the shared-memory wavefronts they took
 * (equal when free of bank conflicts), mma.sync, warp collectives, wgmma
 * (per warp: its 16 rows of each). */
typedef struct pc_emu_counts {
    unsigned long long ldsm_phases, ldsm_wavefronts, mma, collectives, wgmma;
} pc_emu_counts;
void pc_emu_counts_get(pc_emu_counts *c, int reset);

#ifdef __cplusplus
}
#endif
#endif
