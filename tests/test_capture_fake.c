/* test_capture_fake.c - capture from Aravis's in-process fake cameras (real
 * Aravis code, no network): 5 cameras BayerRG8 2040x1080, every set
 * complete but for periods a camera made no frame for (flagged, its last
 * frame repeated), each camera's picture in its own band (checked by
 * content), no frame repeated or lost uncounted (the burned-in counter),
 * slab order honoured,
 * a slow consumer loses whole sets at one counted place with flat memory,
 * a recording replays byte for byte, frame-set skew (3 cameras, one made
 * 6 ms late by PANOCAP_TEST_FAKE_DELAY: the first timed set shows it, the
 * camera's offset gauge, one rate-limited warning; none without a delay),
 * and bad configurations are refused
 * with messages that name the camera and the setting. In a sanitizer
 * build the cameras are 512x216 (the same checks: full-size frames checked
 * by instrumented code fell behind the cameras). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "capture_testutil.h"
#include "clock.h"
#include "sanitizer.h"
#include "tap.h"

#define N 5
static int W = 2040, H = 1080; /* one camera's region (main: smaller under a sanitizer) */

static uint8_t *want[N]; /* expected mosaic of band p */

static void quiet_sink(void *user, int level, const char *line)
{
    if (level <= PC_LOG_WARNING)
        fprintf(stderr, "# log <%d> %s\n", level, line);
}
static const pc_logger quiet = {quiet_sink, NULL, PC_LOG_INFO};

static void base_config(pc_capture_config *cfg, const char *image)
{
    pc_capture_config_init(cfg);
    cfg->source = PC_SOURCE_FAKE;
    cfg->n_cameras = N;
    cfg->fps = 50;
    cfg->pool_sets = 8;
    /* 80 ms: the fake cameras' threads share a loaded 2-core CI machine; a
     * set that waits longer than this for a descheduled thread would be
     * (rightly) substituted, and this test wants every set complete */
    cfg->deadline_periods = 4;
    cfg->log = &quiet;
    for (int i = 0; i < N; i++) {
        cfg->cam[i].cfa = PC_CFA_RGGB;
        cfg->cam[i].width = W;
        cfg->cam[i].height = H;
        cfg->cam[i].image = image;
    }
}

/* What one camera's slabs show over the delivered sets. A fake camera whose
 * thread is descheduled past a frame period (a loaded CI machine) makes no
 * frame for that period: Aravis sleeps to the next one, and a software
 * trigger that comes while it is busy is missed. That is the camera's
 * doing; what the capture guarantees, and what is checked, is:
 *   - a flagged (substituted) slab repeats the camera's previous slab (a
 *     newer one only across dropped sets), or is mid-grey before its first
 *     frame; an unflagged slab is a newer frame: never repeated, never back;
 *   - no frame lost uncounted: a frame the camera made that is in no
 *     delivered set was counted late or went with a dropped set;
 *   - a slab is substituted only for a slot its camera made no frame for
 *     (or whose frame came late, counted): with every camera on time, every
 *     set is complete and every counter advances by one per set. */
typedef struct cam_track {
    int64_t last_cnt;            /* counter of the previous slab; -1: none/grey */
    int64_t first_real, last_real; /* counters of the first and last unflagged slabs */
    uint64_t first_index, last_index; /* their sets' indexes */
    int have_real;
    int64_t unseen;              /* frames between unflagged slabs that no slab showed */
    int subst, grey, subst_between, subst_pending; /* flagged slabs; between unflagged ones */
    int bad;                     /* flagged slab not a repeat, unflagged not newer, late grey */
} cam_track;

static void track_init(cam_track *t, int n)
{
    memset(t, 0, sizeof *t * (size_t)n);
    for (int i = 0; i < n; i++)
        t[i].last_cnt = -1;
}

