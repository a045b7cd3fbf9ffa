/* test_capture_resend.c - the packet resend path over the real GigE Vision
 * protocol, in a private network namespace (simulator.h): one Aravis
 * camera simulator on 127.0.0.1 behind a relay on 127.0.0.2 (gv_relay.h)
 * that drops one image-data packet of every other frame on the way and
 * answers the resend requests, as a camera does (the simulator never
 * resends). Checks: each dropped packet is asked for again, sent again and
 * arrives; its frame comes out complete with the right picture (not
 * repaired); the counters say packets resent = the relay's drops, resend
 * requests = the ones it got, none missing. Then the relay keeps the requests unanswered: every drop is a
 * packet missing (exactly the relay's count), each frame repaired. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "capture_testutil.h"
#include "sanitizer.h"
#include "clock.h"
#include "gv_relay.h"
#include "simulator.h"
#include "tap.h"

#define W 640
#define H 360
#define FPS 25.0
#define EVERY 2       /* a drop in every other frame */
#define DROP_PID 40   /* the packet dropped: mid-frame (170 packets of 1400 bytes) */
#define LIVE 65       /* live sets each run waits for (about 3 s of frames) */
#define WAIT_S 60.0   /* the bound of a wait (tu_bound): only a stuck run reaches it */

static uint8_t *want;

static void sink(void *user, int level, const char *line)
{
    (void)user;
    if (level <= PC_LOG_NOTICE)
        printf("# log <%d> %s\n", level, line);
}
static pc_logger logger = {sink, NULL, PC_LOG_NOTICE};

typedef struct tally {
    int sets, live, repaired, substituted, bad, repeats;
    int64_t last_cnt;
} tally;

/* Consumes sets for secs, or until `live` live sets (0: no such goal). */
static void consume(pc_capture *c, tally *t, double secs, int live)
{
    int64_t t0 = pc_now_ns();
    while (pc_now_ns() - t0 < (int64_t)(secs * 1e9) && (live <= 0 || t->live < live)) {
        pc_frameset *s;
        if (pc_capture_next(c, 200, &s) != 0)
            continue;
        t->sets++;
        if (s->substituted & 1u)
            t->substituted++;
        else if (s->repaired & 1u)
            t->repaired++;
        else {
            t->live++;
            int64_t cnt = pc_fake_counter_read(s->slab[0], s->pitch[0], W, H);
            t->bad += !tu_slab_matches(s->slab[0], s->pitch[0], want, W, H);
            t->repeats += cnt < 0 || cnt <= t->last_cnt;
            t->last_cnt = cnt;
        }
        pc_capture_release(c, s);
    }
}

/* drops on with the relay answering or not until LIVE live sets came, then
 * off until the frames in flight are in (the capture has counted each
 * packet the relay dropped as resent or missing, and a few sets more); the
 * capture's and the relay's counts over it. Waits for those events, never
 * counts what came in a fixed time: a busy machine only takes longer. */
static void run(pc_capture *c, gv_relay *r, int answer, tally *t, pc_camera_stats *d, gv_relay_counts *rd)
{
    pc_camera_stats a, b;
    gv_relay_counts ra, rb;
    tally settle = {.last_cnt = -1};
    consume(c, &settle, 0.5, 0);
    pc_capture_stats(c, &a, 1);
    gv_relay_get_counts(r, &ra);
    gv_relay_set_drops(r, EVERY, DROP_PID, answer);
    memset(t, 0, sizeof *t);
    t->last_cnt = -1;
    consume(c, t, tu_bound(WAIT_S), LIVE);
    gv_relay_set_drops(r, 0, 0, answer);
    gv_relay_get_counts(r, &rb); /* final: the relay drops nothing more */
    int64_t t0 = pc_now_ns();
    do {
        int goal = t->live + 1;
        consume(c, t, 0.5, goal);
        pc_capture_stats(c, &b, 1);
    } while ((b.packets_resent - a.packets_resent) + (b.packets_missing - a.packets_missing) <
                 rb.dropped - ra.dropped &&
             pc_now_ns() - t0 < (int64_t)(tu_bound(WAIT_S) * 1e9));
    for (int k = 0, goal = t->sets + 5; k < 50 && t->sets < goal; k++)
        consume(c, t, 0.2, 0);
    pc_capture_stats(c, &b, 1);
    gv_relay_get_counts(r, &rb);
    *d = b;
    d->packets_missing = b.packets_missing - a.packets_missing;
    d->packets_resent = b.packets_resent - a.packets_resent;
    d->resend_requests = b.resend_requests - a.resend_requests;
    d->packets_after_gap = b.packets_after_gap - a.packets_after_gap;
    d->frames_repaired = b.frames_repaired - a.frames_repaired;
    d->frames_completed = b.frames_completed - a.frames_completed;
    d->underruns = b.underruns - a.underruns;
    rd->dropped = rb.dropped - ra.dropped;
    rd->resend_requests = rb.resend_requests - ra.resend_requests;
    rd->resent = rb.resent - ra.resent;
    rd->not_found = rb.not_found - ra.not_found;
    rd->forwarded = rb.forwarded - ra.forwarded;
    rd->asked_dropped = rb.asked_dropped - ra.asked_dropped;
    rd->asked_late = rb.asked_late - ra.asked_late;
}

