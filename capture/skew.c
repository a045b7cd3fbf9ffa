/* skew.c - frame-set skew: how far apart the cameras of one set captured.
 *
 * Each live slab of a set carries its frame's time on the host clock
 * (pc_setint.t: the camera timestamp mapped through that camera's offset,
 * capture.c), so the spread of those times is how far apart the cameras
 * exposed: a camera whose trigger arrives late, or a free-running camera
 * drifting in phase, shows here long before it shows as ghosts in the
 * overlaps. Per set: max - min and each slab's offset from the median
 * (pc_frameset), a histogram for the metrics (pc_set_stats), each camera's
 * last offset (pc_camera_stats), and a warning above capture.max_skew:
 * at once the first time, then at most every SKEW_LOG_NS with the count.
 */
#include "capture_int.h"

#include <math.h>
#include <stdlib.h>

#define SKEW_LOG_NS 10000000000LL /* 10 s between warnings */
/* A camera's clock offset (capture.c) is the lowest (arrival - timestamp)
 * seen: its first frames, one of them delayed by a busy host, may not have
 * found it yet. They are not timed. */
#define SKEW_SETTLE_FRAMES 8

/* Upper bounds, seconds: 50 us .. 50 ms, then +Inf. */
static const double bucket_s[PC_SKEW_BUCKETS - 1] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1,
};

double pc_skew_bucket_s(int i)
{
    if (i < 0 || i >= PC_SKEW_BUCKETS - 1)
        return INFINITY;
    return bucket_s[i];
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void pc_cap_skew_locked(pc_capture *c, pc_setint *s, int64_t now)
{
    pc_frameset *p = &s->pub;
    int64_t t[PC_CAPTURE_MAX_CAMERAS];
    int m = 0;
    uint32_t timed = 0;
    for (int k = 0; k < c->n; k++)
        if (!(p->substituted & (1u << k)) && s->src[k] &&
            c->cam[c->slab_cam[k]].st.frames_received > SKEW_SETTLE_FRAMES) {
            t[m++] = s->t[k];
            timed |= 1u << k;
        }
    p->skew_slabs = m;
    p->skew_ns = 0;
    for (int k = 0; k < c->n; k++)
        p->skew_offset_ns[k] = 0;
    if (m < 2)
        return;
    qsort(t, (size_t)m, sizeof *t, cmp_i64);
    int64_t median = m % 2 ? t[m / 2] : t[m / 2 - 1] + (t[m / 2] - t[m / 2 - 1]) / 2;
    p->skew_ns = t[m - 1] - t[0];
    int worst = -1;
    for (int k = 0; k < c->n; k++) {
        if (!(timed & (1u << k)))
            continue;
        p->skew_offset_ns[k] = s->t[k] - median;
        pc_cam *cam = &c->cam[c->slab_cam[k]];
        cam->st.skew_offset_ns = p->skew_offset_ns[k];
        cam->st.have_skew = 1;
        if (worst < 0 || llabs(p->skew_offset_ns[k]) > llabs(p->skew_offset_ns[worst]))
            worst = k;
    }
    pc_set_stats *ss = &c->sst;
    double sec = (double)p->skew_ns / 1e9;
    int b = 0;
    while (b < PC_SKEW_BUCKETS - 1 && sec > bucket_s[b])
        b++;
    ss->skew_bucket[b]++;
    ss->skew_sets++;
    ss->skew_sum_s += sec;
    ss->skew_last_ns = p->skew_ns;
    if (p->skew_ns > ss->skew_max_ns)
        ss->skew_max_ns = p->skew_ns;
    if (p->skew_ns <= c->max_skew_ns)
        return;
    ss->sets_skewed++;
    if (c->last_skew_log_ns && now - c->last_skew_log_ns < SKEW_LOG_NS)
        return;
    const pc_cam *wc = &c->cam[c->slab_cam[worst]];
    uint64_t since = ss->sets_skewed - c->skewed_at_log;
    pc_log(c->log, PC_LOG_WARNING,
           "capture: frame set %llu: its cameras captured %.2f ms apart, over capture.max_skew %.2f ms; "
           "camera %d (%s) is %+.2f ms from the others' median; %llu set%s over the limit%s. Moving objects "
           "ghost in the overlaps: check the trigger wiring and the cameras' trigger settings, or run PTP "
           "on the cameras",
           (unsigned long long)p->index, p->skew_ns / 1e6, c->max_skew_ns / 1e6, c->slab_cam[worst], wc->name,
           p->skew_offset_ns[worst] / 1e6, (unsigned long long)since, since == 1 ? "" : "s",
           c->last_skew_log_ns ? " since the last warning" : "");
    c->last_skew_log_ns = now;
    c->skewed_at_log = ss->sets_skewed;
}