/* Slab k of set s (step: index advance since the previous delivered set). */
static void track_slab(cam_track *t, const pc_frameset *s, int k, int64_t cnt, int64_t step)
{
    if (s->substituted & (1u << k)) {
        t->subst++;
        t->subst_pending++;
        if (s->grey & (1u << k)) {
            t->grey++;
            t->bad += t->have_real; /* grey only before the camera's first frame */
            return;
        }
        if (cnt < 0 || (t->last_cnt >= 0 && (step == 1 ? cnt != t->last_cnt : cnt < t->last_cnt)))
            t->bad++;
        t->last_cnt = cnt;
        return;
    }
    if (cnt < 0 || (t->have_real && cnt <= t->last_real)) {
        t->bad++;
        return;
    }
    if (t->have_real) {
        t->unseen += cnt - t->last_real - 1;
        t->subst_between += t->subst_pending;
    } else {
        t->first_real = cnt;
        t->first_index = s->index;
        t->have_real = 1;
    }
    t->subst_pending = 0;
    t->last_real = cnt;
    t->last_index = s->index;
    t->last_cnt = cnt;
}

/* The guarantees above for camera k (late: its frames_late; dropped: sets
 * dropped between delivered ones); 1 when they hold. */
static int track_ok(const cam_track *t, uint64_t late, int64_t dropped)
{
    if (!t->have_real || t->bad)
        return 0;
    int64_t slots = (int64_t)(t->last_index - t->first_index) + 1;
    int64_t made = t->last_real - t->first_real + 1; /* frames the camera made meanwhile */
    return t->unseen <= (int64_t)late + dropped && t->subst_between <= slots - made + (int64_t)late;
}

static void track_diag(const char *what, const cam_track *t, int n, const pc_camera_stats *st)
{
    for (int k = 0; k < n; k++)
        if (t[k].subst || t[k].unseen || t[k].bad || (st && st[k].frames_late))
            tap_diag("%s: camera %d: %d slabs substituted (%d grey, %d between frames), %lld "
                     "frames not shown, %llu late, %d faults; it made %lld frames for %lld slots",
                     what, k, t[k].subst, t[k].grey, t[k].subst_between, (long long)t[k].unseen,
                     (unsigned long long)(st ? st[k].frames_late : 0), t[k].bad,
                     (long long)(t[k].last_real - t[k].first_real + 1),
                     (long long)(t[k].last_index - t[k].first_index + 1));
}

