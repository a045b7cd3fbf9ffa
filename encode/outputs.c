/* outputs.c - the encoder's outputs: recording files (plain or segmented
 * by time), MPEG-TS over UDP/SRT/other protocols, FLV over RTMP(S), HLS,
 * and 'null'.
 *
 * Each output owns a thread and a bounded ring of packet references. The
 * encoder thread only ever takes the ring's lock for a moment: when the
 * output is down or its ring is full the packet is dropped and counted,
 * and the output then waits for the next keyframe (asking the encoder for
 * one) so what it writes stays decodable. A failed open or write is
 * logged, the output is closed and re-opened with backoff (0.5 s doubling
 * to 2 s for files, 5 s for the network); a re-opened file gets a new name
 * so nothing is overwritten. A recording that failed is only re-opened
 * once its folder is writable and has free space (statvfs, checked every
 * 0.5 s without touching the disk), so a full disk makes no empty -rN files
 * and writing resumes within a second of space coming back; a file that
 * failed before its first packet is removed.
 *
 * Crash safety: .ts is flushed per packet, .mp4 is fragmented (a fragment
 * per keyframe and at least every second), .mkv closes and flushes a
 * cluster every second: a SIGKILL or power loss costs at most ~1 s.
 *
 * Retention (segmented recordings): see pc_output_config.max_bytes.
 *
 * The encoder runs with global headers; MPEG-TS based outputs get the
 * parameter sets in front of every keyframe (dump_extra), .mkv/.mp4 and
 * RTMP's FLV get them in their header (FLV's AVC sequence header, sent
 * again on every reconnect). FLV in this FFmpeg carries H.264 only.
 *
 * Secrets in a URL (an RTMP stream key, a password, an SRT passphrase in
 * the query) never reach the log, the status or the metrics: messages and
 * figures name the output by its masked URL (common/urlmask.h), and
 * FFmpeg's own lines from the output's thread are masked too.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <libavcodec/bsf.h>
#include <libavutil/avstring.h>
#include <libavutil/opt.h>

#include "clock.h"
#include "encode_internal.h"
#include "urlmask.h"

enum out_kind { K_NULL, K_FILE, K_NET, K_HLS };

#define BACKOFF_FIRST_MS 500
#define BACKOFF_MAX_FILE_MS 2000
#define BACKOFF_MAX_NET_MS 5000
#define PROBE_MS 500                  /* free-space / writable check while a recording waits */
#define PROBE_MIN_FREE (4LL << 20)    /* re-open a failed recording with at least this free
                                       * (or an eighth of a smaller file system) */
#define RETENTION_MAX_FILES 100000

typedef struct slot {
    AVPacket *pkt;
    int64_t pts_ns;
    int stream;            /* which video stream of the output */
} slot;

struct pc_out {
    int index;
    enum out_kind kind;
    char *url;             /* as configured */
    char *shown;           /* url with its secrets masked: what messages and stats say */
    int rtmp;              /* rtmp://, rtmps://: FLV, connected on the output's thread */
    char *fmt;             /* muxer name */
    char *proto;           /* "file", "udp", "srt", ... */
    int segment_seconds, hls_time, hls_list_size, pkt_size, srt_latency_ms;
    int64_t max_bytes, max_age_s, min_free;
    char *srt_mode, *srt_passphrase;
    char *options;         /* "key=value,..." from the config, or NULL */

    /* One video stream per encoder feeding this output (the bands muxed
     * as streams), else one. enc[s] is cleared under lock when stream s's
     * encoder goes (pc_out_detach). */
    int nstreams;
    AVCodecParameters *par[PC_OUT_MAX_STREAMS];
    AVRational enc_tb, fps;
    const pc_logger *log;
    void (*request_idr)(void *enc);
    void *enc[PC_OUT_MAX_STREAMS];
    pc_written_cb on_written;
    pc_output_fault_cb on_fault;
    void *cb_user[PC_OUT_MAX_STREAMS];
    char encoder_name[32];

    /* owned by the output thread (or by pc_out_open before it starts) */
    AVFormatContext *oc;
    AVBSFContext *bsf[PC_OUT_MAX_STREAMS];
    AVPacket *wpkt;
    int need_key[PC_OUT_MAX_STREAMS]; /* after a segment cut: skip to this stream's next keyframe */
    char cur_path[4096];
    int64_t seg_start_pts; /* enc_tb units; INT64_MIN = not started */
    int seg_idr_asked;
    int opens;             /* successful opens so far */
    int failing;           /* failed since the last good write: log once */
    uint64_t cur_packets;  /* packets written into the current file */
    char wait_reason[160]; /* why a failed recording is not re-opened yet ("" = it may be) */

    pthread_t thread;
    int thread_started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    slot *ring;
    int cap, head, count;
    int drop_until_key[PC_OUT_MAX_STREAMS]; /* set after a drop: skip to the stream's next keyframe */
    int stop;              /* drain and finish */
    atomic_int abort_io;   /* interrupt blocking IO now */
    int64_t last_idr_ask_ns;

    pc_output_state state;
    uint64_t written, dropped, bytes, reconnects, failures, files, files_deleted, bytes_deleted;
    int waiting_space;
    uint64_t told_dropped, told_failures; /* what on_fault has been told so far */
    char folder[256];      /* recordings: the folder of url (pc_out_stats) */
    int scanned;           /* the retention scan ran: its figures below */
    int64_t scan_bytes, scan_files;       /* this output's segments then */
    uint64_t bytes_at_scan, files_at_scan; /* bytes and files counted then */
    int64_t last_written_ns, last_pts_ns;
    char last_error[160];
};

/* How messages name the output: the file being written, or the URL with
 * its secrets masked. */
static const char *shown(const pc_out *o)
{
    return (o->kind == K_FILE || o->kind == K_HLS) && o->cur_path[0] ? o->cur_path : o->shown;
}

static const char *errstr(int r, char *buf, size_t n)
{
    av_strerror(r, buf, n);
    return buf;
}

/* "udp" from "udp://h:p", "file" for paths (and "file:" URLs). */
static void url_scheme(const char *url, char *out, size_t n)
{
    const char *p = strstr(url, "://");
    size_t len = p ? (size_t)(p - url) : 0;
    int ok = p && len > 0 && len < n;
    for (size_t i = 0; ok && i < len; i++) {
        char c = url[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '-' || c == '.'))
            ok = 0;
    }
    if (!ok) {
        snprintf(out, n, "file");
        return;
    }
    memcpy(out, url, len);
    out[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (out[i] >= 'A' && out[i] <= 'Z')
            out[i] = (char)(out[i] - 'A' + 'a');
}

static int have_output_protocol(const char *name)
{
    void *opaque = NULL;
    const char *p;
    while ((p = avio_enum_protocols(&opaque, 1)))
        if (strcmp(p, name) == 0)
            return 1;
    return 0;
}

static void output_protocols(char *buf, size_t n)
{
    void *opaque = NULL;
    const char *p;
    size_t off = 0;
    buf[0] = '\0';
    while ((p = avio_enum_protocols(&opaque, 1)) && off + 1 < n)
        off += (size_t)snprintf(buf + off, n - off, "%s%s", off ? ", " : "", p);
}

static const char *ext_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash))
        return "";
    return dot + 1;
}