int main(int argc, char **argv)
{
    char err[512] = "";
    if (pc_netns_enter(argc, argv, 2, err, sizeof err) != 0)
        return tap_skip_all(err);
    char image[256];
    snprintf(image, sizeof image, "%s/picture.ppm", tu_tmpdir());
    uint8_t *rgb = tu_panorama(W, H, H);
    if (tu_write_ppm(image, rgb, W, H) != 0)
        return tap_skip_all("cannot write the test picture");
    want = malloc((size_t)W * H);
    tu_mosaic(rgb, W, H, 0, PC_CFA_RGGB, want);
    free(rgb);

    pc_sim *sim = NULL;
    gv_relay *relay = NULL;
    int rc = pc_sim_open(&sim, 1, W, H, PC_CFA_RGGB, image, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "a GigE Vision simulator on 127.0.0.1: %s", rc ? err : "ok"))
        return tap_done();
    pc_sim_set_fps_hint(sim, FPS);
    rc = gv_relay_open(&relay, "127.0.0.2", pc_sim_address(sim, 0), err, sizeof err);
    if (!TAP_CHECK(rc == 0, "a relay that answers resend requests on 127.0.0.2: %s", rc ? err : "ok")) {
        pc_sim_close(sim);
        return tap_done();
    }

    pc_capture_config cfg;
    pc_capture_config_init(&cfg);
    cfg.source = PC_SOURCE_GIGE;
    cfg.n_cameras = 1;
    cfg.fps = FPS;
    cfg.pool_sets = 8;
    cfg.deadline_periods = 3;
    cfg.log = &logger;
    cfg.cam[0].address = "127.0.0.2"; /* the camera behind the relay */
    cfg.cam[0].width = W;
    cfg.cam[0].height = H;
    cfg.cam[0].cfa = PC_CFA_RGGB;
    cfg.cam[0].packet_size = 1400;
    pc_capture *c = NULL;
    rc = pc_capture_open(&c, &cfg, err, sizeof err);
    if (rc == 0)
        rc = pc_capture_start(c, err, sizeof err);
    if (TAP_CHECK(rc == 0, "capture from 127.0.0.2, resend on: %s", rc ? err : "ok")) {
        tally t;
        pc_camera_stats d;
        gv_relay_counts rd;
        run(c, relay, 1, &t, &d, &rd);
        tap_diag("relay: %llu dropped, %llu asked again, %llu resent, %llu not found; capture: %llu resent, "
                 "%llu requests, %llu missing, %llu repaired, %llu complete; sets %d: %d live, %d repaired, %d "
                 "substituted", (unsigned long long)rd.dropped, (unsigned long long)rd.resend_requests,
                 (unsigned long long)rd.resent, (unsigned long long)rd.not_found,
                 (unsigned long long)d.packets_resent, (unsigned long long)d.resend_requests,
                 (unsigned long long)d.packets_missing, (unsigned long long)d.frames_repaired,
                 (unsigned long long)d.frames_completed, t.sets, t.live, t.repaired, t.substituted);
        /* every drop is asked for and every request answered; on a loaded
         * machine a packet may also be asked for twice (its copy late) or
         * asked for while it was only late (the relay stalled): each packet
         * asked for then arrives once and counts once as resent */
        TAP_CHECK(rd.dropped >= 20 && rd.asked_dropped == rd.dropped && rd.resent == rd.resend_requests &&
                      rd.not_found == 0,
                  "every dropped packet was asked for again and every request answered (%llu dropped, %llu of "
                  "them asked, %llu requests, %llu resent; %llu packets asked that were only late)",
                  (unsigned long long)rd.dropped, (unsigned long long)rd.asked_dropped,
                  (unsigned long long)rd.resend_requests, (unsigned long long)rd.resent,
                  (unsigned long long)rd.asked_late);
        TAP_CHECK(d.packets_resent == rd.asked_dropped + rd.asked_late && d.resend_requests == rd.resend_requests &&
                      d.packets_missing == 0 && d.frames_repaired == 0,
                  "counted: %llu packets resent = the %llu the relay was asked for, %llu resend requests = the "
                  "%llu it got; 0 missing, 0 frames repaired", (unsigned long long)d.packets_resent,
                  (unsigned long long)(rd.asked_dropped + rd.asked_late), (unsigned long long)d.resend_requests,
                  (unsigned long long)rd.resend_requests);
        TAP_CHECK(t.live >= LIVE && t.repaired == 0 && t.bad == 0 && t.repeats == 0,
                  "the frames with a resent packet are complete: %d live sets, the right picture in each (%d "
                  "wrong), none repaired", t.live, t.bad);

        run(c, relay, 0, &t, &d, &rd);
        tap_diag("unanswered: relay %llu dropped, %llu asked again; capture: %llu missing, %llu resent, %llu "
                 "repaired, Aravis's after-the-gap count %llu", (unsigned long long)rd.dropped,
                 (unsigned long long)rd.resend_requests, (unsigned long long)d.packets_missing,
                 (unsigned long long)d.packets_resent, (unsigned long long)d.frames_repaired,
                 (unsigned long long)d.packets_after_gap);
        TAP_CHECK(rd.dropped >= 20 && d.packets_missing == rd.dropped && d.packets_resent == rd.asked_late &&
                      d.frames_repaired == rd.dropped && rd.asked_dropped == rd.dropped &&
                      d.resend_requests == rd.resend_requests,
                  "requests unanswered: packets missing %llu = the relay's %llu drops, each frame repaired (%llu), "
                  "none resent (but packets that were only late)", (unsigned long long)d.packets_missing, (unsigned long long)rd.dropped,
                  (unsigned long long)d.frames_repaired);
        TAP_CHECK(d.packets_after_gap > d.packets_missing,
                  "Aravis's own count (every packet after a frame's first gap) is not that: %llu",
                  (unsigned long long)d.packets_after_gap);
    }
    pc_capture_close(c);
    gv_relay_close(relay);
    pc_sim_close(sim);
    unlink(image);
    rmdir(tu_tmpdir());
    free(want);
    return tap_done();
}
