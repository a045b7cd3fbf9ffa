/* test_vcams.c - the running daemon's virtual cameras (daemon/vcams.h) on
 * a real configuration and .pto (loaded, validated and checked against the
 * rig as the daemon does): the command grammar (every bad input an ERR
 * naming what is wrong, nothing changed), clamping answers, presets, moves
 * at a speed and over a time reaching their goal, follow on/off around an
 * operator's command, reload, the web page's map and frames, and a thread
 * hammering commands while another steps (run under TSan by
 * tools/run-tests --sanitize: the daemon suite). */
#include "config_testutil.h"
#include "settings_rig.h"
#include "tap.h"
#include "vcams.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FPS 50.0

/* Five 640x360 cameras, 60 degrees wide, 30 degrees apart, 10 down. */
static void write_rig(const char *name, int ncam)
{
    char text[4096];
    size_t o = (size_t)snprintf(text, sizeof text, "p f1 w2000 h400 v170 E0 R0 n\"TIFF_m c:LZW\"\nm i0\n\n");
    for (int i = 0; i < ncam; i++)
        o += (size_t)snprintf(text + o, sizeof text - o,
                              "i w640 h360 f0 v60 Ra0 Rb0 Rc0 Rd0 Re0 Eev0 Er1 Eb1 r0 p-10 y%g TrX0 TrY0 TrZ0 Tpy0 "
                              "Tpp0 j0 a0 b0 c0 d0 e0 g0 t0 Va1 Vb0 Vc0 Vd0 Vx0 Vy0 Vm5 n\"cam%d.png\"\n",
                              -30.0 * (ncam - 1) / 2 + 30.0 * i, i);
    write_conf(name, text);
}

static const char views_fmt[] =
    "capture = { cameras = %d; width = 640; height = 360; };\n"
    "panorama = { rig = \"%s/%s\"; };\n"
    "virtual_cameras = (\n"
    "  { name = \"main\"; width = 640; height = 360; pan = %g; tilt = -10.0; hfov = 30.0; outputs = ( \"null\" );\n"
    "    presets = ( { name = \"left\"; pan = -30.0; tilt = -12.0; hfov = 25.0; },\n"
    "                { name = \"keepzoom\"; pan = 20.0; tilt = -8.0; } )%s; },\n"
    "  { name = \"cam2\"; width = 320; height = 240; pan = 10.0; tilt = -10.0; hfov = 25.0; mode = \"%s\";\n"
    "    outputs = ( \"null\" ); }\n"
    ");\n";

/* Settings and rig as the daemon gets them; 0 on success. */
static int load(pc_settings *s, pc_rig_setup *rs, const char *rig, int ncam, double pan, const char *extra,
                const char *mode2)
{
    char text[4096];
    snprintf(text, sizeof text, views_fmt, ncam, config_tmpdir, rig, pan, extra, mode2);
    const char *path = write_conf("views.conf", text);
    pc_diag d;
    pc_diag_init(&d);
    pc_settings_defaults(s);
    int bad = pc_settings_load(s, path, &d) || pc_settings_validate(s, &d) || pc_settings_check_rig(s, rs, &d) ||
              !rs->have_rig;
    for (int i = 0; bad && i < d.count; i++) {
        char line[1024];
        pc_diag_format(&d.item[i], line, sizeof line);
        tap_diag("%s", line);
    }
    return bad ? -1 : 0;
}

static pl_vcam_status status_of(pl_vcams *v, int i)
{
    pl_vcam_status st[PC_MAX_VCAMS];
    pl_vcams_status(v, st, PC_MAX_VCAMS);
    return st[i];
}

static void steps(pl_vcams *v, double secs)
{
    pc_vcam_pose p[PC_MAX_VCAMS];
    for (int k = 0; k < (int)lround(secs * FPS); k++)
        pl_vcams_step(v, 1.0 / FPS, NULL, p);
}

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

/* ------------------------------------------------------------ grammar */