/* Container for an output: explicit, else from the extension / scheme. */
static int pick_format(int index, const pc_output_config *oc, const char *scheme,
                       const char **fmt, enum out_kind *kind, char *err, size_t n)
{
    if (strcmp(oc->url, "null") == 0) {
        *fmt = NULL;
        *kind = K_NULL;
        return 0;
    }
    int is_file = strcmp(scheme, "file") == 0;
    int rtmp = pc_url_is_rtmp(oc->url);
    const char *ext = is_file ? ext_of(oc->url) : "";
    const char *f = oc->format;
    if (!f || !f[0]) {
        if (rtmp)
            f = "flv";
        else if (!is_file || !ext[0] || !strcasecmp(ext, "ts") || !strcasecmp(ext, "m2ts") ||
            !strcasecmp(ext, "mts"))
            f = "mpegts";
        else if (!strcasecmp(ext, "mkv"))
            f = "matroska";
        else if (!strcasecmp(ext, "mp4") || !strcasecmp(ext, "mov"))
            f = "mp4";
        else if (!strcasecmp(ext, "m3u8"))
            f = "hls";
        else {
            snprintf(err, n, "output %d '%s': cannot tell the container from the extension "
                     "'.%s' (use .ts, .mkv, .mp4 or .m3u8, or set its format)", index, oc->url, ext);
            return PC_EINVAL;
        }
    }
    const AVOutputFormat *of = av_guess_format(f, NULL, NULL);
    if (!of || strcmp(of->name, f) != 0) {
        snprintf(err, n, "output %d '%s': format '%s' is not a muxer of this FFmpeg build",
                 index, oc->url, f);
        return PC_EINVAL;
    }
    *fmt = of->name;
    if (!strcmp(f, "hls"))
        *kind = K_HLS;
    else
        *kind = is_file ? K_FILE : K_NET;
    if (rtmp && strcmp(f, "flv") != 0) {
        snprintf(err, n, "output %d '%s': RTMP carries FLV, not '%s' (leave its format unset)",
                 index, oc->url, f);
        return PC_EINVAL;
    }
    if (!is_file && !rtmp && strcmp(f, "mpegts") != 0) {
        snprintf(err, n, "output %d '%s': network outputs carry MPEG-TS (RTMP: FLV), not '%s'",
                 index, oc->url, f);
        return PC_EINVAL;
    }
    if (*kind == K_HLS && !is_file) {
        snprintf(err, n, "output %d '%s': HLS is written to a local .m3u8 path", index, oc->url);
        return PC_EINVAL;
    }
    return 0;
}

/* Where an option key goes: 'p' the URL's protocol, 'm' the muxer or the
 * format context, 0 none of them. *opt: its AVOption (NULL when none). */
static char option_target(const char *proto, const AVOutputFormat *of, const char *key,
                          const AVOption **opt)
{
    const AVClass *pc = (of->flags & AVFMT_NOFILE) ? NULL : avio_protocol_get_class(proto);
    const AVClass *fc = avformat_get_class();
    *opt = NULL;
    if (pc && (*opt = av_opt_find(&pc, key, NULL, 0, AV_OPT_SEARCH_FAKE_OBJ)))
        return 'p';
    if (of->priv_class && (*opt = av_opt_find((void *)&of->priv_class, key, NULL, 0, AV_OPT_SEARCH_FAKE_OBJ)))
        return 'm';
    if ((*opt = av_opt_find(&fc, key, NULL, 0, AV_OPT_SEARCH_FAKE_OBJ)))
        return 'm';
    return 0;
}

/* "key=value,key=value" into *d; 0 or PC_EINVAL with the entry named. */
static int parse_options(int index, const char *url, const char *s, AVDictionary **d,
                         char *err, size_t n)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq || eq == t) {
            snprintf(err, n, "output %d '%s': options: \"%s\" is not key=value "
                     "(options are \"key=value,key=value\")", index, url, t);
            av_dict_free(d);
            return PC_EINVAL;
        }
        *eq = '\0';
        av_dict_set(d, t, eq + 1, 0);
    }
    return 0;
}

/* Tries key=value on a zeroed stand-in object of the protocol's class (a
 * protocol's private context cannot be had without connecting): names,
 * named constants and ranges are checked by libavutil itself. */
static int protocol_option_ok(const char *proto, const char *key, const char *value)
{
    const AVClass *pc = avio_protocol_get_class(proto);
    if (!pc || !pc->option)
        return 0;
    size_t size = sizeof(void *);
    for (const AVOption *o = pc->option; o->name; o++)
        if (o->type != AV_OPT_TYPE_CONST && (size_t)o->offset + 16 > size)
            size = (size_t)o->offset + 16;
    void *fake = av_mallocz(size);
    if (!fake)
        return 0;
    *(const AVClass **)fake = pc;
    int r = av_opt_set(fake, key, value, 0);
    av_opt_free(fake);
    av_free(fake);
    return r >= 0;
}

/* An option's value as a message may show it: secrets (an RTMP play path
 * is the stream key) as "****". */
static const char *shown_value(const char *key, const char *value)
{
    static const char *const secret[] = {"rtmp_playpath", "passphrase", "password", "key", "token",
                                         "secret"};
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++)
        if (!strcmp(key, secret[i]))
            return "****";
    return value;
}

/* Every key known to the protocol, the muxer or libavformat; values tried
 * on a real (unopened) format context or a stand-in protocol object. */
static int check_options(int index, const pc_output_config *oc, const char *proto,
                         const char *fmt, char *err, size_t n)
{
    AVDictionary *d = NULL;
    if (parse_options(index, oc->url, oc->options, &d, err, n))
        return PC_EINVAL;
    const AVOutputFormat *of = av_guess_format(fmt, NULL, NULL);
    AVFormatContext *ctx = NULL;
    avformat_alloc_output_context2(&ctx, of, NULL, NULL);
    const AVDictionaryEntry *e = NULL;
    int r = 0;
    while (!r && (e = av_dict_get(d, "", e, AV_DICT_IGNORE_SUFFIX))) {
        const AVOption *opt;
        char t = option_target(proto, of, e->key, &opt);
        if (!t) {
            if (of->flags & AVFMT_NOFILE)
                snprintf(err, n, "output %d '%s': options: \"%s\" is not an option of the %s muxer "
                         "or libavformat", index, oc->url, e->key, of->name);
            else
                snprintf(err, n, "output %d '%s': options: \"%s\" is not an option of the %s "
                         "protocol, the %s muxer or libavformat", index, oc->url, e->key, proto,
                         of->name);
            r = PC_EINVAL;
        } else if (t == 'm' && ctx && av_opt_set(ctx, e->key, e->value, AV_OPT_SEARCH_CHILDREN) < 0) {
            snprintf(err, n, "output %d '%s': options: %s=\"%s\" is not a valid value for the %s "
                     "muxer's %s", index, oc->url, e->key, shown_value(e->key, e->value), of->name, e->key);
            r = PC_EINVAL;
        } else if (t == 'p' && !protocol_option_ok(proto, e->key, e->value)) {
            snprintf(err, n, "output %d '%s': options: %s=\"%s\" is not a valid value for the %s "
                     "protocol's %s%s", index, oc->url, e->key, shown_value(e->key, e->value), proto, e->key,
                     opt->type == AV_OPT_TYPE_INT || opt->type == AV_OPT_TYPE_INT64
                         ? " (a whole number in range, or one of its names)" : "");
            r = PC_EINVAL;
        } else if (t == 'p' && !strcmp(e->key, "passphrase") &&
                   (strlen(e->value) < 10 || strlen(e->value) > 79)) {
            snprintf(err, n, "output %d '%s': options: the SRT passphrase must be 10 to 79 "
                     "characters (has %zu)", index, oc->url, strlen(e->value));
            r = PC_EINVAL;
        }
    }
    avformat_free_context(ctx);
    av_dict_free(&d);
    return r;
}

/* Network URLs: a host (but an SRT listener may leave it empty) and a port
 * 1..65535 in digits. */
static int check_net_url(int index, const pc_output_config *oc, const char *proto,
                         char *err, size_t n)
{
    char host[256], path[1024], auth[8];
    int port = -1;
    av_url_split(NULL, 0, auth, sizeof auth, host, sizeof host, &port, path, sizeof path, oc->url);
    const char *hp = strstr(oc->url, "://") + 3;
    const char *end = hp + strcspn(hp, "/?#");
    const char *colon = NULL;
    for (const char *c = hp; c < end; c++)
        if (*c == ':' && !(hp[0] == '[' && memchr(c, ']', (size_t)(end - c))))
            colon = c;
    int listener = (oc->srt_mode && !strcmp(oc->srt_mode, "listener")) ||
                   strstr(oc->url, "mode=listener") ||
                   (oc->options && strstr(oc->options, "mode=listener"));
    int rtmp = pc_url_is_rtmp(oc->url);
    if (rtmp) {
        /* rtmp://HOST[:PORT]/APP/KEY: the port defaults (1935, rtmps 443) */
        char key[8];
        pc_url_rtmp_key(oc->url, key, sizeof key);
        if (!host[0]) {
            snprintf(err, n, "output %d '%s': no host (write %s://HOST[:PORT]/APP/KEY)", index, oc->url,
                     proto);
            return PC_EINVAL;
        }
        if (!key[0] && !(oc->options && strstr(oc->options, "rtmp_playpath="))) {
            snprintf(err, n, "output %d '%s': no application and stream key (write "
                     "%s://HOST[:PORT]/APP/KEY, as the streaming service gives them)", index, oc->url,
                     proto);
            return PC_EINVAL;
        }
        if (!colon)
            return 0;
    }
    if (!host[0] && !(listener && !strcmp(proto, "srt"))) {
        snprintf(err, n, "output %d '%s': no host (write %s://HOST:PORT)", index, oc->url, proto);
        return PC_EINVAL;
    }
    if (!colon) {
        snprintf(err, n, "output %d '%s': no port (write %s://HOST:PORT)", index, oc->url, proto);
        return PC_EINVAL;
    }
    const char *d = colon + 1;
    long v = 0;
    int digits = 0;
    for (; d < end && *d >= '0' && *d <= '9' && v < 100000; d++, digits++)
        v = v * 10 + (*d - '0');
    if (!digits || d != end || v < 1 || v > 65535) {
        snprintf(err, n, "output %d '%s': port \"%.*s\" is not a number in 1..65535", index,
                 oc->url, (int)(end - colon - 1), colon + 1);
        return PC_EINVAL;
    }
    return 0;
}

