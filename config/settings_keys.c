/* settings_keys.c - the key table: every setting described once, as data
 * (name, type, storage, default, range, help), the named values of its enum
 * keys, and lookups in it. Parsing, validation, reload diffs and writing
 * (settings_parse.c, settings_validate.c, settings_reload.c,
 * settings_write.c, settings_file.c) all work from this table. */
#include "encode_limits.h" /* the encoder's own limits */
#include "settings_keys.h"

#include "debayer.h"
#include "log.h"
#include "render.h"

#include <string.h>
#include <strings.h>

/* --- named values ----------------------------------------------------- */

#define LOCAL_ENUM(id, base_, ...)                                                     \
    static const char *const id##_names[] = {__VA_ARGS__};                             \
    static int id##_count(void) { return (int)(sizeof id##_names / sizeof *id##_names); } \
    static const char *id##_name(int i)                                                \
    {                                                                                  \
        return (i >= 0 && i < id##_count()) ? id##_names[i] : "?";                     \
    }                                                                                  \
    static int id##_parse(const char *n)                                               \
    {                                                                                  \
        for (int i = 0; n && i < id##_count(); i++)                                    \
            if (strcasecmp(n, id##_names[i]) == 0)                                     \
                return (base_) + i;                                                    \
        return -1;                                                                     \
    }                                                                                  \
    static const pc_enum id##_enum = {id##_count, id##_name, id##_parse, (base_)};

LOCAL_ENUM(source, 0, "gige", "fake", "file")
LOCAL_ENUM(trigger, 0, "free-run", "software", "hardware")
LOCAL_ENUM(backend, 0, "auto", "cuda", "cpu")
LOCAL_ENUM(codec, 0, "hevc", "h264")
LOCAL_ENUM(layout, 0, "auto", "stacked", "grid", "bands")
LOCAL_ENUM(band_outputs, 0, "separate", "streams")
LOCAL_ENUM(vcam_mode, 0, "manual", "follow")

const char *pc_source_name(pc_source v) { return source_name((int)v); }
const char *pc_trigger_name(pc_trigger v) { return trigger_name((int)v); }
const char *pc_backend_pref_name(pc_backend_pref v) { return backend_name((int)v); }
const char *pc_codec_name(pc_codec v) { return codec_name((int)v); }
const char *pc_layout_name(pc_layout v) { return layout_name((int)v); }
const char *pc_vcam_mode_name(pc_vcam_mode v) { return vcam_mode_name((int)v); }

/* Names owned by the kernels library: parsed with its helpers. */
static int cfa_count(void) { return 4; }
static const char *cfa_name(int i) { return pc_cfa_name((pc_cfa)i); }
static const pc_enum cfa_enum = {cfa_count, cfa_name, pc_cfa_from_name, 0};

static int variant_count(void) { return 3; }
static const char *variant_name(int i) { return pc_variant_name((pc_variant)i); }
static const pc_enum variant_enum = {variant_count, variant_name, pc_variant_from_name, 0};

static const char *const matrix_names[] = {"bt709", "bt601"};
static int two(void) { return 2; }
static const char *matrix_name(int i) { return (i == 0 || i == 1) ? matrix_names[i] : "?"; }
static const pc_enum matrix_enum = {two, matrix_name, pc_matrix_from_name, 0};

static const char *const range_names[] = {"limited", "full"};
static const char *range_name(int i) { return (i == 0 || i == 1) ? range_names[i] : "?"; }
static const pc_enum range_enum = {two, range_name, pc_range_from_name, 0};

static const char *algo_name(int i)
{
    const pc_algo_desc *d = pc_algo_get((pc_algo_id)i);
    return d ? d->name : "?";
}
static int algo_parse(const char *n)
{
    const pc_algo_desc *d = pc_algo_find(n);
    return d ? (int)d->id : -1;
}
static const pc_enum algo_enum = {pc_algo_count, algo_name, algo_parse, 0};

static const char *blend_name(int i) { return pc_render_blend_name((pc_render_blend)i); }
static const pc_enum blend_enum = {pc_render_blend_count, blend_name, pc_render_blend_from_name, 0};
static const char *sampler_name(int i) { return pc_render_sampler_name((pc_render_sampler)i); }
static const pc_enum sampler_enum = {pc_render_sampler_count, sampler_name, pc_render_sampler_from_name, 0};

static const char *const level_names[] = {"err", "warning", "notice", "info", "debug"};
static int level_count(void) { return 5; }
static const char *level_name(int i) { return (i >= 0 && i < 5) ? level_names[i] : "?"; }
static int level_parse(const char *n)
{
    int v = pc_log_level_from_name(n);
    return v >= PC_LOG_ERR ? v : -1;
}
static const pc_enum level_enum = {level_count, level_name, level_parse, PC_LOG_ERR};

/* --- the key table ---------------------------------------------------- */

#define F(type, field) offsetof(type, field), sizeof(((type *)0)->field)
#define CAM(field) F(pc_camera_settings, field)
#define CAP(field) F(pc_capture_settings, field)
#define DEB(field) F(pc_debayer_settings, field)
#define ENC(field) F(pc_encode_settings, field)
#define OUT(field) F(pc_output_settings, field)
#define DMN(field) F(pc_daemon_settings, field)
#define PAN(field) F(pc_panorama_settings, field)
#define VCA(field) F(pc_vcam_settings, field)
#define PRE(field) F(pc_vcam_preset, field)
#define BIG PC_KEY_NO_MAX

/* Keys of one camera; those without PC_KF_CAMERA_ONLY may also be given
 * in `capture` as the default of every camera. At most 32 (set_mask). */
const pc_key pc_camera_keys_[] = {
    {"name", PC_KT_STRING, CAM(name), 0, 0, PC_KF_CAMERA_ONLY, NULL, 0, "", NULL,
     "label in logs and metrics (default camN)", NULL},
    {"address", PC_KT_STRING, CAM(address), 0, 0, PC_KF_CAMERA_ONLY, NULL, 0, "", NULL,
     "gige: IP address or Aravis device id of the camera", NULL},
    {"serial", PC_KT_STRING, CAM(serial), 0, 0, PC_KF_CAMERA_ONLY, NULL, 0, "", NULL,
     "gige: serial number (the camera is opened by address, else by serial); fake: its serial", NULL},
    {"slab", PC_KT_INT, CAM(slab), 0, PC_MAX_CAMERAS - 1, PC_KF_CAMERA_ONLY, NULL, 0, "-1", NULL,
     "row band of the panorama, 0 = top (default: position in the list)", NULL},
    {"pattern", PC_KT_ENUM, CAM(pattern), 0, 0, 0, &cfa_enum, 0, "RGGB", NULL,
     "Bayer pattern of the region (BayerRG8 = RGGB ...)", NULL},
    {"width", PC_KT_INT, CAM(width), PC_MIN_DIM, PC_MAX_DIM, PC_KF_EVEN, NULL, 0, "2040", "pixels",
     "region width; every camera must have the same", NULL},
    {"height", PC_KT_INT, CAM(height), PC_MIN_DIM, PC_MAX_DIM, PC_KF_EVEN, NULL, 0, "1080", "pixels",
     "region height (the slab's height in the panorama)", NULL},
    {"offset_x", PC_KT_INT, CAM(offset_x), 0, PC_MAX_DIM, PC_KF_EVEN, NULL, 0, "0", "pixels",
     "region offset on the sensor", NULL},
    {"offset_y", PC_KT_INT, CAM(offset_y), 0, PC_MAX_DIM, PC_KF_EVEN, NULL, 0, "0", "pixels",
     "region offset on the sensor", NULL},
    {"exposure", PC_KT_DOUBLE, CAM(exposure_us), 1, 10e6, PC_KF_ZERO_AUTO, NULL, 0, "0", "us",
     "exposure time; 0 = leave the camera's setting", NULL},
    {"gain", PC_KT_DOUBLE, CAM(gain_db), 0, 100, PC_KF_NEG_AUTO, NULL, 0, "-1", "dB",
     "analog gain; negative = leave the camera's setting", NULL},
    {"packet_size", PC_KT_INT, CAM(packet_size), 576, 16384, PC_KF_ZERO_AUTO | PC_KF_SI, NULL, 0, "0", "bytes",
     "GevSCPSPacketSize (jumbo frames: 8000-9000, \"9k\"); 0 = negotiate the largest that works", NULL},
    {"packet_delay", PC_KT_INT, CAM(packet_delay_ns), 0, 100000000, 0, NULL, 0, "0", "ns",
     "inter-packet delay (GevSCPD)", NULL},
    {"socket_buffer", PC_KT_INT, CAM(socket_buffer), 65536, 256 << 20, PC_KF_ZERO_AUTO | PC_KF_SI, NULL, 0,
     "0", "bytes", "stream socket receive buffer (\"64Mi\"); 0 = Aravis's automatic size", NULL},
    {"resend", PC_KT_BOOL, CAM(resend), 0, 1, 0, NULL, 0, "true", NULL,
     "ask the camera to resend missing packets", NULL},
    {"packet_timeout", PC_KT_INT, CAM(packet_timeout_ms), 1, 10000, 0, NULL, 0, "20", "ms",
     "Aravis packet-timeout: wait this long for a missing packet before asking again", NULL},
    {"frame_retention", PC_KT_INT, CAM(frame_retention_ms), 1, 10000, PC_KF_ZERO_AUTO, NULL, 0, "0", "ms",
     "hand an incomplete frame over (missing lines filled) after this long; 0 = in time for its frame set", NULL},
    {"trigger", PC_KT_ENUM, CAM(trigger), 0, 0, 0, &trigger_enum, 0, "free-run", NULL,
     "free-run, or software/hardware trigger for synchronised cameras", NULL},
    {"trigger_source", PC_KT_STRING, CAM(trigger_source), 0, 0, 0, NULL, 0, "Line0", NULL,
     "hardware trigger input (TriggerSource)", NULL},
    {"image", PC_KT_STRING, CAM(image), 0, 0, PC_KF_CAMERA_ONLY, NULL, 0, "", NULL,
     "fake cameras: picture fed to this camera (default: its part of capture.image)", NULL},
    /* colour (docs/colour.md) */
    {"pixel_format", PC_KT_STRING, CAM(pixel_format), 0, 0, 0, NULL, 0, "", NULL,
     "raw format: BayerRG8 ... BayerRG12p, BayerRG10Packed (any phase); \"auto\" = the deepest the camera "
     "offers that fits its link; \"\" = 8-bit of `pattern`", NULL},
    {"black_level", PC_KT_DOUBLE, CAM(black_level), 0, 65535, 0, NULL, PC_LIVE_COLOUR, "0", "codes",
     "black pedestal in sensor units of the pixel format", NULL},
    {"white_level", PC_KT_DOUBLE, CAM(white_level), 1, 65535, PC_KF_ZERO_AUTO, NULL, PC_LIVE_COLOUR, "0", "codes",
     "sensor code of full white; 0 = the largest code", NULL},
    {"wb_gains", PC_KT_STRING, CAM(wb_gains), 0, 0, PC_KF_NUMBERS, NULL, PC_LIVE_COLOUR, "1, 1, 1", NULL,
     "white-balance gains \"red, green, blue\" (or an array [2.0, 1.0, 1.5]), \"auto\" (grey world, "
     "smoothed) or \"auto shared\" (one estimate over every camera set so)", NULL},
    {"ccm", PC_KT_STRING, CAM(ccm), 0, 0, PC_KF_NUMBERS, NULL, PC_LIVE_COLOUR, "", NULL,
     "colour matrix: 9 numbers, row-major, applied to R, G, B, as a string or an array; \"\" = identity", NULL},
    {"transfer", PC_KT_STRING, CAM(transfer), 0, 0, 0, NULL, PC_LIVE_COLOUR, "linear", NULL,
     "linear, srgb, bt709, a gamma value (e.g. \"2.2\"), or a LUT file (2^bits codes 0..255)", NULL},
};
_Static_assert(sizeof pc_camera_keys_ / sizeof *pc_camera_keys_ <= 32, "set_mask has 32 bits");
const int pc_ncamera_keys_ = (int)(sizeof pc_camera_keys_ / sizeof *pc_camera_keys_);

static const pc_key capture_keys[] = {
    {"source", PC_KT_ENUM, CAP(source), 0, 0, 0, &source_enum, 0, "fake", NULL,
     "gige: GigE Vision cameras; fake: Aravis in-process fake cameras; file: raw replay", NULL},
    {"file", PC_KT_STRING, CAP(file), 0, 0, 0, NULL, 0, "", NULL,
     "raw Bayer file replayed by source = \"file\"", NULL},
    {"file_loop", PC_KT_BOOL, CAP(file_loop), 0, 1, 0, NULL, 0, "false", NULL,
     "replay the raw file in a loop (benchmarks, soak tests); false = stop at its end", NULL},
    {"cameras", PC_KT_INT, CAP(cameras), 1, PC_MAX_CAMERAS, 0, NULL, 0, "5", NULL,
     "number of cameras (default: the length of the cameras list, else 5)", NULL},
    {"fps", PC_KT_DOUBLE, CAP(fps), 1, 1000, 0, NULL, 0, "50", "fps", "frame rate of every camera", NULL},
    {"deadline_periods", PC_KT_DOUBLE, CAP(deadline_periods), 1, 10, 0, NULL, 0, "1.5",
     "frame periods", "a frame set is emitted this long after its first slab, late slabs substituted", NULL},
    {"max_skew", PC_KT_DOUBLE, CAP(max_skew_ms), 0.001, 1000, PC_KF_ZERO_AUTO, NULL, 0, "0", "ms",
     "warn when a frame set's cameras captured further apart than this (max - min of their timestamps; "
     "metrics panocap_frameset_skew_seconds); 0 = half a frame period", NULL},
    {"pool_size", PC_KT_INT, CAP(pool_size), 2, 64, 0, NULL, 0, "4", "frame sets",
     "frame sets in the capture pool (bounded memory; when all are busy a set is dropped)", NULL},
    {"image", PC_KT_STRING, CAP(image), 0, 0, 0, NULL, 0, "", NULL,
     "fake cameras: one panorama picture split across the cameras (\"\" = the bundled photograph)", NULL},
    {"scene", PC_KT_STRING, CAP(scene), 0, 0, 0, NULL, 0, "", NULL,
     "fake cameras: a simulated scene, each camera seeing it through panorama.rig, players and ball "
     "moving (\"stadium\": a football match); \"\" = the pictures", NULL},
    {"scene_seconds", PC_KT_DOUBLE, CAP(scene_seconds), 0.5, 60, 0, NULL, 0, "2", "s",
     "the scene's loop, rendered at start (about 2 s of CPU per second of loop for 5 cameras of 2040x1080)",
     NULL},
    {"scene_seed", PC_KT_INT64, CAP(scene_seed), 0, 1e15, 0, NULL, 0, "1", NULL,
     "which match the scene plays (the same seed, the same match)", NULL},
};

static const pc_key debayer_keys[] = {
    {"algo", PC_KT_ENUM, DEB(algo), 0, 0, 0, &algo_enum, PC_LIVE_ALGO, "edge", NULL,
     "demosaicing algorithm (panocap --list-algos)", NULL},
    {"variant", PC_KT_ENUM, DEB(variant), 0, 0, 0, &variant_enum, PC_LIVE_VARIANT, "auto", NULL,
     "final pass: 2 pixels or one 2x2 block per thread; auto = the faster", NULL},
    {"matrix", PC_KT_ENUM, DEB(matrix), 0, 0, 0, &matrix_enum, 0, "bt709", NULL,
     "RGB -> YUV matrix", NULL},
    {"range", PC_KT_ENUM, DEB(range), 0, 0, 0, &range_enum, 0, "limited", NULL,
     "YUV range (limited = 16..235)", NULL},
    {"backend", PC_KT_ENUM, DEB(backend), 0, 0, 0, &backend_enum, 0, "auto", NULL,
     "auto = CUDA where a device exists, else the multi-threaded CPU path", NULL},
    {"cpu_threads", PC_KT_INT, DEB(cpu_threads), 1, 256, PC_KF_ZERO_AUTO, NULL, 0, "0", "threads",
     "CPU backend threads; 0 = one per CPU", NULL},
    {"in_flight", PC_KT_INT, DEB(in_flight), 1, 8, 0, NULL, 0, "3", "frame sets",
     "frame sets in flight in the GPU stage", NULL},
    {"gpu", PC_KT_STRING, DEB(gpu), 0, 0, 0, NULL, 0, "", NULL,
     "CUDA device for this pipeline: an index (\"1\") or a UUID (\"GPU-8c4f...\", from nvidia-smi -L); "
     "\"\" = the first device. Several pipelines on one host: one instance per GPU", NULL},
    {"net_weights", PC_KT_STRING, DEB(net_weights), 0, 0, 0, NULL, 0, "", NULL,
     "the learned demosaic's weights file (algo net; checked by checksum at start, docs/net.md); \"\" = the "
     "installed demosaicnet-bayer.pcnet", NULL},
};

static const pc_key encode_keys[] = {
    {"codec", PC_KT_ENUM, ENC(codec), 0, 0, 0, &codec_enum, 0, "hevc", NULL,
     "codec for NVENC (h264 NVENC is limited to 4096 pixels, the panorama is taller)", NULL},
    {"encoder", PC_KT_STRING, ENC(encoder), 0, 0, 0, NULL, 0, "auto", NULL,
     "auto = NVENC for the codec, else the fallback list; or an FFmpeg encoder name", NULL},
    {"fallback", PC_KT_LIST, ENC(fallback), 0, 0, 0, NULL, 0, "libx264,libx265,libsvtav1", NULL,
     "encoders tried in order when NVENC cannot open", NULL},
    {"bitrate", PC_KT_INT64, ENC(bitrate), PC_ENCODE_MIN_BITRATE, PC_ENCODE_MAX_BITRATE, PC_KF_SI, NULL, PC_LIVE_BITRATE,
     "20000000", "bit/s", "constant bitrate; k/M/G suffixes accepted (\"20M\")", NULL},
    {"gop", PC_KT_INT, ENC(gop), 1, 3000, 0, NULL, 0, "50", "frames", "frames between IDR frames", NULL},
    {"preset", PC_KT_STRING, ENC(preset), 0, 0, 0, NULL, 0, "", NULL,
     "encoder preset (p1..p7 for NVENC, ultrafast... for x264); \"\" = low-latency default", NULL},
    {"threads", PC_KT_INT, ENC(threads), 1, 256, PC_KF_ZERO_AUTO, NULL, 0, "0", "threads",
     "software encoder threads; 0 = automatic", NULL},
    {"options", PC_KT_STRING, ENC(options), 0, 0, 0, NULL, 0, "", NULL,
     "encoder options \"key=value:key=value\" set last (e.g. \"x264-params=qp=0\" for lossless tests)", NULL},
    {"layout", PC_KT_ENUM, ENC(layout), 0, 0, 0, &layout_enum, 0, "auto", NULL,
     "picture(s) given to the encoder: stacked, grid (the cameras tiled C x R in one picture), bands (one "
     "encoder per band of whole cameras), or auto (software encoders: one-camera bands; NVENC: stacked if it "
     "fits, else grid, else bands)", NULL},
    {"bands", PC_KT_INT, ENC(bands), 1, 16, PC_KF_ZERO_AUTO, NULL, 0, "0", "bands",
     "layout bands: number of bands, a divisor of the camera count; 0 = counted as layout auto does "
     "(software encoders: one camera each, or one band for a small panorama; NVENC: the fewest that fit)", NULL},
    {"grid", PC_KT_STRING, ENC(grid), 0, 0, 0, NULL, 0, "", NULL,
     "layout grid: tiles across x down, e.g. \"4x4\" (their product = the cameras); \"\" = the grid closest "
     "to square within the encoder's limit", NULL},
    {"band_outputs", PC_KT_ENUM, ENC(band_outputs), 0, 0, 0, &band_outputs_enum, 0, "streams", NULL,
     "layout bands: streams = each output has one video stream per band (same PTS); separate = one output "
     "per band, %b in each output URL is the band number", NULL},
    {"preview_scale", PC_KT_INT, ENC(preview_scale), 2, 16, PC_KF_ZERO_AUTO, NULL, 0, "0", "x",
     "preview rendition: the panorama scaled down N times (box filter), own encoder and output; 0 = none", NULL},
    {"preview_bitrate", PC_KT_INT64, ENC(preview_bitrate), 100000, 100000000, PC_KF_SI, NULL, 0, "2000000",
     "bit/s", "preview rendition: constant bitrate (\"2M\")", NULL},
    {"preview_url", PC_KT_STRING, ENC(preview_url), 0, 0, 0, NULL, 0, "", NULL,
     "preview rendition: its output (file, udp://, srt://, .m3u8); needed with preview_scale", NULL},
    {"cpus", PC_KT_STRING, ENC(cpus), 0, 0, 0, NULL, 0, "", NULL,
     "CPUs the encoder and output threads run on, a list like \"4-11\" or \"4,6,8-9\" (online CPUs "
     "only); \"\" = any", NULL},
    {"record_queue_seconds", PC_KT_DOUBLE, ENC(record_queue_s), 0.1, 60, PC_KF_ZERO_AUTO, NULL, 0, "3", "s",
     "a picture with a recording (an output that is a path) is fed through a queue of this many seconds of "
     "pictures in host memory, so an encoder or disk stall loses no set from the recording (README: "
     "Recordings keep every set); 0 = none (a slow encoder drops whole sets, as live outputs do)", NULL},
    {"debug_delay_ms", PC_KT_INT, ENC(debug_delay_ms), 1, 10000, PC_KF_ZERO_AUTO, NULL, 0, "0", "ms",
     "debugging and tests only: every encoder thread waits this long before each frame (a slow encoder); "
     "0 = off", NULL},
};

const pc_key pc_output_keys_[] = {
    {"url", PC_KT_STRING, OUT(url), 0, 0, PC_KF_REQUIRED, NULL, 0, "", NULL,
     "file path (.ts .mkv .mp4 .m3u8), udp://host:port, srt://host:port, tcp://, rtp://, "
     "rtmp://host[:port]/app/key or rtmps:// (FLV, H.264 only; the key is shown as ****), or null", NULL},
    {"options", PC_KT_STRING, OUT(options), 0, 0, 0, NULL, 0, "", NULL,
     "libavformat options \"key=value,key=value\" (pkt_size=1316, passphrase=...)", NULL},
    {"format", PC_KT_STRING, OUT(format), 0, 0, 0, NULL, 0, "", NULL,
     "container format; \"\" = from the URL (mpegts for .ts and network outputs, flv for rtmp://)", NULL},
    {"segment", PC_KT_INT, OUT(segment_s), 1, 86400, PC_KF_ZERO_AUTO, NULL, 0, "0", "s",
     "recordings: start a new file (named by start time) every N seconds; 0 = one file", NULL},
    {"max_bytes", PC_KT_INT64, OUT(max_bytes), 1000000, 1e15, PC_KF_ZERO_AUTO | PC_KF_SI, NULL, 0, "0", "bytes",
     "segmented recordings: delete the oldest closed segments while they take more (\"5G\", \"2Ti\"); 0 = no limit", NULL},
    {"max_age", PC_KT_INT64, OUT(max_age_s), 2, 3153600000LL, PC_KF_ZERO_AUTO, NULL, 0, "0", "s",
     "segmented recordings: delete closed segments older than this; 0 = keep", NULL},
    {"min_free", PC_KT_INT64, OUT(min_free), 1000000, 1e15, PC_KF_ZERO_AUTO | PC_KF_SI, NULL, 0, "0", "bytes",
     "segmented recordings: delete the oldest closed segments while the disk has less free (\"50G\"); 0 = only when full", NULL},
};
const int pc_noutput_keys_ = (int)(sizeof pc_output_keys_ / sizeof *pc_output_keys_);

#define OUTPUTS_EXAMPLE "( \"file.ts\", { url = \"...\"; ... } )"
const pc_list_desc pc_outputs_list_ = {
    "output", "outputs", pc_output_keys_, sizeof pc_output_keys_ / sizeof *pc_output_keys_,
    sizeof(pc_output_settings), offsetof(pc_settings, outputs) - offsetof(pc_settings, output_count),
    PC_MAX_OUTPUTS, offsetof(pc_output_settings, line), offsetof(pc_output_settings, set_mask), 1, OUTPUTS_EXAMPLE};
const pc_list_desc pc_picture_outputs_list_ = {
    "output", "outputs", pc_output_keys_, sizeof pc_output_keys_ / sizeof *pc_output_keys_,
    sizeof(pc_output_settings), offsetof(pc_output_list, item), PC_MAX_PICTURE_OUTPUTS,
    offsetof(pc_output_settings, line), offsetof(pc_output_settings, set_mask), 1, OUTPUTS_EXAMPLE};

/* --- the panorama and the virtual cameras (docs/panorama.md) ------------- */

static const pc_key panorama_keys[] = {
    {"rig", PC_KT_STRING, PAN(rig), 0, 0, 0, NULL, PC_LIVE_RIG, "", NULL,
     "Hugin project (.pto) of the calibrated rig: its images are the cameras in order; \"\" = no rig "
     "(the outputs get the unstitched cameras). Another .pto, or the file rewritten, is swapped in on "
     "reload between two frame sets; adding or removing the rig needs a restart", NULL},
    {"enabled", PC_KT_BOOL, PAN(enabled), 0, 1, 0, NULL, 0, "true", NULL,
     "stitch the panorama where a rig is given: it becomes the outputs' picture; false = the outputs get "
     "the unstitched cameras and the rig serves the virtual cameras only", NULL},
    {"blend", PC_KT_ENUM, PAN(blend), 0, 0, 0, &blend_enum, PC_LIVE_BLEND, "feather", NULL,
     "overlaps: feather (weights falling off towards each camera's border), seam (one camera per pixel, "
     "the seam where the cameras agree, fixed per rig) or multiband (the same seams, the overlaps blended "
     "band by band: fine detail joined at the seam, coarse differences spread over ~60 pixels)", NULL},
    {"sampler", PC_KT_ENUM, PAN(sampler), 0, 0, 0, &sampler_enum, PC_LIVE_BLEND, "auto", NULL,
     "how the cameras' pictures are read: bilinear (2x2 pixels, the fastest), bicubic (12 pixels, "
     "Keys' cubic as Hugin's nona: sharper, about 1.4 dB closer to the scene; not with blend multiband) "
     "or auto (bicubic on the GPU, where it costs about 40 us a frame; bilinear on the CPU backend, where "
     "it costs 13x, and with blend multiband)", NULL},
    {"gain_compensation", PC_KT_BOOL, PAN(gain_compensation), 0, 1, 0, NULL, PC_LIVE_BLEND, "true", NULL,
     "gains measured on the overlaps, on top of the .pto's exposure and white balance, so that no "
     "camera shows a brightness or colour step", NULL},
    {"gain_smoothing", PC_KT_DOUBLE, PAN(gain_smoothing_s), 0.1, 600, 0, NULL, PC_LIVE_BLEND, "2", "s",
     "time constant of the measured gains' filter (no flicker when a player crosses an overlap)", NULL},
    {"width", PC_KT_INT, PAN(width), PC_ENCODE_MIN_SIDE, PC_ENCODE_MAX_SIDE, PC_KF_ZERO_AUTO | PC_KF_EVEN, NULL, 0,
     "0", "pixels",
     "panorama width, the .pto's field of view kept (the height follows its aspect); 0 = the .pto's output "
     "size after its crop; either is capped to the encoder's limit (NVENC HEVC 8192, H.264 4096), logged why", NULL},
    {"unstitched_outputs", PC_KT_GROUPS, PAN(unstitched), 0, 0, 0, NULL, 0, "", NULL,
     "a second picture: the unstitched cameras in encode.layout (stacked, grid or bands), encoded to these "
     "outputs (entries as in the outputs list), e.g. for a recording to recalibrate from; empty = none",
     &pc_picture_outputs_list_},
};

static const pc_key preset_keys[] = {
    {"name", PC_KT_STRING, PRE(name), 0, 0, PC_KF_REQUIRED, NULL, 0, "", NULL,
     "the preset's name: letters, digits, - _ . (control: vcam VIEW preset NAME); unique in its view", NULL},
    {"pan", PC_KT_DOUBLE, PRE(pan), -180, 180, PC_KF_REQUIRED, NULL, 0, "0", "degrees", "pan, + right", NULL},
    {"tilt", PC_KT_DOUBLE, PRE(tilt), -90, 90, PC_KF_REQUIRED, NULL, 0, "0", "degrees", "tilt, + up", NULL},
    {"hfov", PC_KT_DOUBLE, PRE(hfov), 1, 179, PC_KF_ZERO_AUTO, NULL, 0, "0", "degrees",
     "horizontal field of view; 0 = keep the view's", NULL},
};
const pc_list_desc pc_presets_list_ = {
    "preset", "presets", preset_keys, sizeof preset_keys / sizeof *preset_keys, sizeof(pc_vcam_preset),
    offsetof(pc_preset_list, item), PC_MAX_PRESETS, offsetof(pc_vcam_preset, line),
    offsetof(pc_vcam_preset, set_mask), 0, "( { name = \"left-goal\"; pan = -30.0; tilt = -8.0; hfov = 35.0; }, ... )"};

/* Live: the pose, the mode, the presets, the motion and follow parameters
 * (the running view moves to a changed pose); the views' list, names,
 * sizes, outputs and bitrate need a restart (each view is an encoder).
 * The motion and follow defaults are vcam/'s (pc_vcam_limits_default,
 * pc_follow_params_default; tests/test_config.c checks they agree). */
static const pc_key vcam_keys[] = {
    {"name", PC_KT_STRING, VCA(name), 0, 0, PC_KF_REQUIRED, NULL, 0, "", NULL,
     "the view's name: letters, digits, - _ . (control, HTTP and metrics address the view by it); unique", NULL},
    {"width", PC_KT_INT, VCA(width), PC_ENCODE_MIN_SIDE, PC_ENCODE_MAX_SIDE, PC_KF_EVEN, NULL, 0, "1920", "pixels",
     "picture width", NULL},
    {"height", PC_KT_INT, VCA(height), PC_ENCODE_MIN_SIDE, PC_ENCODE_MAX_SIDE, PC_KF_EVEN, NULL, 0, "1080", "pixels",
     "picture height", NULL},
    {"pan", PC_KT_DOUBLE, VCA(pan), -180, 180, 0, NULL, PC_LIVE_VCAM, "0", "degrees",
     "initial pan, + right (the rig's yaw); kept inside what the cameras see", NULL},
    {"tilt", PC_KT_DOUBLE, VCA(tilt), -90, 90, 0, NULL, PC_LIVE_VCAM, "0", "degrees", "initial tilt, + up", NULL},
    {"hfov", PC_KT_DOUBLE, VCA(hfov), 1, 179, 0, NULL, PC_LIVE_VCAM, "60", "degrees",
     "initial horizontal field of view (zoom)", NULL},
    {"mode", PC_KT_ENUM, VCA(mode), 0, 0, 0, &vcam_mode_enum, PC_LIVE_VCAM, "manual", NULL,
     "manual (steered through the control socket and HTTP) or follow (follows the play)", NULL},
    {"sampler", PC_KT_ENUM, VCA(sampler), 0, 0, 0, &sampler_enum, PC_LIVE_BLEND, "auto", NULL,
     "how the cameras' pictures are read: bicubic (12 pixels, Keys' cubic as Hugin's nona: a view "
     "magnifies them, and bicubic keeps it sharp), bilinear (2x2 pixels, the fastest) or auto (bicubic "
     "on the GPU; bilinear on the CPU backend, where bicubic costs about 10x)", NULL},
    {"outputs", PC_KT_GROUPS, VCA(outputs), 0, 0, 0, NULL, 0, "", NULL,
     "the view's outputs, entries as in the outputs list (its own encoder: encode's codec, encoder, "
     "preset and gop)", &pc_picture_outputs_list_},
    {"bitrate", PC_KT_INT64, VCA(bitrate), PC_ENCODE_MIN_BITRATE, PC_ENCODE_MAX_BITRATE, PC_KF_SI, NULL, 0,
     "8000000", "bit/s", "the view's constant bitrate (\"8M\")", NULL},
    {"presets", PC_KT_GROUPS, VCA(presets), 0, 0, 0, NULL, PC_LIVE_VCAM, "", NULL,
     "named poses: ( { name = \"left-goal\"; pan = -30.0; tilt = -8.0; hfov = 35.0; }, ... )",
     &pc_presets_list_},
    {"max_speed", PC_KT_DOUBLE, VCA(max_speed), 0.1, 1000, 0, NULL, PC_LIVE_VCAM, "30", "deg/s",
     "pan and tilt speed limit", NULL},
    {"max_accel", PC_KT_DOUBLE, VCA(max_accel), 0.1, 10000, 0, NULL, PC_LIVE_VCAM, "60", "deg/s^2",
     "pan and tilt acceleration limit (no jerk: moves start and stop softly)", NULL},
    {"max_zoom_speed", PC_KT_DOUBLE, VCA(max_zoom_speed), 0.1, 1000, 0, NULL, PC_LIVE_VCAM, "20", "deg/s",
     "field of view speed limit", NULL},
    {"max_zoom_accel", PC_KT_DOUBLE, VCA(max_zoom_accel), 0.1, 10000, 0, NULL, PC_LIVE_VCAM, "40", "deg/s^2",
     "field of view acceleration limit", NULL},
    {"response", PC_KT_DOUBLE, VCA(response_s), 0.01, 10, 0, NULL, PC_LIVE_VCAM, "0.15", "s",
     "time constant of the motion (critically damped): larger = softer", NULL},
    {"min_hfov", PC_KT_DOUBLE, VCA(min_hfov), 1, 179, 0, NULL, PC_LIVE_VCAM, "5", "degrees",
     "narrowest field of view (deepest zoom) a command may ask", NULL},
    {"max_hfov", PC_KT_DOUBLE, VCA(max_hfov), 1, 179, 0, NULL, PC_LIVE_VCAM, "120", "degrees",
     "widest field of view a command may ask (the rig's coverage may allow less)", NULL},
    {"follow_dead_zone", PC_KT_DOUBLE, VCA(follow_dead_zone), 0, 0.5, 0, NULL, PC_LIVE_VCAM, "0.08", "of the width",
     "follow: no move while the play stays this close to the middle (a still play, a still picture)", NULL},
    {"follow_lead", PC_KT_DOUBLE, VCA(follow_lead_s), 0, 10, 0, NULL, PC_LIVE_VCAM, "0.6", "s",
     "follow: lead room, this much of the play's motion ahead of it", NULL},
    {"follow_lead_max", PC_KT_DOUBLE, VCA(follow_lead_max), 0, 0.5, 0, NULL, PC_LIVE_VCAM, "0.15", "of the width",
     "follow: at most this much lead room", NULL},
    {"follow_smoothing", PC_KT_DOUBLE, VCA(follow_smoothing_s), 0, 60, 0, NULL, PC_LIVE_VCAM, "0.4", "s",
     "follow: time constant of the target's smoothing", NULL},
    {"follow_zoom_margin", PC_KT_DOUBLE, VCA(follow_zoom_margin), 0, 2, 0, NULL, PC_LIVE_VCAM, "0.25", NULL,
     "follow: the field of view is the play's spread times 1 + 2 margin", NULL},
    {"follow_min_hfov", PC_KT_DOUBLE, VCA(follow_min_hfov), 1, 179, 0, NULL, PC_LIVE_VCAM, "20", "degrees",
     "follow: narrowest field of view", NULL},
    {"follow_max_hfov", PC_KT_DOUBLE, VCA(follow_max_hfov), 1, 179, 0, NULL, PC_LIVE_VCAM, "70", "degrees",
     "follow: widest field of view", NULL},
    {"follow_tilt_offset", PC_KT_DOUBLE, VCA(follow_tilt_offset), -45, 45, 0, NULL, PC_LIVE_VCAM, "1", "degrees",
     "follow: added to the target's tilt (frame the players, not their feet)", NULL},
};
_Static_assert(sizeof vcam_keys / sizeof *vcam_keys <= 32, "set_mask holds 32 keys");
const pc_list_desc pc_vcams_list_ = {
    "virtual camera", "virtual cameras", vcam_keys, sizeof vcam_keys / sizeof *vcam_keys, sizeof(pc_vcam_settings),
    offsetof(pc_settings, vcams) - offsetof(pc_settings, vcam_count), PC_MAX_VCAMS,
    offsetof(pc_vcam_settings, line), offsetof(pc_vcam_settings, set_mask), 0,
    "( { name = \"main\"; width = 1920; height = 1080; outputs = ( ... ); ... }, ... )"};

static const pc_key daemon_keys[] = {
    {"stats_interval", PC_KT_DOUBLE, DMN(stats_interval_s), 0, 3600, 0, NULL, 0, "1", "s",
     "status line period (terminal, log, systemd STATUS=); 0 = off", NULL},
    {"stats_window", PC_KT_DOUBLE, DMN(stats_window_s), 1, 600, 0, NULL, 0, "10", "s",
     "sliding window of the latency percentiles", NULL},
    {"budget_ms", PC_KT_DOUBLE, DMN(budget_ms), 0.1, 10000, PC_KF_ZERO_AUTO, NULL, 0, "0", "ms",
     "per-frame latency budget (frame set complete -> written); 0 = one frame period", NULL},
    {"log_level", PC_KT_ENUM, DMN(log_level), 0, 0, 0, &level_enum, PC_LIVE_LOG_LEVEL, "info", NULL,
     "most verbose level logged", NULL},
    {"control", PC_KT_STRING, DMN(control), 0, 0, 0, NULL, 0, "/run/panocap/control.sock", NULL,
     "control and metrics UNIX socket; \"\" = off", NULL},
    {"frames", PC_KT_INT64, DMN(frames), 1, BIG, PC_KF_ZERO_AUTO, NULL, 0, "0", "frame sets",
     "stop cleanly after this many frame sets; 0 = run until stopped", NULL},
    {"duration", PC_KT_DOUBLE, DMN(duration_s), 0.001, 1e9, PC_KF_ZERO_AUTO, NULL, 0, "0", "s",
     "stop cleanly after this long; 0 = run until stopped", NULL},
    {"snapshot", PC_KT_STRING, DMN(snapshot), 0, 0, 0, NULL, 0, "", NULL,
     "write a PNG of the first frame set to this file: what the stream shows (the stitched panorama, else the "
     "stacked cameras)", NULL},
    {"record_raw", PC_KT_STRING, DMN(record_raw), 0, 0, 0, NULL, 0, "", NULL,
     "record the raw Bayer frame sets to this file (replay with source = \"file\")", NULL},
    {"watchdog", PC_KT_BOOL, DMN(watchdog), 0, 1, 0, NULL, 0, "true", NULL,
     "ping the systemd watchdog (when WatchdogSec= is set) from the pipeline's progress", NULL},
    {"metrics_listen", PC_KT_STRING, DMN(metrics_listen), 0, 0, 0, NULL, 0, "", NULL,
     "HTTP address for Prometheus: GET /metrics, /status, /healthz (200 while frame sets flow, "
     "else 503), e.g. \"127.0.0.1:9464\" or \"[::1]:9464\"; no control commands over TCP; "
     "\"\" = off", NULL},
    {"http_listen", PC_KT_STRING, DMN(http_listen), 0, 0, 0, NULL, 0, "", NULL,
     "HTTP address of the operator's web page and its JSON API (GET /, /api/status, POST /api/...; "
     "also /metrics, /status, /healthz), e.g. \"127.0.0.1:8080\"; read-only unless http_token_file is "
     "set; \"\" = off", NULL},
    {"http_token_file", PC_KT_STRING, DMN(http_token_file), 0, 0, 0, NULL, 0, "", NULL,
     "file holding the token that every state-changing web request must send (header X-Panocap-Token); "
     "made with a new random token, mode 0600, when absent; \"\" = no control over HTTP", NULL},
    {"http_allowed_hosts", PC_KT_LIST, DMN(http_allowed_hosts), 0, 0, 0, NULL, 0, "", NULL,
     "names the web page answers to besides the machine's own (its addresses, localhost, its host name): a "
     "reverse proxy's public name that reaches panocap in the Host header, e.g. [\"panocap.example.org\"]; "
     "\"*.example.org\" for every name under a domain, \"*\" for any; a request for another name gets 421 "
     "(so that no web page can read the picture through DNS rebinding)", NULL},
    {"snapshot_dir", PC_KT_STRING, DMN(snapshot_dir), 0, 0, 0, NULL, 0, "/var/lib/panocap", NULL,
     "the control commands `snapshot NAME.png` and `snapshot-cameras DIR` and the web page's snapshots "
     "write only inside this folder; \"\" = refused", NULL},
    {"capture_cpus", PC_KT_STRING, DMN(capture_cpus), 0, 0, 0, NULL, 0, "", NULL,
     "CPUs the capture threads (and the stage thread) run on, a list like \"0-3\" (online CPUs "
     "only); \"\" = any", NULL},
};

#define N(a) (int)(sizeof a / sizeof *a)
const pc_section pc_sections_[] = {
    {"capture", PC_SEC_GROUP, capture_keys, N(capture_keys), offsetof(pc_settings, capture),
     "frame sources, rates, and the defaults of every camera", NULL},
    {"cameras", PC_SEC_CAMERAS, pc_camera_keys_, N(pc_camera_keys_), 0,
     "list of cameras, one group each; keys not given come from capture", NULL},
    {"debayer", PC_SEC_GROUP, debayer_keys, N(debayer_keys), offsetof(pc_settings, debayer),
     "demosaicing and YUV conversion", NULL},
    {"encode", PC_SEC_GROUP, encode_keys, N(encode_keys), offsetof(pc_settings, encode),
     "encoder", NULL},
    {"panorama", PC_SEC_GROUP, panorama_keys, N(panorama_keys), offsetof(pc_settings, panorama),
     "the stitched panorama from a Hugin project (docs/panorama.md)", NULL},
    {"outputs", PC_SEC_OUTPUTS, pc_output_keys_, N(pc_output_keys_), offsetof(pc_settings, output_count),
     "list of outputs: URL strings, or groups with url and options", &pc_outputs_list_},
    {"virtual_cameras", PC_SEC_LIST, vcam_keys, N(vcam_keys), offsetof(pc_settings, vcam_count),
     "list of virtual cameras: perspective views of the rig (needs panorama.rig), each encoded to its own "
     "outputs", &pc_vcams_list_},
    {"daemon", PC_SEC_GROUP, daemon_keys, N(daemon_keys), offsetof(pc_settings, daemon),
     "statistics, budget, logging, control socket, run length", NULL},
};
const int pc_nsections_ = N(pc_sections_);

_Static_assert(sizeof pc_camera_keys_ / sizeof *pc_camera_keys_ <= 32, "set_mask holds 32 keys");

/* --- lookups ---------------------------------------------------------- */

const pc_section *pc_section_find_(const char *name)
{
    for (int i = 0; i < pc_nsections_; i++)
        if (strcmp(pc_sections_[i].name, name) == 0)
            return &pc_sections_[i];
    return NULL;
}

const pc_key *pc_key_find_(const pc_key *keys, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

int pc_key_index_(const pc_key *keys, const pc_key *k) { return (int)(k - keys); }

/* Key names: a section's keys, then the keys of lists inside entries that
 * are not outputs (outputs are listed once, as "output.url"). */
static const struct {
    const char *prefix;
    const pc_list_desc *list;
} nested[] = {{"preset", &pc_presets_list_}};

int pc_settings_key_count(void)
{
    int n = 0;
    for (int si = 0; si < pc_nsections_; si++)
        n += pc_sections_[si].nkeys;
    for (size_t i = 0; i < sizeof nested / sizeof *nested; i++)
        n += nested[i].list->nkeys;
    return n;
}

const char *pc_section_entry_name_(const pc_section *S)
{
    return S->kind == PC_SEC_CAMERAS ? "camera" : S->kind == PC_SEC_OUTPUTS ? "output"
           : S->kind == PC_SEC_LIST  ? "virtual_camera" : S->name;
}

const char *pc_settings_key_name(int i, char *buf, size_t len)
{
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (i < S->nkeys) {
            snprintf(buf, len, "%s.%s", pc_section_entry_name_(S), S->keys[i].name);
            return buf;
        }
        i -= S->nkeys;
    }
    for (size_t j = 0; j < sizeof nested / sizeof *nested; j++) {
        if (i < nested[j].list->nkeys) {
            snprintf(buf, len, "%s.%s", nested[j].prefix, nested[j].list->keys[i].name);
            return buf;
        }
        i -= nested[j].list->nkeys;
    }
    return NULL;
}
