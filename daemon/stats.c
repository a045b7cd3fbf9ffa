/* stats.c - latency accounting and counters (see stats.h): a ring of the
 * last frames for exact window percentiles, log-linear histograms for the
 * whole run, and the status line, summary and Prometheus formatters. */
#include "stats.h"

#include "clock.h"
#include "panocap_config.h" /* PANOCAP_VERSION, PANOCAP_HAVE_* for build_info */

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Histogram: 1 us buckets below 32 us, then 32 buckets per octave (3 %). */
#define HIST_SUB 32
#define HIST_OCTAVES 28 /* up to 2^33 us, about 2.4 hours */
#define HIST_BUCKETS (HIST_SUB + HIST_SUB * HIST_OCTAVES)

/* One frame in the window; its latencies (ns, -1 = not measured) are
 * nslots values in a parallel array (ring_lat / scratch_lat), as many as
 * the configured output slots need. */
typedef struct rec {
    int64_t t;                     /* time the frame was done (its last timestamp) */
    uint64_t bytes;
    int over;
} rec;

typedef struct pic_stats {
    char name[PC_STATS_NAME], encoder[PC_STATS_NAME];
    int width, height, encoding, encoders;
    uint64_t frames, bytes, failures, rec_dropped, live_skipped;
    double enc_ms; /* encode time, moving mean */
} pic_stats;

struct pc_stats {
    pthread_mutex_t mu;       /* everything below except the snapshot scratch */
    pthread_mutex_t snap_mu;  /* scratch, for concurrent snapshots */
    int64_t t0;
    double budget_ms;
    int64_t budget_ns, window_ns;
    char algo[32], variant[16];
    char layout[16];
    int bands;
    int outputs;              /* output slots in use range: [0, outputs) */
    int max_outputs;          /* output slots configured (their latencies kept) */
    int nslots;               /* latency slots: PC_STAT_WRITE0 + max_outputs */
    char output_name[PC_STATS_MAX_OUTPUTS][128];
    int output_pic[PC_STATS_MAX_OUTPUTS]; /* its picture, -1 none */
    int pictures;
    pic_stats pic[PC_STATS_MAX_PICTURES];
    uint64_t frames_in, encoded, dropped, substituted, substituted_slabs, over_budget, bytes_total;
    uint64_t preview_skipped;
    double fps_nominal;
    uint64_t out_written[PC_STATS_MAX_OUTPUTS], out_dropped[PC_STATS_MAX_OUTPUTS], out_errors[PC_STATS_MAX_OUTPUTS];
    uint64_t run_count[PC_STAT_SLOTS];
    int64_t run_max[PC_STAT_SLOTS];
    double run_sum_s[PC_STAT_SLOTS];
    uint64_t hist[PC_STAT_SLOTS][HIST_BUCKETS];
    rec *ring;
    int64_t *ring_lat;        /* [cap][nslots] */
    int cap, head, len;       /* ring[head] is the next slot to write */
    rec *scratch;
    int64_t *scratch_lat;
    int64_t *vals;
};

static const char *const slot_names[PC_STAT_WRITE0] = {"queue", "debayer", "encode", "total"};

const char *pc_stats_slot_name(int slot)
{
    if (slot >= 0 && slot < PC_STAT_WRITE0)
        return slot_names[slot];
    if (slot >= PC_STAT_WRITE0 && slot < PC_STAT_SLOTS)
        return "write";
    return "?";
}

