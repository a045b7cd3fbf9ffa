/* cuda_emu_ops.h - C entry of the host emulation of the activity map's and
 * the RGB -> YUV conversion's CUDA kernels (cuda_emu_ops.cc: cuda_activity.cuh
 * and cuda_convert.cuh run through cuda_emu.h), for tests/test_activity.c
 * and tests/test_convert.c. Not part of the public API. */
#ifndef PANOCAP_CUDA_EMU_OPS_H
#define PANOCAP_CUDA_EMU_OPS_H

#include "activity.h"
#include "debayer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One frame of the activity kernel as the device runs it (the counts
 * cleared first): luma w x h at pitch, bg and counts as pc_activity_ref's. */
int pc_emu_activity(const uint8_t *luma, size_t pitch, int w, int h, uint16_t *bg, int init,
                    const pc_activity_params *p, uint32_t *counts, char *err, size_t errlen);

/* The conversion kernel on src -> dst (host memory laid out as the device
 * needs: convert_cuda.h's alignment), with the device's launch geometry. */
int pc_emu_convert(const pc_picture *src, const pc_picture *dst, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
