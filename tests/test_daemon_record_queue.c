/* test_daemon_record_queue.c - end to end: recordings keep every set when
 * the encoder is slower than the cameras (issue 29), while a live output
 * skips sets and counts them.
 *
 * panocap runs fake cameras (2 x 320x240 at 25 fps, CPU backend, libx264)
 * for a fixed number of frame sets (--frames) with encode.debug_delay_ms:
 * every encoder thread waits 100 ms before each frame, four times the
 * frame period. Outputs: a recording (rec.ts) and the preview to UDP (a
 * live output).
 *   1. recording queue holding every set (encode.record_queue_seconds = 4:
 *      100 sets, more than the run's 40): the recording decodes with all
 *      40 sets, the summary says 0 dropped from it, the preview skipped
 *      sets and counted them (summary line, log line).
 *   2. a queue of 3 sets: sets are dropped from the recording, counted
 *      (summary) and said in the log with the reason; the file decodes
 *      with exactly the sets not dropped.
 *   3. a queue that cannot fit in memory is refused at start (exit 78).
 * No figure depends on the machine's speed: the runs end after a number
 * of sets, whatever time that takes; the delay only makes the encoder
 * slower than the capture (100 ms a frame against 40 ms a set), and the
 * queue of case 1 holds the whole run, however slow the encoder. */
#include "daemon_testutil.h"

#define SETS 40

/* "picture 0 NAME: D sets dropped from its recordings (queue full), S
 * skipped by its live encoders (busy)" -> D; "preview: P sets skipped" -> P */
static long summary_number(const char *sum, const char *before, const char *after)
{
    const char *p = sum ? strstr(sum, before) : NULL;
    if (!p)
        return -1;
    p += strlen(before);
    const char *q = strstr(p, after);
    if (!q)
        return -1;
    while (q > p && q[-1] == ' ')
        q--;
    const char *d = q;
    while (d > p && d[-1] >= '0' && d[-1] <= '9')
        d--;
    return d < q ? strtol(d, NULL, 10) : -1;
}

