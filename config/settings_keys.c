/* settings_keys.c - the key table: every setting described once, as data
 * (name, type, storage, default, range, help), the named values of its enum
 * keys, and lookups in it. Parsing, validation, reload diffs and writing
 * (settings_parse.c, settings_validate.c, settings_reload.c,
 * settings_write.c, settings_file.c) all work from this table. */
#include "encode_limits.h" /* the encoder's own limits */
#include "settings_keys.h"

#include "debayer.h"
#include "log.h"

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

const char *pc_source_name(pc_source v) { return source_name((int)v); }
const char *pc_trigger_name(pc_trigger v) { return trigger_name((int)v); }
const char *pc_backend_pref_name(pc_backend_pref v) { return backend_name((int)v); }
const char *pc_codec_name(pc_codec v) { return codec_name((int)v); }
const char *pc_layout_name(pc_layout v) { return layout_name((int)v); }

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
#define BIG PC_KEY_NO_MAX

/* Keys of one camera; those without PC_KF_CAMERA_ONLY may also be given
 * in `capture` as the default of every camera. At most 32 (set_mask). */
const pc_key pc_camera_keys_[] = {
    {"name", PC_KT_STRING, CAM(name), 0, 0, PC_KF_CAMERA_ONLY, NULL, 0, "", NULL,
     "label in logs and metrics (default camN)"},
    {"address", PC_KT_STRING, CAM(address), 0, 0, PC_KF_CAMERA_ONLY, NULL, 0, "", NULL,
     "gige: IP address or Aravis device id of the camera"},
    {"serial", PC_KT_STRING, CAM(serial), 0, 0, PC_KF_CAMERA_ONLY, NULL, 0, "", NULL,
     "gige: serial number (the camera is opened by address, else by serial); fake: its serial"},
    {"slab", PC_KT_INT, CAM(slab), 0, PC_MAX_CAMERAS - 1, PC_KF_CAMERA_ONLY, NULL, 0, "-1", NULL,
     "row band of the panorama, 0 = top (default: position in the list)"},
    {"pattern", PC_KT_ENUM, CAM(pattern), 0, 0, 0, &cfa_enum, 0, "RGGB", NULL,
     "Bayer pattern of the region (BayerRG8 = RGGB ...)"},
    {"width", PC_KT_INT, CAM(width), PC_MIN_DIM, PC_MAX_DIM, PC_KF_EVEN, NULL, 0, "2040", "pixels",
     "region width; every camera must have the same"},
    {"height", PC_KT_INT, CAM(height), PC_MIN_DIM, PC_MAX_DIM, PC_KF_EVEN, NULL, 0, "1080", "pixels",
     "region height (the slab's height in the panorama)"},
    {"offset_x", PC_KT_INT, CAM(offset_x), 0, PC_MAX_DIM, PC_KF_EVEN, NULL, 0, "0", "pixels",
     "region offset on the sensor"},
    {"offset_y", PC_KT_INT, CAM(offset_y), 0, PC_MAX_DIM, PC_KF_EVEN, NULL, 0, "0", "pixels",
     "region offset on the sensor"},
    {"exposure", PC_KT_DOUBLE, CAM(exposure_us), 1, 10e6, PC_KF_ZERO_AUTO, NULL, 0, "0", "us",
     "exposure time; 0 = leave the camera's setting"},
    {"gain", PC_KT_DOUBLE, CAM(gain_db), 0, 100, PC_KF_NEG_AUTO, NULL, 0, "-1", "dB",
     "analog gain; negative = leave the camera's setting"},
    {"packet_size", PC_KT_INT, CAM(packet_size), 576, 16384, PC_KF_ZERO_AUTO | PC_KF_SI, NULL, 0, "0", "bytes",
     "GevSCPSPacketSize (jumbo frames: 8000-9000, \"9k\"); 0 = negotiate the largest that works"},
    {"packet_delay", PC_KT_INT, CAM(packet_delay_ns), 0, 100000000, 0, NULL, 0, "0", "ns",
     "inter-packet delay (GevSCPD)"},
    {"socket_buffer", PC_KT_INT, CAM(socket_buffer), 65536, 256 << 20, PC_KF_ZERO_AUTO | PC_KF_SI, NULL, 0,
     "0", "bytes", "stream socket receive buffer (\"64Mi\"); 0 = Aravis's automatic size"},
    {"resend", PC_KT_BOOL, CAM(resend), 0, 1, 0, NULL, 0, "true", NULL,
     "ask the camera to resend missing packets"},
    {"packet_timeout", PC_KT_INT, CAM(packet_timeout_ms), 1, 10000, 0, NULL, 0, "20", "ms",
     "Aravis packet-timeout: wait this long for a missing packet before asking again"},
    {"frame_retention", PC_KT_INT, CAM(frame_retention_ms), 1, 10000, PC_KF_ZERO_AUTO, NULL, 0, "0", "ms",
     "hand an incomplete frame over (missing lines filled) after this long; 0 = in time for its frame set"},
    {"trigger", PC_KT_ENUM, CAM(trigger), 0, 0, 0, &trigger_enum, 0, "free-run", NULL,
     "free-run, or software/hardware trigger for synchronised cameras"},
    {"trigger_source", PC_KT_STRING, CAM(trigger_source), 0, 0, 0, NULL, 0, "Line0", NULL,
     "hardware trigger input (TriggerSource)"},
    {"image", PC_KT_STRING, CAM(image), 0, 0, PC_KF_CAMERA_ONLY, NULL, 0, "", NULL,
     "fake cameras: picture fed to this camera (default: its part of capture.image)"},
    /* colour (docs/colour.md) */
    {"pixel_format", PC_KT_STRING, CAM(pixel_format), 0, 0, 0, NULL, 0, "", NULL,
     "raw format: BayerRG8 ... BayerRG12p, BayerRG10Packed (any phase); \"auto\" = the deepest the camera "
     "offers that fits its link; \"\" = 8-bit of `pattern`"},
    {"black_level", PC_KT_DOUBLE, CAM(black_level), 0, 65535, 0, NULL, PC_LIVE_COLOUR, "0", "codes",
     "black pedestal in sensor units of the pixel format"},
    {"white_level", PC_KT_DOUBLE, CAM(white_level), 1, 65535, PC_KF_ZERO_AUTO, NULL, PC_LIVE_COLOUR, "0", "codes",
     "sensor code of full white; 0 = the largest code"},
    {"wb_gains", PC_KT_STRING, CAM(wb_gains), 0, 0, PC_KF_NUMBERS, NULL, PC_LIVE_COLOUR, "1, 1, 1", NULL,
     "white-balance gains \"red, green, blue\" (or an array [2.0, 1.0, 1.5]), \"auto\" (grey world, "
     "smoothed) or \"auto shared\" (one estimate over every camera set so)"},
    {"ccm", PC_KT_STRING, CAM(ccm), 0, 0, PC_KF_NUMBERS, NULL, PC_LIVE_COLOUR, "", NULL,
     "colour matrix: 9 numbers, row-major, applied to R, G, B, as a string or an array; \"\" = identity"},
    {"transfer", PC_KT_STRING, CAM(transfer), 0, 0, 0, NULL, PC_LIVE_COLOUR, "linear", NULL,
     "linear, srgb, bt709, a gamma value (e.g. \"2.2\"), or a LUT file (2^bits codes 0..255)"},
};
_Static_assert(sizeof pc_camera_keys_ / sizeof *pc_camera_keys_ <= 32, "set_mask has 32 bits");
const int pc_ncamera_keys_ = (int)(sizeof pc_camera_keys_ / sizeof *pc_camera_keys_);