int pc_stats_open(pc_stats **out, const pc_stats_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    if (!cfg || !(cfg->fps > 0) || !(cfg->window_s > 0) || cfg->outputs < 0 || cfg->outputs > PC_STATS_MAX_OUTPUTS) {
        snprintf(err, errlen, "stats: bad configuration (fps %g, window %g s, %d outputs)", cfg ? cfg->fps : 0,
                 cfg ? cfg->window_s : 0, cfg ? cfg->outputs : 0);
        return -1;
    }
    pc_stats *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "stats: out of memory");
        return -1;
    }
    double want = cfg->fps * cfg->window_s * 1.25 + 16;
    s->cap = want > 65536 ? 65536 : (int)want;
    s->max_outputs = cfg->outputs;
    s->nslots = PC_STAT_WRITE0 + cfg->outputs;
    s->ring = calloc((size_t)s->cap, sizeof *s->ring);
    s->ring_lat = calloc((size_t)s->cap * (size_t)s->nslots, sizeof *s->ring_lat);
    s->scratch = calloc((size_t)s->cap, sizeof *s->scratch);
    s->scratch_lat = calloc((size_t)s->cap * (size_t)s->nslots, sizeof *s->scratch_lat);
    s->vals = calloc((size_t)s->cap, sizeof *s->vals);
    if (!s->ring || !s->ring_lat || !s->scratch || !s->scratch_lat || !s->vals) {
        snprintf(err, errlen, "stats: out of memory for a %d-frame window", s->cap);
        pc_stats_close(s);
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->snap_mu, NULL);
    s->t0 = pc_now_ns();
    s->budget_ms = cfg->budget_ms > 0 ? cfg->budget_ms : 1000.0 / cfg->fps;
    s->fps_nominal = cfg->fps;
    s->budget_ns = (int64_t)(s->budget_ms * 1e6);
    s->window_ns = (int64_t)(cfg->window_s * 1e9);
    s->outputs = cfg->outputs;
    for (int i = 0; i < PC_STATS_MAX_OUTPUTS; i++)
        s->output_pic[i] = -1;
    for (int i = 0; i < cfg->outputs; i++)
        snprintf(s->output_name[i], sizeof s->output_name[i], "%s",
                 cfg->output_names[i] ? cfg->output_names[i] : "");
    for (int i = 0; i < PC_STAT_SLOTS; i++)
        s->run_max[i] = -1;
    *out = s;
    return 0;
}

void pc_stats_close(pc_stats *s)
{
    if (!s)
        return;
    if (s->ring && s->ring_lat && s->scratch && s->scratch_lat && s->vals) {
        pthread_mutex_destroy(&s->mu);
        pthread_mutex_destroy(&s->snap_mu);
    }
    free(s->ring);
    free(s->ring_lat);
    free(s->scratch);
    free(s->scratch_lat);
    free(s->vals);
    free(s);
}