/* Recording paths: not a directory or a block device, and (for a path
 * without strftime conversions in its folder) a folder that exists and
 * this process may write to. */
static int check_file_path(int index, const char *url, char *err, size_t n)
{
    const char *path = strncmp(url, "file://", 7) == 0 ? url + 7 : url;
    if (!strncmp(path, "file:", 5))
        path += 5;
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            snprintf(err, n, "output %d '%s': is a directory, not a recording file", index, url);
            return PC_EINVAL;
        }
        if (S_ISBLK(sb.st_mode)) {
            snprintf(err, n, "output %d '%s': is a block device; recordings are files "
                     "(give a path on a mounted file system)", index, url);
            return PC_EINVAL;
        }
        if (!S_ISREG(sb.st_mode))
            return 0; /* a FIFO or character device is the user's choice */
        if (access(path, W_OK) != 0) {
            snprintf(err, n, "output %d '%s': not writable: %s", index, url, strerror(errno));
            return PC_EINVAL;
        }
        return 0;
    }
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (strchr(dir, '%'))
        return 0; /* the folder is made of the time: checked when opened */
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        snprintf(err, n, "output %d '%s': %s is not a folder", index, url, dir);
        return PC_EINVAL;
    }
    if (stat(dir, &sb) != 0) {
        /* missing folders are made when the output opens: the nearest
         * existing one must take them */
        char miss[4096];
        snprintf(miss, sizeof miss, "%s", dir);
        while (stat(dir, &sb) != 0 && strcmp(dir, "/") && strcmp(dir, ".")) {
            char *s = strrchr(dir, '/');
            if (!s)
                snprintf(dir, sizeof dir, ".");
            else if (s == dir)
                dir[1] = '\0';
            else
                *s = '\0';
        }
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            snprintf(err, n, "output %d '%s': the folder %s does not exist and %s is not a folder", index, url,
                     miss, dir);
            return PC_EINVAL;
        }
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, n, "output %d '%s': cannot write in the folder %s: %s", index, url, dir,
                 strerror(errno));
        return PC_EINVAL;
    }
    /* access() says yes to root everywhere: create a nameless file to be
     * sure (or a named one, removed at once, where O_TMPFILE is missing) */
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/.panocap-check-XXXXXX", dir);
        fd = mkstemp(probe);
        if (fd >= 0)
            unlink(probe);
    }
    if (fd < 0) {
        /* a pseudo file system (/proc) says ENOENT for a new name */
        snprintf(err, n, "output %d '%s': cannot create a file in the folder %s: %s", index, url, dir,
                 errno == ENOENT ? "not a place for files" : strerror(errno));
        return PC_EINVAL;
    }
    close(fd);
    return 0;
}

static int check_output(int index, const pc_output_config *oc, enum AVCodecID codec,
                        char *err, size_t n)
{
    if (!oc->url || !oc->url[0]) {
        snprintf(err, n, "output %d: empty URL", index);
        return PC_EINVAL;
    }
    char scheme[32];
    url_scheme(oc->url, scheme, sizeof scheme);
    if (strstr(oc->url, "://") && !strcmp(scheme, "file") && strncmp(oc->url, "file://", 7) != 0) {
        snprintf(err, n, "output %d '%s': malformed URL scheme", index, oc->url);
        return PC_EINVAL;
    }
    if (strcmp(oc->url, "null") != 0 && !have_output_protocol(scheme)) {
        char list[1024];
        output_protocols(list, sizeof list);
        if (!strcmp(scheme, "srt"))
            snprintf(err, n, "output %d '%s': this FFmpeg build has no SRT (libsrt) output; "
                     "it offers: %s", index, oc->url, list);
        else
            snprintf(err, n, "output %d '%s': unknown URL scheme '%s' (this FFmpeg writes to: %s)",
                     index, oc->url, scheme, list);
        return PC_EINVAL;
    }
    const char *fmt;
    enum out_kind kind;
    int r = pick_format(index, oc, scheme, &fmt, &kind, err, n);
    if (r)
        return r;
    if (kind == K_NULL)
        return 0;
    if (!strcmp(fmt, "flv") && codec != AV_CODEC_ID_NONE && codec != AV_CODEC_ID_H264) {
        const AVCodecDescriptor *cd = avcodec_descriptor_get(codec);
        snprintf(err, n, "output %d '%s': RTMP (FLV) carries H.264 only with this FFmpeg, and this "
                 "picture is encoded as %s: set its codec to \"h264\" (HEVC over enhanced RTMP needs "
                 "FFmpeg 6.1 or later)", index, oc->url, cd ? cd->name : "another codec");
        return PC_EINVAL;
    }
    if (codec == AV_CODEC_ID_AV1 && (!strcmp(fmt, "mpegts") || kind == K_HLS)) {
        snprintf(err, n, "output %d '%s': AV1 cannot be carried in MPEG-TS/HLS by FFmpeg 5.1; "
                 "use a .mkv or .mp4 recording with this encoder", index, oc->url);
        return PC_EINVAL;
    }
    if (oc->segment_seconds < 0 || (oc->segment_seconds > 0 && kind != K_FILE)) {
        snprintf(err, n, "output %d '%s': segment_seconds %d: only recording files are segmented "
                 "(and the value must be >= 0)", index, oc->url, oc->segment_seconds);
        return PC_EINVAL;
    }
    if (oc->max_bytes < 0 || oc->max_age_s < 0 || oc->min_free < 0 ||
        ((oc->max_bytes || oc->max_age_s || oc->min_free) && (kind != K_FILE || oc->segment_seconds <= 0))) {
        snprintf(err, n, "output %d '%s': max_bytes, max_age and min_free (retention) apply to "
                 "segmented recordings only (set segment) and must be >= 0", index, oc->url);
        return PC_EINVAL;
    }
    if (oc->hls_time < 0 || oc->hls_list_size < 0 || oc->queue_packets < 0 ||
        oc->pkt_size < 0 || oc->pkt_size > PC_ENCODE_MAX_PKT_SIZE) {
        snprintf(err, n, "output %d '%s': hls_time, hls_list_size, queue_packets must be >= 0 "
                 "and pkt_size 0..65507", index, oc->url);
        return PC_EINVAL;
    }
    if (oc->srt_passphrase && oc->srt_passphrase[0]) {
        size_t l = strlen(oc->srt_passphrase);
        if (l < 10 || l > 79) {
            snprintf(err, n, "output %d '%s': srt_passphrase must be 10 to 79 characters (has %zu)",
                     index, oc->url, l);
            return PC_EINVAL;
        }
    }
    if (kind == K_NET && (r = check_net_url(index, oc, scheme, err, n)))
        return r;
    if ((kind == K_FILE || kind == K_HLS) && (r = check_file_path(index, oc->url, err, n)))
        return r;
    if (oc->options && oc->options[0] && (r = check_options(index, oc, scheme, fmt, err, n)))
        return r;
    if (oc->srt_mode && oc->srt_mode[0] && strcmp(oc->srt_mode, "caller") &&
        strcmp(oc->srt_mode, "listener") && strcmp(oc->srt_mode, "rendezvous")) {
        snprintf(err, n, "output %d '%s': srt_mode '%s' (use caller, listener or rendezvous)",
                 index, oc->url, oc->srt_mode);
        return PC_EINVAL;
    }
    return 0;
}

