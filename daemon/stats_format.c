/* stats_format.c - the status line, the summary and the Prometheus text
 * of a statistics snapshot (stats.h), apart from the accounting
 * (stats.c): they read only the snapshot. */
#include "stats.h"

#include "panocap_config.h" /* PANOCAP_VERSION, PANOCAP_HAVE_* for build_info */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- formatting ------------------------------------------------------- */

typedef struct wbuf {
    char *b;
    size_t len, off;
    int over;
} wbuf;

static void wr(wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wr(wbuf *w, const char *fmt, ...)
{
    if (w->over || !w->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->b + w->off, w->len - w->off, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= w->len - w->off) {
        w->over = 1;
        w->off = w->len - 1;
        return;
    }
    w->off += (size_t)n;
}

static void ms(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (v < 10)
        snprintf(buf, len, "%.2f", v);
    else
        snprintf(buf, len, "%.1f", v);
}

/* Largest p99 over the outputs' write slots. */
static double write_p99(const pc_stats_snapshot *s)
{
    double m = NAN;
    for (int o = 0; o < s->outputs; o++) {
        double v = s->stage[PC_STAT_WRITE0 + o].p99_ms;
        if (!isnan(v) && (isnan(m) || v > m))
            m = v;
    }
    return m;
}

int pc_stats_format_line(const pc_stats_snapshot *s, char *buf, size_t len)
{
    wbuf w = {buf, len, 0, 0};
    char q[16], d[16], e[16], wt[16], t[16];
    ms(q, sizeof q, s->stage[PC_STAT_QUEUE].p99_ms);
    ms(d, sizeof d, s->stage[PC_STAT_DEBAYER].p99_ms);
    ms(e, sizeof e, s->stage[PC_STAT_ENCODE].p99_ms);
    ms(wt, sizeof wt, write_p99(s));
    ms(t, sizeof t, s->stage[PC_STAT_TOTAL].p99_ms);
    if (s->algo[0])
        wr(&w, "%s%s%s | ", s->algo, s->variant[0] ? "/" : "", s->variant);
    wr(&w,
       "%.1f fps | in %llu enc %llu drop %llu subst %llu over %llu | p99 ms queue %s debayer %s encode %s "
       "write %s total %s | %.1f Mbit/s",
       s->fps, (unsigned long long)s->frames_in, (unsigned long long)s->encoded, (unsigned long long)s->dropped,
       (unsigned long long)s->substituted, (unsigned long long)s->over_budget, q, d, e, wt, t,
       s->bitrate_bps * 1e-6);
    if (s->rec_dropped)
        wr(&w, " | recdrop %llu", (unsigned long long)s->rec_dropped);
    if (s->layout[0] && s->bands > 1)
        wr(&w, " | %s x%d", s->layout, s->bands);
    else if (s->layout[0])
        wr(&w, " | %s", s->layout);
    if (s->pictures > 1) { /* the other pictures: how many encode */
        int down = 0;
        for (int i = 0; i < s->pictures; i++)
            down += s->picture[i].encoders > 0 && s->picture[i].encoding < s->picture[i].encoders;
        wr(&w, " | %d pictures", s->pictures);
        if (down)
            wr(&w, " (%d not encoding)", down);
    }
    return w.over ? -1 : (int)w.off;
}

int pc_stats_format_summary(const pc_stats_snapshot *s, char *buf, size_t len)
{
    wbuf w = {buf, len, 0, 0};
    wr(&w, "summary: %llu frame sets in, %llu encoded, %llu dropped, %llu substituted (%llu slabs), "
           "%llu over the %.3g ms budget\n",
       (unsigned long long)s->frames_in, (unsigned long long)s->encoded, (unsigned long long)s->dropped,
       (unsigned long long)s->substituted, (unsigned long long)s->substituted_slabs,
       (unsigned long long)s->over_budget, s->budget_ms);
    wr(&w, "run time %.1f s, %.1f fps (last %.0f s), %.2f MB encoded%s%s\n", s->uptime_s, s->fps, s->window_s,
       (double)s->bytes_total * 1e-6, s->algo[0] ? ", algorithm " : "", s->algo);
    wr(&w, "latency ms        p50      p99      max     mean   frames\n");
    for (int i = 0; i < PC_STAT_WRITE0 + s->outputs; i++) {
        if (i >= PC_STAT_WRITE0 && !s->output_name[i - PC_STAT_WRITE0][0])
            continue; /* an output slot not in use */
        const pc_stage_stats *st = &s->stage[i];
        if (!st->run_count)
            continue;
        /* Exact window figures when the window holds the whole run. */
        int exact = st->count == st->run_count;
        char name[32], a[16], b[16], c[16], m[16];
        if (i >= PC_STAT_WRITE0)
            snprintf(name, sizeof name, "write[%d]", i - PC_STAT_WRITE0);
        else
            snprintf(name, sizeof name, "%s", pc_stats_slot_name(i));
        ms(a, sizeof a, exact ? st->p50_ms : st->run_p50_ms);
        ms(b, sizeof b, exact ? st->p99_ms : st->run_p99_ms);
        ms(c, sizeof c, st->run_max_ms);
        ms(m, sizeof m, st->run_sum_s * 1e3 / (double)st->run_count);
        wr(&w, "  %-10s %8s %8s %8s %8s %8llu\n", name, a, b, c, m, (unsigned long long)st->run_count);
    }
    for (int o = 0; o < s->outputs; o++) {
        if (!s->output_name[o][0])
            continue; /* a slot not in use */
        wr(&w, "output %d %s: %llu written, %llu dropped, %llu errors", o, s->output_name[o],
           (unsigned long long)s->output_written[o], (unsigned long long)s->output_dropped[o],
           (unsigned long long)s->output_errors[o]);
        wr(&w, s->output_picture[o][0] ? " (%s)\n" : "%s\n", s->output_picture[o]);
    }
    for (int i = 0; i < s->pictures; i++) {
        const struct pc_picture_stats *p = &s->picture[i];
        wr(&w, "picture %d %s %dx%d: ", i, p->name, p->width, p->height);
        if (!p->encoders)
            wr(&w, "not encoded\n");
        else
            wr(&w, "%s, %llu frames, %.2f MB, %d of %d encoder%s encoding, %llu failure%s\n",
               p->encoder[0] ? p->encoder : "no encoder", (unsigned long long)p->frames, (double)p->bytes * 1e-6,
               p->encoding, p->encoders, p->encoders == 1 ? "" : "s", (unsigned long long)p->failures,
               p->failures == 1 ? "" : "s");
        if (p->encoders)
            wr(&w, "picture %d %s: %llu sets dropped from its recordings (queue full), %llu skipped by its live "
                   "encoders (busy)\n", i, p->name, (unsigned long long)p->rec_dropped,
               (unsigned long long)p->live_skipped);
    }
    if (s->preview_skipped)
        wr(&w, "preview: %llu sets skipped (its encoder busy)\n", (unsigned long long)s->preview_skipped);
    return w.over ? -1 : (int)w.off;
}

static void esc(const char *in, char *out, size_t len)
{
    size_t o = 0;
    for (; in && *in && o + 3 < len; in++) {
        if (*in == '\\' || *in == '"') {
            out[o++] = '\\';
            out[o++] = *in;
        } else if (*in == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *in;
        }
    }
    out[o] = '\0';
}

static void num(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "NaN");
    else
        snprintf(buf, len, "%.9g", v);
}