void pc_stats_set_layout(pc_stats *s, const char *layout, int bands)
{
    pthread_mutex_lock(&s->mu);
    snprintf(s->layout, sizeof s->layout, "%s", layout ? layout : "");
    s->bands = bands;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_set_algo(pc_stats *s, const char *algo, const char *variant)
{
    pthread_mutex_lock(&s->mu);
    snprintf(s->algo, sizeof s->algo, "%s", algo ? algo : "");
    snprintf(s->variant, sizeof s->variant, "%s", variant ? variant : "");
    pthread_mutex_unlock(&s->mu);
}

/* mu held: slot i named name (counters from 0 when it changed) */
static void name_output_locked(pc_stats *s, int i, const char *name)
{
    if (i >= s->outputs || strcmp(s->output_name[i], name ? name : "") != 0)
        s->out_written[i] = s->out_dropped[i] = s->out_errors[i] = 0;
    snprintf(s->output_name[i], sizeof s->output_name[i], "%s", name ? name : "");
}

void pc_stats_set_outputs(pc_stats *s, int outputs, const char *const *names)
{
    if (outputs < 0)
        outputs = 0;
    if (outputs > s->max_outputs)
        outputs = s->max_outputs;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < outputs; i++)
        name_output_locked(s, i, names[i]);
    s->outputs = outputs;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_set_picture(pc_stats *s, int pic, const char *name, int width, int height)
{
    if (pic < 0 || pic >= PC_STATS_MAX_PICTURES)
        return;
    pthread_mutex_lock(&s->mu);
    pic_stats *p = &s->pic[pic];
    snprintf(p->name, sizeof p->name, "%s", name ? name : "");
    p->width = width;
    p->height = height;
    if (pic >= s->pictures)
        s->pictures = pic + 1;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_set_picture_outputs(pc_stats *s, int pic, int first, int n, int cap, const char *const *names)
{
    if (pic < 0 || pic >= PC_STATS_MAX_PICTURES || first < 0 || n < 0 || cap < n)
        return;
    pthread_mutex_lock(&s->mu);
    int end = first + cap < s->max_outputs ? first + cap : s->max_outputs;
    for (int i = first; i < end; i++) {
        name_output_locked(s, i, i - first < n ? names[i - first] : "");
        s->output_pic[i] = i - first < n ? pic : -1;
    }
    int top = 0; /* the slots in use, up to the last named */
    for (int i = 0; i < s->max_outputs; i++)
        if (s->output_name[i][0])
            top = i + 1;
    s->outputs = top;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_picture_encoders(pc_stats *s, int pic, const char *encoder, int encoding, int encoders)
{
    if (pic < 0 || pic >= PC_STATS_MAX_PICTURES)
        return;
    pthread_mutex_lock(&s->mu);
    pic_stats *p = &s->pic[pic];
    snprintf(p->encoder, sizeof p->encoder, "%s", encoder ? encoder : "");
    p->encoding = encoding;
    p->encoders = encoders;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_picture_packet(pc_stats *s, int pic, int frame, size_t bytes)
{
    if (pic < 0 || pic >= PC_STATS_MAX_PICTURES)
        return;
    pthread_mutex_lock(&s->mu);
    s->pic[pic].frames += frame != 0;
    s->pic[pic].bytes += bytes;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_picture_sets(pc_stats *s, int pic, int rec_dropped, int live_skipped)
{
    if (pic >= PC_STATS_MAX_PICTURES)
        return;
    pthread_mutex_lock(&s->mu);
    if (pic < 0)
        s->preview_skipped += (uint64_t)live_skipped;
    else {
        s->pic[pic].rec_dropped += (uint64_t)rec_dropped;
        s->pic[pic].live_skipped += (uint64_t)live_skipped;
    }
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_picture_encode_ms(pc_stats *s, int pic, double ms)
{
    if (pic < 0 || pic >= PC_STATS_MAX_PICTURES || !(ms >= 0))
        return;
    pthread_mutex_lock(&s->mu);
    double *m = &s->pic[pic].enc_ms;
    *m = *m > 0 ? *m + (ms - *m) / 50 : ms; /* about the last 50 frames */
    pthread_mutex_unlock(&s->mu);
}

double pc_stats_picture_load(pc_stats *s, int pic, double *ms)
{
    *ms = NAN;
    if (pic < 0 || pic >= PC_STATS_MAX_PICTURES)
        return NAN;
    pthread_mutex_lock(&s->mu);
    double m = s->pic[pic].enc_ms;
    pthread_mutex_unlock(&s->mu);
    if (!(m > 0))
        return NAN;
    *ms = m;
    return m * s->fps_nominal / 1e3;
}

void pc_stats_picture_failure(pc_stats *s, int pic)
{
    if (pic < 0 || pic >= PC_STATS_MAX_PICTURES)
        return;
    pthread_mutex_lock(&s->mu);
    s->pic[pic].failures++;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_frame_in(pc_stats *s, int substituted_slabs)
{
    pthread_mutex_lock(&s->mu);
    s->frames_in++;
    if (substituted_slabs > 0) {
        s->substituted++;
        s->substituted_slabs += (uint64_t)substituted_slabs;
    }
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_dropped(pc_stats *s, int n)
{
    if (n <= 0)
        return;
    pthread_mutex_lock(&s->mu);
    s->dropped += (uint64_t)n;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_output_dropped(pc_stats *s, int output, int n)
{
    if (output < 0 || output >= PC_STATS_MAX_OUTPUTS || n <= 0)
        return;
    pthread_mutex_lock(&s->mu);
    s->out_dropped[output] += (uint64_t)n;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_output_error(pc_stats *s, int output)
{
    if (output < 0 || output >= PC_STATS_MAX_OUTPUTS)
        return;
    pthread_mutex_lock(&s->mu);
    s->out_errors[output]++;
    pthread_mutex_unlock(&s->mu);
}

static int bucket_of(int64_t ns)
{
    uint64_t us = ns <= 0 ? 0 : (uint64_t)ns / 1000;
    if (us < HIST_SUB)
        return (int)us;
    int e = 63 - __builtin_clzll(us); /* >= 5 */
    int idx = HIST_SUB + (e - 5) * HIST_SUB + (int)((us >> (e - 5)) & (HIST_SUB - 1));
    return idx < HIST_BUCKETS ? idx : HIST_BUCKETS - 1;
}

static double bucket_mid_ns(int idx)
{
    if (idx < HIST_SUB)
        return (idx + 0.5) * 1000.0;
    int e = (idx - HIST_SUB) / HIST_SUB + 5, sub = (idx - HIST_SUB) % HIST_SUB;
    double w = ldexp(1.0, e - 5);
    return ((HIST_SUB + sub) * w + w / 2) * 1000.0;
}

static inline int64_t span(int64_t a, int64_t b) { return (a > 0 && b > 0) ? b - a : -1; }

/* stats mutex held */
static void count_frame_locked(pc_stats *s, const pc_frame_times *t)
{
    s->encoded += t->packet_ns > 0;
    s->bytes_total += t->packet_bytes;
    for (int o = 0; o < s->outputs; o++)
        s->out_written[o] += t->written_ns[o] > 0;
}

static void record_latency(pc_stats *s, const pc_frame_times *t, int count_too)
{
    rec r;
    int64_t lat[PC_STAT_SLOTS];
    memset(&r, 0, sizeof r);
    for (int i = 0; i < PC_STAT_SLOTS; i++)
        lat[i] = -1;
    lat[PC_STAT_QUEUE] = span(t->complete_ns, t->start_ns);
    lat[PC_STAT_DEBAYER] = span(t->start_ns, t->nv12_ns);
    lat[PC_STAT_ENCODE] = span(t->nv12_ns, t->packet_ns);
    int64_t end = 0;
    for (int o = 0; o < s->max_outputs; o++) {
        lat[PC_STAT_WRITE0 + o] = span(t->out_packet_ns[o] ? t->out_packet_ns[o] : t->packet_ns, t->written_ns[o]);
        if (t->written_ns[o] > end)
            end = t->written_ns[o];
    }
    if (!end)
        end = t->packet_ns ? t->packet_ns : t->nv12_ns ? t->nv12_ns : t->start_ns;
    lat[PC_STAT_TOTAL] = span(t->complete_ns, end);
    r.t = end ? end : pc_now_ns();
    r.bytes = t->packet_bytes;

    pthread_mutex_lock(&s->mu);
    r.over = lat[PC_STAT_TOTAL] > s->budget_ns;
    if (count_too)
        count_frame_locked(s, t);
    s->over_budget += (uint64_t)r.over;
    for (int i = 0; i < s->nslots; i++) {
        int64_t v = lat[i];
        if (v < 0)
            continue;
        s->run_count[i]++;
        s->run_sum_s[i] += (double)v * 1e-9;
        if (v > s->run_max[i])
            s->run_max[i] = v;
        s->hist[i][bucket_of(v)]++;
    }
    s->ring[s->head] = r;
    memcpy(s->ring_lat + (size_t)s->head * (size_t)s->nslots, lat, (size_t)s->nslots * sizeof *lat);
    s->head = (s->head + 1) % s->cap;
    if (s->len < s->cap)
        s->len++;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_frame_done(pc_stats *s, const pc_frame_times *t) { record_latency(s, t, 1); }

void pc_stats_frame_latency(pc_stats *s, const pc_frame_times *t) { record_latency(s, t, 0); }

void pc_stats_frame_encoded(pc_stats *s, size_t bytes)
{
    pthread_mutex_lock(&s->mu);
    s->encoded++;
    s->bytes_total += bytes;
    pthread_mutex_unlock(&s->mu);
}

void pc_stats_output_written(pc_stats *s, int output)
{
    pthread_mutex_lock(&s->mu);
    if (output >= 0 && output < s->outputs)
        s->out_written[output]++;
    pthread_mutex_unlock(&s->mu);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least q of the samples <= it. */
static int64_t rank(const int64_t *v, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

static double hist_quantile(const uint64_t *h, uint64_t n, double q)
{
    uint64_t k = (uint64_t)ceil(q * (double)n), c = 0;
    if (k < 1)
        k = 1;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        c += h[i];
        if (c >= k)
            return bucket_mid_ns(i);
    }
    return NAN;
}

void pc_stats_snapshot_get(pc_stats *s, pc_stats_snapshot *o)
{
    memset(o, 0, sizeof *o);
    pthread_mutex_lock(&s->snap_mu);
    int64_t now = pc_now_ns();
    int n = 0;
    pthread_mutex_lock(&s->mu);
    o->uptime_s = (double)(now - s->t0) * 1e-9;
    o->frames_in = s->frames_in;
    o->encoded = s->encoded;
    o->dropped = s->dropped;
    o->substituted = s->substituted;
    o->substituted_slabs = s->substituted_slabs;
    o->over_budget = s->over_budget;
    o->bytes_total = s->bytes_total;
    o->budget_ms = s->budget_ms;
    o->window_s = (double)s->window_ns * 1e-9;
    snprintf(o->algo, sizeof o->algo, "%s", s->algo);
    snprintf(o->variant, sizeof o->variant, "%s", s->variant);
    snprintf(o->layout, sizeof o->layout, "%s", s->layout);
    o->bands = s->bands;
    o->outputs = s->outputs;
    for (int i = 0; i < s->outputs; i++) {
        memcpy(o->output_name[i], s->output_name[i], sizeof o->output_name[i]);
        if (s->output_pic[i] >= 0)
            memcpy(o->output_picture[i], s->pic[s->output_pic[i]].name, sizeof o->output_picture[i]);
        o->output_written[i] = s->out_written[i];
        o->output_dropped[i] = s->out_dropped[i];
        o->output_errors[i] = s->out_errors[i];
    }
    o->pictures = s->pictures;
    for (int i = 0; i < s->pictures; i++) {
        const pic_stats *p = &s->pic[i];
        struct pc_picture_stats *q = &o->picture[i];
        memcpy(q->name, p->name, sizeof q->name);
        memcpy(q->encoder, p->encoder, sizeof q->encoder);
        q->width = p->width;
        q->height = p->height;
        q->encoding = p->encoding;
        q->encoders = p->encoders;
        q->frames = p->frames;
        q->bytes = p->bytes;
        q->failures = p->failures;
        q->rec_dropped = p->rec_dropped;
        q->live_skipped = p->live_skipped;
        q->encode_ms = p->enc_ms;
        q->encode_load = p->enc_ms > 0 && s->fps_nominal > 0 ? p->enc_ms * s->fps_nominal / 1e3 : NAN;
        o->rec_dropped += p->rec_dropped;
    }
    o->preview_skipped = s->preview_skipped;
    for (int i = s->nslots; i < PC_STAT_SLOTS; i++) /* output slots not configured */
        o->stage[i].run_max_ms = o->stage[i].run_p50_ms = o->stage[i].run_p99_ms = NAN;
    for (int i = 0; i < s->nslots; i++) {
        pc_stage_stats *st = &o->stage[i];
        st->run_count = s->run_count[i];
        st->run_sum_s = s->run_sum_s[i];
        st->run_max_ms = s->run_max[i] >= 0 ? (double)s->run_max[i] * 1e-6 : NAN;
        st->run_p50_ms = s->run_count[i] ? hist_quantile(s->hist[i], s->run_count[i], 0.50) * 1e-6 : NAN;
        st->run_p99_ms = s->run_count[i] ? hist_quantile(s->hist[i], s->run_count[i], 0.99) * 1e-6 : NAN;
    }
    /* Oldest first. */
    size_t ns = (size_t)s->nslots;
    for (int k = 0; k < s->len; k++) {
        int at = (s->head - s->len + k + s->cap) % s->cap;
        const rec *r = &s->ring[at];
        if (r->t >= now - s->window_ns) {
            memcpy(s->scratch_lat + (size_t)n * ns, s->ring_lat + (size_t)at * ns, ns * sizeof *s->ring_lat);
            s->scratch[n++] = *r;
        }
    }
    pthread_mutex_unlock(&s->mu);

    o->window_frames = (uint64_t)n;
    uint64_t bytes = 0;
    for (int k = 0; k < n; k++) {
        o->window_over_budget += (uint64_t)s->scratch[k].over;
        if (k > 0)
            bytes += s->scratch[k].bytes;
    }
    if (n >= 2 && s->scratch[n - 1].t > s->scratch[0].t) {
        double sp = (double)(s->scratch[n - 1].t - s->scratch[0].t) * 1e-9;
        o->fps = (n - 1) / sp;
        o->bitrate_bps = (double)bytes * 8.0 / sp;
    }
    for (int i = 0; i < PC_STAT_SLOTS; i++) {
        pc_stage_stats *st = &o->stage[i];
        size_t m = 0;
        double sum = 0;
        for (int k = 0; k < n && i < s->nslots; k++) {
            int64_t v = s->scratch_lat[(size_t)k * ns + (size_t)i];
            if (v >= 0) {
                s->vals[m++] = v;
                sum += (double)v;
            }
        }
        st->count = m;
        if (!m) {
            st->p50_ms = st->p99_ms = st->max_ms = st->mean_ms = NAN;
            continue;
        }
        qsort(s->vals, m, sizeof *s->vals, cmp_i64);
        st->p50_ms = (double)rank(s->vals, m, 0.50) * 1e-6;
        st->p99_ms = (double)rank(s->vals, m, 0.99) * 1e-6;
        st->max_ms = (double)s->vals[m - 1] * 1e-6;
        st->mean_ms = sum / (double)m * 1e-6;
    }
    pthread_mutex_unlock(&s->snap_mu);
}

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
