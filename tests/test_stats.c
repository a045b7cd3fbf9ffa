/* test_stats.c - latency accounting on known data: per-stage window
 * percentiles (nearest rank), run-wide histogram quantiles within their 3 %
 * resolution, over-budget counting, fps and bitrate, counters from several
 * threads, the status line and summary, and a Prometheus exposition that
 * follows the text format line by line. Several encoded pictures (a
 * panorama and virtual cameras): each its output slots (kept across a
 * change of its outputs), labelled with its name; each output's write
 * latency after its own picture's packet; per picture its encoder,
 * frames, bytes and failures in the summary, the status line and the
 * exposition. */
#include "stats.h"
#include "clock.h"
#include "tap.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000LL
#define US 1000LL

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

/* Checks one exposition line; fills the metric name. Returns 1 if valid. */
static int valid_sample(const char *line, char *name, size_t nlen)
{
    const char *p = line;
    size_t n = 0;
    if (!(isalpha((unsigned char)*p) || *p == '_' || *p == ':'))
        return 0;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == ':') {
        if (n + 1 < nlen)
            name[n++] = *p;
        p++;
    }
    name[n] = '\0';
    if (*p == '{') {
        p++;
        while (*p != '}') {
            if (!(isalpha((unsigned char)*p) || *p == '_'))
                return 0;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            if (*p++ != '=' || *p++ != '"')
                return 0;
            while (*p && *p != '"') {
                if (*p == '\\') {
                    p++;
                    if (*p != '\\' && *p != '"' && *p != 'n')
                        return 0;
                }
                if (!*p)
                    return 0;
                p++;
            }
            if (*p++ != '"')
                return 0;
            if (*p == ',')
                p++;
            else if (*p != '}')
                return 0;
        }
        p++;
    }
    if (*p++ != ' ')
        return 0;
    if (strcmp(p, "NaN") == 0 || strcmp(p, "+Inf") == 0 || strcmp(p, "-Inf") == 0)
        return 1;
    char *end;
    strtod(p, &end);
    return end != p && *end == '\0';
}

/* Validates the whole text; counts samples. */
static int valid_exposition(char *text, int *samples, char *bad, size_t badlen)
{
    char types[128][96];
    int ntypes = 0;
    *samples = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[96];
        if (strncmp(line, "# HELP ", 7) == 0)
            continue;
        if (strncmp(line, "# TYPE ", 7) == 0) {
            char type[32];
            if (sscanf(line + 7, "%95s %31s", name, type) != 2 ||
                (strcmp(type, "counter") && strcmp(type, "gauge") && strcmp(type, "summary"))) {
                snprintf(bad, badlen, "bad TYPE line: %s", line);
                return 0;
            }
            for (int i = 0; i < ntypes; i++)
                if (strcmp(types[i], name) == 0) {
                    snprintf(bad, badlen, "TYPE declared twice: %s", name);
                    return 0;
                }
            if (ntypes < 128)
                snprintf(types[ntypes++], sizeof types[0], "%s", name);
            continue;
        }
        if (!valid_sample(line, name, sizeof name)) {
            snprintf(bad, badlen, "bad sample line: %s", line);
            return 0;
        }
        int typed = 0;
        for (int i = 0; i < ntypes && !typed; i++) {
            size_t l = strlen(types[i]);
            typed = strcmp(types[i], name) == 0 ||
                    (strncmp(types[i], name, l) == 0 && (!strcmp(name + l, "_sum") || !strcmp(name + l, "_count")));
        }
        if (!typed) {
            snprintf(bad, badlen, "sample before its TYPE: %s", line);
            return 0;
        }
        (*samples)++;
    }
    return 1;
}

typedef struct {
    pc_stats *s;
    int n;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    for (int i = 0; i < a->n; i++) {
        pc_stats_frame_in(a->s, i % 10 == 0);
        int64_t now = pc_now_ns();
        pc_frame_times t = {.complete_ns = now - 3 * MS, .start_ns = now - 2 * MS, .nv12_ns = now - 1 * MS,
                            .packet_ns = now, .packet_bytes = 1};
        pc_stats_frame_done(a->s, &t);
    }
    return NULL;
}

/* A panorama with two outputs (slots 0, 1), vcam:main with one (slot 8),
 * vcam:side with one (slot 16) whose encoder failed. */