static void test_main_run(const char *image)
{
    pc_capture_config cfg;
    base_config(&cfg, image);
    char err[512] = "";
    pc_capture *c = NULL;
    int rc = pc_capture_open(&c, &cfg, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "open 5 fake cameras %dx%d BayerRG8: %s", W, H, rc ? err : "ok"))
        return;
    rc = pc_capture_start(c, err, sizeof err);
    TAP_CHECK(rc == 0, "start: %s", rc ? err : "ok");

    /* keep the first sets to record and replay them afterwards */
    enum { RECORD = 8 };
    uint8_t *recorded = malloc((size_t)RECORD * N * W * H);
    pc_frameset kept[RECORD];

    int sets = 0, incomplete = 0, wrong_content = 0, order_bad = 0;
    int64_t last_pts = 0, jumps = 0;
    cam_track trk[N];
    track_init(trk, N);
    uint64_t first_index = 0;
    uint64_t last_index = 0;
    int64_t t0 = pc_now_ns(), lat_max = 0;
    /* 120 sets, however long a busy machine takes (the bound only ends a
     * run that stopped) */
    while (sets < 120 && pc_now_ns() - t0 < (int64_t)(tu_bound(60) * 1e9)) {
        pc_frameset *s;
        rc = pc_capture_next(c, 1000, &s);
        if (rc == PC_CAPTURE_TIMEOUT)
            continue;
        if (rc != 0) {
            TAP_CHECK(0, "next returned %d after %d sets", rc, sets);
            break;
        }
        if (s->n != N || s->width != W || s->height != H)
            order_bad++;
        if (s->substituted)
            incomplete++;
        if (sets > 0 && (s->index <= last_index || s->pts_ns <= last_pts))
            order_bad++;
        int64_t step = sets > 0 ? (int64_t)(s->index - last_index) : 1;
        if (sets == 0)
            first_index = s->index;
        jumps += step - 1;
        last_index = s->index;
        last_pts = s->pts_ns;
        if (s->t_complete_ns - s->t_first_ns > lat_max)
            lat_max = s->t_complete_ns - s->t_first_ns;
        for (int k = 0; k < N; k++) {
            if (s->camera[k] != k)
                order_bad++;
            if (!(s->grey & (1u << k)) && !tu_slab_matches(s->slab[k], s->pitch[k], want[k], W, H))
                wrong_content++;
            track_slab(&trk[k], s, k, pc_fake_counter_read(s->slab[k], s->pitch[k], W, H), step);
        }
        if (sets < RECORD) {
            pc_frameset_stack(s, recorded + (size_t)sets * N * W * H, W);
            kept[sets] = *s;
        }
        sets++;
        pc_capture_release(c, s);
    }
    /* stats first, then the set counts: sets emitted in between only
     * raise the bound below */
    pc_camera_stats st[N];
    pc_set_stats ss;
    pc_capture_stats(c, st, N);
    pc_capture_set_stats(c, &ss);
    TAP_CHECK(sets >= 120, "received %d frame sets (want >= 120)", sets);
    int tracks_ok = 1;
    for (int k = 0; k < N; k++)
        tracks_ok &= track_ok(&trk[k], st[k].frames_late, jumps);
    track_diag("main run", trk, N, st);
    TAP_CHECK(tracks_ok, "every set complete but for slots a camera made no frame for (a fake "
              "camera's thread descheduled past its period), those flagged and repeating the "
              "camera's previous frame; counters: no frame repeated, none lost uncounted (%d "
              "sets had a substituted slab)", incomplete);
    TAP_CHECK(wrong_content == 0, "each camera's picture in its own %d-row band, by content "
              "(%d slabs differ)", H, wrong_content);
    tap_diag("%lld sets dropped between delivered ones, first index %llu", (long long)jumps,
             (unsigned long long)first_index);
    TAP_CHECK(order_bad == 0, "indexes consecutive, pts increasing, slab s from camera s (%d faults)",
              order_bad);
    tap_diag("first-to-last slab spread at most %.2f ms", lat_max / 1e6);

    /* every slab of a set emitted is a frame put in (completed) or a
     * substitute, both counted; the substitutes counted are those seen plus
     * at most one per set not delivered (queued or dropped) */
    int stats_ok = 1;
    uint64_t unseen_sets = ss.sets_emitted - (uint64_t)sets;
    for (int i = 0; i < N; i++)
        stats_ok &= st[i].state == PC_CAM_STREAMING && st[i].path == PC_PATH_IN_PROCESS &&
                    st[i].frames_completed + st[i].frames_substituted >= 120 &&
                    st[i].frames_substituted >= (uint64_t)trk[i].subst &&
                    st[i].frames_substituted <= (uint64_t)trk[i].subst + unseen_sets &&
                    strcmp(st[i].serial, st[i].name) == 0;
    TAP_CHECK(stats_ok, "stats: streaming in-process, >= 120 slabs completed or substituted, the "
              "substituted ones counted (cam0 %s serial %s: %llu received, %llu completed, %llu "
              "substituted (%d seen), %llu late)", st[0].name, st[0].serial,
              (unsigned long long)st[0].frames_received, (unsigned long long)st[0].frames_completed,
              (unsigned long long)st[0].frames_substituted, trk[0].subst,
              (unsigned long long)st[0].frames_late);
    /* This consumer keeps up; a drop can only come from it being descheduled
     * for more than pool_sets periods on a busy machine, and every drop must
     * then be counted and visible as an index gap (or still be queued). */
    uint64_t queued = ss.sets_emitted - ss.sets_delivered - ss.sets_dropped;
    TAP_CHECK(ss.sets_delivered >= 120 && queued <= 8 &&
              (uint64_t)jumps + first_index <= ss.sets_dropped &&
              ss.sets_dropped <= (uint64_t)jumps + first_index + queued + 1,
              "set accounting: %llu emitted = %llu delivered + %llu dropped + %llu queued; drops seen "
              "as index gaps %lld (+%llu before the first)", (unsigned long long)ss.sets_emitted,
              (unsigned long long)ss.sets_delivered, (unsigned long long)ss.sets_dropped,
              (unsigned long long)queued, (long long)jumps, (unsigned long long)first_index);
    pc_capture_stop(c);
    pc_frameset *s;
    TAP_CHECK(pc_capture_next(c, 100, &s) == PC_CAPTURE_EOF, "next after stop says EOF");
    pc_capture_close(c);

    char rawpath[256];
    snprintf(rawpath, sizeof rawpath, "%s/fake.pcraw", tu_tmpdir());
    pc_raw_writer *wr = NULL;
    rc = pc_raw_writer_open(&wr, rawpath, W, H, N, PC_CFA_RGGB, 50, err, sizeof err);
    for (int i = 0; i < RECORD && rc == 0; i++) {
        for (int k = 0; k < N; k++)
            kept[i].slab[k] = recorded + ((size_t)i * N + k) * W * H;
        rc = pc_raw_writer_write(wr, &kept[i], err, sizeof err);
    }
    if (rc == 0)
        rc = pc_raw_writer_close(wr, err, sizeof err);
    TAP_CHECK(rc == 0, "%d sets written with the raw writer: %s", RECORD, rc ? err : "ok");

    /* replay the recording with the file source and compare bytes */
    pc_capture_config fc;
    pc_capture_config_init(&fc);
    fc.source = PC_SOURCE_FILE;
    fc.file = rawpath;
    fc.n_cameras = 0;
    fc.fps = 0;
    fc.file_realtime = 0;
    fc.log = &quiet;
    rc = pc_capture_open(&c, &fc, err, sizeof err);
    TAP_CHECK(rc == 0, "file source opens the recording: %s", rc ? err : "ok");
    int same = 0, got = 0;
    if (rc == 0 && pc_capture_start(c, err, sizeof err) == 0) {
        int r;
        int64_t t0 = pc_now_ns();
        /* to the end of the file (EOF), however long a busy machine takes */
        while ((r = pc_capture_next(c, 2000, &s)) == 0 ||
               (r == PC_CAPTURE_TIMEOUT && pc_now_ns() - t0 < (int64_t)(tu_bound(60) * 1e9))) {
            if (r != 0)
                continue;
            if (got < RECORD && s->stacked &&
                memcmp(s->stacked, recorded + (size_t)got * N * W * H, (size_t)N * W * H) == 0)
                same++;
            got++;
            pc_capture_release(c, s);
        }
        pc_capture_close(c);
    }
    TAP_CHECK(got == RECORD && same == RECORD, "recorded fake sets replay byte for byte (%d of %d "
              "sets, %d identical)", got, RECORD, same);
    free(recorded);
    unlink(rawpath);
}