static void test_grammar(pl_vcams *v)
{
    char ans[2048];
    static const struct {
        const char *cmd, *want;
    } bad[] = {
        {"nope goto 0 0", "unknown virtual camera \"nope\"; there are main, cam2"},
        {"main spin", "unknown command \"spin\" for main; one of goto, move, zoom, preset, save, follow, stop"},
        {"main goto", "goto needs PAN"},
        {"main goto 1", "goto needs TILT"},
        {"main goto a 0", "PAN \"a\" is not a number"},
        {"main goto nan 0", "PAN \"nan\" is not a number"},
        {"main goto inf 0", "PAN \"inf\" is not a number"},
        {"main goto -infinity 0", "is not a number"},
        {"main goto 0x10 0", "PAN \"0x10\" is not a number"},
        {"main goto 1e999 0", "PAN 1e999 is not a finite number"},
        {"main goto 200 0", "PAN 200 is out of range: -180..180 degrees"},
        {"main goto 0 -95", "TILT -95 is out of range: -90..90 degrees"},
        {"main goto 0 0 0.5", "HFOV 0.5 is out of range: 1..179 degrees"},
        {"main goto 0 0 180", "HFOV 180 is out of range"},
        {"main goto 0 0 40 40", "unexpected \"40\"; usage: goto PAN TILT [HFOV] [speed S | time T]"},
        {"main goto 0 0 speed", "speed needs a value (deg/s)"},
        {"main goto 0 0 speed 0", "speed 0 is out of range: 0.1..1000 deg/s"},
        {"main goto 0 0 speed -5", "speed -5 is out of range"},
        {"main goto 0 0 time 0", "time 0 is out of range: 0.05..600 seconds"},
        {"main goto 0 0 time 1e9", "time 1e9 is out of range"},
        {"main goto 0 0 speed 10 time 2", "extra words after speed 10: \"time\""},
        {"main goto 0 0 fast", "HFOV \"fast\" is not a number"},
        {"main goto 0 0 40 fast", "unexpected \"fast\"; usage: goto PAN TILT"},
        {"main move 1", "move needs DTILT"},
        {"main move 400 0", "DPAN 400 is out of range: -360..360"},
        {"main move 0 0 -179", "DHFOV -179 is out of range"},
        {"main zoom", "zoom needs HFOV"},
        {"main zoom 10 20", "unexpected \"20\"; usage: zoom HFOV"},
        {"main preset", "preset needs a preset name"},
        {"main preset nope", "main has no preset \"nope\"; its presets: left, keepzoom"},
        {"main preset left slowly", "unexpected \"slowly\""},
        {"main save", "save needs a preset name"},
        {"main save a/b", "preset name \"a/b\": letters, digits"},
        {"main save "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "letters, digits, '-', '_' and '.', at most 63"},
        {"main save x y", "extra words after save x: \"y\""},
        {"main follow", "follow needs on or off"},
        {"main follow maybe", "follow needs on or off, not \"maybe\""},
        {"main follow on off", "extra words after follow on: \"off\""},
        {"main stop now", "extra words after stop: \"now\""},
        {"main goto 1 2\x01", "control character"},
        {"main goto 1 2 3 speed 4 a b c d e f g", "too many words"},
    };
    const pl_vcam_status before = status_of(v, 0);
    int all = 1;
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        int rc = pl_vcams_command(v, bad[k].cmd, ans, sizeof ans);
        int ok = rc == -1 && !strncmp(ans, "ERR ", 4) && strstr(ans, bad[k].want);
        all &= ok;
        if (!ok)
            tap_diag("\"%s\" -> %d \"%s\" (wanted ERR ... %s)", bad[k].cmd, rc, ans, bad[k].want);
    }
    TAP_CHECK(all, "%zu bad commands: each an ERR naming what is wrong (e.g. \"%s\")", sizeof bad / sizeof *bad,
              "PAN 200 is out of range: -180..180 degrees");
    char longcmd[700];
    memset(longcmd, ' ', sizeof longcmd);
    memcpy(longcmd, "main goto 1 2", 13);
    longcmd[sizeof longcmd - 1] = '\0';
    TAP_CHECK(pl_vcams_command(v, longcmd, ans, sizeof ans) == -1 && strstr(ans, "too long (at most 512 bytes)"),
              "a 699-byte command: %s", ans);
    const pl_vcam_status after = status_of(v, 0);
    TAP_CHECK(!memcmp(&before.goal, &after.goal, sizeof after.goal) && before.commands == after.commands &&
                  /* all but the unknown view's, the control character's and the 13 words' (no view read) */
                  after.refused == before.refused + sizeof bad / sizeof *bad - 3 &&
                  after.npresets == before.npresets,
              "... and nothing changed: goal, commands (%llu), presets; %llu refused counted",
              (unsigned long long)after.commands, (unsigned long long)(after.refused - before.refused));

    /* the good ones: case of verbs, exponent numbers, status */
    TAP_CHECK(pl_vcams_command(v, "main GOTO 2.5e0 -1e1 3e1", ans, sizeof ans) == 0 &&
                  strstr(ans, "OK main goto -> pan 2.5 tilt -10.0 hfov 30.0"),
              "verbs in any case, numbers with exponents: %s", ans);
    TAP_CHECK(pl_vcams_command(v, "  main   ", ans, sizeof ans) == 0 && !strncmp(ans, "OK main 640x360: pan", 20),
              "NAME alone: its status: %s", ans);
    TAP_CHECK(pl_vcams_command(v, "", ans, sizeof ans) == 0 && strstr(ans, "main 640x360") &&
                  strstr(ans, "\ncam2 320x240") && strstr(ans, "\nOK 2 virtual cameras"),
              "nothing: every view, then OK 2 virtual cameras");
}

/* ------------------------------------------------------------ clamping */

