/* cuda_emu_render.h - C entry of the host emulation of the render kernels
 * (cuda_emu_render.cc: cuda_render.cuh run through cuda_emu.h), for
 * tests/test_render.c. Not part of the public API. */
#ifndef PANOCAP_CUDA_EMU_RENDER_H
#define PANOCAP_CUDA_EMU_RENDER_H

#include "render.h"
#include "render_cuda.h" /* pc_gpu_render_variant */

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the CUDA kernel `variant` (PC_GPU_RENDER_*; MAP needs a plan with
 * maps) on the CPU: src and dst in host memory, as the device would get
 * them (the texture variant for RGBX32 sources). */
int pc_emu_render(const pc_render_plan *plan, int variant, const pc_picture *src, const pc_picture *dst, char *err,
                  size_t errlen);
/* Runs the gain-statistics kernel on the CPU. */
int pc_emu_render_measure(const pc_render_plan *plan, const pc_picture *src, pc_render_stats *st, char *err,
                          size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
