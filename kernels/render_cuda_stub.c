/* render_cuda_stub.c - render_cuda.h when panocap is built without CUDA:
 * every call says so (the CPU backend renders instead). */
#include <stdio.h>

#include "render_cuda.h"

#define NOTSUP(fn)                                                                                 \
    do {                                                                                           \
        if (err && errlen)                                                                         \
            snprintf(err, errlen, "%s: panocap was built without CUDA (meson -Dcuda=enabled)", fn); \
        return PC_ENOTSUP;                                                                         \
    } while (0)

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