static void pictures(void)
{
    char err[256] = "";
    pc_stats *s = NULL;
    pc_stats_config cfg = {.fps = 50, .budget_ms = 20, .window_s = 10, .outputs = 3 * 8};
    int rc = pc_stats_open(&s, &cfg, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "pictures: open with 24 output slots (%s)", rc ? err : "ok"))
        return;
    const char *pano[] = {"rec.ts", "udp://239.1.1.1:5000"}, *vmain[] = {"main.ts"}, *vside[] = {"side.ts"};
    pc_stats_set_picture(s, 0, "panorama", 8600, 1300);
    pc_stats_set_picture(s, 1, "vcam:main", 1920, 1080);
    pc_stats_set_picture(s, 2, "vcam:side", 1280, 720);
    pc_stats_set_picture_outputs(s, 0, 0, 2, 8, pano);
    pc_stats_set_picture_outputs(s, 1, 8, 1, 8, vmain);
    pc_stats_set_picture_outputs(s, 2, 16, 1, 8, vside);
    pc_stats_picture_encoders(s, 0, "hevc_nvenc", 1, 1);
    pc_stats_picture_encoders(s, 1, "libx264", 1, 1);
    pc_stats_picture_encoders(s, 2, "", 0, 1);
    pc_stats_picture_failure(s, 2);
    int64_t now = pc_now_ns();
    for (int i = 0; i < 4; i++) {
        pc_stats_frame_in(s, 0);
        pc_stats_picture_packet(s, 0, 1, 3000);
        pc_stats_picture_packet(s, 1, 1, 500);
        pc_stats_frame_encoded(s, 3500);
        pc_stats_output_written(s, 0);
        pc_stats_output_written(s, 1);
        pc_stats_output_written(s, 8);
        /* the panorama's packet at +10 ms, vcam:main's at +4 ms: main.ts
         * wrote 1 ms after its own packet, before the panorama's */
        pc_frame_times t = {.complete_ns = now - 20 * MS, .start_ns = now - 19 * MS, .nv12_ns = now - 18 * MS,
                            .packet_ns = now - 8 * MS, .packet_bytes = 3500};
        t.written_ns[0] = now - 6 * MS;
        t.written_ns[1] = now - 5 * MS;
        t.written_ns[8] = now - 13 * MS;
        t.out_packet_ns[0] = t.out_packet_ns[1] = now - 8 * MS;
        t.out_packet_ns[8] = now - 14 * MS;
        pc_stats_frame_latency(s, &t);
    }
    pc_stats_output_dropped(s, 16, 3);
    pc_stats_snapshot snap;
    pc_stats_snapshot_get(s, &snap);
    TAP_CHECK(snap.pictures == 3 && snap.outputs == 17 && snap.output_written[8] == 4 && snap.output_dropped[16] == 3 &&
                  !strcmp(snap.output_picture[8], "vcam:main") && !strcmp(snap.output_picture[1], "panorama") &&
                  snap.output_name[5][0] == '\0' && snap.picture[1].frames == 4 && snap.picture[1].bytes == 2000 &&
                  snap.picture[2].failures == 1 && snap.picture[2].encoders == 1 && snap.picture[2].encoding == 0,
              "pictures: slots by picture (%d in range), vcam:main 4 frames of 2000 bytes, vcam:side 1 failure",
              snap.outputs);
    TAP_CHECK(near(snap.stage[PC_STAT_WRITE0 + 8].max_ms, 1.0, 1e-6) &&
                  near(snap.stage[PC_STAT_WRITE0 + 1].max_ms, 3.0, 1e-6),
              "pictures: each output's write latency after its own picture's packet (vcam:main %.3f ms, the "
              "panorama's udp %.3f ms)", snap.stage[PC_STAT_WRITE0 + 8].max_ms, snap.stage[PC_STAT_WRITE0 + 1].max_ms);
    char line[512], sum[4096];
    pc_stats_format_line(&snap, line, sizeof line);
    pc_stats_format_summary(&snap, sum, sizeof sum);
    TAP_CHECK(strstr(line, " | 3 pictures (1 not encoding)") != NULL, "pictures: status line: %s", line);
    TAP_CHECK(strstr(sum, "output 8 main.ts: 4 written, 0 dropped, 0 errors (vcam:main)\n") &&
                  strstr(sum, "output 16 side.ts: 0 written, 3 dropped, 0 errors (vcam:side)\n") &&
                  strstr(sum, "picture 1 vcam:main 1920x1080: libx264, 4 frames, 0.00 MB, 1 of 1 encoder encoding, "
                              "0 failures\n") &&
                  strstr(sum, "picture 2 vcam:side 1280x720: no encoder, 0 frames, 0.00 MB, 0 of 1 encoder "
                              "encoding, 1 failure\n") &&
                  strstr(sum, "write[8]") && !strstr(sum, "output 2 ") && !strstr(sum, "write[2]"),
              "pictures: summary lines per output and picture, slots not in use left out:\n%s", sum);
    static char prom[65536];
    int n = pc_stats_format_prometheus(&snap, NULL, 0, prom, sizeof prom);
    int ok = n > 0 &&
             strstr(prom, "panocap_output_packets_written_total{output=\"8\",url=\"main.ts\",picture=\"vcam:main\"} "
                          "4\n") &&
             strstr(prom, "panocap_output_packets_dropped_total{output=\"16\",url=\"side.ts\",picture=\"vcam:side\"} "
                          "3\n") &&
             strstr(prom, "panocap_picture_info{picture=\"vcam:main\",index=\"1\",width=\"1920\",height=\"1080\","
                          "encoder=\"libx264\"} 1\n") &&
             strstr(prom, "panocap_picture_frames_encoded_total{picture=\"panorama\"} 4\n") &&
             strstr(prom, "panocap_picture_encoded_bytes_total{picture=\"vcam:main\"} 2000\n") &&
             strstr(prom, "panocap_picture_encoder_failures_total{picture=\"vcam:side\"} 1\n") &&
             strstr(prom, "panocap_picture_encoders_encoding{picture=\"vcam:side\"} 0\n") &&
             strstr(prom, "panocap_stage_latency_seconds_count{stage=\"write\",output=\"8\",picture=\"vcam:main\"} 4\n") &&
             !strstr(prom, "output=\"3\"");
    int samples = 0;
    char bad[256] = "";
    ok = ok && valid_exposition(prom, &samples, bad, sizeof bad);
    TAP_CHECK(ok, "pictures: the exposition labels outputs and latencies with their picture, a family per picture "
              "figure, valid text format (%d samples)%s%s", samples, bad[0] ? ": " : "", bad);
    /* vcam:main's outputs change: its slots, not the others' */
    const char *vmain2[] = {"main.mkv", "main.ts"};
    pc_stats_set_picture_outputs(s, 1, 8, 2, 8, vmain2);
    pc_stats_snapshot_get(s, &snap);
    TAP_CHECK(snap.output_written[8] == 0 && !strcmp(snap.output_name[9], "main.ts") && snap.output_written[0] == 4 &&
                  !strcmp(snap.output_name[16], "side.ts") && snap.output_dropped[16] == 3,
              "pictures: a picture's new outputs take its own slots; the other pictures' counts stay");
    pc_stats_close(s);
}