static void family(wbuf *w, const char *name, const char *type, const char *help)
{
    wr(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The labels of latency slot i: its stage, and an output's index and
 * picture. */
static void write_label(const pc_stats_snapshot *s, int i, char *lab, size_t len)
{
    if (i < PC_STAT_WRITE0) {
        snprintf(lab, len, "stage=\"%s\"", pc_stats_slot_name(i));
        return;
    }
    int o = i - PC_STAT_WRITE0;
    char pic[PC_STATS_NAME * 2 + 4];
    esc(s->output_picture[o], pic, sizeof pic);
    snprintf(lab, len, "stage=\"write\",output=\"%d\"%s%s%s", o, pic[0] ? ",picture=\"" : "", pic,
             pic[0] ? "\"" : "");
}

int pc_stats_format_prometheus(const pc_stats_snapshot *s, const pc_camera_metrics *cams, int ncams, char *buf,
                               size_t len)
{
    wbuf w = {buf, len, 0, 0};
    char v[64], l1[160], l2[160];
#define COUNTER(name, help, val)                                              \
    do {                                                                      \
        family(&w, name, "counter", help);                                    \
        wr(&w, "%s %llu\n", name, (unsigned long long)(val));                 \
    } while (0)
#define GAUGE(name, help, val)                                                \
    do {                                                                      \
        family(&w, name, "gauge", help);                                      \
        if (!isnan(val)) { /* no sample rather than NaN */                   \
            num(v, sizeof v, (val));                                          \
            wr(&w, "%s %s\n", name, v);                                       \
        }                                                                     \
    } while (0)
    family(&w, "panocap_build_info", "gauge", "Always 1; the build's version and features as labels.");
    wr(&w, "panocap_build_info{version=\"%s\",cuda=\"%s\",ffmpeg=\"%s\",aravis=\"%s\"} 1\n", PANOCAP_VERSION,
       PANOCAP_HAVE_CUDA ? "yes" : "no", PANOCAP_HAVE_FFMPEG ? "yes" : "no", PANOCAP_HAVE_ARAVIS ? "yes" : "no");
    COUNTER("panocap_frames_in_total", "Frame sets assembled from the cameras.", s->frames_in);
    COUNTER("panocap_frames_encoded_total", "Frame sets encoded.", s->encoded);
    COUNTER("panocap_frames_dropped_total", "Whole frame sets dropped because a later stage fell behind.",
            s->dropped);
    COUNTER("panocap_frames_substituted_total", "Frame sets with at least one substituted slab.", s->substituted);
    COUNTER("panocap_slabs_substituted_total", "Slabs filled from an earlier frame after a camera missed the deadline.",
            s->substituted_slabs);
    COUNTER("panocap_frames_over_budget_total", "Frame sets whose total latency exceeded the budget.", s->over_budget);
    COUNTER("panocap_encoded_bytes_total", "Bytes out of the encoder.", s->bytes_total);
    COUNTER("panocap_recording_sets_dropped_total", "Sets dropped from recordings (a recording queue was full).",
            s->rec_dropped);
    COUNTER("panocap_preview_sets_skipped_total", "Sets the preview skipped because its encoder was busy.",
            s->preview_skipped);
    GAUGE("panocap_budget_seconds", "Per-frame latency budget.", s->budget_ms * 1e-3);
    GAUGE("panocap_fps", "Frame sets done per second over the stats window.", s->fps);
    /* bytes: Prometheus' base unit (promtool refuses "bits") */
    GAUGE("panocap_encoder_bytes_per_second", "Encoded rate over the stats window (bitrate / 8).",
          s->bitrate_bps / 8.0);
    GAUGE("panocap_uptime_seconds", "Seconds since the statistics started.", s->uptime_s);
    if (s->algo[0]) {
        family(&w, "panocap_algo_info", "gauge", "Demosaicing algorithm in use.");
        esc(s->algo, l1, sizeof l1);
        esc(s->variant, l2, sizeof l2);
        wr(&w, "panocap_algo_info{algo=\"%s\",variant=\"%s\"} 1\n", l1, l2);
    }
    if (s->layout[0]) {
        family(&w, "panocap_layout_info", "gauge", "Encoder layout (stacked, grid, bands) and its number of bands.");
        esc(s->layout, l1, sizeof l1);
        wr(&w, "panocap_layout_info{layout=\"%s\",bands=\"%d\"} 1\n", l1, s->bands);
    }

    static const double qs[] = {0.5, 0.99};
    family(&w, "panocap_stage_latency_seconds", "summary",
           "Latency per pipeline stage; quantiles over the stats window, sum and count over the run.");
    for (int i = 0; i < PC_STAT_WRITE0 + s->outputs; i++) {
        if (i >= PC_STAT_WRITE0 && !s->output_name[i - PC_STAT_WRITE0][0])
            continue; /* an output slot not in use */
        const pc_stage_stats *st = &s->stage[i];
        char lab[256];
        write_label(s, i, lab, sizeof lab);
        for (int k = 0; k < 2; k++) {
            double q = k ? st->p99_ms : st->p50_ms;
            if (isnan(q))
                continue; /* no samples in the window: no quantile */
            num(v, sizeof v, q * 1e-3);
            wr(&w, "panocap_stage_latency_seconds{%s,quantile=\"%g\"} %s\n", lab, qs[k], v);
        }
        num(v, sizeof v, st->run_sum_s);
        wr(&w, "panocap_stage_latency_seconds_sum{%s} %s\n", lab, v);
        wr(&w, "panocap_stage_latency_seconds_count{%s} %llu\n", lab, (unsigned long long)st->run_count);
    }
    family(&w, "panocap_stage_latency_max_seconds", "gauge", "Largest latency per stage over the stats window.");
    for (int i = 0; i < PC_STAT_WRITE0 + s->outputs; i++) {
        if (i >= PC_STAT_WRITE0 && !s->output_name[i - PC_STAT_WRITE0][0])
            continue; /* an output slot not in use */
        if (isnan(s->stage[i].max_ms))
            continue;
        num(v, sizeof v, s->stage[i].max_ms * 1e-3);
        char lab[256];
        write_label(s, i, lab, sizeof lab);
        wr(&w, "panocap_stage_latency_max_seconds{%s} %s\n", lab, v);
    }

    static const struct {
        const char *name, *help;
        size_t off;
    } outs[] = {
        {"panocap_output_packets_written_total", "Packets written per output.", offsetof(pc_stats_snapshot, output_written)},
        {"panocap_output_packets_dropped_total", "Packets dropped per output (failed or too slow).",
         offsetof(pc_stats_snapshot, output_dropped)},
        {"panocap_output_errors_total", "Failures per output.", offsetof(pc_stats_snapshot, output_errors)},
    };
    for (size_t f = 0; f < sizeof outs / sizeof *outs && s->outputs > 0; f++) {
        family(&w, outs[f].name, "counter", outs[f].help);
        const uint64_t *arr = (const uint64_t *)((const char *)s + outs[f].off);
        for (int o = 0; o < s->outputs; o++) {
            if (!s->output_name[o][0])
                continue; /* a slot not in use */
            esc(s->output_name[o], l1, sizeof l1);
            esc(s->output_picture[o], l2, sizeof l2);
            wr(&w, "%s{output=\"%d\",url=\"%s\"%s%s%s} %llu\n", outs[f].name, o, l1, l2[0] ? ",picture=\"" : "",
               l2, l2[0] ? "\"" : "", (unsigned long long)arr[o]);
        }
    }
    if (s->pictures > 0) {
        family(&w, "panocap_picture_info", "gauge",
               "Each encoded picture (0: the main one) with its size and encoder; always 1.");
        for (int i = 0; i < s->pictures; i++) {
            esc(s->picture[i].name, l1, sizeof l1);
            esc(s->picture[i].encoder, l2, sizeof l2);
            wr(&w, "panocap_picture_info{picture=\"%s\",index=\"%d\",width=\"%d\",height=\"%d\",encoder=\"%s\"} 1\n",
               l1, i, s->picture[i].width, s->picture[i].height, l2);
        }
        static const struct {
            const char *name, *type, *help;
            size_t off;
            int is_int;
        } pf[] = {
            {"panocap_picture_frames_encoded_total", "counter", "Frames out of each picture's encoder.",
             offsetof(struct pc_picture_stats, frames), 0},
            {"panocap_picture_encoded_bytes_total", "counter", "Bytes out of each picture's encoders.",
             offsetof(struct pc_picture_stats, bytes), 0},
            {"panocap_picture_encoder_failures_total", "counter",
             "Encoders of each picture that did not open or failed on a frame (the other pictures go on).",
             offsetof(struct pc_picture_stats, failures), 0},
            {"panocap_picture_recording_sets_dropped_total", "counter",
             "Sets dropped from each picture's recordings: its recording queue was full.",
             offsetof(struct pc_picture_stats, rec_dropped), 0},
            {"panocap_picture_live_sets_skipped_total", "counter",
             "Sets a live picture (no recording) skipped because its encoder was still busy.",
             offsetof(struct pc_picture_stats, live_skipped), 0},
            {"panocap_picture_encoders_encoding", "gauge", "Encoders of each picture encoding now.",
             offsetof(struct pc_picture_stats, encoding), 1},
            {"panocap_picture_encoders", "gauge", "Encoders of each picture (its bands; 0: not encoded).",
             offsetof(struct pc_picture_stats, encoders), 1},
        };
        for (size_t f = 0; f < sizeof pf / sizeof *pf; f++) {
            family(&w, pf[f].name, pf[f].type, pf[f].help);
            for (int i = 0; i < s->pictures; i++) {
                const char *at = (const char *)&s->picture[i] + pf[f].off;
                unsigned long long val = pf[f].is_int ? (unsigned long long)*(const int *)at : *(const uint64_t *)at;
                esc(s->picture[i].name, l1, sizeof l1);
                wr(&w, "%s{picture=\"%s\"} %llu\n", pf[f].name, l1, val);
            }
        }
    }

    if (cams && ncams > 0) {
        static const struct {
            const char *name, *help, *reason;
            size_t off;
        } cf[] = {
            {"panocap_camera_frames_total", "Complete frames received per camera.", NULL,
             offsetof(pc_camera_metrics, frames)},
            {"panocap_camera_failed_buffers_total", "Incomplete or failed buffers per camera, by Aravis status.",
             "timeout", offsetof(pc_camera_metrics, timeouts)},
            {NULL, NULL, "missing_packets", offsetof(pc_camera_metrics, missing_packets)},
            {NULL, NULL, "size_mismatch", offsetof(pc_camera_metrics, size_mismatch)},
            {NULL, NULL, "other", offsetof(pc_camera_metrics, other_failures)},
            {"panocap_camera_packets_missing_total",
             "Image-data packets per camera that never arrived (lost and not resent in time); their lines "
             "were filled from the previous frame.", NULL, offsetof(pc_camera_metrics, packets_missing)},
            {"panocap_camera_packets_resent_total",
             "Packets per camera that arrived after a resend request (lost once, recovered).", NULL,
             offsetof(pc_camera_metrics, packets_resent)},
            {"panocap_camera_packet_resend_requests_total",
             "Packets per camera asked for again (one asked twice counts twice).", NULL,
             offsetof(pc_camera_metrics, resend_requests)},
            {"panocap_camera_packets_after_gap_total",
             "Aravis's n_missing_packets per camera: every packet from the first gap of an incomplete frame to "
             "its end, whether it arrived or not (not the packets lost: see panocap_camera_packets_missing_total).",
             NULL, offsetof(pc_camera_metrics, packets_after_gap)},
            {"panocap_camera_substituted_total", "Slabs substituted per camera.", NULL,
             offsetof(pc_camera_metrics, substituted)},
            {"panocap_camera_frames_repaired_total",
             "Incomplete frames used per camera, missing lines filled from the previous frame.", NULL,
             offsetof(pc_camera_metrics, repaired)},
            {"panocap_camera_reconnects_total", "Reconnections per camera.", NULL,
             offsetof(pc_camera_metrics, reconnects)},
        };
        const char *fam = NULL;
        for (size_t f = 0; f < sizeof cf / sizeof *cf; f++) {
            if (cf[f].name) {
                fam = cf[f].name;
                family(&w, fam, "counter", cf[f].help);
            }
            for (int c = 0; c < ncams; c++) {
                esc(cams[c].name, l1, sizeof l1);
                esc(cams[c].serial ? cams[c].serial : "", l2, sizeof l2);
                uint64_t val = *(const uint64_t *)((const char *)&cams[c] + cf[f].off);
                if (cf[f].reason)
                    wr(&w, "%s{camera=\"%d\",name=\"%s\",serial=\"%s\",reason=\"%s\"} %llu\n", fam, c, l1, l2,
                       cf[f].reason, (unsigned long long)val);
                else
                    wr(&w, "%s{camera=\"%d\",name=\"%s\",serial=\"%s\"} %llu\n", fam, c, l1, l2,
                       (unsigned long long)val);
            }
        }
        family(&w, "panocap_camera_connected", "gauge", "1 when the camera is connected.");
        for (int c = 0; c < ncams; c++) {
            esc(cams[c].name, l1, sizeof l1);
            esc(cams[c].serial ? cams[c].serial : "", l2, sizeof l2);
            wr(&w, "panocap_camera_connected{camera=\"%d\",name=\"%s\",serial=\"%s\"} %d\n", c, l1, l2,
               cams[c].connected ? 1 : 0);
        }
        family(&w, "panocap_camera_last_frame_age_seconds", "gauge", "Seconds since the camera's last frame.");
        for (int c = 0; c < ncams; c++) {
            if (cams[c].last_frame_age_s < 0 || isnan(cams[c].last_frame_age_s))
                continue; /* no frame yet: no sample */
            esc(cams[c].name, l1, sizeof l1);
            esc(cams[c].serial ? cams[c].serial : "", l2, sizeof l2);
            num(v, sizeof v, cams[c].last_frame_age_s);
            wr(&w, "panocap_camera_last_frame_age_seconds{camera=\"%d\",name=\"%s\",serial=\"%s\"} %s\n", c, l1, l2,
               v);
        }
    }
#undef COUNTER
#undef GAUGE
    return w.over ? -1 : (int)w.off;
}

void pc_stats_print_status(const char *line, int tty, FILE *stream, const pc_logger *lg)
{
    if (tty && stream) {
        fprintf(stream, "\r%s\033[K", line);
        fflush(stream);
    } else {
        pc_log(lg, PC_LOG_INFO, "%s", line);
    }
}
