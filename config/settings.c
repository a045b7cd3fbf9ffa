/* settings.c - the key table (every setting described once, as data) and
 * everything built on it that needs no file parser: defaults, setting from
 * text, finishing, cross-field validation, reload diffs, writing the
 * effective configuration and the reference documentation. */
#include "settings_keys.h"

#include "debayer.h"
#include "edit_distance.h"
#include "log.h"
#include "panocap_config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

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

const char *pc_source_name(pc_source v) { return source_name((int)v); }
const char *pc_trigger_name(pc_trigger v) { return trigger_name((int)v); }
const char *pc_backend_name(pc_backend v) { return backend_name((int)v); }
const char *pc_codec_name(pc_codec v) { return codec_name((int)v); }

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
#define BIG 1e18

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
    {"packet_size", PC_KT_INT, CAM(packet_size), 576, 16384, PC_KF_ZERO_AUTO, NULL, 0, "0", "bytes",
     "GevSCPSPacketSize (jumbo frames: 8000-9000); 0 = negotiate the largest that works"},
    {"packet_delay", PC_KT_INT, CAM(packet_delay_ns), 0, 100000000, 0, NULL, 0, "0", "ns",
     "inter-packet delay (GevSCPD)"},
    {"socket_buffer", PC_KT_INT, CAM(socket_buffer), 65536, 256 << 20, PC_KF_ZERO_AUTO, NULL, 0,
     "0", "bytes", "stream socket receive buffer; 0 = Aravis's automatic size"},
    {"resend", PC_KT_BOOL, CAM(resend), 0, 1, 0, NULL, 0, "true", NULL,
     "ask the camera to resend missing packets"},
    {"packet_timeout", PC_KT_INT, CAM(packet_timeout_ms), 1, 10000, 0, NULL, 0, "20", "ms",
     "Aravis packet-timeout: wait this long for a missing packet before asking again"},
    {"frame_retention", PC_KT_INT, CAM(frame_retention_ms), 1, 10000, 0, NULL, 0, "100", "ms",
     "Aravis frame-retention: give up on an incomplete frame after this long"},
    {"trigger", PC_KT_ENUM, CAM(trigger), 0, 0, 0, &trigger_enum, 0, "free-run", NULL,
     "free-run, or software/hardware trigger for synchronised cameras"},
    {"trigger_source", PC_KT_STRING, CAM(trigger_source), 0, 0, 0, NULL, 0, "Line0", NULL,
     "hardware trigger input (TriggerSource)"},
    {"image", PC_KT_STRING, CAM(image), 0, 0, PC_KF_CAMERA_ONLY, NULL, 0, "", NULL,
     "fake cameras: picture fed to this camera (default: its part of capture.image)"},
};
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
};