static const pc_key capture_keys[] = {
    {"source", PC_KT_ENUM, CAP(source), 0, 0, 0, &source_enum, 0, "fake", NULL,
     "gige: GigE Vision cameras; fake: Aravis in-process fake cameras; file: raw replay"},
    {"file", PC_KT_STRING, CAP(file), 0, 0, 0, NULL, 0, "", NULL,
     "raw Bayer file replayed by source = \"file\""},
    {"file_loop", PC_KT_BOOL, CAP(file_loop), 0, 1, 0, NULL, 0, "false", NULL,
     "replay the raw file in a loop (benchmarks, soak tests); false = stop at its end"},
    {"cameras", PC_KT_INT, CAP(cameras), 1, PC_MAX_CAMERAS, 0, NULL, 0, "5", NULL,
     "number of cameras (default: the length of the cameras list, else 5)"},
    {"fps", PC_KT_DOUBLE, CAP(fps), 1, 1000, 0, NULL, 0, "50", "fps", "frame rate of every camera"},
    {"deadline_periods", PC_KT_DOUBLE, CAP(deadline_periods), 1, 10, 0, NULL, 0, "1.5",
     "frame periods", "a frame set is emitted this long after its first slab, late slabs substituted"},
    {"pool_size", PC_KT_INT, CAP(pool_size), 2, 64, 0, NULL, 0, "4", "frame sets",
     "frame sets in the capture pool (bounded memory; when all are busy a set is dropped)"},
    {"image", PC_KT_STRING, CAP(image), 0, 0, 0, NULL, 0, "", NULL,
     "fake cameras: one panorama picture split across the cameras (\"\" = the bundled photograph)"},
};