static int run_case(const char *panocap, const char *dir, const char *queue_s, const char *rec, dt_child *ch,
                    char **sum)
{
    char sock[300];
    snprintf(sock, sizeof sock, "%s/ctl.sock", dir);
    char q[64];
    snprintf(q, sizeof q, "encode.record_queue_seconds=%s", queue_s);
    char frames[16];
    snprintf(frames, sizeof frames, "%d", SETS);
    char *args[] = {(char *)panocap, "--source", "fake", "-n", "2", "-s", "capture.width=320", "-s",
                    "capture.height=240", "-s", "capture.fps=25", "--backend", "cpu", "--algo", "bilinear",
                    "-s", "encode.encoder=libx264", "-s", "encode.codec=h264", "-s", "encode.debug_delay_ms=100",
                    "-s", "encode.preview_scale=2", "-s", "encode.preview_url=udp://127.0.0.1:9", "-s", q,
                    "-o", (char *)rec, "--frames", frames, "--stats-interval", "0", "--control", sock, NULL};
    if (dt_spawn(ch, dir, "panocap", args, NULL))
        return -1;
    int rc = dt_wait(ch, 240);
    if (rc != 0)
        dt_diag_file("panocap stderr", ch->err, 3000);
    *sum = dt_slurp(ch->out);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_record_queue PANOCAP");
    dt_guard_children();
    char dir[256];
    if (!dt_tmpdir(dir, sizeof dir, "recq"))
        return tap_skip_all("mkdtemp failed");
    char rec[300];

    /* 1. a queue that holds the whole run */
    snprintf(rec, sizeof rec, "%s/rec.ts", dir);
    dt_child ch;
    char *sum = NULL;
    int rc = run_case(argv[1], dir, "4", rec, &ch, &sum);
    TAP_CHECK(rc == 0, "case 1 (queue of 4 s = 100 sets, encoder 100 ms a frame): exit %d", rc);
    long in = -1, enc = -1;
    dt_parse_summary(sum, &in, &enc, NULL);
    long recdrop = summary_number(sum, "picture 0 ", "sets dropped from its recordings");
    long prevskip = summary_number(sum, "preview: ", "sets skipped");
    TAP_CHECK(in == SETS && enc == SETS, "case 1: summary %ld sets in, %ld encoded (want %d)", in, enc, SETS);
    TAP_CHECK(recdrop == 0, "case 1: 0 sets dropped from the recording (summary: %ld)", recdrop);
    TAP_CHECK(prevskip >= 1 && prevskip < SETS, "case 1: the live preview skipped %ld sets, counted", prevskip);
    TAP_CHECK(dt_contains(ch.err, "preview: frame set") && dt_contains(ch.err, "skipped: its encoder is still busy"),
              "case 1: the log says the preview skips and why");
    TAP_CHECK(dt_contains(ch.err, "recording queues: cameras 4 s = 100 sets"),
              "case 1: the log states the queue and its memory bound");
    if (recdrop != 0 || prevskip < 1)
        tap_diag("stdout: %s", sum ? sum : "");
    dt_decoded d;
    rc = dt_decode(rec, NULL, NULL, &d);
    TAP_CHECK(rc == 0 && d.errors == 0 && d.frames == SETS && d.width == 320 && d.height == 480,
              "case 1: the recording decodes with every set: %d frames %dx%d, %d errors (want %d)", d.frames,
              d.width, d.height, d.errors, SETS);
    free(sum);

    /* 2. a queue of 3 sets: drops from the recording, counted and said */
    snprintf(rec, sizeof rec, "%s/small.ts", dir);
    rc = run_case(argv[1], dir, "0.1", rec, &ch, &sum);
    TAP_CHECK(rc == 0, "case 2 (queue of 0.1 s = 3 sets): exit %d", rc);
    in = enc = -1;
    dt_parse_summary(sum, &in, &enc, NULL);
    recdrop = summary_number(sum, "picture 0 ", "sets dropped from its recordings");
    TAP_CHECK(in == SETS && recdrop >= 1 && recdrop < SETS, "case 2: %ld of %ld sets dropped from the recording, counted",
              recdrop, in);
    TAP_CHECK(dt_contains(ch.err, "dropped from its recordings: its recording queue is full"),
              "case 2: the log says a set was dropped from the recording and why");
    rc = dt_decode(rec, NULL, NULL, &d);
    TAP_CHECK(rc == 0 && d.errors == 0 && recdrop >= 0 && d.frames == SETS - recdrop,
              "case 2: the recording decodes with the sets not dropped: %d frames (%d - %ld)", d.frames, SETS,
              recdrop);
    if (d.frames != SETS - recdrop)
        tap_diag("stdout: %s", sum ? sum : "");
    free(sum);

    /* 3. a queue that cannot fit: 60 s of 4 x 2040x1080 at 1000 fps
     * (60000 pictures of 13 MB, 796 GB) is refused as a configuration
     * error, naming the key and the bytes (hosts under 1.6 TB) */
    snprintf(rec, sizeof rec, "%s/big.ts", dir);
    char *big[] = {argv[1], "--source", "fake", "-n", "4", "-s", "capture.fps=1000", "--backend", "cpu", "--algo",
                   "bilinear", "-s", "encode.encoder=libx264", "-s", "encode.record_queue_seconds=60", "-o", rec,
                   "--frames", "2", "--stats-interval", "0", "--control", "", NULL};
    rc = dt_spawn(&ch, dir, "panocap", big, NULL) ? -1 : dt_wait(&ch, 240);
    TAP_CHECK(rc == 78 && dt_contains(ch.err, "encode.record_queue_seconds: the recording queues (cameras 60 s = "
                                              "60000 sets (796.3 GB)) would take up to 796.3 GB of host memory"),
              "case 3: a queue of 796 GB is refused: exit %d (want 78), the key and the bytes named", rc);
    if (rc != 78)
        dt_diag_file("panocap stderr", ch.err, 3000);
    dt_rmtree(dir);
    return tap_done();
}