/* Camera i shows picture part i but sits at slab N-1-i. */
static void test_slab_order(const char *image)
{
    pc_capture_config cfg;
    base_config(&cfg, image);
    for (int i = 0; i < N; i++) {
        cfg.cam[i].slab = N - 1 - i;
        cfg.cam[i].image_part = i;
    }
    char err[512] = "";
    pc_capture *c;
    int rc = pc_capture_open(&c, &cfg, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "open with slab order reversed: %s", rc ? err : "ok"))
        return;
    pc_capture_start(c, err, sizeof err);
    int sets = 0, bad = 0;
    int64_t t0 = pc_now_ns();
    while (sets < 15 && pc_now_ns() - t0 < (int64_t)(tu_bound(60) * 1e9)) {
        pc_frameset *s;
        int r = pc_capture_next(c, 1000, &s);
        if (r == PC_CAPTURE_TIMEOUT)
            continue; /* a busy machine: wait on */
        if (r != 0)
            break;
        for (int k = 0; k < N; k++)
            if (s->camera[k] != N - 1 - k || !tu_slab_matches(s->slab[k], s->pitch[k], want[N - 1 - k], W, H))
                bad++;
        sets++;
        pc_capture_release(c, s);
    }
    pc_capture_close(c);
    TAP_CHECK(sets == 15 && bad == 0, "reversed slab order: slab s holds camera %d-s's picture "
              "(%d sets, %d wrong slabs)", N - 1, sets, bad);
}