static const pc_key debayer_keys[] = {
    {"algo", PC_KT_ENUM, DEB(algo), 0, 0, 0, &algo_enum, PC_LIVE_ALGO, "edge", NULL,
     "demosaicing algorithm (panocap --list-algos)"},
    {"variant", PC_KT_ENUM, DEB(variant), 0, 0, 0, &variant_enum, PC_LIVE_VARIANT, "auto", NULL,
     "final pass: 2 pixels or one 2x2 block per thread; auto = the faster"},
    {"matrix", PC_KT_ENUM, DEB(matrix), 0, 0, 0, &matrix_enum, 0, "bt709", NULL,
     "RGB -> YUV matrix"},
    {"range", PC_KT_ENUM, DEB(range), 0, 0, 0, &range_enum, 0, "limited", NULL,
     "YUV range (limited = 16..235)"},
    {"backend", PC_KT_ENUM, DEB(backend), 0, 0, 0, &backend_enum, 0, "auto", NULL,
     "auto = CUDA where a device exists, else the multi-threaded CPU path"},
    {"cpu_threads", PC_KT_INT, DEB(cpu_threads), 1, 256, PC_KF_ZERO_AUTO, NULL, 0, "0", "threads",
     "CPU backend threads; 0 = one per CPU"},
    {"in_flight", PC_KT_INT, DEB(in_flight), 1, 8, 0, NULL, 0, "3", "frame sets",
     "frame sets in flight in the GPU stage"},
    {"gpu", PC_KT_STRING, DEB(gpu), 0, 0, 0, NULL, 0, "", NULL,
     "CUDA device for this pipeline: an index (\"1\") or a UUID (\"GPU-8c4f...\", from nvidia-smi -L); "
     "\"\" = the first device. Several pipelines on one host: one instance per GPU"},
};

static const pc_key encode_keys[] = {
    {"codec", PC_KT_ENUM, ENC(codec), 0, 0, 0, &codec_enum, 0, "hevc", NULL,
     "codec for NVENC (h264 NVENC is limited to 4096 pixels, the panorama is taller)"},
    {"encoder", PC_KT_STRING, ENC(encoder), 0, 0, 0, NULL, 0, "auto", NULL,
     "auto = NVENC for the codec, else the fallback list; or an FFmpeg encoder name"},
    {"fallback", PC_KT_LIST, ENC(fallback), 0, 0, 0, NULL, 0, "libx264,libx265,libsvtav1", NULL,
     "encoders tried in order when NVENC cannot open"},
    {"bitrate", PC_KT_INT64, ENC(bitrate), PC_ENCODE_MIN_BITRATE, PC_ENCODE_MAX_BITRATE, PC_KF_SI, NULL, PC_LIVE_BITRATE,
     "20000000", "bit/s", "constant bitrate; k/M/G suffixes accepted (\"20M\")"},
    {"gop", PC_KT_INT, ENC(gop), 1, 3000, 0, NULL, 0, "50", "frames", "frames between IDR frames"},
    {"preset", PC_KT_STRING, ENC(preset), 0, 0, 0, NULL, 0, "", NULL,
     "encoder preset (p1..p7 for NVENC, ultrafast... for x264); \"\" = low-latency default"},
    {"threads", PC_KT_INT, ENC(threads), 1, 256, PC_KF_ZERO_AUTO, NULL, 0, "0", "threads",
     "software encoder threads; 0 = automatic"},
    {"options", PC_KT_STRING, ENC(options), 0, 0, 0, NULL, 0, "", NULL,
     "encoder options \"key=value:key=value\" set last (e.g. \"x264-params=qp=0\" for lossless tests)"},
    {"layout", PC_KT_ENUM, ENC(layout), 0, 0, 0, &layout_enum, 0, "auto", NULL,
     "picture(s) given to the encoder: stacked, grid (the cameras tiled C x R in one picture), bands (one "
     "encoder per band of whole cameras), or auto (software encoders: one-camera bands; NVENC: stacked if it "
     "fits, else grid, else bands)"},
    {"bands", PC_KT_INT, ENC(bands), 1, 16, PC_KF_ZERO_AUTO, NULL, 0, "0", "bands",
     "layout bands: number of bands, a divisor of the camera count; 0 = counted as layout auto does "
     "(software encoders: one camera each, or one band for a small panorama; NVENC: the fewest that fit)"},
    {"grid", PC_KT_STRING, ENC(grid), 0, 0, 0, NULL, 0, "", NULL,
     "layout grid: tiles across x down, e.g. \"4x4\" (their product = the cameras); \"\" = the grid closest "
     "to square within the encoder's limit"},
    {"band_outputs", PC_KT_ENUM, ENC(band_outputs), 0, 0, 0, &band_outputs_enum, 0, "streams", NULL,
     "layout bands: streams = each output has one video stream per band (same PTS); separate = one output "
     "per band, %b in each output URL is the band number"},
    {"preview_scale", PC_KT_INT, ENC(preview_scale), 2, 16, PC_KF_ZERO_AUTO, NULL, 0, "0", "x",
     "preview rendition: the panorama scaled down N times (box filter), own encoder and output; 0 = none"},
    {"preview_bitrate", PC_KT_INT64, ENC(preview_bitrate), 100000, 100000000, PC_KF_SI, NULL, 0, "2000000",
     "bit/s", "preview rendition: constant bitrate (\"2M\")"},
    {"preview_url", PC_KT_STRING, ENC(preview_url), 0, 0, 0, NULL, 0, "", NULL,
     "preview rendition: its output (file, udp://, srt://, .m3u8); needed with preview_scale"},
    {"cpus", PC_KT_STRING, ENC(cpus), 0, 0, 0, NULL, 0, "", NULL,
     "CPUs the encoder and output threads run on, a list like \"4-11\" or \"4,6,8-9\" (online CPUs "
     "only); \"\" = any"},
};