static void test_clamp(pl_vcams *v)
{
    char ans[1024];
    pl_vcam_result r;
    pl_vcam_status b = status_of(v, 0);
    int rc = pl_vcams_exec(v, "main goto 120 -10", ans, sizeof ans, &r);
    pl_vcam_status a = status_of(v, 0);
    TAP_CHECK(rc == 0 && r.clamped && strstr(ans, "; clamped: pan 120.0 -> ") &&
                  strstr(ans, "the cameras see nothing further right") && r.goal.pan < 80 && r.goal.pan > 40,
              "goto pan 120 (the rig sees to about 90): %s", ans);
    TAP_CHECK(a.clamped == b.clamped + 1 && a.commands == b.commands + 1 && !strcmp(a.last_clamp, r.why) &&
                  near(a.goal.pan, r.goal.pan, 1e-9),
              "the view goes to the clamped pose; clamped %llu, last clamp \"%s\"", (unsigned long long)a.clamped,
              a.last_clamp);
    rc = pl_vcams_exec(v, "main zoom 150", ans, sizeof ans, &r);
    TAP_CHECK(rc == 0 && r.clamped && strstr(ans, "hfov 150.0 -> ") && strstr(ans, "the widest view the cameras cover"),
              "zoom 150: %s", ans);
    rc = pl_vcams_exec(v, "main zoom 2", ans, sizeof ans, &r);
    TAP_CHECK(rc == 0 && r.clamped && strstr(ans, "hfov 2.0 -> 5.0: the narrowest view allowed"), "zoom 2: %s", ans);
    rc = pl_vcams_exec(v, "main goto -20 -12 30", ans, sizeof ans, &r);
    TAP_CHECK(rc == 0 && !r.clamped && !strstr(ans, "clamped"), "a pose the cameras see is not clamped: %s", ans);
    rc = pl_vcams_exec(v, "main move 0 -70", ans, sizeof ans, &r);
    TAP_CHECK(rc == 0 && r.clamped && strstr(ans, "tilt -82.0 -> ") && strstr(ans, "down") && r.goal.tilt > -40,
              "move down 70 degrees: %s", ans);
    /* just past the edge (0.01 degree): the change in thousandths, with its
     * direction (it answered "clamped: : the cameras see nothing further ") */
    char cmd[160];
    snprintf(cmd, sizeof cmd, "main goto %.6f %.6f %.6f", r.goal.pan, r.goal.tilt - 0.01, r.goal.hfov);
    const double edge = r.goal.tilt;
    rc = pl_vcams_exec(v, cmd, ans, sizeof ans, &r);
    char want[80];
    snprintf(want, sizeof want, "; clamped: tilt %.3f -> %.3f: the cameras see nothing further down", edge - 0.01,
             r.goal.tilt);
    TAP_CHECK(rc == 0 && r.clamped && strstr(ans, want) && !strstr(ans, ": :") && strstr(r.why, "tilt ") == r.why &&
                  near(r.goal.tilt, edge, 0.002),
              "0.01 degree past the edge: the reason in thousandths: %s", ans);
}

/* ------------------------------------------------------------ moves */

/* Steps until view i is still; the time it took to come within 0.05
 * degrees of its goal for good (-1: not still within max_s), the highest
 * pan speed on the way. */
static double arrive(pl_vcams *v, int i, double max_s, double *vmax)
{
    pc_vcam_pose p[PC_MAX_VCAMS], prev = status_of(v, i).pose;
    *vmax = 0;
    double there = -1;
    for (int k = 1; k <= (int)(max_s * FPS); k++) {
        pl_vcams_step(v, 1.0 / FPS, NULL, p);
        double sp = fabs(p[i].pan - prev.pan) * FPS;
        if (sp > *vmax)
            *vmax = sp;
        prev = p[i];
        pl_vcam_status s = status_of(v, i);
        int in = near(s.pose.pan, s.goal.pan, 0.05) && near(s.pose.tilt, s.goal.tilt, 0.05) &&
                 near(s.pose.hfov, s.goal.hfov, 0.05);
        if (!in)
            there = -1;
        else if (there < 0)
            there = k / FPS;
        if (!s.moving)
            return there;
    }
    return -1;
}