/* Frame-set skew (capture/skew.c). The log sink counts the skew warnings. */
static int skew_warnings;
static char skew_line[600];
static void skew_sink(void *user, int level, const char *line)
{
    if (level <= PC_LOG_WARNING && strstr(line, "capture.max_skew")) {
        if (!skew_warnings++)
            snprintf(skew_line, sizeof skew_line, "%s", line);
    } else if (level <= PC_LOG_WARNING) {
        fprintf(stderr, "# log <%d> %s\n", level, line);
    }
}
static const pc_logger skew_log = {skew_sink, NULL, PC_LOG_INFO};

/* 3 fake cameras of 256x128 at 25 fps; camera 1 delay_ms late
 * (PANOCAP_TEST_FAKE_DELAY, a camera on a late trigger), or none. Reads
 * sets until `want` of them timed all 3 cameras. Free-running cameras'
 * skew is known modulo the frame period only (a camera 30 ms late is one
 * 10 ms early): the delay stays well under a quarter period. */
static void skew_run(double delay_ms, double max_skew_ms)
{
    char env[32];
    snprintf(env, sizeof env, "1:%g", delay_ms);
    if (delay_ms > 0)
        setenv("PANOCAP_TEST_FAKE_DELAY", env, 1);
    else
        unsetenv("PANOCAP_TEST_FAKE_DELAY");
    pc_capture_config cfg;
    pc_capture_config_init(&cfg);
    cfg.source = PC_SOURCE_FAKE;
    cfg.n_cameras = 3;
    cfg.fps = 25;
    cfg.pool_sets = 8;
    cfg.deadline_periods = 4;
    cfg.max_skew_ms = max_skew_ms;
    cfg.log = &skew_log;
    for (int i = 0; i < 3; i++) {
        cfg.cam[i].cfa = PC_CFA_RGGB;
        cfg.cam[i].width = 256;
        cfg.cam[i].height = 128;
    }
    skew_warnings = 0;
    skew_line[0] = '\0';
    char err[512] = "";
    pc_capture *c;
    int rc = pc_capture_open(&c, &cfg, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "skew: open 3 fake cameras, camera 1 %g ms late: %s", delay_ms, rc ? err : "ok"))
        return;
    pc_capture_start(c, err, sizeof err);
    const int want = 50;
    int timed = 0, first_over = -1, sets = 0;
    int64_t first_skew = -1, max_skew = 0, off1_min = INT64_MAX;
    while (timed < want && sets < 2000) {
        pc_frameset *s;
        if (pc_capture_next(c, 5000, &s) != 0)
            break;
        sets++;
        if (s->skew_slabs == 3) {
            if (first_skew < 0)
                first_skew = s->skew_ns;
            if (first_over < 0 && s->skew_ns > (int64_t)((max_skew_ms > 0 ? max_skew_ms : 20) * 1e6))
                first_over = timed;
            if (s->skew_ns > max_skew)
                max_skew = s->skew_ns;
            int k1 = -1;
            for (int k = 0; k < 3; k++)
                if (s->camera[k] == 1)
                    k1 = k;
            if (k1 >= 0 && s->skew_offset_ns[k1] < off1_min)
                off1_min = s->skew_offset_ns[k1];
            timed++;
        }
        pc_capture_release(c, s);
    }
    double lim = max_skew_ms > 0 ? max_skew_ms : 20; /* 0: half the 40 ms period */
    pc_set_stats ss;
    pc_camera_stats cs[3];
    pc_capture_set_stats(c, &ss);
    pc_capture_stats(c, cs, 3);
    pc_capture_close(c);
    unsetenv("PANOCAP_TEST_FAKE_DELAY");
    uint64_t hist = 0;
    for (int i = 0; i < PC_SKEW_BUCKETS; i++)
        hist += ss.skew_bucket[i];
    TAP_CHECK(timed == want && hist == ss.skew_sets && ss.skew_sets >= (uint64_t)want &&
              ss.max_skew_ns == (int64_t)(lim * 1e6),
              "skew (%g ms late): %d sets timed all 3 cameras (of %d); histogram %llu = count %llu; "
              "max_skew %.1f ms", delay_ms, timed, sets, (unsigned long long)hist,
              (unsigned long long)ss.skew_sets, ss.max_skew_ns / 1e6);
    if (delay_ms > 0) {
        double d = delay_ms * 1e6;
        TAP_CHECK(first_over == 0 && first_skew > lim * 1e6 && first_skew < d + 10e6,
                  "skew: the first timed set shows camera 1's delay: %.2f ms (delay %g ms, limit %g ms)",
                  first_skew / 1e6, delay_ms, lim);
        TAP_CHECK(off1_min > 0.5 * d && cs[1].have_skew && cs[1].skew_offset_ns > 0.5 * d &&
                  cs[0].skew_offset_ns <= 0 && cs[2].skew_offset_ns <= 0,
                  "skew: camera 1 is late in every set (offset from the median >= %.2f ms; gauges "
                  "%+.2f %+.2f %+.2f ms)", off1_min / 1e6, cs[0].skew_offset_ns / 1e6,
                  cs[1].skew_offset_ns / 1e6, cs[2].skew_offset_ns / 1e6);
        TAP_CHECK(skew_warnings == 1 && strstr(skew_line, "camera 1") && strstr(skew_line, "PTP") &&
                      ss.sets_skewed >= (uint64_t)want,
                  "skew: one warning (rate-limited) naming camera 1 for %llu sets over: %s",
                  (unsigned long long)ss.sets_skewed, skew_line);
    } else {
        TAP_CHECK(skew_warnings == 0 && ss.sets_skewed == 0 && max_skew < lim * 1e6,
                  "skew: no delay: no warning, largest skew %.3f ms (limit %g ms), %d warnings: %s",
                  max_skew / 1e6, lim, skew_warnings, skew_line);
    }
}

