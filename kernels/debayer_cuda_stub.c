/* debayer_cuda_stub.c - the GPU context (core's gpu.h) and the demosaic
 * family's CUDA API (debayer_cuda.h, convert_cuda.h) when panocap is built
 * without CUDA: no devices, and every call says so. Lets the bench, the
 * tests and the daemon link and fall back to the CPU path (the render
 * family's stub is render/render_cuda_stub.c). */
#include <stdio.h>

#include "convert_cuda.h"
#include "debayer_cuda.h"

#define NOTSUP(fn)                                                                                 \
    do {                                                                                           \
        if (err && errlen)                                                                         \
            snprintf(err, errlen, "%s: panocap was built without CUDA (meson -Dcuda=enabled)", fn); \
        return PC_ENOTSUP;                                                                         \
    } while (0)

int pc_gpu_device_count(void) { return 0; }
int pc_gpu_open(pc_gpu **out, int device, int width, int height, int slots, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    NOTSUP("pc_gpu_open");
}
void pc_gpu_close(pc_gpu *g) {}
const char *pc_gpu_device_name(const pc_gpu *g) { return ""; }
int pc_gpu_slots(const pc_gpu *g) { return 0; }
int pc_gpu_set_algo(pc_gpu *g, pc_algo_id algo, pc_variant variant, pc_cfa cfa, pc_pixfmt fmt,
                    pc_matrix matrix, pc_range range, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_set_algo");
}
void pc_gpu_get_choice(const pc_gpu *g, pc_variant *variant, int *tile_rows)
{
    if (variant)
        *variant = PC_VARIANT_AUTO;
    if (tile_rows)
        *tile_rows = 0;
}
int pc_gpu_set_tile_rows(pc_gpu *g, int rows, char *err, size_t errlen) { NOTSUP("pc_gpu_set_tile_rows"); }
int pc_gpu_set_net(pc_gpu *g, const pc_net *net, char *err, size_t errlen) { NOTSUP("pc_gpu_set_net"); }
int pc_gpu_set_cam_rows(pc_gpu *g, int cam_rows, char *err, size_t errlen) { NOTSUP("pc_gpu_set_cam_rows"); }
int pc_gpu_net_convs(pc_gpu *g, pc_gpu_net_conv *out, int max, char *err, size_t errlen) { NOTSUP("pc_gpu_net_convs"); }
int pc_gpu_net_set_conv(pc_gpu *g, int index, char *err, size_t errlen) { NOTSUP("pc_gpu_net_set_conv"); }
int pc_gpu_mlri_set_tiles(pc_gpu *g, int dir_rows, int rb_rows, int dir_lean, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_mlri_set_tiles");
}
int pc_gpu_net_set_profile(pc_gpu *g, int on, char *err, size_t errlen) { NOTSUP("pc_gpu_net_set_profile"); }
int pc_gpu_net_profile(pc_gpu *g, double *ms, int max, int *launches, int *frames, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_net_profile");
}
uint8_t *pc_gpu_input(pc_gpu *g, int slot, size_t *pitch) { return NULL; }
int pc_gpu_upload_async(pc_gpu *g, int slot, int row0, const uint8_t *host, size_t host_pitch, int rows,
                        char *err, size_t errlen)
{
    NOTSUP("pc_gpu_upload_async");
}
int pc_gpu_debayer(pc_gpu *g, int slot, const pc_picture *dst, char *err, size_t errlen) { NOTSUP("pc_gpu_debayer"); }
int pc_gpu_download_async(pc_gpu *g, int slot, const pc_picture *dev, const pc_picture *host, char *err,
                          size_t errlen)
{
    NOTSUP("pc_gpu_download_async");
}
int pc_gpu_picture_upload_async(pc_gpu *g, int slot, const pc_picture *host, const pc_picture *dev, char *err,
                                size_t errlen)
{
    NOTSUP("pc_gpu_picture_upload_async");
}
int pc_gpu_slot_mark(pc_gpu *g, int slot, char *err, size_t errlen) { NOTSUP("pc_gpu_slot_mark"); }
int pc_gpu_device(const pc_gpu *g) { return -1; }
int pc_gpu_slot_wait(pc_gpu *g, int slot, char *err, size_t errlen) { NOTSUP("pc_gpu_slot_wait"); }
int pc_gpu_sync(pc_gpu *g, char *err, size_t errlen) { NOTSUP("pc_gpu_sync"); }
int pc_gpu_frame_time_us(pc_gpu *g, int slot, double *us, char *err, size_t errlen) { NOTSUP("pc_gpu_frame_time_us"); }
void *pc_gpu_stream(pc_gpu *g) { return NULL; }
void *pc_gpu_cu_context(pc_gpu *g) { return NULL; }
int pc_gpu_picture_alloc(pc_gpu *g, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width, int height,
                         pc_picture *out, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_picture_alloc");
}
void pc_gpu_picture_free(pc_gpu *g, pc_picture *pic) {}
int pc_gpu_host_alloc(size_t bytes, void **out, char *err, size_t errlen) { NOTSUP("pc_gpu_host_alloc"); }
void pc_gpu_host_free(void *p) {}
int pc_gpu_downscale_async(pc_gpu *g, int slot, const pc_picture *dev, const pc_picture *dst, int scale, char *err,
                           size_t errlen)
{
    NOTSUP("pc_gpu_downscale_async");
}
int pc_gpu_input_written(pc_gpu *g, int slot, int row0, int rows, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_input_written");
}
int pc_gpu_margin_time_us(pc_gpu *g, double *us, char *err, size_t errlen) { NOTSUP("pc_gpu_margin_time_us"); }
void pc_gpu_set_options(pc_gpu *g, unsigned options) {}
int pc_gpu_set_colour_tables(pc_gpu *g, int cam, const pc_colour_tables *t, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_set_colour_tables");
}
int pc_gpu_upload_raw_async(pc_gpu *g, int slot, int row0, const uint8_t *host, const pc_rawfmt *f, int cam,
                            int rows, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_upload_raw_async");
}
int pc_gpu_colour_time_us(pc_gpu *g, const pc_rawfmt *f, int ncam, double *us, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_colour_time_us");
}

/* convert_cuda.h */
int pc_gpu_convert(pc_gpu *g, int slot, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_convert");
}
int pc_gpu_convert_enqueue(pc_gpu *g, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    NOTSUP("pc_gpu_convert_enqueue");
}
