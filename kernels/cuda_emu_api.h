/* cuda_emu_api.h - C entry of the host emulation of the CUDA kernels
 * (cuda_emu.cc), used by tests/test_cuda_emu.c. Not part of the public API. */
#ifndef PANOCAP_CUDA_EMU_API_H
#define PANOCAP_CUDA_EMU_API_H

#include "colour.h"
#include "debayer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when algo has a fused CUDA kernel that the emulation runs; 0 for an
 * algorithm with its own CUDA implementation (cuda_launch.h). */
int pc_emu_supports(pc_algo_id algo);

/* Runs the CUDA kernel of algo/variant with tile height th on the CPU. */
int pc_emu_debayer(pc_algo_id algo, pc_variant variant, int th, const pc_bayer *src,
                   const pc_picture *dst, char *err, size_t errlen);
/* pc_emu_debayer with src holding the raw 8-bit codes of ncam camera slabs
 * of cam_rows rows each (camera c: CFA phase cfa[c], tables t[c], 8-bit),
 * which the kernel's tile loader maps (pc_kparams.clut; smem: from shared
 * memory, pc_kparams.clut_smem), as the device does for 8-bit raw uploads. */
int pc_emu_debayer_raw8(pc_algo_id algo, pc_variant variant, int th, const pc_bayer *src,
                        const pc_colour_tables *const *t, const pc_cfa *cfa, int ncam, int cam_rows, int smem,
                        const pc_picture *dst, char *err, size_t errlen);
/* Runs the CUDA colour pass (cuda_colour.cuh) over one slab on the CPU;
 * with ml/mr > 0 it also fills that many bytes left of each row's dst and
 * right of its W pixels with the reflect-101 mirror (the device margins). */
int pc_emu_colour(const pc_rawfmt *f, const pc_colour_tables *t, const uint8_t *src, int W, int rows,
                  uint8_t *dst, size_t dst_pitch, int ml, int mr, char *err, size_t errlen);

/* Runs the MLRI kernels (cuda_mlri.cuh) on the CPU into dst. */
int pc_emu_mlri(const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