/* Consumer slower than the cameras: whole sets dropped at one place,
 * counted, index gaps equal the drops, memory flat. */
static void test_slow_consumer(void)
{
    pc_capture_config cfg;
    base_config(&cfg, NULL);
    cfg.pool_sets = 2;
    char err[512] = "";
    pc_capture *c;
    int rc = pc_capture_open(&c, &cfg, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "open for the slow-consumer run: %s", rc ? err : "ok"))
        return;
    pc_capture_start(c, err, sizeof err);
    long rss1 = 0, rss2 = 0;
    uint64_t gaps = 0, last = 0, first = 0;
    int got = 0;
    int64_t t0 = pc_now_ns();
    /* until more than 40 sets were dropped (how long that takes is the
     * machine's speed; the bound only ends a run that stopped) */
    pc_set_stats sd = {0};
    while ((got <= 10 || sd.sets_dropped <= 40) && pc_now_ns() - t0 < (int64_t)(tu_bound(60) * 1e9)) {
        pc_capture_set_stats(c, &sd);
        pc_frameset *s;
        int r = pc_capture_next(c, 1000, &s);
        if (r == PC_CAPTURE_TIMEOUT)
            continue;
        if (r != 0)
            break;
        if (got > 0)
            gaps += s->index - last - 1;
        else
            first = s->index;
        last = s->index;
        got++;
        struct timespec ts = {0, 55000000}; /* 55 ms per set: ~18 fps for 50 fps cameras */
        nanosleep(&ts, NULL);
        pc_capture_release(c, s);
        if (got == 10)
            rss1 = tu_rss_kb();
    }
    rss2 = tu_rss_kb();
    pc_set_stats ss;
    pc_capture_set_stats(c, &ss);
    pc_capture_close(c);
    TAP_CHECK(ss.sets_dropped > 40, "slow consumer: %llu of %llu sets dropped and counted",
              (unsigned long long)ss.sets_dropped, (unsigned long long)ss.sets_emitted);
    /* every gap is a counted drop, and every counted drop is a gap, one
     * before the first set seen, or one of the sets emitted after the last
     * one seen (the stats are read after it; how many depends on how long
     * a loaded machine takes to get there) */
    uint64_t after = ss.sets_emitted - 1 - last;
    TAP_CHECK(got > 0 && gaps + first <= ss.sets_dropped && ss.sets_dropped <= gaps + first + after &&
                  ss.sets_delivered == (uint64_t)got &&
                  ss.sets_emitted - ss.sets_delivered - ss.sets_dropped <= 2,
              "index gaps seen by the consumer (%llu, +%llu before the first) account for the "
              "drops (%llu; %llu sets emitted after the last one seen)", (unsigned long long)gaps,
              (unsigned long long)first, (unsigned long long)ss.sets_dropped,
              (unsigned long long)after);
    TAP_CHECK(rss1 > 0 && labs(rss2 - rss1) < 4096, "memory flat while dropping: RSS %ld kB -> %ld kB",
              rss1, rss2);
}

