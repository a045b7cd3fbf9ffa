/* convert.c - RGB -> YUV of the unstitched cameras on the CPU backend's
 * threads (convert.h): bands of row pairs, each stored by the reference's
 * own loop (pc_ref_store_rgb_rows: spec §8 blocks, grid offsets), so the
 * bytes are pc_rgb_to_yuv's. */
#include "convert.h"

#include "algo_impl.h" /* pc_cpu_parallel */
#include "reference_passes.h"

#include <string.h>

int pc_convert_check(const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    if (!src || !dst) {
        pc_set_err(err, errlen, "convert: %s is NULL", src ? "the destination" : "the source");
        return PC_EINVAL;
    }
    const int bpp = src->fmt == PC_FMT_RGB24 ? 3 : src->fmt == PC_FMT_RGBX32 ? 4 : 0;
    if (!bpp || !src->plane[0] || src->pitch[0] < (size_t)bpp * (size_t)(src->width > 0 ? src->width : 0)) {
        pc_set_err(err, errlen, "convert: the source must be an rgb24 or rgbx32 picture with its plane (got format "
                   "%d, %dx%d, pitch %zu)", (int)src->fmt, src->width, src->height, src->pitch[0]);
        return PC_EINVAL;
    }
    int rc = pc_check_size(src->width, src->height, err, errlen);
    if (rc)
        return rc;
    if (dst->fmt != PC_FMT_NV12 && dst->fmt != PC_FMT_I420) {
        pc_set_err(err, errlen, "convert: destination format %s (nv12 or i420)",
                   dst->fmt == PC_FMT_RGBX32 ? "rgbx32" : pc_pixfmt_name(dst->fmt));
        return PC_EINVAL;
    }
    /* the size (as a grid: the source it is made of), planes, pitches,
     * grid and bands, as the demosaic checks its destination */
    return pc_check_picture(dst, src->width, src->height, err, errlen);
}

typedef struct job {
    const pc_picture *src, *dst;
    pc_yuv_coeffs yc;
} job;

static void band(void *arg, int index, int n)
{
    const job *jb = arg;
    const pc_picture *s = jb->src, *d = jb->dst;
    const int bpp = s->fmt == PC_FMT_RGBX32 ? 4 : 3, pairs = s->height / 2;
    const int y0 = 2 * (int)((int64_t)pairs * index / n), y1 = 2 * (int)((int64_t)pairs * (index + 1) / n);
    for (int y = y0; y < y1; y += 2) {
        pc_yuv_coeffs yc = jb->yc;
        if (d->bands) {
            const int b = y / d->band_rows;
            yc = d->bands[b < d->n_bands ? b : d->n_bands - 1];
        }
        const uint8_t *r0 = s->plane[0] + (size_t)y * s->pitch[0];
        pc_ref_store_rgb_rows(d, &yc, y, r0, r0 + s->pitch[0], bpp, s->width);
    }
}

int pc_cpu_convert(pc_cpu *cpu, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    int rc = pc_convert_check(src, dst, err, errlen);
    if (rc)
        return rc;
    job jb;
    jb.src = src;
    jb.dst = dst;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &jb.yc);
    pc_cpu_parallel(cpu, band, &jb);
    return 0;
}