const pc_key pc_output_keys_[] = {
    {"url", PC_KT_STRING, OUT(url), 0, 0, PC_KF_REQUIRED, NULL, 0, "", NULL,
     "file path (.ts .mkv .mp4 .m3u8), udp://host:port, srt://host:port, tcp://, rtp://, or null"},
    {"options", PC_KT_STRING, OUT(options), 0, 0, 0, NULL, 0, "", NULL,
     "libavformat options \"key=value,key=value\" (pkt_size=1316, passphrase=...)"},
    {"format", PC_KT_STRING, OUT(format), 0, 0, 0, NULL, 0, "", NULL,
     "container format; \"\" = from the URL (mpegts for .ts and network outputs)"},
    {"segment", PC_KT_INT, OUT(segment_s), 1, 86400, PC_KF_ZERO_AUTO, NULL, 0, "0", "s",
     "recordings: start a new file (named by start time) every N seconds; 0 = one file"},
    {"max_bytes", PC_KT_INT64, OUT(max_bytes), 1000000, 1e15, PC_KF_ZERO_AUTO | PC_KF_SI, NULL, 0, "0", "bytes",
     "segmented recordings: delete the oldest closed segments while they take more (\"5G\", \"2Ti\"); 0 = no limit"},
    {"max_age", PC_KT_INT64, OUT(max_age_s), 2, 3153600000LL, PC_KF_ZERO_AUTO, NULL, 0, "0", "s",
     "segmented recordings: delete closed segments older than this; 0 = keep"},
    {"min_free", PC_KT_INT64, OUT(min_free), 1000000, 1e15, PC_KF_ZERO_AUTO | PC_KF_SI, NULL, 0, "0", "bytes",
     "segmented recordings: delete the oldest closed segments while the disk has less free (\"50G\"); 0 = only when full"},
};
const int pc_noutput_keys_ = (int)(sizeof pc_output_keys_ / sizeof *pc_output_keys_);