/* Software trigger: panocap's trigger thread fires every camera each period. */
static void test_software_trigger(void)
{
    pc_capture_config cfg;
    base_config(&cfg, NULL);
    cfg.n_cameras = 3;
    cfg.fps = 25;
    for (int i = 0; i < 3; i++) {
        cfg.cam[i].width = 640;
        cfg.cam[i].height = 480;
        cfg.cam[i].trigger = PC_TRIGGER_SOFTWARE;
    }
    char err[512] = "";
    pc_capture *c;
    int rc = pc_capture_open(&c, &cfg, err, sizeof err);
    if (rc == 0)
        rc = pc_capture_start(c, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "software-triggered fake cameras: %s", rc ? err : "ok"))
        return;
    int sets = 0, complete = 0;
    int64_t t0 = pc_now_ns(), jumps = 0;
    uint64_t li = 0;
    cam_track trk[3];
    track_init(trk, 3);
    while (sets < 25 && pc_now_ns() - t0 < (int64_t)(tu_bound(60) * 1e9)) {
        pc_frameset *s;
        if (pc_capture_next(c, 1000, &s) != 0)
            continue;
        complete += s->substituted == 0;
        int64_t step = sets ? (int64_t)(s->index - li) : 1;
        jumps += step - 1;
        li = s->index;
        for (int k = 0; k < 3; k++)
            track_slab(&trk[k], s, k, pc_fake_counter_read(s->slab[k], s->pitch[k], 640, 480), step);
        sets++;
        pc_capture_release(c, s);
    }
    double secs = (pc_now_ns() - t0) / 1e9;
    pc_camera_stats st[3];
    pc_capture_stats(c, st, 3);
    pc_capture_close(c);
    int ok = 1;
    for (int k = 0; k < 3; k++)
        ok &= track_ok(&trk[k], st[k].frames_late, jumps);
    track_diag("software trigger", trk, 3, st);
    /* a missed trigger (the camera's thread descheduled) is a slot with no
     * frame: substituted, flagged; anything else is a fault */
    TAP_CHECK(sets == 25 && ok && secs > 0.8,
              "software trigger at 25 fps: %d sets in %.2f s, %d complete, the others only for "
              "triggers a camera missed", sets, secs, complete);
}

static void expect_error(pc_capture_config *cfg, const char *what, const char *m1, const char *m2)
{
    char err[512] = "";
    pc_capture *c = NULL;
    int rc = pc_capture_open(&c, cfg, err, sizeof err);
    if (rc == 0)
        pc_capture_close(c);
    TAP_CHECK(rc < 0 && strstr(err, m1) && strstr(err, m2), "%s refused: \"%s\"", what, err);
}