static const pc_key encode_keys[] = {
    {"codec", PC_KT_ENUM, ENC(codec), 0, 0, 0, &codec_enum, 0, "hevc", NULL,
     "codec for NVENC (h264 NVENC is limited to 4096 pixels, the panorama is taller)"},
    {"encoder", PC_KT_STRING, ENC(encoder), 0, 0, 0, NULL, 0, "auto", NULL,
     "auto = NVENC for the codec, else the fallback list; or an FFmpeg encoder name"},
    {"fallback", PC_KT_LIST, ENC(fallback), 0, 0, 0, NULL, 0, "libx264,libx265,libsvtav1", NULL,
     "encoders tried in order when NVENC cannot open"},
    {"bitrate", PC_KT_INT64, ENC(bitrate), 100000, 1000000000, PC_KF_SI, NULL, PC_LIVE_BITRATE,
     "20000000", "bit/s", "constant bitrate; k/M/G suffixes accepted (\"20M\")"},
    {"gop", PC_KT_INT, ENC(gop), 1, 3000, 0, NULL, 0, "50", "frames", "frames between IDR frames"},
    {"preset", PC_KT_STRING, ENC(preset), 0, 0, 0, NULL, 0, "", NULL,
     "encoder preset (p1..p7 for NVENC, ultrafast... for x264); \"\" = low-latency default"},
    {"threads", PC_KT_INT, ENC(threads), 1, 256, PC_KF_ZERO_AUTO, NULL, 0, "0", "threads",
     "software encoder threads; 0 = automatic"},
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

/* --- diagnostics ------------------------------------------------------ */

void pc_diag_init(pc_diag *d) { memset(d, 0, sizeof *d); }

void pc_diag_add(pc_diag *d, int severity, const char *file, int line, const char *key,
                 const char *fmt, ...)
{
    if (!d)
        return;
    if (severity == PC_DIAG_ERROR)
        d->errors++;
    else
        d->warnings++;
    if (d->count >= PC_DIAG_MAX) {
        d->lost++;
        return;
    }
    pc_diag_item *it = &d->item[d->count++];
    it->severity = severity;
    snprintf(it->file, sizeof it->file, "%s", file ? file : "");
    it->line = line;
    snprintf(it->key, sizeof it->key, "%s", key ? key : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->msg, sizeof it->msg, fmt, ap);
    va_end(ap);
}

void pc_diag_format(const pc_diag_item *it, char *buf, size_t len)
{
    char where[PC_PATH_LEN + 32] = "";
    if (it->file[0] && it->line > 0)
        snprintf(where, sizeof where, "%s:%d: ", it->file, it->line);
    else if (it->file[0])
        snprintf(where, sizeof where, "%s: ", it->file);
    snprintf(buf, len, "%s%s%s%s%s", where, it->severity == PC_DIAG_WARNING ? "warning: " : "error: ",
             it->key, it->key[0] ? ": " : "", it->msg);
}

void pc_diag_print(const pc_diag *d, FILE *f)
{
    char line[PC_PATH_LEN + 1024];
    for (int i = 0; i < d->count; i++) {
        pc_diag_format(&d->item[i], line, sizeof line);
        fprintf(f, "%s\n", line);
    }
    if (d->lost)
        fprintf(f, "(%d more not shown)\n", d->lost);
}

/* --- key helpers ------------------------------------------------------- */

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

const char *pc_key_type_name_(const pc_key *k)
{
    switch (k->type) {
    case PC_KT_INT:
    case PC_KT_INT64: return "an integer";
    case PC_KT_DOUBLE: return "a number";
    case PC_KT_BOOL: return "a boolean (true or false)";
    case PC_KT_STRING: return "a string";
    case PC_KT_ENUM: return "a name (string)";
    case PC_KT_LIST: return "an array of strings";
    }
    return "?";
}

static void fmt_num(char *buf, size_t len, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%g", v);
}

void pc_key_allowed_(const pc_key *k, char *buf, size_t len)
{
    char a[32], b[32];
    size_t off = 0;
    buf[0] = '\0';
    switch (k->type) {
    case PC_KT_INT:
    case PC_KT_INT64:
    case PC_KT_DOUBLE:
        fmt_num(a, sizeof a, k->min);
        if (k->max >= BIG)
            snprintf(buf, len, "%s or more", a);
        else {
            fmt_num(b, sizeof b, k->max);
            snprintf(buf, len, "%s..%s", a, b);
        }
        off = strlen(buf);
        if (k->unit && off < len)
            off += (size_t)snprintf(buf + off, len - off, " %s", k->unit);
        if ((k->flags & PC_KF_ZERO_AUTO) && off < len)
            off += (size_t)snprintf(buf + off, len - off, ", or 0 (auto/off)");
        if ((k->flags & PC_KF_NEG_AUTO) && off < len)
            off += (size_t)snprintf(buf + off, len - off, ", or negative (leave unchanged)");
        if ((k->flags & PC_KF_EVEN) && off < len)
            snprintf(buf + off, len - off, ", even");
        break;
    case PC_KT_BOOL: snprintf(buf, len, "true or false"); break;
    case PC_KT_STRING:
        snprintf(buf, len, "a string of at most %zu characters", k->size - 1);
        break;
    case PC_KT_LIST:
        snprintf(buf, len, "at most %d names of at most %d characters", PC_MAX_FALLBACKS,
                 PC_NAME_LEN - 1);
        break;
    case PC_KT_ENUM: {
        int n = k->en->count();
        for (int i = 0; i < n && off < len; i++)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", k->en->name(i));
        break;
    }
    }
}

static size_t field_size(const pc_key *k)
{
    switch (k->type) {
    case PC_KT_INT:
    case PC_KT_BOOL:
    case PC_KT_ENUM: return sizeof(int);
    case PC_KT_INT64: return sizeof(int64_t);
    case PC_KT_DOUBLE: return sizeof(double);
    case PC_KT_STRING: return k->size;
    case PC_KT_LIST: return sizeof(pc_name_list);
    }
    return 0;
}

static void *field(const pc_key *k, void *base) { return (char *)base + k->off; }
static const void *cfield(const pc_key *k, const void *base) { return (const char *)base + k->off; }

static int check_num(const pc_key *k, double v, const char *shown, char *err, size_t len)
{
    char allowed[160];
    if (!isfinite(v)) {
        snprintf(err, len, "%s is not a finite number", shown);
        return -1;
    }
    bool special = ((k->flags & PC_KF_ZERO_AUTO) && v == 0) || ((k->flags & PC_KF_NEG_AUTO) && v < 0);
    if (!special && (v < k->min || v > k->max)) {
        pc_key_allowed_(k, allowed, sizeof allowed);
        snprintf(err, len, "%s is out of range; allowed: %s", shown, allowed);
        return -1;
    }
    if ((k->flags & PC_KF_EVEN) && fmod(v, 2.0) != 0) {
        snprintf(err, len, "%s is odd; it must be even (whole 2x2 Bayer tiles)", shown);
        return -1;
    }
    return 0;
}

int pc_key_set_int_(const pc_key *k, long long v, void *base, char *err, size_t len)
{
    char shown[32];
    snprintf(shown, sizeof shown, "%lld", v);
    if (k->type == PC_KT_DOUBLE)
        return pc_key_set_double_(k, (double)v, base, err, len);
    if (k->type != PC_KT_INT && k->type != PC_KT_INT64) {
        snprintf(err, len, "expected %s, got an integer (%s)", pc_key_type_name_(k), shown);
        return -1;
    }
    if (check_num(k, (double)v, shown, err, len))
        return -1;
    if (k->type == PC_KT_INT)
        *(int *)field(k, base) = (int)v;
    else
        *(int64_t *)field(k, base) = (int64_t)v;
    return 0;
}

int pc_key_set_double_(const pc_key *k, double v, void *base, char *err, size_t len)
{
    char shown[32];
    snprintf(shown, sizeof shown, "%g", v);
    if (k->type == PC_KT_INT || k->type == PC_KT_INT64) {
        if (v != floor(v)) {
            snprintf(err, len, "expected %s, got a fractional number (%s)", pc_key_type_name_(k), shown);
            return -1;
        }
        if (check_num(k, v, shown, err, len))
            return -1;
        if (k->type == PC_KT_INT)
            *(int *)field(k, base) = (int)v;
        else
            *(int64_t *)field(k, base) = (int64_t)v;
        return 0;
    }
    if (k->type != PC_KT_DOUBLE) {
        snprintf(err, len, "expected %s, got a number (%s)", pc_key_type_name_(k), shown);
        return -1;
    }
    if (check_num(k, v, shown, err, len))
        return -1;
    *(double *)field(k, base) = v;
    return 0;
}

static int parse_number(const pc_key *k, const char *text, double *out, char *err, size_t len)
{
    char *end;
    errno = 0;
    while (isspace((unsigned char)*text))
        text++;
    double v = strtod(text, &end);
    if (end == text || errno == ERANGE) {
        snprintf(err, len, "\"%s\" is not a number%s; expected %s", text,
                 (k->flags & PC_KF_SI) ? " (suffixes: k, M, G)" : "", pc_key_type_name_(k));
        return -1;
    }
    if (k->flags & PC_KF_SI) {
        switch (*end) {
        case 'k': case 'K': v *= 1e3; end++; break;
        case 'M': v *= 1e6; end++; break;
        case 'G': v *= 1e9; end++; break;
        }
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end) {
        snprintf(err, len, "\"%s\" is not a number%s; expected %s", text,
                 (k->flags & PC_KF_SI) ? " (suffixes: k, M, G)" : "", pc_key_type_name_(k));
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_list(const pc_key *k, const char *text, pc_name_list *out, char *err, size_t len)
{
    pc_name_list l;
    memset(&l, 0, sizeof l);
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        size_t n = (size_t)(e - p);
        while (n && isspace((unsigned char)p[n - 1]))
            n--;
        if (l.count >= PC_MAX_FALLBACKS) {
            snprintf(err, len, "too many names (at most %d)", PC_MAX_FALLBACKS);
            return -1;
        }
        if (n >= PC_NAME_LEN) {
            snprintf(err, len, "name \"%.*s\" is too long (at most %d characters)", (int)n, p,
                     PC_NAME_LEN - 1);
            return -1;
        }
        memcpy(l.item[l.count], p, n);
        l.item[l.count][n] = '\0';
        l.count++;
        p = e;
    }
    (void)k;
    *out = l;
    return 0;
}

int pc_key_parse_(const pc_key *k, const char *text, void *base, char *err, size_t len)
{
    char allowed[256];
    if (!text)
        text = "";
    switch (k->type) {
    case PC_KT_INT:
    case PC_KT_INT64:
    case PC_KT_DOUBLE: {
        double v;
        if (parse_number(k, text, &v, err, len))
            return -1;
        return pc_key_set_double_(k, v, base, err, len);
    }
    case PC_KT_BOOL: {
        static const char *const yes[] = {"true", "yes", "on", "1"};
        static const char *const no[] = {"false", "no", "off", "0"};
        for (int i = 0; i < 4; i++) {
            if (strcasecmp(text, yes[i]) == 0) {
                *(int *)field(k, base) = 1;
                return 0;
            }
            if (strcasecmp(text, no[i]) == 0) {
                *(int *)field(k, base) = 0;
                return 0;
            }
        }
        snprintf(err, len, "\"%s\" is not a boolean; allowed: true, false, yes, no, on, off, 1, 0", text);
        return -1;
    }
    case PC_KT_STRING:
        if (strlen(text) >= k->size) {
            snprintf(err, len, "\"%.40s...\" is too long (%zu characters; at most %zu)", text,
                     strlen(text), k->size - 1);
            return -1;
        }
        snprintf((char *)field(k, base), k->size, "%s", text);
        return 0;
    case PC_KT_ENUM: {
        int v = k->en->parse(text);
        if (v < 0) {
            pc_key_allowed_(k, allowed, sizeof allowed);
            snprintf(err, len, "unknown value \"%s\"; allowed: %s", text, allowed);
            return -1;
        }
        *(int *)field(k, base) = v;
        return 0;
    }
    case PC_KT_LIST:
        return parse_list(k, text, (pc_name_list *)field(k, base), err, len);
    }
    return -1;
}

void pc_key_suggest_(const char *name, const pc_key *keys, int n, int with_camera, char *buf,
                     size_t len)
{
    const char *best = NULL;
    int bestd = 3;
    for (int pass = 0; pass < 2; pass++) {
        const pc_key *t = pass ? pc_camera_keys_ : keys;
        int tn = pass ? pc_ncamera_keys_ : n;
        if (pass && !with_camera)
            break;
        for (int i = 0; i < tn; i++) {
            if (pass && (t[i].flags & PC_KF_CAMERA_ONLY))
                continue;
            int d = pc_edit_distance(name, t[i].name, 1);
            size_t ln = strlen(name), lk = strlen(t[i].name), m = ln < lk ? ln : lk;
            if (m >= 3 && strncasecmp(name, t[i].name, m) == 0) /* "algorythm" ~ "algo" */
                d = d < 2 ? d : 2;
            if (d < bestd) {
                bestd = d;
                best = t[i].name;
            }
        }
    }
    if (best)
        snprintf(buf, len, "did you mean \"%s\"? ", best);
    else if (len)
        buf[0] = '\0';
}

void pc_key_list_(const pc_key *keys, int n, int skip_camera_only, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0, first = 1; i < n && off < len; i++) {
        if (skip_camera_only && (keys[i].flags & PC_KF_CAMERA_ONLY))
            continue;
        off += (size_t)snprintf(buf + off, len - off, "%s%s", first ? "" : ", ", keys[i].name);
        first = 0;
    }
}

static void apply_defaults(const pc_key *keys, int n, void *base)
{
    char err[256];
    for (int i = 0; i < n; i++) {
        /* Defaults bypass the range check only where they are a sentinel
         * (slab -1 = list position). */
        if (pc_key_parse_(&keys[i], keys[i].def, base, err, sizeof err) != 0) {
            double v = strtod(keys[i].def, NULL);
            if (keys[i].type == PC_KT_INT)
                *(int *)field(&keys[i], base) = (int)v;
        }
    }
}

void pc_camera_defaults_(pc_camera_settings *c)
{
    memset(c, 0, sizeof *c);
    apply_defaults(pc_camera_keys_, pc_ncamera_keys_, c);
}

void pc_output_defaults_(pc_output_settings *o)
{
    memset(o, 0, sizeof *o);
    apply_defaults(pc_output_keys_, pc_noutput_keys_, o);
}

/* --- defaults, set, finish -------------------------------------------- */

void pc_settings_defaults(pc_settings *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < pc_nsections_; i++)
        if (pc_sections_[i].kind == PC_SEC_GROUP)
            apply_defaults(pc_sections_[i].keys, pc_sections_[i].nkeys, (char *)s + pc_sections_[i].off);
    pc_camera_defaults_(&s->capture.camera);
    for (int i = 0; i < PC_MAX_CAMERAS; i++)
        pc_camera_defaults_(&s->cameras[i]);
    s->output_count = 1;
    pc_output_defaults_(&s->outputs[0]);
    snprintf(s->outputs[0].url, sizeof s->outputs[0].url, "panocap.ts");
    s->outputs[0].set_mask = 1;
    pc_settings_finish(s);
}

