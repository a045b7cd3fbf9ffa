/* pipeline_skew.c - frame-set skew (capture/skew.c) in the daemon's
 * reports: the Prometheus histogram panocap_frameset_skew_seconds and the
 * per-camera gauge panocap_camera_skew_offset_seconds, the page's JSON
 * (pipeline.skew, cameras[].skew_offset_ms), and a line of the exit
 * summary. */
#include "pipeline_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A Prometheus label value: backslash, quote and newline escaped. */
static void label(const char *s, char *out, size_t n)
{
    size_t o = 0;
    for (; *s && o + 3 < n; s++) {
        if (*s == '\\' || *s == '"' || *s == '\n') {
            out[o++] = '\\';
            out[o++] = *s == '\n' ? 'n' : *s;
        } else {
            out[o++] = *s;
        }
    }
    out[o] = '\0';
}

int pl_skew_prometheus(pipeline *p, char *buf, size_t len)
{
    if (!p->cap)
        return 0;
    pc_set_stats ss;
    pc_camera_stats cs[PC_CAPTURE_MAX_CAMERAS];
    pc_capture_set_stats(p->cap, &ss);
    int n = pc_capture_stats(p->cap, cs, PC_CAPTURE_MAX_CAMERAS);
    if (n > PC_CAPTURE_MAX_CAMERAS)
        n = PC_CAPTURE_MAX_CAMERAS;
    size_t o = strlen(buf);
#define PUT(...) (o += o < len ? (size_t)snprintf(buf + o, len - o, __VA_ARGS__) : 0)
    PUT("# HELP panocap_frameset_skew_seconds How far apart the cameras of each frame set captured: max - min "
        "of their timestamps on the host clock (sets with two or more live slabs).\n"
        "# TYPE panocap_frameset_skew_seconds histogram\n");
    uint64_t cum = 0;
    for (int i = 0; i < PC_SKEW_BUCKETS; i++) {
        cum += ss.skew_bucket[i];
        double le = pc_skew_bucket_s(i);
        if (isinf(le))
            PUT("panocap_frameset_skew_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
        else
            PUT("panocap_frameset_skew_seconds_bucket{le=\"%g\"} %llu\n", le, (unsigned long long)cum);
    }
    PUT("panocap_frameset_skew_seconds_sum %.9f\npanocap_frameset_skew_seconds_count %llu\n", ss.skew_sum_s,
        (unsigned long long)ss.skew_sets);
    PUT("# HELP panocap_frameset_skew_limit_seconds capture.max_skew: a set further apart is counted and "
        "warned about.\n# TYPE panocap_frameset_skew_limit_seconds gauge\n"
        "panocap_frameset_skew_limit_seconds %.6f\n", ss.max_skew_ns / 1e9);
    PUT("# HELP panocap_frameset_skew_over_total Frame sets whose cameras captured further apart than "
        "capture.max_skew.\n# TYPE panocap_frameset_skew_over_total counter\n"
        "panocap_frameset_skew_over_total %llu\n", (unsigned long long)ss.sets_skewed);
    PUT("# HELP panocap_camera_skew_offset_seconds The camera's capture time minus the median of its frame "
        "set's cameras, in the last set that timed it (+: late).\n"
        "# TYPE panocap_camera_skew_offset_seconds gauge\n");
    for (int c = 0; c < n; c++) {
        if (!cs[c].have_skew)
            continue;
        char l1[160], l2[160];
        label(cs[c].name, l1, sizeof l1);
        label(cs[c].serial, l2, sizeof l2);
        PUT("panocap_camera_skew_offset_seconds{camera=\"%d\",name=\"%s\",serial=\"%s\"} %.9f\n", c, l1, l2,
            cs[c].skew_offset_ns / 1e9);
    }
#undef PUT
    return o < len ? 0 : -1;
}

void pl_skew_json(pipeline *p, pc_json *j)
{
    pc_set_stats ss;
    memset(&ss, 0, sizeof ss);
    pc_capture_set_stats(p->cap, &ss);
    pc_json_object(j, "skew");
    pc_json_fixed(j, "limit_ms", ss.max_skew_ns / 1e6, 3);
    pc_json_uint(j, "sets", ss.skew_sets);
    pc_json_uint(j, "sets_over", ss.sets_skewed);
    if (ss.skew_sets) {
        pc_json_fixed(j, "last_ms", ss.skew_last_ns / 1e6, 3);
        pc_json_fixed(j, "mean_ms", ss.skew_sum_s * 1e3 / (double)ss.skew_sets, 3);
        pc_json_fixed(j, "max_ms", ss.skew_max_ns / 1e6, 3);
    } else {
        pc_json_null(j, "last_ms");
        pc_json_null(j, "mean_ms");
        pc_json_null(j, "max_ms");
    }
    pc_json_object_end(j);
}

void pl_skew_summary(const pc_set_stats *ss, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = '\0';
    if (!ss->skew_sets)
        return; /* one camera, or a raw file: nothing timed */
    snprintf(buf, len, "frame-set skew: mean %.3f ms, max %.3f ms over %llu sets; %llu over capture.max_skew "
             "%.3f ms\n", ss->skew_sum_s * 1e3 / (double)ss->skew_sets, ss->skew_max_ns / 1e6,
             (unsigned long long)ss->skew_sets, (unsigned long long)ss->sets_skewed, ss->max_skew_ns / 1e6);
}