static void test_bad_config(void)
{
    pc_capture_config cfg;
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[1].pixel_format = "BayerRG16";
    expect_error(&cfg, "unsupported pixel format", "camera 1", "pixel format 'BayerRG16'");
    cfg.cam[1].pixel_format = "BayerRG12"; /* supported, but not next to 8-bit camera 0 */
    expect_error(&cfg, "mixed pixel formats", "camera 1", "BayerRG12 differs from camera 0's");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[0].pixel_format = "Mono8";
    cfg.cam[1].pixel_format = "Mono8";
    expect_error(&cfg, "non-Bayer pixel format", "camera 0", "pixel format 'Mono8'");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[0].width = cfg.cam[1].width = 4096;
    expect_error(&cfg, "region larger than the sensor", "camera 0 (PCFAKE1)", "larger than the sensor");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[0].offset_y = cfg.cam[1].offset_y = 1200;
    cfg.cam[0].height = cfg.cam[1].height = 1080; /* 2280 rows on a 2048-row sensor, whatever H is */
    expect_error(&cfg, "region pushed off the sensor by its offset", "camera 0", "offset 0,1200");
    base_config(&cfg, NULL);
    cfg.n_cameras = 3;
    cfg.cam[0].address = "CAM-A";
    cfg.cam[2].address = "cam-a";
    expect_error(&cfg, "duplicate camera", "camera 2 (cam-a)", "duplicates camera 0");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[0].width = cfg.cam[1].width = 2041;
    expect_error(&cfg, "odd width", "camera 0", "odd width");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[1].height = 1079;
    expect_error(&cfg, "odd height", "camera 1", "odd height");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[1].offset_x = 3;
    expect_error(&cfg, "odd offset", "camera 1", "offset 3,0");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[1].cfa = PC_CFA_GBRG;
    expect_error(&cfg, "mixed Bayer phases", "camera 1", "Bayer pattern GBRG differs");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[1].slab = 0;
    expect_error(&cfg, "two cameras on one slab", "camera 1", "slab 0 is already taken");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[0].image = "/nonexistent/picture.ppm";
    expect_error(&cfg, "missing picture file", "camera 0", "/nonexistent/picture.ppm");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[0].exposure_us = 2e7;
    cfg.cam[1].exposure_us = 2e7;
    expect_error(&cfg, "exposure out of the camera's range", "camera 0", "exposure 2e+07 us");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.cam[1].gain = 50;
    expect_error(&cfg, "gain out of the camera's range", "camera 1", "gain 50");
    base_config(&cfg, NULL);
    cfg.n_cameras = 2;
    cfg.fps = 5000;
    expect_error(&cfg, "frame rate out of range", "fps 5000", "out of range");
}

int main(void)
{
    if (tu_sanitized()) {
        W = 512;
        H = 216;
        tap_diag("sanitizer build: 5 cameras of %dx%d, not 2040x1080 (same checks)", W, H);
    }
    const char *dir = tu_tmpdir();
    char image[256];
    snprintf(image, sizeof image, "%s/panorama.ppm", dir);
    uint8_t *rgb = tu_panorama(W, N * H, H);
    if (tu_write_ppm(image, rgb, W, N * H) != 0)
        return tap_skip_all("cannot write the test picture to /tmp");
    for (int p = 0; p < N; p++) {
        want[p] = malloc((size_t)W * H);
        tu_mosaic(rgb, W, H, p, PC_CFA_RGGB, want[p]);
    }
    free(rgb);

    test_main_run(image);
    test_slab_order(image);
    test_slow_consumer();
    test_software_trigger();
    skew_run(0, 0); /* the default limit: half a frame period */
    skew_run(6, 3);
    test_bad_config();

    unlink(image);
    rmdir(dir);
    for (int p = 0; p < N; p++)
        free(want[p]);
    return tap_done();
}