void pc_settings_finish(pc_settings *s)
{
    for (int i = 0; i < PC_MAX_CAMERAS; i++) {
        pc_camera_settings *c = &s->cameras[i];
        for (int j = 0; j < pc_ncamera_keys_; j++) {
            const pc_key *k = &pc_camera_keys_[j];
            if (c->set_mask & (1u << j))
                continue;
            if (strcmp(k->name, "slab") == 0)
                c->slab = i;
            else
                memcpy(field(k, c), cfield(k, &s->capture.camera), field_size(k));
        }
    }
}

/* Parses "section.key", "cameras[N].key", "outputs[N].key". */
int pc_settings_set(pc_settings *s, const char *key, const char *value, char *err, size_t errlen)
{
    char sec[32], name[64];
    int idx = -1;
    const char *dot = strchr(key, '.');
    if (!dot || (size_t)(dot - key) >= sizeof sec || strlen(dot + 1) >= sizeof name) {
        snprintf(err, errlen, "\"%s\" is not a setting name; use section.key (e.g. debayer.algo)", key);
        return -1;
    }
    memcpy(sec, key, (size_t)(dot - key));
    sec[dot - key] = '\0';
    snprintf(name, sizeof name, "%s", dot + 1);
    char *br = strchr(sec, '[');
    if (br) {
        char *end;
        idx = (int)strtol(br + 1, &end, 10);
        if (end == br + 1 || *end != ']' || end[1]) {
            snprintf(err, errlen, "\"%s\": bad index; use cameras[N].key", key);
            return -1;
        }
        *br = '\0';
    }
    const pc_section *S = pc_section_find_(sec);
    if (!S) {
        char list[128] = "";
        size_t off = 0;
        for (int i = 0; i < pc_nsections_; i++)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", pc_sections_[i].name);
        snprintf(err, errlen, "unknown section \"%s\"; sections: %s", sec, list);
        return -1;
    }
    if ((S->kind == PC_SEC_GROUP) != (idx < 0)) {
        snprintf(err, errlen, "\"%s\": %s", key,
                 idx < 0 ? "a list section needs an index, e.g. cameras[0].exposure"
                         : "this section is not a list; no index");
        return -1;
    }
    char e2[384], list[512], sug[64];
    if (S->kind == PC_SEC_GROUP) {
        void *base = (char *)s + S->off;
        const pc_key *k = pc_key_find_(S->keys, S->nkeys, name);
        int tmpl = 0;
        if (!k && strcmp(S->name, "capture") == 0) {
            k = pc_key_find_(pc_camera_keys_, pc_ncamera_keys_, name);
            if (k && (k->flags & PC_KF_CAMERA_ONLY))
                k = NULL;
            base = &s->capture.camera;
            tmpl = 1;
        }
        if (!k) {
            int cap = strcmp(S->name, "capture") == 0;
            pc_key_suggest_(name, S->keys, S->nkeys, cap, sug, sizeof sug);
            pc_key_list_(S->keys, S->nkeys, 0, list, sizeof list);
            if (cap) {
                size_t off = strlen(list);
                snprintf(list + off, sizeof list - off, "; camera defaults: ");
                off = strlen(list);
                pc_key_list_(pc_camera_keys_, pc_ncamera_keys_, 1, list + off, sizeof list - off);
            }
            snprintf(err, errlen, "%s: unknown setting; %sthe %s section takes: %s", key, sug, S->name, list);
            return -1;
        }
        if (pc_key_parse_(k, value, base, e2, sizeof e2)) {
            snprintf(err, errlen, "%s: %s", key, e2);
            return -1;
        }
        if (tmpl)
            pc_settings_finish(s);
        return 0;
    }
    int max = S->kind == PC_SEC_CAMERAS ? PC_MAX_CAMERAS : PC_MAX_OUTPUTS;
    if (idx < 0 || idx >= max) {
        snprintf(err, errlen, "%s: index %d out of range 0..%d", key, idx, max - 1);
        return -1;
    }
    const pc_key *k = pc_key_find_(S->keys, S->nkeys, name);
    if (!k) {
        pc_key_suggest_(name, S->keys, S->nkeys, 0, sug, sizeof sug);
        pc_key_list_(S->keys, S->nkeys, 0, list, sizeof list);
        snprintf(err, errlen, "%s: unknown setting; %sa %s entry takes: %s", key, sug,
                 S->kind == PC_SEC_CAMERAS ? "camera" : "output", list);
        return -1;
    }
    if (S->kind == PC_SEC_CAMERAS) {
        pc_camera_settings *c = &s->cameras[idx];
        if (pc_key_parse_(k, value, c, e2, sizeof e2)) {
            snprintf(err, errlen, "%s: %s", key, e2);
            return -1;
        }
        c->set_mask |= 1u << pc_key_index_(pc_camera_keys_, k);
        pc_settings_finish(s);
        return 0;
    }
    pc_output_settings tmp = idx < s->output_count ? s->outputs[idx] : (pc_output_settings){0};
    if (idx >= s->output_count)
        pc_output_defaults_(&tmp);
    if (pc_key_parse_(k, value, &tmp, e2, sizeof e2)) {
        snprintf(err, errlen, "%s: %s", key, e2);
        return -1;
    }
    tmp.set_mask |= 1u << pc_key_index_(pc_output_keys_, k);
    for (int i = s->output_count; i < idx; i++) /* gaps: empty, validate reports them */
        pc_output_defaults_(&s->outputs[i]);
    s->outputs[idx] = tmp;
    if (idx >= s->output_count)
        s->output_count = idx + 1;
    return 0;
}