static void test_moves(pl_vcams *v)
{
    char ans[1024];
    double vmax;
    pl_vcams_command(v, "main goto 0 -10 30", ans, sizeof ans);
    arrive(v, 0, 10, &vmax);
    TAP_CHECK(pl_vcams_command(v, "main goto 20 -10 speed 10", ans, sizeof ans) == 0 &&
                  strstr(ans, "at 10.0 deg/s"),
              "goto 20 at 10 deg/s: %s", ans);
    double t = arrive(v, 0, 10, &vmax);
    pl_vcam_status s = status_of(v, 0);
    TAP_CHECK(t >= 2.0 && t <= 2.8 && vmax <= 10.0 + 1e-6 && near(s.pose.pan, 20, 0.01),
              "20 degrees at 10 deg/s: there (pan %.3f) after %.2f s, at most %.2f deg/s", s.pose.pan, t, vmax);
    TAP_CHECK(pl_vcams_command(v, "main goto -10 -10 time 3", ans, sizeof ans) == 0 && strstr(ans, "in 3.00 s"),
              "goto -10 in 3 s: %s", ans);
    t = arrive(v, 0, 10, &vmax);
    s = status_of(v, 0);
    TAP_CHECK(t >= 2.8 && t <= 3.6 && near(s.pose.pan, -10, 0.01), "there (pan %.3f) after %.2f s", s.pose.pan, t);
    TAP_CHECK(pl_vcams_command(v, "main goto 0 -10 speed 500", ans, sizeof ans) == 0 &&
                  strstr(ans, "at 30.0 deg/s (its max_speed)"),
              "a speed over the view's max_speed: %s", ans);
    t = arrive(v, 0, 10, &vmax);
    TAP_CHECK(t > 0 && vmax <= 30.0 + 1e-6, "... at most %.2f deg/s", vmax);
    /* a zoom alone: its speed is the hfov's, within max_zoom_speed (20);
     * the answer said "at 30.0 deg/s (its max_speed)" and the zoom ran at
     * max_zoom_speed whatever was asked */
    TAP_CHECK(pl_vcams_command(v, "main zoom 20 speed 1000", ans, sizeof ans) == 0 &&
                  strstr(ans, "at 20.0 deg/s of zoom (its max_zoom_speed)") && !strstr(ans, "max_speed)"),
              "zoom 20 at 1000 deg/s: at max_zoom_speed, and it says so: %s", ans);
    arrive(v, 0, 10, &vmax);
    TAP_CHECK(pl_vcams_command(v, "main zoom 30 speed 5", ans, sizeof ans) == 0 &&
                  strstr(ans, "at 5.0 deg/s of zoom") && !strstr(ans, "(its"),
              "zoom 30 at 5 deg/s: %s", ans);
    t = arrive(v, 0, 10, &vmax);
    s = status_of(v, 0);
    TAP_CHECK(t >= 2.0 && t <= 2.8 && near(s.pose.hfov, 30, 0.01),
              "10 degrees of zoom at 5 deg/s: there (hfov %.3f) after %.2f s (2 s)", s.pose.hfov, t);
    /* a move whose zoom takes longer than its pan: slower, and it says so */
    TAP_CHECK(pl_vcams_command(v, "main goto 2 -10 10 speed 20", ans, sizeof ans) == 0 &&
                  strstr(ans, "at 2.0 deg/s (its zoom takes longer at its max_zoom_speed)"),
              "goto 2 degrees with a 20-degree zoom at 20 deg/s: the zoom's 1 s sets the pace: %s", ans);
    arrive(v, 0, 10, &vmax);
    pl_vcams_command(v, "main goto 0 -10 30", ans, sizeof ans);
    arrive(v, 0, 10, &vmax);

    /* presets: their pose; hfov 0 keeps the zoom */
    TAP_CHECK(pl_vcams_command(v, "main preset left", ans, sizeof ans) == 0 &&
                  strstr(ans, "OK main preset left -> pan -30.0 tilt -12.0 hfov 25.0"),
              "preset left: %s", ans);
    t = arrive(v, 0, 10, &vmax);
    s = status_of(v, 0);
    TAP_CHECK(t > 0 && near(s.pose.pan, -30, 0.01) && near(s.pose.tilt, -12, 0.01) && near(s.pose.hfov, 25, 0.01),
              "it gets there: pan %.2f tilt %.2f hfov %.2f after %.2f s", s.pose.pan, s.pose.tilt, s.pose.hfov, t);
    TAP_CHECK(pl_vcams_command(v, "main preset keepzoom time 1", ans, sizeof ans) == 0 &&
                  strstr(ans, "-> pan 20.0 tilt -8.0 hfov 25.0 in 1.00 s"),
              "a preset without hfov keeps the zoom: %s", ans);
    arrive(v, 0, 10, &vmax);
    TAP_CHECK(pl_vcams_command(v, "main move -5 1 5", ans, sizeof ans) == 0 &&
                  strstr(ans, "-> pan 15.0 tilt -7.0 hfov 30.0"),
              "move is relative to where it goes: %s", ans);
    pl_vcams_command(v, "main move -5 0", ans, sizeof ans);
    TAP_CHECK(strstr(ans, "-> pan 10.0 tilt -7.0 hfov 30.0"), "... twice, before it got there: %s", ans);
    arrive(v, 0, 10, &vmax);
    TAP_CHECK(pl_vcams_command(v, "main save here", ans, sizeof ans) == 0 && strstr(ans, "here: pan 10.0 tilt -7.0") &&
                  strstr(ans, "(new;"),
              "save here: %s", ans);
    pl_vcams_command(v, "main goto 0 -10", ans, sizeof ans);
    arrive(v, 0, 10, &vmax);
    pl_vcams_command(v, "main preset here", ans, sizeof ans);
    arrive(v, 0, 10, &vmax);
    s = status_of(v, 0);
    TAP_CHECK(near(s.pose.pan, 10, 0.01) && near(s.pose.tilt, -7, 0.01) && s.npresets == 3 &&
                  !strcmp(s.presets[2], "here"),
              "preset here goes back there (pan %.2f tilt %.2f); 3 presets", s.pose.pan, s.pose.tilt);
    pl_vcams_command(v, "main save here", ans, sizeof ans);
    TAP_CHECK(strstr(ans, "(replaced;") && status_of(v, 0).npresets == 3, "saving it again replaces it: %s", ans);
    /* stop: where braking ends, no coming back */
    pl_vcams_command(v, "main goto 40 -10", ans, sizeof ans);
    steps(v, 0.68);
    pc_vcam_pose p[PC_MAX_VCAMS];
    pl_vcams_step(v, 1.0 / FPS, NULL, p);
    pl_vcam_status m = status_of(v, 0);
    pl_vcams_step(v, 1.0 / FPS, NULL, p);
    const double vel_at_stop = (p[0].pan - m.pose.pan) * FPS;
    m = status_of(v, 0);
    TAP_CHECK(pl_vcams_command(v, "main stop", ans, sizeof ans) == 0, "stop while moving: %s", ans);
    double back = 0, top = m.pose.pan;
    for (int k = 0; k < 250; k++) {
        pl_vcams_step(v, 1.0 / FPS, NULL, p);
        top = fmax(top, p[0].pan);
        back = fmax(back, top - p[0].pan);
    }
    s = status_of(v, 0);
    /* 0.01 degrees: a sixth of a pixel of a 1920-pixel view 30 degrees wide
     * (a stop at the pose it had would come back 7.5 degrees) */
    TAP_CHECK(!s.moving && back < 0.01 && s.pose.pan > m.pose.pan && s.pose.pan < 40,
              "it stops at pan %.2f (was at %.2f at %.1f deg/s, going to 40), %s, back by %.4f degrees at most",
              s.pose.pan, m.pose.pan, vel_at_stop, s.moving ? "still moving" : "still", back);
}