/* The checks above; a message names the output by its masked URL. */
int pc_out_check(int index, const pc_output_config *oc, enum AVCodecID codec, char *err, size_t n)
{
    int r = check_output(index, oc, codec, err, n);
    if (r && oc->url)
        pc_url_redact(err, n, oc->url);
    return r;
}

int pc_output_check(int index, const pc_output_config *oc, char *err, size_t n)
{
    return pc_out_check(index, oc, AV_CODEC_ID_NONE, err, n);
}

static int interrupt_cb(void *opaque)
{
    pc_out *o = opaque;
    return atomic_load(&o->abort_io);
}

/* Bounded copy (messages are cut to the stats field). */
static void copy_msg(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

static void set_error(pc_out *o, const char *msg)
{
    pthread_mutex_lock(&o->lock);
    copy_msg(o->last_error, sizeof o->last_error, msg);
    pthread_mutex_unlock(&o->lock);
}

/* The file name of the next recording file: strftime on the pattern for
 * segments; for re-opens a "-rN" suffix; never an existing file after the
 * first open. */
static void next_path(pc_out *o)
{
    char base[4096];
    if (o->segment_seconds > 0) {
        char pat[4096];
        const char *ext = ext_of(o->url);
        if (strchr(o->url, '%'))
            snprintf(pat, sizeof pat, "%s", o->url);
        else if (ext[0])
            snprintf(pat, sizeof pat, "%.*s-%%Y%%m%%d-%%H%%M%%S.%s",
                     (int)(ext - 1 - o->url), o->url, ext);
        else
            snprintf(pat, sizeof pat, "%s-%%Y%%m%%d-%%H%%M%%S", o->url);
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        if (!strftime(base, sizeof base, pat, &tm))
            snprintf(base, sizeof base, "%s", o->url);
    } else {
        snprintf(base, sizeof base, "%s", o->url);
        struct stat sb;
        /* the first open writes the configured path; a device or FIFO
         * (not a regular file) is always reused */
        if (o->opens == 0 || stat(base, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            snprintf(o->cur_path, sizeof o->cur_path, "%s", base);
            return;
        }
    }
    if (access(base, F_OK) != 0 && o->segment_seconds > 0) {
        snprintf(o->cur_path, sizeof o->cur_path, "%s", base);
        return;
    }
    const char *ext = ext_of(base);
    int stem = ext[0] ? (int)(ext - 1 - base) : (int)strlen(base);
    for (int i = 1; i < 100000; i++) {
        snprintf(o->cur_path, sizeof o->cur_path, "%.*s-r%d%s%s", stem, base, i,
                 ext[0] ? "." : "", ext);
        if (access(o->cur_path, F_OK) != 0)
            return;
    }
}

/* --- recording files: free space, retention, failed files ---------------- */

/* The folder of a path ("." when it has none). */
static void dir_of(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, n, ".");
    else if (slash == path)
        snprintf(out, n, "/");
    else
        snprintf(out, n, "%.*s", (int)(slash - path), path);
}

/* Bytes an unprivileged writer may still use there; -1 if unknown.
 * *size: the file system's size (may be NULL). */
static int64_t free_bytes_of(const char *dir, int64_t *size)
{
    struct statvfs v;
    if (statvfs(dir, &v) != 0)
        return -1;
    if (size)
        *size = (int64_t)v.f_blocks * (int64_t)v.f_frsize;
    return (int64_t)v.f_bavail * (int64_t)v.f_frsize;
}

static int64_t free_bytes(const char *dir) { return free_bytes_of(dir, NULL); }

typedef struct seg_file {
    char *path;
    int64_t size;
    time_t mtime;
} seg_file;

static int seg_cmp(const void *a, const void *b)
{
    const seg_file *x = a, *y = b;
    if (x->mtime != y->mtime)
        return x->mtime < y->mtime ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Segmented recordings: deletes this output's closed segments, oldest
 * first, while they exceed max_bytes, are older than max_age_s, or the
 * file system has less than min_free free (also used, with PROBE_MIN_FREE,
 * to make room after a full disk). Its segments: files in the pattern's
 * folder whose names start with the pattern's text before the first '%'
 * (or its stem and '-') and end with its extension. Never the open one.
 * count_only: deletes nothing, only counts what they take (pc_out_stats). */
static void retention(pc_out *o, int64_t need_free, int count_only)
{
    if (o->segment_seconds <= 0 || o->kind != K_FILE)
        return;
    int64_t min_free = o->min_free > need_free ? o->min_free : need_free;
    if (!o->max_bytes && !o->max_age_s && !min_free)
        return;
    char dir[4096], prefix[512];
    dir_of(o->url, dir, sizeof dir);
    if (strchr(dir, '%'))
        return; /* a folder per date: not ours to walk */
    const char *base = strrchr(o->url, '/') ? strrchr(o->url, '/') + 1 : o->url;
    const char *ext = ext_of(base);
    const char *pct = strchr(base, '%');
    if (pct)
        snprintf(prefix, sizeof prefix, "%.*s", (int)(pct - base), base);
    else
        snprintf(prefix, sizeof prefix, "%.*s-", ext[0] ? (int)(ext - 1 - base) : (int)strlen(base), base);
    size_t plen = strlen(prefix), elen = strlen(ext);
    struct stat cur;
    int have_cur = o->oc && stat(o->cur_path, &cur) == 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    seg_file *v = NULL;
    size_t nv = 0, cap = 0;
    int64_t total = 0;
    struct dirent *de;
    int64_t nfiles = 0;
    while ((de = readdir(d)) && nv < RETENTION_MAX_FILES) {
        size_t l = strlen(de->d_name);
        if (l <= plen + elen + 1 || strncmp(de->d_name, prefix, plen) != 0 ||
            (elen && (de->d_name[l - elen - 1] != '.' || strcmp(de->d_name + l - elen, ext) != 0)))
            continue;
        char path[4096 + 256];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        total += (int64_t)sb.st_size;
        nfiles++;
        if (have_cur && sb.st_dev == cur.st_dev && sb.st_ino == cur.st_ino)
            continue; /* the open segment counts, but stays */
        if (nv == cap) {
            cap = cap ? cap * 2 : 64;
            seg_file *nvp = realloc(v, cap * sizeof *v);
            if (!nvp)
                break;
            v = nvp;
        }
        v[nv].path = strdup(path);
        if (!v[nv].path)
            break;
        v[nv].size = (int64_t)sb.st_size;
        v[nv].mtime = sb.st_mtime;
        nv++;
    }
    closedir(d);
    if (nv) /* qsort of NULL, 0 is undefined */
        qsort(v, nv, sizeof *v, seg_cmp);
    time_t now = time(NULL);
    int64_t fb = min_free ? free_bytes(dir) : 0;
    for (size_t i = 0; i < nv; i++) {
        const char *why = NULL;
        if (o->max_bytes && total > o->max_bytes)
            why = "max_bytes";
        else if (o->max_age_s && now - v[i].mtime > o->max_age_s)
            why = "max_age";
        else if (min_free && fb >= 0 && fb < min_free)
            why = o->min_free >= need_free ? "min_free" : "disk full";
        if (!why || count_only)
            break;
        if (unlink(v[i].path) != 0) {
            pc_log(o->log, PC_LOG_WARNING, "encode: output %d: retention (%s): cannot delete '%s': %s",
                   o->index, why, v[i].path, strerror(errno));
            continue;
        }
        total -= v[i].size;
        nfiles--;
        if (min_free)
            fb = free_bytes(dir);
        pthread_mutex_lock(&o->lock);
        o->files_deleted++;
        o->bytes_deleted += (uint64_t)v[i].size;
        pthread_mutex_unlock(&o->lock);
        pc_log(o->log, PC_LOG_NOTICE, "encode: output %d: retention (%s): deleted '%s' (%lld bytes)",
               o->index, why, v[i].path, (long long)v[i].size);
    }
    for (size_t i = 0; i < nv; i++)
        free(v[i].path);
    free(v);
    pthread_mutex_lock(&o->lock); /* what the folder holds now, for pc_out_stats */
    o->scanned = 1;
    o->scan_bytes = total;
    o->scan_files = nfiles;
    o->bytes_at_scan = o->bytes;
    o->files_at_scan = o->files;
    pthread_mutex_unlock(&o->lock);
}

/* A failed recording may be re-opened: its folder is writable and has free
 * space (after retention, where the output has a limit, made what room it
 * may). Sets o->wait_reason. */
static int recording_ready(pc_out *o)
{
    o->wait_reason[0] = '\0';
    if (o->kind != K_FILE && o->kind != K_HLS)
        return 1;
    struct stat sb;
    if (o->segment_seconds <= 0 && stat(o->url, &sb) == 0 && !S_ISREG(sb.st_mode))
        return 1; /* a device or FIFO: only opening it tells */
    char dir[4096];
    dir_of(o->url, dir, sizeof dir);
    if (access(dir, W_OK) != 0) {
        snprintf(o->wait_reason, sizeof o->wait_reason, "folder %.100s not writable: %s", dir,
                 strerror(errno));
        return 0;
    }
    int64_t fs_size = 0;
    int64_t fb = free_bytes_of(dir, &fs_size);
    int64_t need = PROBE_MIN_FREE;
    if (fs_size > 0 && fs_size / 8 < need)
        need = fs_size / 8;
    if (o->min_free > need)
        need = o->min_free;
    if (fb >= 0 && fb < need && (o->max_bytes || o->max_age_s || o->min_free)) {
        retention(o, need, 0); /* an output with a retention limit makes room itself */
        fb = free_bytes(dir);
    }
    if (fb >= 0 && fb < need) {
        snprintf(o->wait_reason, sizeof o->wait_reason, "%lld KiB free in %.100s, waiting for %lld",
                 (long long)(fb >> 10), dir, (long long)(need >> 10));
        return 0;
    }
    return 1;
}

/* A recording file that failed before its first packet holds a header at
 * most: remove it, so retries leave no empty -rN files behind. */
static void drop_empty_file(pc_out *o)
{
    struct stat sb;
    if (o->kind == K_FILE && o->cur_packets == 0 && o->cur_path[0] && stat(o->cur_path, &sb) == 0 &&
        S_ISREG(sb.st_mode) && unlink(o->cur_path) == 0)
        pc_log(o->log, PC_LOG_DEBUG, "encode: output %d: removed '%s' (failed before its first packet)",
               o->index, o->cur_path);
}

static void close_target(pc_out *o, int trailer)
{
    if (!o->oc)
        return;
    if (trailer) {
        int r = av_write_trailer(o->oc);
        if (r < 0) {
            char e[AV_ERROR_MAX_STRING_SIZE], msg[160];
            snprintf(msg, sizeof msg, "trailer: %s", errstr(r, e, sizeof e));
            set_error(o, msg);
            pc_log(o->log, PC_LOG_WARNING, "encode: output %d '%s': writing the trailer failed: %s",
                   o->index, shown(o), e);
        }
    }
    if (!(o->oc->oformat->flags & AVFMT_NOFILE))
        avio_closep(&o->oc->pb);
    avformat_free_context(o->oc);
    o->oc = NULL;
}

/* Makes the folders leading to path (as mkdir -p; 0750). */
static void make_parents(const char *path)
{
    char d[4096];
    snprintf(d, sizeof d, "%s", path);
    char *slash = strrchr(d, '/');
    if (!slash || slash == d)
        return;
    *slash = '\0';
    for (char *p = d + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(d, 0750);
            *p = '/';
        }
    mkdir(d, 0750);
}

/* Opens the file / connection and writes the header. */
static int open_target(pc_out *o, char *err, size_t n)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    AVDictionary *mopts = NULL, *popts = NULL;
    int r;
    if (o->kind == K_FILE || o->kind == K_HLS) {
        next_path(o);
        make_parents(strncmp(o->cur_path, "file:", 5) ? o->cur_path
                     : o->cur_path + (strncmp(o->cur_path, "file://", 7) ? 5 : 7));
    } else
        snprintf(o->cur_path, sizeof o->cur_path, "%s", o->url);

    r = avformat_alloc_output_context2(&o->oc, NULL, o->fmt, o->cur_path);
    if (r < 0 || !o->oc) {
        snprintf(err, n, "output %d '%s': avformat_alloc_output_context2(%s): %s",
                 o->index, shown(o), o->fmt, errstr(r, e, sizeof e));
        o->oc = NULL;
        return PC_EIO;
    }
    o->oc->interrupt_callback.callback = interrupt_cb;
    o->oc->interrupt_callback.opaque = o;
    for (int i = 0; i < o->nstreams; i++) {
        AVStream *st = avformat_new_stream(o->oc, NULL);
        if (!st || avcodec_parameters_copy(st->codecpar, o->par[i]) < 0) {
            snprintf(err, n, "output %d '%s': cannot add video stream %d", o->index, shown(o), i);
            close_target(o, 0);
            return PC_ENOMEM;
        }
        st->time_base = o->enc_tb;
        st->avg_frame_rate = o->fps;
        st->r_frame_rate = o->fps;
    }

    if (!strcmp(o->fmt, "mpegts")) {
        /* each packet goes out whole at once: playable up to the last
         * frame if killed, no tail of a frame waiting in a buffer */
        o->oc->flags |= AVFMT_FLAG_FLUSH_PACKETS;
    } else if (!strcmp(o->fmt, "mp4")) {
        /* Crash-safe MP4: a plain .mp4 keeps its index (moov) in memory
         * until the trailer, so a SIGKILL or power loss leaves nothing
         * playable. Fragmented: an empty moov up front, then a fragment
         * per keyframe and at least every second, each written and flushed
         * whole; a crash loses at most the last fragment. */
        av_dict_set(&mopts, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0);
        av_dict_set_int(&mopts, "frag_duration", 1000000, 0);
        o->oc->flags |= AVFMT_FLAG_FLUSH_PACKETS;
    } else if (!strcmp(o->fmt, "matroska")) {
        /* Matroska holds a cluster in memory until it closes (5 s or 5 MiB
         * by default): close one every second and flush it. */
        av_dict_set_int(&mopts, "cluster_time_limit", 1000, 0);
        o->oc->flags |= AVFMT_FLAG_FLUSH_PACKETS;
    } else if (o->kind == K_HLS) {
        av_dict_set_int(&mopts, "hls_time", o->hls_time > 0 ? o->hls_time : 2, 0);
        av_dict_set_int(&mopts, "hls_list_size", o->hls_list_size, 0);
        av_dict_set(&mopts, "hls_flags", "independent_segments", 0);
        av_dict_set(&mopts, "hls_segment_type", "mpegts", 0);
    }
    if (o->rtmp) {
        /* a live stream: no seeking back to write duration and size */
        av_dict_set(&mopts, "flvflags", "no_duration_filesize", 0);
    } else if (o->kind == K_NET) {
        av_dict_set_int(&popts, "pkt_size", o->pkt_size > 0 ? o->pkt_size : 1316, 0);
        if (!strcmp(o->proto, "srt")) {
            if (o->srt_mode && o->srt_mode[0])
                av_dict_set(&popts, "mode", o->srt_mode, 0);
            if (o->srt_passphrase && o->srt_passphrase[0])
                av_dict_set(&popts, "passphrase", o->srt_passphrase, 0);
            if (o->srt_latency_ms > 0)
                av_dict_set_int(&popts, "latency", (int64_t)o->srt_latency_ms * 1000, 0);
            av_dict_set(&popts, "transtype", "live", 0);
            /* Live mode closes without lingering: what is still in flight
             * is discarded. On a clean stop, wait up to 2 s until the
             * viewer has acknowledged every packet sent. (What its SRT still
             * holds back for the latency, or it has not read yet, is lost
             * when the link closes: live mode has no end of stream.) */
            av_dict_set_int(&popts, "linger", 2, 0);
        }
    }
    if (o->options) {
        /* the config's options last: they win over the defaults above */
        AVDictionary *u = NULL;
        parse_options(o->index, o->url, o->options, &u, err, n); /* checked at open */
        const AVDictionaryEntry *ue = NULL;
        while ((ue = av_dict_get(u, "", ue, AV_DICT_IGNORE_SUFFIX))) {
            const AVOption *opt;
            av_dict_set(option_target(o->proto, o->oc->oformat, ue->key, &opt) == 'p' ? &popts : &mopts,
                        ue->key, ue->value, 0);
        }
        av_dict_free(&u);
    }
    if (!(o->oc->oformat->flags & AVFMT_NOFILE)) {
        r = avio_open2(&o->oc->pb, o->cur_path, AVIO_FLAG_WRITE, &o->oc->interrupt_callback, &popts);
        if (r < 0) {
            snprintf(err, n, "output %d '%s': cannot open for writing: %s", o->index, shown(o),
                     errstr(r, e, sizeof e));
            av_dict_free(&popts);
            av_dict_free(&mopts);
            close_target(o, 0);
            return PC_EIO;
        }
    } else if (popts) {
        av_dict_copy(&mopts, popts, 0);
    }
    av_dict_free(&popts);
    r = avformat_write_header(o->oc, &mopts);
    const AVDictionaryEntry *left = NULL;
    while (r >= 0 && o->opens == 0 && (left = av_dict_get(mopts, "", left, AV_DICT_IGNORE_SUFFIX)))
        pc_log(o->log, PC_LOG_WARNING, "encode: output %d '%s': option %s=%s was not used by the "
               "%s muxer", o->index, shown(o), left->key, shown_value(left->key, left->value), o->fmt);
    av_dict_free(&mopts);
    if (r < 0) {
        snprintf(err, n, "output %d '%s': writing the %s header failed: %s", o->index,
                 shown(o), o->fmt, errstr(r, e, sizeof e));
        close_target(o, 0);
        o->cur_packets = 0;
        drop_empty_file(o);
        return PC_EIO;
    }
    o->opens++;
    o->cur_packets = 0;
    o->seg_start_pts = INT64_MIN;
    o->seg_idr_asked = 0;
    pthread_mutex_lock(&o->lock);
    o->files++;
    int scanned = o->scanned;
    pthread_mutex_unlock(&o->lock);
    if (!scanned) /* what the folder holds from the start (the first cut scans again) */
        retention(o, 0, 1);
    return 0;
}

static int write_one(pc_out *o, AVPacket *pkt)
{
    AVStream *st = o->oc->streams[pkt->stream_index];
    av_packet_rescale_ts(pkt, o->enc_tb, st->time_base);
    /* several streams: the muxer interleaves them by DTS */
    return o->nstreams > 1 ? av_interleaved_write_frame(o->oc, pkt) : av_write_frame(o->oc, pkt);
}

/* Writes one packet (through dump_extra for MPEG-TS based outputs). */
static int write_packet(pc_out *o, AVPacket *pkt, int stream)
{
    pkt->stream_index = stream;
    AVBSFContext *bsf = o->bsf[stream];
    if (!bsf)
        return write_one(o, pkt);
    int r = av_bsf_send_packet(bsf, pkt); /* takes the reference */
    if (r < 0)
        return r;
    while ((r = av_bsf_receive_packet(bsf, o->wpkt)) == 0) {
        o->wpkt->stream_index = stream;
        r = write_one(o, o->wpkt);
        av_packet_unref(o->wpkt);
        if (r < 0)
            return r;
    }
    return r == AVERROR(EAGAIN) ? 0 : r;
}

/* Tells on_fault what was dropped or failed since the last call; called
 * without o->lock after every place that counts either. */
static void report_faults(pc_out *o)
{
    if (!o->on_fault)
        return;
    pthread_mutex_lock(&o->lock);
    uint64_t d = o->dropped - o->told_dropped, f = o->failures - o->told_failures;
    o->told_dropped = o->dropped;
    o->told_failures = o->failures;
    pthread_mutex_unlock(&o->lock);
    if (d || f)
        o->on_fault(o->cb_user[0], o->index, (int)d, (int)f);
}

/* Asks every stream's encoder for an IDR (under lock: an encoder that
 * went is NULL there; request_idr only sets a flag). */
static void request_idr_all(pc_out *o)
{
    if (!o->request_idr)
        return;
    pthread_mutex_lock(&o->lock);
    for (int i = 0; i < o->nstreams; i++)
        if (o->enc[i])
            o->request_idr(o->enc[i]);
    pthread_mutex_unlock(&o->lock);
}

static void ask_idr(pc_out *o, int64_t now)
{
    /* at most once a second per output, so an overloaded output does not
     * turn every frame into a keyframe */
    if (o->request_idr && now - o->last_idr_ask_ns > 1000000000LL) {
        o->last_idr_ask_ns = now;
        request_idr_all(o);
    }
}

static void drop_queue_locked(pc_out *o)
{
    while (o->count) {
        av_packet_unref(o->ring[o->head].pkt);
        o->head = (o->head + 1) % o->cap;
        o->count--;
        o->dropped++;
    }
    for (int i = 0; i < o->nstreams; i++)
        o->drop_until_key[i] = 1;
}

/* Waits up to ms or until stop; returns 1 if stopping. */
static int wait_backoff(pc_out *o, int ms)
{
    struct timespec ts = pc_deadline_ms(CLOCK_MONOTONIC, ms);
    pthread_mutex_lock(&o->lock);
    while (!o->stop) {
        if (pthread_cond_timedwait(&o->cond, &o->lock, &ts) == ETIMEDOUT)
            break;
    }
    int s = o->stop;
    pthread_mutex_unlock(&o->lock);
    return s;
}

static void fail(pc_out *o, const char *what, int r, int *backoff_ms)
{
    char e[AV_ERROR_MAX_STRING_SIZE], msg[160];
    snprintf(msg, sizeof msg, "%s: %s", what, errstr(r, e, sizeof e));
    close_target(o, 0);
    drop_empty_file(o);
    int first = !o->failing;
    o->failing = 1;
    pthread_mutex_lock(&o->lock);
    o->state = PC_OUT_FAILED;
    o->failures++;
    copy_msg(o->last_error, sizeof o->last_error, msg);
    drop_queue_locked(o);
    pthread_mutex_unlock(&o->lock);
    report_faults(o);
    /* one line when it fails, then only debug lines while it keeps failing */
    pc_log(o->log, first ? PC_LOG_ERR : PC_LOG_DEBUG,
           "encode: output %d '%s': %s; packets dropped, retrying in %.1f s",
           o->index, shown(o), msg, *backoff_ms / 1000.0);
}

static void *out_thread(void *arg)
{
    pc_out *o = arg;
    pc_avlog_bind(o->log);
    pc_avlog_redact(o->url);
    int backoff_ms = BACKOFF_FIRST_MS;
    int backoff_max = (o->kind == K_FILE || o->kind == K_HLS) ? BACKOFF_MAX_FILE_MS : BACKOFF_MAX_NET_MS;
    char err[512];
    for (;;) {
        if (!o->oc) {
            pthread_mutex_lock(&o->lock);
            int stopping = o->stop;
            pthread_mutex_unlock(&o->lock);
            if (stopping)
                break;
            /* a failed recording: re-open only once it can be written (no
             * empty file per retry), checked every PROBE_MS */
            if (o->failing && !recording_ready(o)) {
                pthread_mutex_lock(&o->lock);
                int first = !o->waiting_space;
                o->waiting_space = 1;
                pthread_mutex_unlock(&o->lock);
                if (first)
                    pc_log(o->log, PC_LOG_WARNING, "encode: output %d '%s': recording paused (%s); "
                           "it resumes by itself, the other outputs go on", o->index, o->url,
                           o->wait_reason);
                if (wait_backoff(o, PROBE_MS))
                    break;
                continue;
            }
            pthread_mutex_lock(&o->lock);
            o->waiting_space = 0;
            pthread_mutex_unlock(&o->lock);
            pc_avlog_quiet(o->failing); /* FFmpeg's reason repeats on every retry */
            int r = open_target(o, err, sizeof err);
            if (r) {
                int first = !o->failing;
                o->failing = 1;
                pthread_mutex_lock(&o->lock);
                o->state = PC_OUT_FAILED;
                o->failures++;
                copy_msg(o->last_error, sizeof o->last_error, err);
                pthread_mutex_unlock(&o->lock);
                report_faults(o);
                pc_log(o->log, first ? PC_LOG_ERR : PC_LOG_DEBUG,
                       "encode: %s; retrying in %.1f s", err, backoff_ms / 1000.0);
                if (wait_backoff(o, backoff_ms))
                    break;
                backoff_ms = backoff_ms * 2 > backoff_max ? backoff_max : backoff_ms * 2;
                continue;
            }
            pthread_mutex_lock(&o->lock);
            int was_failed = o->state == PC_OUT_FAILED;
            if (was_failed)
                o->reconnects++;
            o->state = PC_OUT_OK;
            for (int i = 0; i < o->nstreams; i++)
                o->drop_until_key[i] = 1; /* start at a keyframe */
            pthread_mutex_unlock(&o->lock);
            pc_log(o->log, was_failed ? PC_LOG_DEBUG : PC_LOG_INFO,
                   "encode: output %d '%s' %s", o->index, shown(o),
                   was_failed ? "re-opened, waiting for a keyframe" : "open");
            ask_idr(o, pc_now_ns());
        }

        pthread_mutex_lock(&o->lock);
        while (!o->count && !o->stop)
            pthread_cond_wait(&o->cond, &o->lock);
        if (!o->count && o->stop) {
            pthread_mutex_unlock(&o->lock);
            break;
        }
        slot s = o->ring[o->head];
        AVPacket *pkt = s.pkt;
        pthread_mutex_unlock(&o->lock);

        /* segmented recording: cut at the first keyframe past the period */
        if (o->segment_seconds > 0) {
            if (o->seg_start_pts == INT64_MIN)
                o->seg_start_pts = pkt->pts;
            int64_t period = av_rescale_q(o->segment_seconds, (AVRational){1, 1}, o->enc_tb);
            if (pkt->pts - o->seg_start_pts >= period) {
                if (!(pkt->flags & AV_PKT_FLAG_KEY) && !o->seg_idr_asked) {
                    o->seg_idr_asked = 1;
                    request_idr_all(o);
                } else if (pkt->flags & AV_PKT_FLAG_KEY) {
                    close_target(o, 1);
                    int r = open_target(o, err, sizeof err);
                    if (r) {
                        pthread_mutex_lock(&o->lock);
                        o->state = PC_OUT_FAILED;
                        o->failures++;
                        copy_msg(o->last_error, sizeof o->last_error, err);
                        av_packet_unref(pkt);
                        o->head = (o->head + 1) % o->cap;
                        o->count--;
                        o->dropped++;
                        drop_queue_locked(o);
                        pthread_mutex_unlock(&o->lock);
                        report_faults(o);
                        pc_log(o->log, o->failing ? PC_LOG_DEBUG : PC_LOG_ERR,
                               "encode: %s; retrying in %.1f s", err, backoff_ms / 1000.0);
                        o->failing = 1;
                        if (wait_backoff(o, backoff_ms))
                            break;
                        continue;
                    }
                    pc_log(o->log, PC_LOG_INFO, "encode: output %d: new segment '%s'", o->index,
                           o->cur_path);
                    o->seg_start_pts = pkt->pts;
                    retention(o, 0, 0);
                    /* the other streams start the new file at their own
                     * next keyframe (asked for above) */
                    for (int i = 0; i < o->nstreams; i++)
                        o->need_key[i] = i != s.stream;
                }
            }
        }
        if (o->need_key[s.stream]) {
            if (!(pkt->flags & AV_PKT_FLAG_KEY)) {
                av_packet_unref(pkt);
                pthread_mutex_lock(&o->lock);
                o->head = (o->head + 1) % o->cap;
                o->count--;
                o->dropped++;
                pthread_mutex_unlock(&o->lock);
                report_faults(o);
                continue;
            }
            o->need_key[s.stream] = 0;
        }

        int size = pkt->size;
        int r = write_packet(o, pkt, s.stream); /* pkt is unreferenced by the BSF or below */
        av_packet_unref(pkt);
        int64_t now = pc_now_ns();
        pthread_mutex_lock(&o->lock);
        o->head = (o->head + 1) % o->cap;
        o->count--;
        if (r >= 0) {
            o->written++;
            o->bytes += (uint64_t)size;
            o->last_written_ns = now;
            o->last_pts_ns = s.pts_ns;
        } else {
            o->dropped++;
        }
        pthread_mutex_unlock(&o->lock);
        if (r < 0) {
            fail(o, "write failed", r, &backoff_ms);
            if (wait_backoff(o, backoff_ms))
                break;
            backoff_ms = backoff_ms * 2 > backoff_max ? backoff_max : backoff_ms * 2;
            continue;
        }
        o->cur_packets++;
        if (o->failing) {
            o->failing = 0;
            pc_avlog_quiet(0);
            backoff_ms = BACKOFF_FIRST_MS;
            pc_log(o->log, PC_LOG_NOTICE, "encode: output %d '%s' writing again", o->index,
                   shown(o));
        }
        if (o->on_written)
            o->on_written(o->cb_user[s.stream], o->index, s.pts_ns, now);
    }
    close_target(o, !atomic_load(&o->abort_io));
    pc_avlog_redact(NULL);
    pthread_mutex_lock(&o->lock);
    drop_queue_locked(o);
    o->state = PC_OUT_CLOSED;
    pthread_mutex_unlock(&o->lock);
    report_faults(o);
    return NULL;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void free_out(pc_out *o)
{
    if (!o)
        return;
    close_target(o, 0);
    if (o->ring) {
        for (int i = 0; i < o->cap; i++)
            av_packet_free(&o->ring[i].pkt);
        free(o->ring);
    }
    for (int i = 0; i < PC_OUT_MAX_STREAMS; i++) {
        av_bsf_free(&o->bsf[i]);
        avcodec_parameters_free(&o->par[i]);
    }
    av_packet_free(&o->wpkt);
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->cond);
    free(o->url);
    free(o->shown);
    free(o->fmt);
    free(o->proto);
    free(o->srt_mode);
    free(o->srt_passphrase);
    free(o->options);
    free(o);
}

int pc_out_open(pc_out **out, int index, const pc_output_config *oc, const pc_out_env *env,
                char *err, size_t n)
{
    return pc_out_open_streams(out, index, oc, env, 1, err, n);
}

int pc_out_open_streams(pc_out **out, int index, const pc_output_config *oc, const pc_out_env *env,
                        int nstreams, char *err, size_t n)
{
    *out = NULL;
    if (nstreams < 1 || nstreams > PC_OUT_MAX_STREAMS) {
        snprintf(err, n, "output %d: %d video streams, at most %d", index, nstreams, PC_OUT_MAX_STREAMS);
        return PC_EINVAL;
    }
    int r = 0;
    for (int i = 0; i < nstreams && !r; i++)
        r = pc_out_check(index, oc, env[i].par->codec_id, err, n);
    if (r)
        return r;
    pc_out *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, n, "output %d: out of memory", index);
        return PC_ENOMEM;
    }
    pthread_mutex_init(&o->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&o->cond, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&o->abort_io, 0);
    o->index = index;
    char scheme[32];
    url_scheme(oc->url, scheme, sizeof scheme);
    const char *fmt = NULL;
    pick_format(index, oc, scheme, &fmt, &o->kind, err, n);
    o->url = strdup(oc->url);
    char masked[2048];
    o->shown = strdup(pc_url_mask(oc->url, masked, sizeof masked));
    o->rtmp = pc_url_is_rtmp(oc->url);
    dir_of(oc->url, o->folder, sizeof o->folder);
    o->fmt = dup_or_null(fmt);
    o->proto = strdup(scheme);
    o->segment_seconds = oc->segment_seconds;
    o->max_bytes = oc->max_bytes;
    o->max_age_s = oc->max_age_s;
    o->min_free = oc->min_free;
    o->hls_time = oc->hls_time;
    o->hls_list_size = oc->hls_list_size;
    o->pkt_size = oc->pkt_size;
    o->srt_latency_ms = oc->srt_latency_ms;
    o->srt_mode = dup_or_null(oc->srt_mode);
    o->srt_passphrase = dup_or_null(oc->srt_passphrase);
    o->options = oc->options && oc->options[0] ? strdup(oc->options) : NULL;
    o->enc_tb = env->enc_tb;
    o->fps = env->fps;
    o->log = env->log;
    o->request_idr = env->request_idr;
    o->on_written = env->on_written;
    o->on_fault = env->on_fault;
    o->nstreams = nstreams;
    for (int i = 0; i < nstreams; i++) {
        o->enc[i] = env[i].enc;
        o->cb_user[i] = env[i].cb_user;
    }
    snprintf(o->encoder_name, sizeof o->encoder_name, "%s", env->encoder_name);
    o->seg_start_pts = INT64_MIN;
    o->last_idr_ask_ns = INT64_MIN / 2;
    int par_ok = 1;
    for (int i = 0; i < nstreams; i++)
        par_ok &= (o->par[i] = avcodec_parameters_alloc()) && avcodec_parameters_copy(o->par[i], env[i].par) >= 0;
    o->wpkt = av_packet_alloc();
    /* the queue holds as many frame sets as one stream's would */
    o->cap = (oc->queue_packets > 0 ? oc->queue_packets : 256) * nstreams;
    o->ring = calloc((size_t)o->cap, sizeof *o->ring);
    if (!o->url || !o->shown || !o->proto || !par_ok || !o->wpkt || !o->ring) {
        snprintf(err, n, "output %d: out of memory", index);
        free_out(o);
        return PC_ENOMEM;
    }
    for (int i = 0; i < o->cap; i++)
        if (!(o->ring[i].pkt = av_packet_alloc())) {
            snprintf(err, n, "output %d: out of memory", index);
            free_out(o);
            return PC_ENOMEM;
        }
    if (o->kind == K_NULL) {
        o->state = PC_OUT_OK;
        *out = o;
        return 0;
    }
    for (int i = 0; i < nstreams && (!strcmp(o->fmt, "mpegts") || o->kind == K_HLS); i++) {
        const AVBitStreamFilter *f = av_bsf_get_by_name("dump_extra");
        if (!f || av_bsf_alloc(f, &o->bsf[i]) < 0) {
            snprintf(err, n, "output %d '%s': the dump_extra bitstream filter is missing",
                     index, shown(o));
            free_out(o);
            return PC_ENOTSUP;
        }
        avcodec_parameters_copy(o->bsf[i]->par_in, o->par[i]);
        o->bsf[i]->time_base_in = o->enc_tb;
        av_opt_set(o->bsf[i]->priv_data, "freq", "keyframe", 0);
        if (av_bsf_init(o->bsf[i]) < 0) {
            snprintf(err, n, "output %d '%s': dump_extra init failed", index, shown(o));
            free_out(o);
            return PC_EIO;
        }
    }
    /* open now (a bad path is a start-up error), except SRT (a listener
     * waits for its caller and a caller may wait for its peer) and RTMP (a
     * streaming service may be unreachable for a while: the start does not
     * wait for it, the output connects and reconnects on its thread) */
    if (strcmp(o->proto, "srt") != 0 && !o->rtmp) {
        r = open_target(o, err, n);
        if (r) {
            free_out(o);
            return r;
        }
        o->state = PC_OUT_OK;
        pc_log(o->log, PC_LOG_INFO, "encode: output %d '%s' open (%s%s)", index, shown(o), o->fmt,
               nstreams > 1 ? ", one video stream per band" : "");
    } else {
        o->state = PC_OUT_CONNECTING;
    }
    if (pthread_create(&o->thread, NULL, out_thread, o) != 0) {
        snprintf(err, n, "output %d '%s': cannot start its thread", index, shown(o));
        free_out(o);
        return PC_ENOMEM;
    }
    o->thread_started = 1;
    *out = o;
    return 0;
}

