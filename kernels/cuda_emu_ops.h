/* cuda_emu_ops.h - C entry of the host emulation of the RGB -> YUV
 * conversion's CUDA kernel (cuda_emu_ops.cc: cuda_convert.cuh run through
 * cuda_emu.h), for tests/test_convert.c. Not part of the public API. */
#ifndef PANOCAP_CUDA_EMU_OPS_H
#define PANOCAP_CUDA_EMU_OPS_H

#include "picture.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The conversion kernel on src -> dst (host memory laid out as the device
 * needs: convert_cuda.h's alignment), with the device's launch geometry. */
int pc_emu_convert(const pc_picture *src, const pc_picture *dst, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