int main(void)
{
    char err[256] = "";
    pc_stats *s = NULL;
    pc_stats_config cfg = {.fps = 50, .budget_ms = 20, .window_s = 10, .outputs = 2,
                           .output_names = {"rec.ts", "udp://239.1.1.1:5000"}};
    int rc = pc_stats_open(&s, &cfg, err, sizeof err);
    TAP_CHECK(rc == 0, "open (%s)", rc ? err : "ok");
    pc_stats_set_algo(s, "edge", "auto");

    /* 100 frames: queue 0.1 ms, debayer 1 ms, encode 0.5 ms, total 2+i ms;
     * output 1 written for odd frames only; frames done every 20 ms. */
    int64_t base = pc_now_ns() - 3000 * MS;
    for (int i = 1; i <= 100; i++) {
        pc_stats_frame_in(s, i % 25 == 0 ? 2 : 0);
        pc_frame_times t;
        memset(&t, 0, sizeof t);
        t.complete_ns = base + i * 19 * MS;
        t.start_ns = t.complete_ns + 100 * US;
        t.nv12_ns = t.start_ns + 1 * MS;
        t.packet_ns = t.nv12_ns + 500 * US;
        t.written_ns[0] = t.complete_ns + (2 + i) * MS;
        if (i % 2)
            t.written_ns[1] = t.packet_ns + 100 * US;
        t.packet_bytes = 10000;
        pc_stats_frame_done(s, &t);
    }
    pc_stats_dropped(s, 3);
    pc_stats_output_dropped(s, 1, 50);
    pc_stats_output_error(s, 1);

    pc_stats_snapshot snap;
    pc_stats_snapshot_get(s, &snap);
    const pc_stage_stats *tot = &snap.stage[PC_STAT_TOTAL];
    TAP_CHECK(tot->count == 100 && near(tot->p50_ms, 52, 1e-6) && near(tot->p99_ms, 101, 1e-6) &&
                  near(tot->max_ms, 102, 1e-6) && near(tot->mean_ms, 52.5, 1e-6),
              "total: p50 52, p99 101, max 102, mean 52.5 ms (got %g %g %g %g)", tot->p50_ms, tot->p99_ms,
              tot->max_ms, tot->mean_ms);
    TAP_CHECK(near(snap.stage[PC_STAT_QUEUE].p99_ms, 0.1, 1e-6) && near(snap.stage[PC_STAT_DEBAYER].p50_ms, 1.0, 1e-6) &&
                  near(snap.stage[PC_STAT_ENCODE].max_ms, 0.5, 1e-6),
              "queue 0.1, debayer 1.0, encode 0.5 ms");
    const pc_stage_stats *w0 = &snap.stage[PC_STAT_WRITE0], *w1 = &snap.stage[PC_STAT_WRITE0 + 1];
    TAP_CHECK(w0->count == 100 && near(w0->p50_ms, 50.4, 1e-6) && w1->count == 50 && near(w1->p99_ms, 0.1, 1e-6),
              "per-output write latency: output 0 p50 50.4 ms over 100, output 1 0.1 ms over 50 (got %g, %llu)",
              w0->p50_ms, (unsigned long long)w1->count);
    TAP_CHECK(snap.over_budget == 82 && snap.window_over_budget == 82, "over the 20 ms budget: 82 frames (got %llu)",
              (unsigned long long)snap.over_budget);
    TAP_CHECK(snap.frames_in == 100 && snap.encoded == 100 && snap.dropped == 3 && snap.substituted == 4 &&
                  snap.substituted_slabs == 8,
              "counters: in 100, encoded 100, dropped 3, substituted 4 sets / 8 slabs");
    TAP_CHECK(near(snap.fps, 50.0, 1e-6) && near(snap.bitrate_bps, 4e6, 1), "fps 50, bitrate 4 Mbit/s (got %g, %g)",
              snap.fps, snap.bitrate_bps);
    TAP_CHECK(near(tot->run_p50_ms, 52, 52 * 0.035) && near(tot->run_p99_ms, 101, 101 * 0.035) &&
                  tot->run_max_ms == 102 && tot->run_count == 100 && near(tot->run_sum_s, 5.25, 1e-9),
              "run-wide: histogram p50 %g ~ 52, p99 %g ~ 101 (3%%), max exact 102, sum 5.25 s", tot->run_p50_ms,
              tot->run_p99_ms);
    TAP_CHECK(snap.output_written[0] == 100 && snap.output_written[1] == 50 && snap.output_dropped[1] == 50 &&
                  snap.output_errors[1] == 1,
              "per-output written/dropped/errors");

    /* A frame older than the window counts for the run, not the window. */
    pc_frame_times old;
    memset(&old, 0, sizeof old);
    old.complete_ns = pc_now_ns() - 20000 * MS;
    old.packet_ns = old.complete_ns + 500 * MS;
    pc_stats_frame_done(s, &old);
    pc_stats_snapshot_get(s, &snap);
    TAP_CHECK(snap.stage[PC_STAT_TOTAL].count == 100 && snap.stage[PC_STAT_TOTAL].run_count == 101 &&
                  snap.over_budget == 83 && snap.stage[PC_STAT_TOTAL].run_max_ms == 500,
              "frame outside the 10 s window: run counts it, window does not");

    char line[512];
    int n = pc_stats_format_line(&snap, line, sizeof line);
    TAP_CHECK(n > 0 && strstr(line, "edge/auto") && strstr(line, "50.0 fps") && strstr(line, "over 83") &&
                  strstr(line, "drop 3") && strstr(line, "subst 4") && strstr(line, "total 101.0") &&
                  strstr(line, "4.0 Mbit/s"),
              "status line: %s", line);
    char summary[4096];
    n = pc_stats_format_summary(&snap, summary, sizeof summary);
    TAP_CHECK(n > 0 && strstr(summary, "100 frame sets in, 101 encoded, 3 dropped, 4 substituted (8 slabs), 83 over") &&
                  strstr(summary, "total") && strstr(summary, "write[1]") && strstr(summary, "output 1 udp://"),
              "summary has counters, stages, outputs");
    tap_diag("%s", summary);

    /* Prometheus. */
    pc_camera_metrics cams[2] = {
        {.name = "left \"A\"", .serial = "S\\1", .frames = 1000, .timeouts = 2, .missing_packets = 3,
         .packets_resent = 40, .packets_missing = 7, .resend_requests = 47, .packets_after_gap = 250,
         .substituted = 2, .connected = 1, .last_frame_age_s = 0.02},
        {.name = "right", .serial = NULL, .frames = 990, .connected = 0, .last_frame_age_s = -1},
    };
    size_t cap = 64 * 1024;
    char *prom = malloc(cap);
    n = pc_stats_format_prometheus(&snap, cams, 2, prom, cap);
    TAP_CHECK(n > 0 && (size_t)n == strlen(prom), "prometheus text: %d bytes", n);
    TAP_CHECK(strstr(prom, "\npanocap_frames_over_budget_total 83\n") &&
                  strstr(prom, "\npanocap_stage_latency_seconds{stage=\"total\",quantile=\"0.99\"} 0.101\n") &&
                  strstr(prom, "\npanocap_stage_latency_seconds_count{stage=\"total\"} 101\n") &&
                  strstr(prom, "panocap_stage_latency_seconds{stage=\"write\",output=\"1\",quantile=\"0.5\"} 0.0001\n") &&
                  strstr(prom, "panocap_output_packets_dropped_total{output=\"1\",url=\"udp://239.1.1.1:5000\"} 50\n") &&
                  strstr(prom, "panocap_camera_failed_buffers_total{camera=\"0\",name=\"left \\\"A\\\"\",serial=\"S\\\\1\",reason=\"missing_packets\"} 3\n") &&
                  strstr(prom, "panocap_camera_connected{camera=\"1\",name=\"right\",serial=\"\"} 0\n") &&
                  strstr(prom, "panocap_camera_packets_missing_total{camera=\"0\",name=\"left \\\"A\\\"\",serial=\"S\\\\1\"} 7\n") &&
                  strstr(prom, "panocap_camera_packets_resent_total{camera=\"0\",name=\"left \\\"A\\\"\",serial=\"S\\\\1\"} 40\n") &&
                  strstr(prom, "panocap_camera_packet_resend_requests_total{camera=\"0\",name=\"left \\\"A\\\"\",serial=\"S\\\\1\"} 47\n") &&
                  strstr(prom, "panocap_camera_packets_after_gap_total{camera=\"0\",name=\"left \\\"A\\\"\",serial=\"S\\\\1\"} 250\n") &&
                  strstr(prom, "panocap_algo_info{algo=\"edge\",variant=\"auto\"} 1\n") &&
                  strstr(prom, "# TYPE panocap_stage_latency_seconds summary\n") &&
                  strstr(prom, "panocap_encoder_bytes_per_second 500000\n") &&
                  strstr(prom, "panocap_build_info{version=\"") && !strstr(prom, "NaN") &&
                  !strstr(prom, "panocap_camera_last_frame_age_seconds{camera=\"1\""),
              "prometheus: expected samples with escaped labels (packets missing, resent, resend requests and Aravis's "
              "after-gap count apart), build_info, no NaN (no sample instead)");
    char bad[512] = "";
    int samples = 0;
    int valid = valid_exposition(prom, &samples, bad, sizeof bad);
    TAP_CHECK(valid && samples > 60, "prometheus: every line is a valid HELP/TYPE/sample line, %d samples %s", samples,
              bad);
    char tiny[100];
    TAP_CHECK(pc_stats_format_prometheus(&snap, cams, 2, tiny, sizeof tiny) == -1, "too small a buffer: -1");
    free(prom);

    /* Budget edge: exactly on budget is not over. */
    pc_stats *s2 = NULL;
    pc_stats_config c2 = {.fps = 50, .budget_ms = 0, .window_s = 1, .outputs = 0};
    pc_stats_open(&s2, &c2, err, sizeof err);
    int64_t now = pc_now_ns();
    pc_frame_times a = {.complete_ns = now - 20 * MS, .nv12_ns = now};
    pc_frame_times b = {.complete_ns = now - 20 * MS - 1, .nv12_ns = now};
    pc_stats_frame_done(s2, &a);
    pc_stats_frame_done(s2, &b);
    pc_stats_snapshot_get(s2, &snap);
    TAP_CHECK(snap.budget_ms == 20 && snap.over_budget == 1 && snap.encoded == 0,
              "budget 0 = one frame period (20 ms); 20 ms is within, 20 ms + 1 ns is over; no packet = not encoded");
    pc_stats_close(s2);

    /* The same frame recorded in parts (encoded, written, latency at the end)
     * gives what frame_done gives; counts come before the latency. */
    pc_stats *s4 = NULL, *s5 = NULL;
    pc_stats_config c4 = {.fps = 50, .budget_ms = 20, .window_s = 10, .outputs = 2};
    pc_stats_open(&s4, &c4, err, sizeof err);
    pc_stats_open(&s5, &c4, err, sizeof err);
    now = pc_now_ns();
    pc_frame_times f = {.complete_ns = now - 30 * MS, .start_ns = now - 29 * MS, .nv12_ns = now - 25 * MS,
                        .packet_ns = now - 20 * MS, .written_ns = {now - 5 * MS, 0}, .packet_bytes = 777};
    pc_stats_frame_done(s4, &f);
    pc_stats_frame_encoded(s5, 777);
    pc_stats_output_written(s5, 0);
    pc_stats_output_written(s5, 7); /* no such output: ignored */
    pc_stats_snapshot snap5;
    pc_stats_snapshot_get(s5, &snap5);
    int counted_early = snap5.encoded == 1 && snap5.bytes_total == 777 && snap5.output_written[0] == 1 &&
                        snap5.stage[PC_STAT_TOTAL].run_count == 0;
    pc_stats_frame_latency(s5, &f);
    pc_stats_snapshot_get(s4, &snap);
    pc_stats_snapshot_get(s5, &snap5);
    TAP_CHECK(counted_early && snap5.encoded == snap.encoded && snap5.bytes_total == snap.bytes_total &&
                  snap5.output_written[0] == snap.output_written[0] && snap5.output_written[1] == 0 &&
                  snap5.over_budget == 1 && snap.over_budget == 1 &&
                  snap5.stage[PC_STAT_TOTAL].run_max_ms == snap.stage[PC_STAT_TOTAL].run_max_ms &&
                  snap5.stage[PC_STAT_WRITE0].count == 1 && near(snap5.bitrate_bps, snap.bitrate_bps, 1e-9),
              "in parts (encoded, written, latency) = frame_done: encoded %llu, written %llu, total %g ms",
              (unsigned long long)snap5.encoded, (unsigned long long)snap5.output_written[0],
              snap5.stage[PC_STAT_TOTAL].run_max_ms);
    pc_stats_close(s4);
    pc_stats_close(s5);

    /* Several threads recording at once. */
    pc_stats *s3 = NULL;
    pc_stats_config c3 = {.fps = 1000, .budget_ms = 20, .window_s = 1, .outputs = 0};
    pc_stats_open(&s3, &c3, err, sizeof err);
    pthread_t th[4];
    worker_arg wa = {s3, 20000};
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, worker, &wa);
    for (int i = 0; i < 4; i++) {
        if (i == 1)
            pc_stats_snapshot_get(s3, &snap); /* concurrent reader */
        pthread_join(th[i], NULL);
    }
    pc_stats_snapshot_get(s3, &snap);
    TAP_CHECK(snap.frames_in == 80000 && snap.encoded == 80000 && snap.substituted == 8000 && snap.bytes_total == 80000 &&
                  snap.stage[PC_STAT_TOTAL].run_count == 80000 && near(snap.stage[PC_STAT_DEBAYER].p50_ms, 1.0, 1e-6),
              "4 threads x 20000 frames: no lost updates");
    pc_stats_close(s3);
    pc_stats_close(s);

    TAP_CHECK(pc_stats_open(&s, &(pc_stats_config){.fps = 0, .window_s = 10}, err, sizeof err) < 0 && strstr(err, "fps"),
              "bad configuration refused: %s", err);
    pictures();
    return tap_done();
}
