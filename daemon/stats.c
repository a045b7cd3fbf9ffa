/* stats.c - latency accounting and counters (see stats.h): a ring of the
 * last frames for exact window percentiles, log-linear histograms for the
 * whole run, and the snapshot; the status line, summary and Prometheus
 * formatters of a snapshot are stats_format.c's. */
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
