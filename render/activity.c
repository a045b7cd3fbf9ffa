/* activity.c - the activity map's C reference (activity.h): the definition
 * the CUDA kernel is checked against. A small panorama (about 1/8 of the
 * real one, ~1000x160) costs well under a millisecond here. */
#include "activity.h"

#include "picture.h"
#include "errmsg.h"

#include <string.h>

int pc_activity_check(const pc_activity_params *p, int w, int h, char *err, size_t errlen)
{
    if (!p) {
        pc_set_err(err, errlen, "activity map: no parameters");
        return PC_EINVAL;
    }
    if (w < 1 || h < 1 || w > PC_MAX_DIM || h > PC_MAX_DIM) {
        pc_set_err(err, errlen, "activity map: picture %dx%d (1..%d)", w, h, PC_MAX_DIM);
        return PC_EINVAL;
    }
    const char *bad = p->shift < 1 || p->shift > 12                 ? "shift (1..12)"
                      : p->threshold < 1 || p->threshold > 255      ? "threshold (1..255)"
                      : p->cw < 1 || p->cw > w || p->ch < 1 || p->ch > h ? "cell size (1 .. the picture's)"
                                                                    : NULL;
    if (bad) {
        pc_set_err(err, errlen, "activity map: %s: shift %d, threshold %d, cells %dx%d on %dx%d", bad, p->shift,
                   p->threshold, p->cw, p->ch, w, h);
        return PC_EINVAL;
    }
    return 0;
}

void pc_activity_ref(const uint8_t *luma, size_t pitch, int w, int h, uint16_t *bg, int init,
                     const pc_activity_params *p, uint32_t *counts)
{
    const int gw = (w + p->cw - 1) / p->cw;
    memset(counts, 0, (size_t)pc_activity_cells(w, h, p) * sizeof *counts);
    for (int y = 0; y < h; y++) {
        const uint8_t *l = luma + (size_t)y * pitch;
        uint16_t *b = bg + (size_t)y * w;
        uint32_t *crow = counts + (size_t)(y / p->ch) * gw;
        for (int x = 0; x < w; x++) {
            const int L = l[x], B = b[x];
            if (init) {
                b[x] = (uint16_t)(L << 8);
                continue;
            }
            const int d = L - (B >> 8);
            if (d > p->threshold || -d > p->threshold)
                crow[x / p->cw]++;
            /* arithmetic shift of a negative difference rounds towards
             * -infinity; the same on every backend (C and CUDA >> on int) */
            b[x] = (uint16_t)(B + (((L << 8) - B) >> p->shift));
        }
    }
}