/* ------------------------------------------------------------ follow */

static void test_follow(pl_vcams *v, const pc_rig *rig)
{
    char ans[1024];
    pc_view_model pano;
    pc_rig_panorama_view(rig, 400, 80, &pano);
    pc_follow_grid *g = malloc(sizeof *g);
    uint32_t *counts = calloc(PC_FOLLOW_MAX_CELLS, sizeof *counts);
    if (!g || !counts || pc_follow_grid_init(g, &pano, 8, 8)) {
        TAP_CHECK(0, "a follow grid");
        free(g);
        free(counts);
        return;
    }
    /* the play: a blob around pan 30, tilt -10 */
    int active = 0;
    for (int k = 0; k < g->gw * g->gh; k++)
        if (fabs(g->pan[k] - 30) < 4 && fabs(g->tilt[k] + 10) < 4) {
            counts[k] = 40;
            active++;
        }
    TAP_CHECK(active > 0, "the activity grid: %dx%d cells, %d active around pan 30", g->gw, g->gh, active);
    TAP_CHECK(pl_vcams_want_activity(v) == 1 && status_of(v, 1).follow, "cam2 starts in follow mode (the config)");
    pl_vcams_command(v, "cam2 follow on", ans, sizeof ans);
    TAP_CHECK(strstr(ans, "OK cam2 follow on (it was already); no activity map yet"), "follow on again: %s", ans);
    pl_vcams_set_grid(v, g);
    pc_vcam_pose p[PC_MAX_VCAMS];
    for (int k = 0; k < 4 * FPS; k++)
        pl_vcams_step(v, 1.0 / FPS, counts, p);
    pl_vcam_status s = status_of(v, 1);
    TAP_CHECK(near(s.pose.pan, 30, 3) && s.activity > 0, "following, cam2 turns to the play: pan %.2f (activity %.0f)",
              s.pose.pan, s.activity);
    TAP_CHECK(pl_vcams_command(v, "cam2 goto 0 -10", ans, sizeof ans) == 0 && strstr(ans, "follow off: an operator"),
              "an operator's goto takes it out of follow mode, and says so: %s", ans);
    for (int k = 0; k < 4 * FPS; k++)
        pl_vcams_step(v, 1.0 / FPS, counts, p);
    s = status_of(v, 1);
    TAP_CHECK(!s.follow && near(s.pose.pan, 0, 0.05) && near(s.goal.pan, 0, 1e-9),
              "the play no longer moves it: pan %.2f, manual", s.pose.pan);
    TAP_CHECK(pl_vcams_command(v, "cam2 follow on", ans, sizeof ans) == 0 && !strstr(ans, "no activity map"),
              "follow on hands it back: %s", ans);
    for (int k = 0; k < 4 * FPS; k++)
        pl_vcams_step(v, 1.0 / FPS, counts, p);
    s = status_of(v, 1);
    TAP_CHECK(s.follow && near(s.pose.pan, 30, 3), "following again: pan %.2f", s.pose.pan);
    pl_vcams_command(v, "cam2 follow off", ans, sizeof ans);
    TAP_CHECK(!status_of(v, 1).follow && pl_vcams_want_activity(v) == 0, "follow off: no view wants the activity map");
    free(g);
    free(counts);
}

/* ------------------------------------------------------------ reload */