static const pc_key daemon_keys[] = {
    {"stats_interval", PC_KT_DOUBLE, DMN(stats_interval_s), 0, 3600, 0, NULL, 0, "1", "s",
     "status line period (terminal, log, systemd STATUS=); 0 = off"},
    {"stats_window", PC_KT_DOUBLE, DMN(stats_window_s), 1, 600, 0, NULL, 0, "10", "s",
     "sliding window of the latency percentiles"},
    {"budget_ms", PC_KT_DOUBLE, DMN(budget_ms), 0.1, 10000, PC_KF_ZERO_AUTO, NULL, 0, "0", "ms",
     "per-frame latency budget (frame set complete -> written); 0 = one frame period"},
    {"log_level", PC_KT_ENUM, DMN(log_level), 0, 0, 0, &level_enum, PC_LIVE_LOG_LEVEL, "info", NULL,
     "most verbose level logged"},
    {"control", PC_KT_STRING, DMN(control), 0, 0, 0, NULL, 0, "/run/panocap/control.sock", NULL,
     "control and metrics UNIX socket; \"\" = off"},
    {"frames", PC_KT_INT64, DMN(frames), 1, BIG, PC_KF_ZERO_AUTO, NULL, 0, "0", "frame sets",
     "stop cleanly after this many frame sets; 0 = run until stopped"},
    {"duration", PC_KT_DOUBLE, DMN(duration_s), 0.001, 1e9, PC_KF_ZERO_AUTO, NULL, 0, "0", "s",
     "stop cleanly after this long; 0 = run until stopped"},
    {"snapshot", PC_KT_STRING, DMN(snapshot), 0, 0, 0, NULL, 0, "", NULL,
     "write a PNG of the first panorama to this file"},
    {"record_raw", PC_KT_STRING, DMN(record_raw), 0, 0, 0, NULL, 0, "", NULL,
     "record the raw Bayer frame sets to this file (replay with source = \"file\")"},
    {"watchdog", PC_KT_BOOL, DMN(watchdog), 0, 1, 0, NULL, 0, "true", NULL,
     "ping the systemd watchdog (when WatchdogSec= is set) from the pipeline's progress"},
    {"metrics_listen", PC_KT_STRING, DMN(metrics_listen), 0, 0, 0, NULL, 0, "", NULL,
     "HTTP address for Prometheus: GET /metrics, /status, /healthz (200 while frame sets flow, "
     "else 503), e.g. \"127.0.0.1:9464\" or \"[::1]:9464\"; no control commands over TCP; "
     "\"\" = off"},
    {"http_listen", PC_KT_STRING, DMN(http_listen), 0, 0, 0, NULL, 0, "", NULL,
     "HTTP address of the operator's web page and its JSON API (GET /, /api/status, POST /api/...; "
     "also /metrics, /status, /healthz), e.g. \"127.0.0.1:8080\"; read-only unless http_token_file is "
     "set; \"\" = off"},
    {"http_token_file", PC_KT_STRING, DMN(http_token_file), 0, 0, 0, NULL, 0, "", NULL,
     "file holding the token that every state-changing web request must send (header X-Panocap-Token); "
     "made with a new random token, mode 0600, when absent; \"\" = no control over HTTP"},
    {"snapshot_dir", PC_KT_STRING, DMN(snapshot_dir), 0, 0, 0, NULL, 0, "/var/lib/panocap", NULL,
     "the control commands `snapshot NAME.png` and `snapshot-cameras DIR` and the web page's snapshots "
     "write only inside this folder; \"\" = refused"},
    {"capture_cpus", PC_KT_STRING, DMN(capture_cpus), 0, 0, 0, NULL, 0, "", NULL,
     "CPUs the capture threads (and the stage thread) run on, a list like \"0-3\" (online CPUs "
     "only); \"\" = any"},
};

#define N(a) (int)(sizeof a / sizeof *a)
const pc_section pc_sections_[] = {
    {"capture", PC_SEC_GROUP, capture_keys, N(capture_keys), offsetof(pc_settings, capture),
     "frame sources, rates, and the defaults of every camera"},
    {"cameras", PC_SEC_CAMERAS, pc_camera_keys_, N(pc_camera_keys_), 0,
     "list of cameras, one group each; keys not given come from capture"},
    {"debayer", PC_SEC_GROUP, debayer_keys, N(debayer_keys), offsetof(pc_settings, debayer),
     "demosaicing and YUV conversion"},
    {"encode", PC_SEC_GROUP, encode_keys, N(encode_keys), offsetof(pc_settings, encode),
     "encoder"},
    {"outputs", PC_SEC_OUTPUTS, pc_output_keys_, N(pc_output_keys_), 0,
     "list of outputs: URL strings, or groups with url and options"},
    {"daemon", PC_SEC_GROUP, daemon_keys, N(daemon_keys), offsetof(pc_settings, daemon),
     "statistics, budget, logging, control socket, run length"},
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
int pc_settings_key_count(void)
{
    int n = 0;
    for (int si = 0; si < pc_nsections_; si++)
        n += pc_sections_[si].nkeys;
    return n;
}

const char *pc_settings_key_name(int i, char *buf, size_t len)
{
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (i < S->nkeys) {
            const char *sec = S->kind == PC_SEC_CAMERAS ? "camera" : S->kind == PC_SEC_OUTPUTS ? "output" : S->name;
            snprintf(buf, len, "%s.%s", sec, S->keys[i].name);
            return buf;
        }
        i -= S->nkeys;
    }
    return NULL;
}