void pc_out_push(pc_out *o, const AVPacket *pkt, int64_t pts_ns) { pc_out_push_stream(o, 0, pkt, pts_ns); }

void pc_out_detach(pc_out *o, int stream)
{
    pthread_mutex_lock(&o->lock);
    o->enc[stream] = NULL;
    pthread_mutex_unlock(&o->lock);
}

void pc_out_push_stream(pc_out *o, int stream, const AVPacket *pkt, int64_t pts_ns)
{
    int key = !!(pkt->flags & AV_PKT_FLAG_KEY);
    if (o->kind == K_NULL) {
        int64_t now = pc_now_ns();
        pthread_mutex_lock(&o->lock);
        o->written++;
        o->bytes += (uint64_t)pkt->size;
        o->last_written_ns = now;
        o->last_pts_ns = pts_ns;
        pthread_mutex_unlock(&o->lock);
        if (o->on_written)
            o->on_written(o->cb_user[stream], o->index, pts_ns, now);
        return;
    }
    int ask = 0;
    uint64_t dropped0;
    pthread_mutex_lock(&o->lock);
    dropped0 = o->dropped;
    if (o->state != PC_OUT_OK || o->stop) {
        o->dropped++;
        o->drop_until_key[stream] = 1;
    } else if (o->drop_until_key[stream] && !key) {
        o->dropped++;
        ask = 1;
    } else if (o->count == o->cap) {
        o->dropped++;
        o->drop_until_key[stream] = 1;
        ask = 1;
    } else {
        int tail = (o->head + o->count) % o->cap;
        if (av_packet_ref(o->ring[tail].pkt, pkt) < 0) {
            o->dropped++;
            o->drop_until_key[stream] = 1;
        } else {
            o->ring[tail].pts_ns = pts_ns;
            o->ring[tail].stream = stream;
            o->count++;
            o->drop_until_key[stream] = 0;
            pthread_cond_signal(&o->cond);
        }
    }
    int dropped_now = o->dropped != dropped0;
    pthread_mutex_unlock(&o->lock);
    if (dropped_now)
        report_faults(o);
    if (ask)
        ask_idr(o, pc_now_ns());
}