static void test_reload(pl_vcams *v, pc_settings *s, pc_rig_setup *rs)
{
    char ans[1024], msg[1024];
    double vmax;
    pl_vcams_command(v, "main goto -20 -10", ans, sizeof ans);
    arrive(v, 0, 10, &vmax);
    /* the same settings again: the operator's pose stays, saved presets go */
    TAP_CHECK(pl_vcams_reload(v, s, NULL, rs->start, msg, sizeof msg) == 0, "reload, nothing changed: %s", msg);
    pl_vcam_status st = status_of(v, 0);
    TAP_CHECK(near(st.goal.pan, -20, 1e-9) && st.npresets == 2, "the operator's pose stays (goal pan %.1f); the saved "
              "preset is gone (%d presets)", st.goal.pan, st.npresets);
    /* a new pose, follow mode and limits */
    pc_settings *s2 = malloc(sizeof *s2);
    pc_rig_setup *rs2 = malloc(sizeof *rs2);
    if (!s2 || !rs2 || load(s2, rs2, "rig5.pto", 5, 15.0, "; max_hfov = 28.0", "manual")) {
        TAP_CHECK(0, "the changed configuration loads");
        free(s2);
        free(rs2);
        return;
    }
    pl_vcams_command(v, "cam2 follow on", ans, sizeof ans);
    TAP_CHECK(pl_vcams_reload(v, s2, NULL, NULL, msg, sizeof msg) == 0 && strstr(msg, "main: 2 presets, to its new pose") &&
                  strstr(msg, "cam2: 0 presets, manual"),
              "reload with main's pan 15 and max_hfov 28, cam2 manual: %s", msg);
    st = status_of(v, 0);
    TAP_CHECK(near(st.goal.pan, 15, 1e-9) && near(st.goal.hfov, 28, 1e-9) && near(st.max_hfov, 28, 1e-9),
              "main goes to pan %.1f at hfov %.1f (its new max_hfov)", st.goal.pan, st.goal.hfov);
    TAP_CHECK(!status_of(v, 1).follow, "cam2's mode changed in the file: manual now");
    pl_vcams_command(v, "main zoom 40", ans, sizeof ans);
    TAP_CHECK(strstr(ans, "hfov 40.0 -> 28.0: the widest view the limits allow"), "the new limit holds: %s", ans);
    /* another rig: three cameras, the views clamped into what they see */
    write_rig("rig3.pto", 3);
    pl_vcams_command(v, "main goto 70 -10 30", ans, sizeof ans);
    TAP_CHECK(pl_vcams_reload(v, s2, NULL, NULL, msg, sizeof msg) == 0, "the same again");
    pc_settings *s3 = malloc(sizeof *s3);
    pc_rig_setup *rs3 = malloc(sizeof *rs3);
    if (s3 && rs3 && load(s3, rs3, "rig3.pto", 3, 15.0, "; max_hfov = 28.0", "manual") == 0) {
        /* the view list is the same; the capture's camera count is not a
         * view's business */
        TAP_CHECK(pl_vcams_reload(v, s3, &rs3->rig, NULL, msg, sizeof msg) == 0 &&
                      strstr(msg, "into the new rig's coverage"),
                  "another rig (3 cameras): %s", msg);
        st = status_of(v, 0);
        TAP_CHECK(st.goal.pan > 30 && st.goal.pan < 50, "main's goal (pan 70) comes inside the narrower rig: pan %.1f",
                  st.goal.pan);
    } else {
        TAP_CHECK(0, "the 3-camera configuration loads");
    }
    /* a changed list of views: refused, nothing changed */
    pc_settings *s4 = malloc(sizeof *s4);
    if (s4) {
        *s4 = *s2;
        snprintf(s4->vcams[1].name, sizeof s4->vcams[1].name, "other");
        pl_vcam_status b = status_of(v, 1);
        int r4 = pl_vcams_reload(v, s4, NULL, NULL, msg, sizeof msg);
        pl_vcam_status a = status_of(v, 1);
        TAP_CHECK(r4 == -1 && strstr(msg, "restart") && !memcmp(&b.goal, &a.goal, sizeof b.goal),
                  "a renamed view: %s", msg);
        s4->vcam_count = 1;
        TAP_CHECK(pl_vcams_reload(v, s4, NULL, NULL, msg, sizeof msg) == -1 && strstr(msg, "1 views now, 2 running"),
                  "a view less: %s", msg);
    }
    free(s2);
    free(rs2);
    free(s3);
    free(rs3);
    free(s4);
}

/* ------------------------------------------------------------ the page's geometry */

static void bbox(const float *xy, int from, int to, float *x0, float *y0, float *x1, float *y1)
{
    *x0 = *y0 = 1e9f;
    *x1 = *y1 = -1e9f;
    for (int k = from; k < to; k++) {
        *x0 = fminf(*x0, xy[2 * k]), *x1 = fmaxf(*x1, xy[2 * k]);
        *y0 = fminf(*y0, xy[2 * k + 1]), *y1 = fmaxf(*y1, xy[2 * k + 1]);
    }
}

/* The direction at picture point (x, y), as the page finds it: the tile
 * that holds it, bilinear between its grid's four points. */
static int map_at(const pl_vcams_map *m, double x, double y, double *pan, double *tilt)
{
    for (int t = 0; t < m->ntiles; t++) {
        if (x < m->tile[t].x || x > m->tile[t].x + m->tile[t].w || y < m->tile[t].y || y > m->tile[t].y + m->tile[t].h)
            continue;
        const int cols = m->tile[t].cols, rows = m->tile[t].rows, f = m->tile[t].first;
        double u = (x - m->tile[t].x) / m->tile[t].w * (cols - 1), w = (y - m->tile[t].y) / m->tile[t].h * (rows - 1);
        int i = (int)fmin(u, cols - 2), j = (int)fmin(w, rows - 2);
        u -= i, w -= j;
        const int k[4] = {f + j * cols + i, f + j * cols + i + 1, f + (j + 1) * cols + i, f + (j + 1) * cols + i + 1};
        const double wt[4] = {(1 - u) * (1 - w), u * (1 - w), (1 - u) * w, u * w};
        *pan = *tilt = 0;
        for (int q = 0; q < 4; q++) {
            if (!m->seen[k[q]])
                return 0;
            *pan += wt[q] * m->pan[k[q]];
            *tilt += wt[q] * m->tilt[k[q]];
        }
        return 1;
    }
    return 0;
}

