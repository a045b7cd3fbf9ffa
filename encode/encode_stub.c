/* encode_stub.c - the encoder API when panocap is built without FFmpeg:
 * opening an encoder fails and says why; the rest is inert. Lets the daemon
 * link and run with `--output null` (demosaicing only) without a
 * PANOCAP_HAVE_FFMPEG branch of its own. */
#include <stdio.h>
#include <string.h>

#include "encode.h"

#define NOTSUP()                                                                                        \
    do {                                                                                                \
        if (err && n)                                                                                   \
            snprintf(err, n, "this build has no FFmpeg (meson -Dffmpeg=enabled): only --output null is " \
                             "possible");                                                               \
        return PC_ENOTSUP;                                                                              \
    } while (0)

int pc_encoder_open(pc_encoder **e, const pc_encode_config *cfg, char *err, size_t n)
{
    if (e)
        *e = NULL;
    NOTSUP();
}
int pc_encoder_frame(pc_encoder *e, pc_picture *pic, int *on_device, char *err, size_t n) { NOTSUP(); }
int pc_encoder_submit(pc_encoder *e, int64_t pts_ns, int force_idr, char *err, size_t n) { NOTSUP(); }
int pc_encoder_submit_picture(pc_encoder *e, const pc_picture *pic, void (*release)(void *), void *opaque,
                              int64_t pts_ns, int force_idr, char *err, size_t n)
{
    if (release)
        release(opaque); /* as documented: also when the submit fails */
    NOTSUP();
}
int pc_encoder_flush(pc_encoder *e, char *err, size_t n) { NOTSUP(); }
void pc_encoder_close(pc_encoder *e) {}
void pc_encoder_request_idr(pc_encoder *e) {}
int pc_encoder_set_bitrate(pc_encoder *e, int64_t bitrate, char *err, size_t n) { NOTSUP(); }
const char *pc_encoder_name(const pc_encoder *e) { return "none"; }
const char *pc_encoder_codec(const pc_encoder *e) { return "none"; }
int pc_encoder_zero_copy(const pc_encoder *e) { return 0; }
void pc_encoder_stats_get(pc_encoder *e, pc_encoder_stats *st) { memset(st, 0, sizeof *st); }
int pc_encoder_list(FILE *out)
{
    fprintf(out, "encoders: none (this build has no FFmpeg)\n");
    return 0;
}
int pc_encoder_opens(const char *name)
{
    (void)name;
    return 0;
}
int pc_encoder_list_str(char *buf, size_t n)
{
    if (n)
        snprintf(buf, n, "none (this build has no FFmpeg)");
    return 0;
}
const char *pc_output_state_name(pc_output_state s) { return "closed"; }
int pc_output_check(int index, const pc_output_config *oc, char *err, size_t n) { NOTSUP(); }
int pc_encoder_check_name(const char *what, const char *name, const char *preset, char *err, size_t n)
{
    NOTSUP();
}
int pc_mux_create(pc_mux **m, int nstreams, const pc_output_config *outputs, int n_outputs, char *err, size_t n)
{
    *m = NULL;
    NOTSUP();
}
void pc_mux_close(pc_mux *m) {}

int pc_jpeg_open(pc_jpeg **j, int quality, char *err, size_t n)
{
    (void)quality;
    *j = NULL;
    NOTSUP();
}
int pc_jpeg_encode(pc_jpeg *j, const pc_picture *pic, uint8_t **data, size_t *size, char *err, size_t n)
{
    *data = NULL;
    *size = 0;
    NOTSUP();
}
void pc_jpeg_close(pc_jpeg *j) {}