void pc_out_close(pc_out *o, int timeout_ms)
{
    if (!o)
        return;
    if (o->thread_started) {
        pthread_mutex_lock(&o->lock);
        o->stop = 1;
        if (o->state != PC_OUT_OK)
            atomic_store(&o->abort_io, 1); /* a connect in progress: give up */
        pthread_cond_broadcast(&o->cond);
        pthread_mutex_unlock(&o->lock);
        struct timespec ts = pc_deadline_ms(CLOCK_REALTIME, timeout_ms);
        if (pthread_timedjoin_np(o->thread, NULL, &ts) != 0) {
            pc_log(o->log, PC_LOG_WARNING,
                   "encode: output %d '%s': not finished after %d ms, aborting its IO",
                   o->index, shown(o), timeout_ms);
            atomic_store(&o->abort_io, 1);
            pthread_join(o->thread, NULL);
        }
        o->thread_started = 0;
    }
    free_out(o);
}

void pc_out_stats(pc_out *o, pc_output_stats *st)
{
    pthread_mutex_lock(&o->lock);
    snprintf(st->url, sizeof st->url, "%s", o->shown);
    st->state = o->state;
    st->packets_written = o->written;
    st->packets_dropped = o->dropped;
    st->bytes_written = o->bytes;
    st->reconnects = o->reconnects;
    st->failures = o->failures;
    st->files = o->files;
    st->files_deleted = o->files_deleted;
    st->bytes_deleted = o->bytes_deleted;
    st->waiting_space = o->waiting_space;
    st->last_written_ns = o->last_written_ns;
    st->last_pts_ns = o->last_pts_ns;
    snprintf(st->last_error, sizeof st->last_error, "%s", o->last_error);
    st->recording = o->kind == K_FILE || o->kind == K_HLS;
    st->segment_seconds = o->segment_seconds;
    st->max_bytes = o->max_bytes;
    st->max_age_s = o->max_age_s;
    st->min_free = o->min_free;
    st->used_bytes = o->scanned ? o->scan_bytes + (int64_t)(o->bytes - o->bytes_at_scan) : -1;
    st->segments = o->scanned ? o->scan_files + (int64_t)(o->files - o->files_at_scan) : -1;
    if (st->recording)
        snprintf(st->folder, sizeof st->folder, "%s", o->folder);
    pthread_mutex_unlock(&o->lock);
}

const char *pc_output_state_name(pc_output_state s)
{
    switch (s) {
    case PC_OUT_CONNECTING: return "connecting";
    case PC_OUT_OK: return "ok";
    case PC_OUT_FAILED: return "failed";
    case PC_OUT_CLOSED: return "closed";
    }
    return "?";
}