static void test_map(pl_vcams *v, const pc_rig *rig)
{
    /* the web page's strip: five 128x72 tiles (1/5 of each camera) */
    pl_vcams_picture *pic = calloc(1, sizeof *pic);
    pl_vcams_map *map = calloc(1, sizeof *map);
    char err[256];
    pic->width = 640;
    pic->height = 72;
    pic->ntiles = 5;
    for (int t = 0; t < 5; t++)
        pic->tile[t].cam = t, pic->tile[t].x = 128.0 * t, pic->tile[t].w = 128, pic->tile[t].h = 72;
    int rc = pl_vcams_map_make(v, pic, map, err, sizeof err);
    TAP_CHECK(rc == 0 && map->ntiles == 5 && map->npoints <= PL_VCAMS_MAP_POINTS, "a map of the strip: %d points in %d "
              "tiles of %dx%d", map->npoints, map->ntiles, map->tile[0].cols, map->tile[0].rows);
    double p2 = 99, t2 = 99, p0 = 99, t0 = 99, pr = 99, tr = 99;
    int ok = map_at(map, 320, 36, &p2, &t2) && map_at(map, 64, 36, &p0, &t0) && map_at(map, 352, 36, &pr, &tr);
    /* a quarter of camera 2's half width right: atan(tan(30) / 2) */
    const double quarter = atan(tan(30 * M_PI / 180) / 2) * 180 / M_PI;
    /* within half a picture pixel (0.47 degrees a pixel here) */
    TAP_CHECK(ok && near(p2, 0, 0.01) && near(t2, -10, 0.05) && near(p0, -60, 0.01) && near(pr, quarter, 0.23),
              "interpolated on it, the middle of tile 2 looks at pan %.3f tilt %.3f (camera 2), of tile 0 at pan %.3f, "
              "32 px right of the middle at pan %.2f (%.2f)", p2, t2, p0, pr, quarter);
    /* main, where camera 2 looks, 30 of its 60 degrees wide */
    float xy[2 * 1024];
    int starts[64], nl = 0;
    pc_vcam_pose pose = {0, -10, 30};
    int n = pl_vcams_outline(v, 0, pose, pic, xy, 1024, starts, 64, &nl);
    int in2 = -1;
    for (int l = 0; l < nl; l++)
        if (xy[2 * starts[l]] > 256 && xy[2 * starts[l]] < 384)
            in2 = l;
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    if (in2 >= 0)
        bbox(xy, starts[in2], in2 + 1 < nl ? starts[in2 + 1] : n, &x0, &y0, &x1, &y1);
    const double w = 128 * tan(15 * M_PI / 180) / tan(30 * M_PI / 180), h = 72 * tan(15 * M_PI / 180) / tan(30 * M_PI / 180);
    TAP_CHECK(nl == 3 && in2 >= 0 && near((x0 + x1) / 2, 320, 0.5) && near((y0 + y1) / 2, 36, 0.5) &&
                  near(x1 - x0, w, 0.5) && near(y1 - y0, h, 0.5),
              "its frame: %d polylines (cameras 1, 2, 3 see it); in tile 2 centred at %.1f,%.1f, %.1fx%.1f (%.1fx%.1f)", nl,
              (x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0, w, h);
    /* a rendering: the rig's cylindrical panorama at 500x100 */
    memset(pic, 0, sizeof *pic);
    pic->width = 500;
    pic->height = 100;
    pc_rig_panorama_view(rig, 1000, 200, &pic->view);
    pic->scale = 2;
    rc = pl_vcams_map_make(v, pic, map, err, sizeof err);
    ok = map_at(map, 250, 50, &p2, &t2) && map_at(map, 375, 50, &pr, &tr);
    TAP_CHECK(rc == 0 && map->ntiles == 1 && ok && near(p2, 0, 0.05) && near(pr, 42.5, 0.05),
              "a map of the panorama: %d points, its middle at pan %.3f, 3/4 of its width at %.3f (42.5)",
              map->npoints, p2, pr);
    n = pl_vcams_outline(v, 0, pose, pic, xy, 1024, starts, 64, &nl);
    bbox(xy, 0, n, &x0, &y0, &x1, &y1);
    const double f = 500 / (170 * M_PI / 180); /* pixels per radian of the 170-degree cylinder */
    /* 30 degrees at the middle of its sides, a little more at its
     * corners below the horizon */
    TAP_CHECK(nl == 1 && near((x0 + x1) / 2, 250, 0.6) && x1 - x0 >= 2 * f * 15 * M_PI / 180 &&
                  x1 - x0 <= 2 * f * 17 * M_PI / 180,
              "its frame on the panorama: one polyline centred at x %.1f, %.1f wide (30..34 degrees: %.1f..%.1f)",
              (x0 + x1) / 2, x1 - x0, 2 * f * 15 * M_PI / 180, 2 * f * 17 * M_PI / 180);
    free(pic);
    free(map);
}

/* ------------------------------------------------------------ threads */

/* What the hammering thread sends; change: 1 when an OK one changes the
 * view (counted in its commands). */
static const struct {
    const char *cmd;
    int change;
} hammer_cmds[] = {{"main goto 10 -10", 1}, {"main move 1 0", 1}, {"main move -1 0.5 1", 1}, {"main zoom 25", 1},
                   {"main preset left time 0.5", 1}, {"main goto 300 0", 1}, {"main stop", 1},
                   {"main save t", 1}, {"main bogus", 1}, {"main", 0}, {"", 0}, {"main goto 0 -10 speed 5", 1},
                   {"cam2 goto 5 -10 speed 20", 1}, {"cam2 zoom 999", 1}};
#define NHAMMER (int)(sizeof hammer_cmds / sizeof *hammer_cmds)

typedef struct hammer {
    pl_vcams *v;
    atomic_int stop;
    long ok, err;
    long n_ok[NHAMMER], n_err[NHAMMER];
} hammer;

static void *commands_thread(void *arg)
{
    hammer *h = arg;
    char ans[2048];
    unsigned r = 1;
    while (!atomic_load(&h->stop)) {
        r = r * 1103515245u + 12345u;
        int k = (int)((r >> 16) % NHAMMER);
        if (pl_vcams_command(h->v, hammer_cmds[k].cmd, ans, sizeof ans) == 0)
            h->ok++, h->n_ok[k]++;
        else
            h->err++, h->n_err[k]++;
    }
    return NULL;
}

static void *reader_thread(void *arg)
{
    hammer *h = arg;
    pl_vcam_status st[PC_MAX_VCAMS];
    long n = 0;
    while (!atomic_load(&h->stop)) {
        pl_vcams_status(h->v, st, PC_MAX_VCAMS);
        n += pl_vcams_want_activity(h->v);
    }
    return (void *)n;
}

static void test_threads(pl_vcams *v)
{
    hammer h = {.v = v};
    atomic_init(&h.stop, 0);
    pthread_t a, b;
    pl_vcam_status before = status_of(v, 0), c2_before = status_of(v, 1);
    pthread_create(&a, NULL, commands_thread, &h);
    pthread_create(&b, NULL, reader_thread, &h);
    pc_vcam_pose p[PC_MAX_VCAMS];
    int sets = 0, bad = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do { /* the stage thread, as fast as it goes, for 0.4 s */
        pl_vcams_step(v, 1.0 / FPS, NULL, p);
        bad |= !(isfinite(p[0].pan) && isfinite(p[0].tilt) && p[0].hfov > 0);
        sets++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < 0.4);
    atomic_store(&h.stop, 1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pl_vcam_status after = status_of(v, 0), c2 = status_of(v, 1);
    TAP_CHECK(!bad && h.ok > 100 && h.err > 10, "%d sets stepped while a thread sent %ld commands (%ld refused) and "
              "another read the status", sets, h.ok + h.err, h.err);
    long main_ok = 0, main_err = 0, cam2_ok = 0;
    for (int k = 0; k < NHAMMER; k++) {
        if (!strncmp(hammer_cmds[k].cmd, "main ", 5)) {
            main_ok += hammer_cmds[k].change ? h.n_ok[k] : 0;
            main_err += h.n_err[k];
        } else if (!strncmp(hammer_cmds[k].cmd, "cam2 ", 5)) {
            cam2_ok += h.n_ok[k];
        }
    }
    TAP_CHECK((long)(after.commands - before.commands) == main_ok &&
                  (long)(after.refused - before.refused) == main_err &&
                  (long)(c2.commands - c2_before.commands) == cam2_ok,
              "every one counted once where it went: main %llu commands (%ld answered OK), %llu refused (%ld ERR); "
              "cam2 %llu (%ld)", (unsigned long long)(after.commands - before.commands), main_ok,
              (unsigned long long)(after.refused - before.refused), main_err,
              (unsigned long long)(c2.commands - c2_before.commands), cam2_ok);
}

int main(void)
{
    if (config_tmpdir_make("pc-vcams"))
        return 1;
    write_rig("rig5.pto", 5);
    pc_settings *s = malloc(sizeof *s);
    pc_rig_setup *rs = malloc(sizeof *rs);
    pl_vcams *v = NULL;
    char err[512];
    if (!s || !rs || load(s, rs, "rig5.pto", 5, 0.0, "", "follow")) {
        TAP_CHECK(0, "the configuration loads and fits the rig");
        config_tmpdir_remove();
        return tap_done();
    }
    int rc = pl_vcams_open(&v, s, &rs->rig, rs->start, FPS, err, sizeof err);
    TAP_CHECK(rc == 0 && pl_vcams_count(v) == 2 && pl_vcams_find(v, "cam2") == 1 && pl_vcams_find(v, "x") == -1,
              "two views open on a 5-camera rig%s%s", rc ? ": " : "", rc ? err : "");
    if (rc == 0) {
        pl_vcam_status st = status_of(v, 0);
        TAP_CHECK(near(st.pose.pan, 0, 1e-9) && near(st.pose.hfov, 30, 1e-9) && !st.follow && st.npresets == 2 &&
                      near(st.min_hfov, 5, 1e-9) && st.max_hfov > 50 && st.max_hfov < 120,
                  "main starts where the file says, manual, 2 presets; zoom %.1f..%.1f", st.min_hfov, st.max_hfov);
        test_grammar(v);
        test_clamp(v);
        test_moves(v);
        test_follow(v, &rs->rig);
        test_map(v, &rs->rig);
        test_threads(v);
        test_reload(v, s, rs);
    }
    pl_vcams_close(v);
    free(s);
    free(rs);
    config_tmpdir_remove();
    return tap_done();
}
