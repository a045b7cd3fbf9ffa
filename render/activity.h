/* activity.h - the activity map of the follow mode: a per-pixel background
 * model of a small panorama's luma and the count of foreground pixels per
 * cell. Integer throughout (8.8 fixed-point background), so the C
 * reference, the CPU path and the CUDA kernel count exactly the same.
 *
 *   per pixel:  fg = |L - (B >> 8)| > threshold      (B before the update)
 *               B += ((L << 8) - B) >> shift         (alpha = 2^-shift)
 *   per cell:   counts[cell] = number of fg pixels in its cw x ch pixels
 *
 * With shift 6 at 50 fps the background forgets in ~1.3 s (64 frames):
 * players who stand still fade into it within a few seconds, the moving
 * play stays foreground.
 *
 * Implementations: pc_activity_ref here (the CPU backend runs it: ~1000x160
 * pixels take ~0.3 ms on one core, threads would not pay), the CUDA kernel
 * (cuda_activity.cuh, activity_cuda.h): the same counts exactly; the
 * daemon uses them through the backend ops (backend.h: activity_*). */
#ifndef PANOCAP_ACTIVITY_H
#define PANOCAP_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_activity_params {
    int shift;     /* background update rate 2^-shift, 1..12 */
    int threshold; /* luma difference that is foreground, 1..255 */
    int cw, ch;    /* cell size, pixels */
} pc_activity_params;

/* Cells across/down for a w x h picture. */
static inline int pc_activity_cells(int w, int h, const pc_activity_params *p)
{
    return ((w + p->cw - 1) / p->cw) * ((h + p->ch - 1) / p->ch);
}

/* Checks p (the ranges above) for a w x h picture; the message names the
 * field. 0 or PC_EINVAL (core.h). */
int pc_activity_check(const pc_activity_params *p, int w, int h, char *err, size_t errlen);

/* The reference: updates bg (w*h 8.8 values; init != 0 sets it from this
 * picture and counts nothing) and writes counts (pc_activity_cells). */
void pc_activity_ref(const uint8_t *luma, size_t pitch, int w, int h, uint16_t *bg, int init,
                     const pc_activity_params *p, uint32_t *counts);

#ifdef __cplusplus
}
#endif
#endif
