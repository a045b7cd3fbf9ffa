/* cuda_emu_activity.h - C entry of the host emulation of the activity map's
 * CUDA kernel (cuda_emu_activity.cc: cuda_activity.cuh run through
 * cuda_emu.h), for tests/test_activity.c. Not part of the public API. */
#ifndef PANOCAP_CUDA_EMU_ACTIVITY_H
#define PANOCAP_CUDA_EMU_ACTIVITY_H

#include "activity.h"
#include "picture.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One frame of the activity kernel as the device runs it (the counts
 * cleared first): luma w x h at pitch, bg and counts as pc_activity_ref's. */
int pc_emu_activity(const uint8_t *luma, size_t pitch, int w, int h, uint16_t *bg, int init,
                    const pc_activity_params *p, uint32_t *counts, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
