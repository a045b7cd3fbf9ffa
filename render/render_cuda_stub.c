/* render_cuda_stub.c - the render family's CUDA API (render_cuda.h,
 * activity_cuda.h) in a build without CUDA: every call fails with
 * PC_ENOTSUP and a message saying that this build has no CUDA; nothing
 * reaches it, since without CUDA the context stub (kernels/
 * debayer_cuda_stub.c) reports no device and pc_gpu_open fails. */
#include <stdio.h>

#include "activity_cuda.h"
#include "render_cuda.h"

#define NOTSUP(fn)                                                                                 \
    do {                                                                                           \
        if (err && errlen)                                                                         \
            snprintf(err, errlen, "%s: panocap was built without CUDA (meson -Dcuda=enabled)", fn); \
        return PC_ENOTSUP;                                                                         \
    } while (0)

/* render_cuda.h */
const char *pc_gpu_render_variant_name(int variant)
{
    static const char *const n[] = {"ray", "ray-loads", "map", "peer"};
    return (unsigned)variant < PC_GPU_RENDER_VARIANTS ? n[variant] : "?";
}
int pc_gpu_render_prepare(pc_gpu *g, const pc_render_plan *plan, unsigned wants, pc_gpu_renderer **out, char *err,
                          size_t errlen)
{
    if (out)
        *out = NULL;
    NOTSUP("pc_gpu_render_prepare");
}
void pc_gpu_render_free(pc_gpu_renderer *r) {}
int pc_gpu_render_set_gains(pc_gpu_renderer *r, const float gains[][3], char *err, size_t errlen)
{
    NOTSUP("pc_gpu_render_set_gains");
}
int pc_gpu_render(pc_gpu *g, int slot, pc_gpu_renderer *r, const pc_picture *src, const pc_picture *dst, char *err,
                  size_t errlen)
{
    NOTSUP("pc_gpu_render");
}
int pc_gpu_render_enqueue(pc_gpu_renderer *r, int variant, const pc_picture *src, const pc_picture *dst, char *err,
                          size_t errlen)
{
    NOTSUP("pc_gpu_render_enqueue");
}
int pc_gpu_render_measure(pc_gpu *g, int slot, pc_gpu_renderer *r, const pc_picture *src, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_render_measure");
}
int pc_gpu_render_stats(pc_gpu_renderer *r, pc_render_stats *st, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_render_stats");
}
int pc_gpu_render_picture_alloc(pc_gpu *g, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width, int height,
                                pc_picture *out, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_render_picture_alloc");
}
int pc_gpu_render_time(int n, pc_gpu_renderer *const *r, const int *variant, const pc_picture *src, int nsrc,
                       const pc_picture *dst, int ndst, int warmup, int iters, double *us, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_render_time");
}
int pc_gpu_render_update(pc_gpu_renderer *r, const pc_render_plan *plan, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_render_update");
}

/* activity_cuda.h */
int pc_gpu_activity_open(pc_gpu *g, int w, int h, pc_gpu_activity **out, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    NOTSUP("pc_gpu_activity_open");
}
void pc_gpu_activity_close(pc_gpu_activity *a) {}
int pc_gpu_activity_run(pc_gpu *g, int slot, pc_gpu_activity *a, const pc_picture *luma, const pc_activity_params *p,
                    uint32_t *counts, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_activity_run");
}
int pc_gpu_activity_enqueue(pc_gpu_activity *a, const pc_picture *luma, const pc_activity_params *p,
                            uint32_t *counts, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_activity_enqueue");
}