int pc_settings_set_outputs(pc_settings *s, const char *const *urls, int n, char *err, size_t errlen)
{
    if (n < 0 || n > PC_MAX_OUTPUTS) {
        snprintf(err, errlen, "too many outputs (%d; at most %d)", n, PC_MAX_OUTPUTS);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (strlen(urls[i]) >= PC_URL_LEN) {
            snprintf(err, errlen, "output URL \"%.40s...\" is too long (at most %d characters)",
                     urls[i], PC_URL_LEN - 1);
            return -1;
        }
    for (int i = 0; i < n; i++) {
        pc_output_defaults_(&s->outputs[i]);
        snprintf(s->outputs[i].url, sizeof s->outputs[i].url, "%s", urls[i]);
        s->outputs[i].set_mask = 1;
    }
    s->output_count = n;
    return 0;
}

/* --- derived values and validation ------------------------------------ */

int pc_settings_panorama_width(const pc_settings *s) { return s->cameras[0].width; }

int pc_settings_panorama_height(const pc_settings *s)
{
    int h = 0;
    for (int i = 0; i < s->capture.cameras && i < PC_MAX_CAMERAS; i++)
        h += s->cameras[i].height;
    return h;
}

double pc_settings_budget_ms(const pc_settings *s)
{
    if (s->daemon.budget_ms > 0)
        return s->daemon.budget_ms;
    return s->capture.fps > 0 ? 1000.0 / s->capture.fps : 20.0;
}

int pc_settings_camera_for_slab(const pc_settings *s, int slab)
{
    for (int i = 0; i < s->capture.cameras && i < PC_MAX_CAMERAS; i++)
        if (s->cameras[i].slab == slab)
            return i;
    return -1;
}

static const char *cam_label(const pc_settings *s, int i, char *buf, size_t len)
{
    const pc_camera_settings *c = &s->cameras[i];
    const char *id = c->name[0] ? c->name : c->serial[0] ? c->serial : c->address;
    if (id[0])
        snprintf(buf, len, "cameras[%d] (%s)", i, id);
    else
        snprintf(buf, len, "cameras[%d]", i);
    return buf;
}

static int cam_line(const pc_settings *s, int i)
{
    return s->cameras[i].line ? s->cameras[i].line : s->capture.line;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int pc_settings_validate(const pc_settings *s, pc_diag *d)
{
    const char *file = s->config_file;
    int errors = 0;
#define ERR(line, key, ...) (errors++, pc_diag_add(d, PC_DIAG_ERROR, file, line, key, __VA_ARGS__))
#define WARN(line, key, ...) pc_diag_add(d, PC_DIAG_WARNING, file, line, key, __VA_ARGS__)
    char key[96], la[96], lb[96];
    int n = s->capture.cameras;
    if (n < 1 || n > PC_MAX_CAMERAS) {
        ERR(s->capture.line, "capture.cameras", "%d cameras; allowed: 1..%d", n, PC_MAX_CAMERAS);
        return -1;
    }

    /* Sources. */
    if (s->capture.source == PC_SOURCE_GIGE) {
        if (s->cameras_listed == 0)
            ERR(s->capture.line, "cameras",
                "source \"gige\" needs the cameras list, each with an address or serial "
                "(cameras are never opened as \"first found\")");
        else if (s->cameras_listed != n)
            ERR(s->capture.line, "capture.cameras",
                "%d cameras, but the cameras list has %d entries; with source \"gige\" every "
                "camera must be listed", n, s->cameras_listed);
        for (int i = 0; i < n && i < s->cameras_listed; i++) {
            const pc_camera_settings *c = &s->cameras[i];
            if (!c->address[0] && !c->serial[0])
                ERR(cam_line(s, i), cam_label(s, i, la, sizeof la),
                    "no address or serial; a GigE camera is opened by IP address, device id or serial");
        }
    } else if (s->cameras_listed > n) {
        WARN(s->capture.line, "capture.cameras", "%d cameras: only the first %d of the %d listed are used",
             n, n, s->cameras_listed);
    }
    if (s->capture.source == PC_SOURCE_FILE && !s->capture.file[0])
        ERR(s->capture.line, "capture.file", "source \"file\" needs a file (capture.file, or --source file:PATH)");

    /* Camera identities, slabs, sizes, patterns. */
    int slab_owner[PC_MAX_CAMERAS];
    for (int i = 0; i < PC_MAX_CAMERAS; i++)
        slab_owner[i] = -1;
    for (int i = 0; i < n; i++) {
        const pc_camera_settings *c = &s->cameras[i];
        for (int j = 0; j < i; j++) {
            const pc_camera_settings *o = &s->cameras[j];
            if (c->address[0] && strcmp(c->address, o->address) == 0)
                ERR(cam_line(s, i), cam_label(s, i, la, sizeof la),
                    "duplicate camera: address \"%s\" is also used by %s (line %d)", c->address,
                    cam_label(s, j, lb, sizeof lb), cam_line(s, j));
            if (c->serial[0] && strcmp(c->serial, o->serial) == 0)
                ERR(cam_line(s, i), cam_label(s, i, la, sizeof la),
                    "duplicate camera: serial \"%s\" is also used by %s (line %d)", c->serial,
                    cam_label(s, j, lb, sizeof lb), cam_line(s, j));
            if (c->name[0] && strcmp(c->name, o->name) == 0)
                ERR(cam_line(s, i), cam_label(s, i, la, sizeof la),
                    "duplicate camera name \"%s\" (also %s)", c->name, cam_label(s, j, lb, sizeof lb));
        }
        snprintf(key, sizeof key, "cameras[%d].slab", i);
        if (c->slab < 0 || c->slab >= n)
            ERR(cam_line(s, i), key, "slab %d is out of range; with %d cameras: 0..%d", c->slab, n, n - 1);
        else if (slab_owner[c->slab] >= 0)
            ERR(cam_line(s, i), key, "slab %d is also given to %s; each slab needs exactly one camera",
                c->slab, cam_label(s, slab_owner[c->slab], lb, sizeof lb));
        else
            slab_owner[c->slab] = i;
        /* Sizes set through code paths that bypass the key checks. */
        if ((c->width | c->height | c->offset_x | c->offset_y) & 1) {
            snprintf(key, sizeof key, "cameras[%d]", i);
            ERR(cam_line(s, i), key, "odd size or offset (%dx%d at %d,%d); all must be even (whole 2x2 Bayer tiles)",
                c->width, c->height, c->offset_x, c->offset_y);
        }
        if (i > 0 && c->width != s->cameras[0].width) {
            snprintf(key, sizeof key, "cameras[%d].width", i);
            ERR(cam_line(s, i), key,
                "%d differs from %s's %d; every camera must have the same width to stack into one panorama",
                c->width, cam_label(s, 0, lb, sizeof lb), s->cameras[0].width);
        }
        if (i > 0 && c->pattern != s->cameras[0].pattern) {
            snprintf(key, sizeof key, "cameras[%d].pattern", i);
            ERR(cam_line(s, i), key,
                "%s differs from %s's %s; the panorama is demosaiced as one image, so every "
                "camera needs the same pattern (adjust offset_x/offset_y by one pixel to change phase)",
                pc_cfa_name((pc_cfa)c->pattern), cam_label(s, 0, lb, sizeof lb),
                pc_cfa_name((pc_cfa)s->cameras[0].pattern));
        }
        if (c->exposure_us > 0 && s->capture.fps > 0 && c->exposure_us > 1e6 / s->capture.fps) {
            snprintf(key, sizeof key, "cameras[%d].exposure", i);
            WARN(cam_line(s, i), key, "%g us is longer than the frame period (%g us at %g fps); "
                 "the camera cannot keep the frame rate", c->exposure_us, 1e6 / s->capture.fps,
                 s->capture.fps);
        }
    }
    int W = pc_settings_panorama_width(s), H = pc_settings_panorama_height(s);
    /* The spec's frame limits (kernels/debayer.h); checked here rather than
     * with pc_check_size so that config links only the algorithm table. */
    if (W < PC_MIN_DIM || H < PC_MIN_DIM || W > PC_MAX_DIM || H > PC_MAX_DIM)
        ERR(s->capture.line, "cameras", "panorama %dx%d is outside %d..%d pixels in width or height", W, H,
            PC_MIN_DIM, PC_MAX_DIM);

    /* Debayer. */
    const pc_algo_desc *ad = pc_algo_get((pc_algo_id)s->debayer.algo);
    if (!ad)
        ERR(s->debayer.line, "debayer.algo", "invalid algorithm id %d", s->debayer.algo);
    else if (s->debayer.variant != PC_VARIANT_AUTO && !(ad->variants & (unsigned)s->debayer.variant))
        ERR(s->debayer.line, "debayer.variant", "algorithm %s has no %s variant", ad->name,
            pc_variant_name((pc_variant)s->debayer.variant));
    if (s->debayer.backend == PC_BACKEND_CUDA && !PANOCAP_HAVE_CUDA)
        ERR(s->debayer.line, "debayer.backend",
            "\"cuda\": this panocap was built without CUDA; allowed here: auto, cpu");

    /* Encoder. */
    const char *enc = s->encode.encoder;
    if (!enc[0])
        ERR(s->encode.line, "encode.encoder", "empty; use \"auto\" or an FFmpeg encoder name");
    if (s->encode.codec == PC_CODEC_H264 && (W > 4096 || H > 4096)) {
        if (ends_with(enc, "_nvenc"))
            ERR(s->encode.line, "encode.codec",
                "h264 with encoder %s: NVENC H.264 is limited to 4096x4096 and the panorama is %dx%d; "
                "use codec \"hevc\" (hevc_nvenc, up to 8192) or a software encoder", enc, W, H);
        else if (strcmp(enc, "auto") == 0)
            WARN(s->encode.line, "encode.codec",
                 "h264: NVENC H.264 cannot take the %dx%d panorama (limit 4096); the fallback "
                 "encoders will be used; codec \"hevc\" keeps NVENC", W, H);
    }
    for (int i = 0; i < s->encode.fallback.count; i++)
        if (!s->encode.fallback.item[i][0])
            ERR(s->encode.line, "encode.fallback", "entry %d is empty", i);
    if (strcmp(enc, "auto") == 0 && s->encode.fallback.count == 0)
        WARN(s->encode.line, "encode.fallback",
             "empty: where NVENC cannot open there is no encoder to fall back to");

    /* Outputs. */
    if (s->output_count == 0)
        ERR(0, "outputs", "no outputs; give at least one (a file, udp://..., or \"null\" to discard)");
    for (int i = 0; i < s->output_count; i++) {
        const pc_output_settings *o = &s->outputs[i];
        int line = o->line;
        snprintf(key, sizeof key, "outputs[%d].url", i);
        if (!o->url[0]) {
            ERR(line, key, "missing or empty URL");
            continue;
        }
        const char *sep = strstr(o->url, "://");
        if (sep) {
            static const char *const schemes[] = {"udp", "srt", "tcp", "rtp", "file"};
            size_t sl = (size_t)(sep - o->url);
            int ok = 0;
            for (int j = 0; j < 5; j++)
                ok |= strlen(schemes[j]) == sl && strncasecmp(o->url, schemes[j], sl) == 0;
            if (!ok)
                ERR(line, key, "unknown URL scheme \"%.*s\" in \"%s\"; allowed: udp://, srt://, tcp://, "
                    "rtp://, file:// or a plain path, or \"null\"", (int)sl, o->url, o->url);
        }
        for (int j = 0; j < i; j++)
            if (strcmp(o->url, s->outputs[j].url) == 0)
                ERR(line, key, "duplicate output \"%s\" (also outputs[%d])", o->url, j);
        if (o->options[0]) {
            char opts[PC_OPTS_LEN];
            snprintf(opts, sizeof opts, "%s", o->options);
            char *save = NULL;
            for (char *t = strtok_r(opts, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(t, '=');
                if (!eq || eq == t) {
                    snprintf(key, sizeof key, "outputs[%d].options", i);
                    ERR(line, key, "\"%s\" is not key=value (options are \"key=value,key=value\")", t);
                    break;
                }
            }
        }
    }

    /* Daemon. */
    double period_ms = 1000.0 / s->capture.fps;
    if (s->daemon.budget_ms > period_ms)
        WARN(s->daemon.line, "daemon.budget_ms",
             "%g ms is longer than the frame period (%.3g ms at %g fps): frames within budget can "
             "still pile up", s->daemon.budget_ms, period_ms, s->capture.fps);
    if (strlen(s->daemon.control) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        ERR(s->daemon.line, "daemon.control", "path is too long for a UNIX socket (%zu characters; at most %zu)",
            strlen(s->daemon.control), sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
    if (s->daemon.stats_interval_s > 0 && s->daemon.stats_interval_s > s->daemon.stats_window_s)
        WARN(s->daemon.line, "daemon.stats_interval",
             "%g s is longer than the stats window (%g s): percentiles cover only part of each interval",
             s->daemon.stats_interval_s, s->daemon.stats_window_s);
#undef ERR
#undef WARN
    return errors ? -1 : 0;
}

/* --- diff ------------------------------------------------------------- */

static void format_value(const pc_key *k, const void *base, char *buf, size_t len, int quote)
{
    const void *p = cfield(k, base);
    switch (k->type) {
    case PC_KT_INT: snprintf(buf, len, "%d", *(const int *)p); break;
    case PC_KT_INT64: snprintf(buf, len, "%lld%s", (long long)*(const int64_t *)p, quote ? "L" : ""); break;
    case PC_KT_DOUBLE: {
        double v = *(const double *)p;
        snprintf(buf, len, "%.15g", v);
        if (strtod(buf, NULL) != v)
            snprintf(buf, len, "%.17g", v);
        if (quote && !strpbrk(buf, ".eEn"))
            strncat(buf, ".0", len - strlen(buf) - 1);
        break;
    }
    case PC_KT_BOOL: snprintf(buf, len, "%s", *(const int *)p ? "true" : "false"); break;
    case PC_KT_ENUM: {
        int v = *(const int *)p - k->en->base;
        snprintf(buf, len, quote ? "\"%s\"" : "%s", k->en->name(v));
        break;
    }
    case PC_KT_STRING:
        if (!quote) {
            snprintf(buf, len, "%s", (const char *)p);
        } else {
            size_t o = 0;
            const char *t = p;
            if (len < 3)
                return;
            buf[o++] = '"';
            for (; *t && o + 4 < len; t++) {
                if (*t == '"' || *t == '\\')
                    buf[o++] = '\\';
                buf[o++] = *t;
            }
            buf[o++] = '"';
            buf[o] = '\0';
        }
        break;
    case PC_KT_LIST: {
        const pc_name_list *l = p;
        size_t o = 0;
        if (quote)
            o += (size_t)snprintf(buf + o, len - o, "[");
        else
            buf[0] = '\0';
        for (int i = 0; i < l->count && o < len; i++)
            o += (size_t)snprintf(buf + o, len - o, quote ? "%s\"%s\"" : "%s%s", i ? ", " : "", l->item[i]);
        if (quote && o < len)
            snprintf(buf + o, len - o, "]");
        break;
    }
    }
}

static int field_equal(const pc_key *k, const void *a, const void *b)
{
    const void *pa = cfield(k, a), *pb = cfield(k, b);
    switch (k->type) {
    case PC_KT_STRING: return strcmp(pa, pb) == 0;
    case PC_KT_DOUBLE: return *(const double *)pa == *(const double *)pb;
    case PC_KT_LIST: {
        const pc_name_list *la = pa, *lb = pb;
        if (la->count != lb->count)
            return 0;
        for (int i = 0; i < la->count; i++)
            if (strcmp(la->item[i], lb->item[i]) != 0)
                return 0;
        return 1;
    }
    default: return memcmp(pa, pb, field_size(k)) == 0;
    }
}

static void diff_add(pc_settings_delta *d, const char *key, const char *before, const char *after, int live,
                     unsigned bit)
{
    d->changes++;
    if (live)
        d->live |= bit;
    else
        d->restart++;
    if (d->count >= PC_DIFF_MAX)
        return;
    pc_settings_change *c = &d->item[d->count++];
    snprintf(c->key, sizeof c->key, "%s", key);
    snprintf(c->before, sizeof c->before, "%s", before);
    snprintf(c->after, sizeof c->after, "%s", after);
    c->live = live;
}

static void outputs_text(const pc_settings *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->output_count && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "", s->outputs[i].url);
}

int pc_settings_diff(const pc_settings *a, const pc_settings *b, pc_settings_delta *d)
{
    char va[256], vb[256], key[96];
    memset(d, 0, sizeof *d);
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (S->kind == PC_SEC_GROUP) {
            const void *ba = (const char *)a + S->off, *bb = (const char *)b + S->off;
            for (int i = 0; i < S->nkeys; i++) {
                const pc_key *k = &S->keys[i];
                if (field_equal(k, ba, bb))
                    continue;
                format_value(k, ba, va, sizeof va, 0);
                format_value(k, bb, vb, sizeof vb, 0);
                snprintf(key, sizeof key, "%s.%s", S->name, k->name);
                diff_add(d, key, va, vb, k->live != 0, k->live);
            }
        } else if (S->kind == PC_SEC_CAMERAS) {
            int n = a->capture.cameras < b->capture.cameras ? a->capture.cameras : b->capture.cameras;
            for (int c = 0; c < n; c++)
                for (int i = 0; i < S->nkeys; i++) {
                    const pc_key *k = &S->keys[i];
                    if (field_equal(k, &a->cameras[c], &b->cameras[c]))
                        continue;
                    format_value(k, &a->cameras[c], va, sizeof va, 0);
                    format_value(k, &b->cameras[c], vb, sizeof vb, 0);
                    snprintf(key, sizeof key, "cameras[%d].%s", c, k->name);
                    diff_add(d, key, va, vb, 0, 0);
                }
        } else {
            int same = a->output_count == b->output_count;
            for (int o = 0; same && o < a->output_count; o++)
                for (int i = 0; i < S->nkeys; i++)
                    same &= field_equal(&S->keys[i], &a->outputs[o], &b->outputs[o]);
            if (!same) {
                outputs_text(a, va, sizeof va);
                outputs_text(b, vb, sizeof vb);
                diff_add(d, "outputs", va, vb, 1, PC_LIVE_OUTPUTS);
            }
        }
    }
    return d->changes;
}

void pc_settings_apply_live(pc_settings *cur, const pc_settings *next)
{
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (S->kind == PC_SEC_GROUP) {
            for (int i = 0; i < S->nkeys; i++)
                if (S->keys[i].live)
                    memcpy(field(&S->keys[i], (char *)cur + S->off),
                           cfield(&S->keys[i], (const char *)next + S->off), field_size(&S->keys[i]));
        } else if (S->kind == PC_SEC_OUTPUTS) {
            cur->output_count = next->output_count;
            memcpy(cur->outputs, next->outputs, sizeof cur->outputs);
        }
    }
}

void pc_settings_diff_describe(const pc_settings_delta *d, char *buf, size_t len)
{
    size_t o = 0;
    if (!len)
        return;
    buf[0] = '\0';
    if (d->changes == 0) {
        snprintf(buf, len, "no changes");
        return;
    }
    for (int i = 0; i < d->count && o < len; i++) {
        const pc_settings_change *c = &d->item[i];
        o += (size_t)snprintf(buf + o, len - o, "%s%s %s -> %s (%s)", i ? "; " : "", c->key,
                              c->before[0] ? c->before : "\"\"", c->after[0] ? c->after : "\"\"",
                              c->live ? "live" : "needs restart");
    }
    if (d->changes > d->count && o < len)
        snprintf(buf + o, len - o, "; and %d more", d->changes - d->count);
}

/* --- writing and documentation ----------------------------------------- */

static void write_keys(FILE *f, const pc_key *keys, int n, const void *base, const char *indent,
                       int skip_camera_only, int comments)
{
    char v[PC_URL_LEN + 64];
    for (int i = 0; i < n; i++) {
        const pc_key *k = &keys[i];
        if (skip_camera_only && (k->flags & PC_KF_CAMERA_ONLY))
            continue;
        format_value(k, base, v, sizeof v, 1);
        if (comments)
            fprintf(f, "%s%s = %s;%*s# %s\n", indent, k->name, v,
                    (int)(strlen(k->name) + strlen(v) < 36 ? 36 - strlen(k->name) - strlen(v) : 1), "",
                    k->help);
        else
            fprintf(f, "%s%s = %s;\n", indent, k->name, v);
    }
}

int pc_settings_write(const pc_settings *s, FILE *f)
{
    fprintf(f, "# panocap configuration: every setting with its effective value\n"
               "# (panocap --dump-config; panocap --help-config explains each key).\n\n");
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        fprintf(f, "# %s\n", S->help);
        if (S->kind == PC_SEC_GROUP) {
            fprintf(f, "%s = {\n", S->name);
            write_keys(f, S->keys, S->nkeys, (const char *)s + S->off, "  ", 0, 1);
            if (strcmp(S->name, "capture") == 0) {
                fprintf(f, "  # defaults of every camera\n");
                write_keys(f, pc_camera_keys_, pc_ncamera_keys_, &s->capture.camera, "  ", 1, 1);
            }
            fprintf(f, "};\n\n");
        } else if (S->kind == PC_SEC_CAMERAS) {
            fprintf(f, "cameras = (\n");
            for (int c = 0; c < s->capture.cameras; c++) {
                fprintf(f, "  {\n");
                write_keys(f, S->keys, S->nkeys, &s->cameras[c], "    ", 0, 0);
                fprintf(f, "  }%s\n", c + 1 < s->capture.cameras ? "," : "");
            }
            fprintf(f, ");\n\n");
        } else {
            fprintf(f, "outputs = (\n");
            for (int o = 0; o < s->output_count; o++) {
                fprintf(f, "  {\n");
                write_keys(f, S->keys, S->nkeys, &s->outputs[o], "    ", 0, 0);
                fprintf(f, "  }%s\n", o + 1 < s->output_count ? "," : "");
            }
            fprintf(f, ");\n\n");
        }
    }
    return ferror(f) ? -1 : 0;
}

static void print_key_ref(FILE *f, const char *prefix, const pc_key *k)
{
    char allowed[256];
    pc_key_allowed_(k, allowed, sizeof allowed);
    const char *t = k->type == PC_KT_ENUM ? "name" : k->type == PC_KT_LIST ? "list" :
                    k->type == PC_KT_STRING ? "string" : k->type == PC_KT_BOOL ? "bool" :
                    k->type == PC_KT_DOUBLE ? "number" : "integer";
    fprintf(f, "  %s%s (%s, default %s%s%s)%s\n      %s\n", prefix, k->name, t,
            k->type == PC_KT_STRING || k->type == PC_KT_ENUM ? "\"" : "", k->def,
            k->type == PC_KT_STRING || k->type == PC_KT_ENUM ? "\"" : "",
            k->live ? " [live on reload]" : "", k->help);
    if (k->type != PC_KT_STRING)
        fprintf(f, "      allowed: %s\n", allowed);
}

void pc_settings_print_reference(FILE *f)
{
    fprintf(f, "panocap configuration file reference (libconfig syntax).\n"
               "Unknown keys are errors. Command-line options override the file.\n"
               "[live on reload] settings change on SIGHUP without a restart; others need one.\n\n");
    for (int si = 0; si < pc_nsections_; si++) {
        const pc_section *S = &pc_sections_[si];
        if (S->kind == PC_SEC_GROUP)
            fprintf(f, "%s = { ... }: %s\n", S->name, S->help);
        else
            fprintf(f, "%s = ( ... ): %s\n", S->name, S->help);
        for (int i = 0; i < S->nkeys; i++)
            print_key_ref(f, "", &S->keys[i]);
        if (strcmp(S->name, "capture") == 0) {
            char only[256] = "";
            size_t o = 0;
            for (int i = 0, first = 1; i < pc_ncamera_keys_; i++)
                if (pc_camera_keys_[i].flags & PC_KF_CAMERA_ONLY) {
                    o += (size_t)snprintf(only + o, sizeof only - o, "%s%s", first ? "" : ", ", pc_camera_keys_[i].name);
                    first = 0;
                }
            fprintf(f, "  ...and every key of a camera entry except %s,\n  as the default of every camera.\n", only);
        }
        if (S->kind == PC_SEC_OUTPUTS)
            fprintf(f, "  [live on reload] the whole list; an entry may also be a plain URL string.\n");
        fprintf(f, "\n");
    }
}

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
