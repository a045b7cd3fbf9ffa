/* panocap-calibrate - calibrates a camera rig from one unstitched frame set
 * with Hugin's command-line tools and writes the .pto that panocap reads.
 *
 *   panocap-calibrate --hfov DEG [options] (IMAGE... | --raw FILE | --daemon SOCKET)
 *
 * The frame set (calibrate_input.c) becomes the pictures WORK/cam<i>.png;
 * then the chain (calibrate_hugin.c), each step a Hugin tool with its own
 * project and log in WORK:
 *   pto_gen -f HFOV            one image per camera, in camera order
 *   pto_lensstack --new-lens   one lens per camera (separate cameras)
 *   cpfind --linearmatch       control points between neighbours
 *   cpclean                    statistical outlier removal
 *   autooptimiser -a -l -s     geometry (or -p with positions only)
 *   vig_optimize               exposure and white balance per camera
 *   pano_modify                cylindrical canvas, optimal size, crop
 * and the result is judged with panocap's own camera model
 * (calibrate_check.c): control points per overlap, their errors in
 * pixels. It is refused -- exit 2, nothing written -- when an overlap has
 * too few points or the errors are over the bounds; otherwise it is read
 * back with pc_rig_load + pc_rig_check_cameras and written.
 *
 * Exit status: 0 written; 1 a step failed (bad input, a tool's error);
 * 2 refused; 64 usage error; 69 hugin-tools missing.
 */
#include "calibrate.h"
#include "debayer.h"
#include "tool_cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EX_REFUSED 2
#define EX_UNAVAILABLE 69
#define DEFAULT_MIN_POINTS 6
#define DEFAULT_MAX_MEAN 1.0
#define DEFAULT_MAX_ERROR 4.0
#define DEFAULT_TIMEOUT 30
#define DEFAULT_SIEVE 3

enum { OPT_AUTO, OPT_POSITIONS };
enum { PHOTO_EXPOSURE, PHOTO_FULL, PHOTO_NONE };

typedef struct cal_opts {
    const char *output, *work;
    const char *daemon, *snap_name, *raw, *algo;
    long set, timeout;
    double hfov;
    const char *rig;
    int lens;        /* pto_gen -p: 0 rectilinear, 2 circular fisheye, 3 full-frame fisheye */
    int pairs;       /* CAL_PAIRS_* */
    int optimise;    /* OPT_* */
    int photometric; /* PHOTO_* */
    const char *ransac;
    long sieve;      /* cpfind --sieve2size: points kept per cell of its 5x5 grid */
    long min_points;
    double max_mean, max_error;
    int quiet;
} cal_opts;

static const pc_tool tool_desc;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: panocap-calibrate --hfov DEG [options] IMAGE...\n"
            "       panocap-calibrate --hfov DEG [options] --raw FILE.pcraw [--set N]\n"
            "       panocap-calibrate --hfov DEG [options] --daemon SOCKET\n"
            "Calibrates a rig of cameras from one unstitched frame set with Hugin's tools\n"
            "(pto_gen, cpfind, cpclean, autooptimiser, vig_optimize, pano_modify; Debian:\n"
            "hugin-tools) and writes the .pto that panocap reads (panorama.rig). Refuses\n"
            "(exit 2, nothing written) a calibration with an overlap short of control\n"
            "points or errors over the bounds.\n"
            "\n"
            "The frame set, one picture per camera in camera order:\n"
            "  IMAGE...               image files (PNG or PPM), all of one size\n"
            "  --raw FILE             a panocap raw recording (.pcraw, --record-raw)\n"
            "  --set N                its frame set N (default 0, the first)\n"
            "  --algo NAME            demosaicing of the raw set (default edge; the names:\n"
            "                         panocap --list-algos)\n"
            "  --daemon SOCKET        the next set of a running panocap, through its control\n"
            "                         socket (daemon.control, e.g. /run/panocap/control.sock)\n"
            "  --snapshot-name NAME   folder the daemon writes into, in daemon.snapshot_dir\n"
            "                         (default calibrate)\n"
            "  --timeout S            wait for the daemon's answer (default %d s)\n"
            "The lenses:\n"
            "  -f, --hfov DEG         horizontal field of view of every camera\n"
            "  --rig FILE.pto         each camera's field of view and lens from a rig file\n"
            "  --lens TYPE            rectilinear (default), fisheye (full frame), circular\n"
            "The chain:\n"
            "  --pairs MODE           which cameras overlap: linear (default: side by side,\n"
            "                         camera i with i+1), ring (and the last with the first),\n"
            "                         all (cpfind --multirow; several rows)\n"
            "  --optimise MODE        auto (default: autooptimiser -a, positions and, where\n"
            "                         the points allow, field of view and distortion) or\n"
            "                         positions (yaw, pitch, roll only: lenses known exactly)\n"
            "  --photometric MODE     exposure (default: each camera's exposure and white\n"
            "                         balance, vig_optimize), full (autooptimiser -m: also\n"
            "                         one response curve and vignetting for all) or none\n"
            "  --ransac MODE          cpfind's model: rpy (default), hom, auto\n"
            "  --points N             control points cpfind keeps per cell of its 5x5 grid\n"
            "                         over a pair (default %d; Hugin's own default is 1)\n"
            "Bounds (a calibration outside them is refused):\n"
            "  --min-points N         control points per required overlap (default %d)\n"
            "  --max-mean-error PX    mean control point error, pixels (default %g)\n"
            "  --max-error PX         largest control point error, pixels (default %g)\n"
            "Output:\n"
            "  -o, --output FILE      the rig file to write (default rig.pto)\n"
            "  -w, --workdir DIR      pictures, each step's project and log (default: the\n"
            "                         output's name without .pto, plus .calibration)\n"
            "  -q, --quiet            no progress lines\n"
            "  --help                 this text\n"
            "  --version              the version\n"
            "Exit status: 0 written, 1 a step failed, 2 refused, 64 usage error,\n"
            "69 hugin-tools missing.\n",
            DEFAULT_TIMEOUT, DEFAULT_SIEVE, DEFAULT_MIN_POINTS, DEFAULT_MAX_MEAN, DEFAULT_MAX_ERROR);
}

static const pc_tool tool_desc = {"panocap-calibrate", usage};

/* "name" as one of names[] (NULL-terminated): its index, or a usage error. */
static int pick(const char *opt, const char *v, const char *const names[], int *out)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char list[160] = "";
    for (int i = 0; names[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    return pc_tool_usage_error(&tool_desc, "%s: unknown value '%s' (allowed: %s)", opt, v, list);
}

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "panocap-calibrate: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

/* The chain's state: the runner, the project each step wrote. */
typedef struct chain {
    cal_runner run;
    const cal_opts *o;
    char err[2048];
    char project[PATH_MAX]; /* the latest step's output, relative to work */
} chain;

/* Runs a step that reads c->project and writes `out` (both in work). */
static int step(chain *c, const char *out, char *const argv[], const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int step(chain *c, const char *out, char *const argv[], const char *fmt, ...)
{
    char log[PATH_MAX];
    c->run.step++;
    snprintf(log, sizeof log, "%.*s.log", (int)(strlen(out) - 4), out);
    if (cal_run(&c->run, log, argv, c->err, sizeof c->err))
        return -1;
    snprintf(c->project, sizeof c->project, "%s", out);
    if (!c->o->quiet) {
        va_list ap;
        printf("  [%d/%d] %s: ", c->run.step, c->run.nsteps, argv[0]);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf(" (%.1f s)\n", c->run.seconds);
        fflush(stdout);
    }
    return 0;
}

static void work_path(const chain *c, const char *name, char *out, size_t n)
{
    if (snprintf(out, n, "%s/%s", c->o->work, name) >= (int)n)
        out[0] = '\0'; /* too long: opening "" fails with a message */
}

static int count_cps(chain *c, const char *name)
{
    char path[PATH_MAX];
    cal_cp *cps;
    int n;
    work_path(c, name, path, sizeof path);
    if (cal_read_cps(path, &cps, &n, c->err, sizeof c->err))
        return -1;
    free(cps);
    return n;
}

/* Prints the pairs that matter: the required ones and any with points. */
static void print_pairs(const cal_report *rep, int with_errors)
{
    printf("overlap  points  mean px   max px  overlap\n");
    for (int k = 0; k < rep->npairs; k++) {
        const cal_pair *p = &rep->pair[k];
        if (!p->required && !p->points)
            continue;
        char ov[16] = "-";
        if (p->overlap >= 0)
            snprintf(ov, sizeof ov, "%.0f%%", 100 * p->overlap);
        if (with_errors && p->points)
            printf("%2d-%-2d   %6d %8.2f %8.2f  %7s%s\n", p->a, p->b, p->points, p->mean, p->max, ov,
                   p->required ? "" : "  (not required)");
        else
            printf("%2d-%-2d   %6d %8s %8s  %7s%s\n", p->a, p->b, p->points, "-", "-", ov,
                   p->required ? "" : "  (not required)");
    }
}

/* The reasons to refuse, one per line into why; 0 when there are none. */
static int judge(const cal_opts *o, const cal_report *rep, int final, char *why, size_t n)
{
    int bad = 0;
    why[0] = '\0';
#define WHY(...) (bad++, snprintf(why + strlen(why), n - strlen(why), __VA_ARGS__))
    for (int k = 0; k < rep->npairs; k++) {
        const cal_pair *p = &rep->pair[k];
        if (p->required && p->points < o->min_points)
            WHY("  overlap %d-%d has %d control point%s (at least %ld needed): cameras %d and %d show no common "
                "detail there (a camera turned away, covered or out of focus, a featureless view, or cameras "
                "that do not overlap: --pairs)\n",
                p->a, p->b, p->points, p->points == 1 ? "" : "s", o->min_points, p->a, p->b);
    }
    if (!rep->connected)
        WHY("  the cameras do not form one group through overlaps with %ld control points or more\n",
            o->min_points);
    if (final && rep->points && rep->mean > o->max_mean)
        WHY("  mean control point error %.2f px is over the bound %.2f px (--max-mean-error)\n", rep->mean,
            o->max_mean);
    if (final && rep->points && rep->max > o->max_error)
        WHY("  largest control point error %.2f px is over the bound %.2f px (--max-error)\n", rep->max,
            o->max_error);
#undef WHY
    return bad;
}

/* Everything after the pictures: the Hugin chain, the checks, the file. */
static int calibrate(const cal_opts *o, const cal_pictures *pics)
{
    chain c = {.run = {.work = o->work, .quiet = o->quiet}, .o = o};
    int n = pics->n;
    double hfov[CAL_MAX_CAMERAS];
    int lens = o->lens, setv = 0;
    for (int i = 0; i < n; i++)
        hfov[i] = o->hfov;
    if (o->rig) {
        pc_rig r;
        char e[1024];
        if (pc_rig_load(o->rig, &r, e, sizeof e) || pc_rig_check_cameras(&r, n, pics->w, pics->h, e, sizeof e))
            return fail(1, "--rig: %s", e);
        lens = r.cam[0].lens;
        for (int i = 0; i < n; i++) {
            hfov[i] = r.cam[i].hfov;
            setv |= hfov[i] != hfov[0];
            if (r.cam[i].lens != lens)
                return fail(1, "--rig %s:%d: camera %d has lens type %d, camera 0 %d: pto_gen takes one type",
                            o->rig, r.cam[i].line, i, r.cam[i].lens, lens);
        }
    }
    c.run.nsteps = 6 + setv + (o->photometric == PHOTO_EXPOSURE ? 2 : o->photometric == PHOTO_FULL) +
                   (o->optimise == OPT_POSITIONS);
    if (!o->quiet)
        printf("panocap-calibrate: %d cameras of %dx%d from %s; work folder %s\n", n, pics->w, pics->h, pics->what,
               o->work);

    /* 1. pto_gen: the cameras' pictures in order, the lens given */
    char fov[32], proj[8], *argv[64];
    snprintf(fov, sizeof fov, "%.10g", hfov[0]);
    snprintf(proj, sizeof proj, "%d", lens);
    char names[CAL_MAX_CAMERAS][16];
    int a = 0;
    argv[a++] = "pto_gen";
    argv[a++] = "-p";
    argv[a++] = proj;
    argv[a++] = "-f";
    argv[a++] = fov;
    argv[a++] = "-o";
    argv[a++] = "1-pto_gen.pto";
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "cam%d.png", i);
        argv[a++] = names[i];
    }
    argv[a] = NULL;
    if (step(&c, "1-pto_gen.pto", argv, "%d pictures, HFOV %s deg, lens %d", n, fov, lens))
        return fail(1, "%s", c.err);

    /* 2. one lens per camera: each its own field of view and distortion */
    char list[CAL_MAX_CAMERAS * 8] = "";
    for (int i = 1; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%si%d", i > 1 ? "," : "", i);
    char *lensstack[] = {"pto_lensstack", "--new-lens", list, "-o", "2-lenses.pto", c.project, NULL};
    if (step(&c, "2-lenses.pto", lensstack, "one lens per camera"))
        return fail(1, "%s", c.err);
    if (setv) {
        char set[CAL_MAX_CAMERAS * 32] = "";
        for (int i = 0; i < n; i++)
            snprintf(set + strlen(set), sizeof set - strlen(set), "%sv%d=%.10g", i ? "," : "", i, hfov[i]);
        char *var[] = {"pto_var", "--set", set, "-o", "2b-hfov.pto", c.project, NULL};
        if (step(&c, "2b-hfov.pto", var, "each camera's field of view from %s", o->rig))
            return fail(1, "%s", c.err);
    }

    /* 3. control points, 4. outliers out */
    char ransac[48], sieve[48];
    snprintf(ransac, sizeof ransac, "--ransacmode=%s", o->ransac);
    snprintf(sieve, sizeof sieve, "--sieve2size=%ld", o->sieve);
    const char *strategy = o->pairs == CAL_PAIRS_LINEAR ? "--linearmatch"
                           : o->pairs == CAL_PAIRS_ALL  ? "--multirow"
                                                        : NULL; /* ring: every pair */
    char *cpfind[10];
    a = 0;
    cpfind[a++] = "cpfind";
    if (strategy)
        cpfind[a++] = (char *)strategy;
    cpfind[a++] = ransac;
    cpfind[a++] = sieve;
    cpfind[a++] = "-o";
    cpfind[a++] = "3-cpfind.pto";
    cpfind[a++] = c.project;
    cpfind[a] = NULL;
    if (step(&c, "3-cpfind.pto", cpfind, "%s", strategy ? strategy : "every pair"))
        return fail(1, "%s", c.err);
    int found = count_cps(&c, "3-cpfind.pto");
    if (found < 0)
        return fail(1, "%s", c.err);
    if (!o->quiet)
        printf("         %d control points\n", found);
    if (found == 0)
        return fail(EX_REFUSED, "refused: cpfind found no control point between any two cameras (log %s/3-cpfind.log):"
                                " do the pictures overlap, and is the lens field of view right?",
                    o->work);
    char *cpclean[] = {"cpclean", "-o", "4-cpclean.pto", c.project, NULL};
    if (step(&c, "4-cpclean.pto", cpclean, "outliers removed"))
        return fail(1, "%s", c.err);

    /* the points alone can already refuse: no optimiser makes up for them */
    char path[PATH_MAX], why[4096];
    cal_cp *cps = NULL;
    int ncps = 0;
    cal_report rep;
    work_path(&c, c.project, path, sizeof path);
    if (cal_read_cps(path, &cps, &ncps, c.err, sizeof c.err))
        return fail(1, "%s", c.err);
    cal_evaluate(NULL, n, cps, ncps, o->pairs, (int)o->min_points, &rep);
    free(cps);
    if (!o->quiet)
        printf("         %d control points kept\n", ncps);
    if (judge(o, &rep, 0, why, sizeof why)) { /* --pairs all: connectivity only, before the rig exists */
        print_pairs(&rep, 0);
        return fail(EX_REFUSED, "refused: the control points cannot tie the rig together:\n%s"
                                "(the points: %s/%s; cpfind's log: %s/3-cpfind.log)",
                    why, o->work, c.project, o->work);
    }

    /* 5. geometry */
    if (o->optimise == OPT_POSITIONS) {
        char vars[CAL_MAX_CAMERAS * 16] = "";
        for (int i = 1; i < n; i++)
            snprintf(vars + strlen(vars), sizeof vars - strlen(vars), "%sy%d,p%d,r%d", i > 1 ? "," : "", i, i, i);
        char *var[] = {"pto_var", "--opt", vars, "-o", "5a-positions.pto", c.project, NULL};
        if (step(&c, "5a-positions.pto", var, "optimise yaw, pitch, roll of cameras 1..%d", n - 1))
            return fail(1, "%s", c.err);
    }
    char *opt[] = {"autooptimiser", o->optimise == OPT_POSITIONS ? "-p" : "-a", "-l", "-s", "-o",
                   "5-geometry.pto", c.project, NULL};
    if (step(&c, "5-geometry.pto", opt, "%s", o->optimise == OPT_POSITIONS ? "positions" : "auto (-a)"))
        return fail(1, "%s", c.err);
    work_path(&c, "5-geometry.log", path, sizeof path);
    double rms = cal_optimiser_rms(path);

    /* 6. photometry: exposure and white balance per camera (vig_optimize,
     * the variables named), or Hugin's whole model with one response and
     * vignetting for the rig (autooptimiser -m chooses its variables) */
    if (o->photometric == PHOTO_EXPOSURE) {
        char vars[CAL_MAX_CAMERAS * 24] = "", scale[16], points[16];
        for (int i = 1; i < n; i++)
            snprintf(vars + strlen(vars), sizeof vars - strlen(vars), "%sEev%d,Er%d,Eb%d", i > 1 ? "," : "", i, i,
                     i);
        char *var[] = {"pto_var", "--opt", vars, "-o", "6a-exposure.pto", c.project, NULL};
        if (step(&c, "6a-exposure.pto", var, "optimise exposure and white balance of cameras 1..%d", n - 1))
            return fail(1, "%s", c.err);
        int s = 0; /* vig_optimize reads the pictures at most about 1024 wide */
        while ((pics->w >> s) > 1024)
            s++;
        snprintf(scale, sizeof scale, "%d", s);
        snprintf(points, sizeof points, "%d", 1000 * n);
        char *vig[] = {"vig_optimize", "-p", points, "-s", scale, "-o", "6-photometric.pto", c.project, NULL};
        if (step(&c, "6-photometric.pto", vig, "exposure and white balance from %s points", points))
            return fail(1, "%s", c.err);
    } else if (o->photometric == PHOTO_FULL) {
        char in[PATH_MAX], out[PATH_MAX];
        work_path(&c, c.project, in, sizeof in);
        work_path(&c, "6a-linked.pto", out, sizeof out);
        if (cal_link_photometry(in, out, c.err, sizeof c.err))
            return fail(1, "linking the cameras' response and vignetting: %s", c.err);
        snprintf(c.project, sizeof c.project, "6a-linked.pto");
        char *photo[] = {"autooptimiser", "-m", "-o", "6-photometric.pto", c.project, NULL};
        if (step(&c, "6-photometric.pto", photo, "exposure, white balance, the rig's response"))
            return fail(1, "%s", c.err);
    }

    /* 7. the panorama: cylindrical, its field of view, size and crop */
    char *modify[] = {"pano_modify", "--projection=1", "--fov=AUTO", "--canvas=AUTO", "--crop=AUTO", "-o",
                      "7-pano_modify.pto", c.project, NULL, NULL};
    if (o->photometric != PHOTO_NONE) { /* the panorama at the cameras' mean exposure */
        modify[7] = "--output-exposure=AUTO";
        modify[8] = c.project;
    }
    if (step(&c, "7-pano_modify.pto", modify, "cylindrical canvas"))
        return fail(1, "%s", c.err);

    /* read back as panocap will, and judge with its camera model */
    pc_rig rig;
    char e[1024];
    work_path(&c, c.project, path, sizeof path);
    if (pc_rig_load(path, &rig, e, sizeof e) || pc_rig_check_cameras(&rig, n, pics->w, pics->h, e, sizeof e))
        return fail(1, "the calibrated project is not a rig panocap reads: %s", e);
    if (cal_read_cps(path, &cps, &ncps, c.err, sizeof c.err))
        return fail(1, "%s", c.err);
    cal_evaluate(&rig, n, cps, ncps, o->pairs, (int)o->min_points, &rep);
    free(cps);
    print_pairs(&rep, 1);
    printf("camera      yaw    pitch     roll     hfov      Eev      Er      Eb\n");
    for (int i = 0; i < n; i++) {
        const pc_rig_camera *k = &rig.cam[i];
        printf("%6d %8.3f %8.3f %8.3f %8.3f %8.3f %7.3f %7.3f\n", i, k->yaw, k->pitch, k->roll, k->hfov, k->eev,
               k->er, k->eb);
    }
    int ow, oh;
    pc_rig_output_size(&rig, &ow, &oh);
    printf("control points: %d; error mean %.2f px, max %.2f px (bounds: mean %.2f, max %.2f; at least %ld per "
           "overlap); autooptimiser rms %.3g\n",
           rep.points, rep.mean, rep.max, o->max_mean, o->max_error, o->min_points, rms);
    if (judge(o, &rep, 1, why, sizeof why))
        return fail(EX_REFUSED, "refused:\n%s(the candidate, not installed: %s)", why, path);

    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.new", o->output);
    if (cal_write_final(path, o->work, tmp, e, sizeof e))
        return fail(1, "writing %s: %s", o->output, e);
    if (pc_rig_load(tmp, &rig, e, sizeof e) || pc_rig_check_cameras(&rig, n, pics->w, pics->h, e, sizeof e)) {
        remove(tmp);
        return fail(1, "the written rig does not read back: %s", e);
    }
    if (rename(tmp, o->output) != 0) {
        remove(tmp);
        return fail(1, "%s: %s", o->output, strerror(errno));
    }
    printf("wrote %s: %d cameras of %dx%d, cylindrical panorama %dx%d (%.1f deg wide)\n", o->output, n, pics->w,
           pics->h, ow, oh, rig.pano.hfov);
    return 0;
}

int main(int argc, char **argv)
{
    cal_opts o = {.output = "rig.pto", .snap_name = "calibrate", .algo = "edge", .timeout = DEFAULT_TIMEOUT,
                  .ransac = "rpy", .sieve = DEFAULT_SIEVE, .min_points = DEFAULT_MIN_POINTS, .max_mean = DEFAULT_MAX_MEAN,
                  .max_error = DEFAULT_MAX_ERROR};
    enum { O_RAW = 0x100, O_SET, O_ALGO, O_DAEMON, O_SNAP, O_TIMEOUT, O_RIG, O_LENS, O_PAIRS, O_OPTIMISE, O_PHOTO,
           O_RANSAC, O_POINTS, O_MINPTS, O_MAXMEAN, O_MAXERR };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},      {"workdir", required_argument, NULL, 'w'},
        {"hfov", required_argument, NULL, 'f'},        {"quiet", no_argument, NULL, 'q'},
        {"raw", required_argument, NULL, O_RAW},       {"set", required_argument, NULL, O_SET},
        {"algo", required_argument, NULL, O_ALGO},     {"daemon", required_argument, NULL, O_DAEMON},
        {"snapshot-name", required_argument, NULL, O_SNAP},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"rig", required_argument, NULL, O_RIG},       {"lens", required_argument, NULL, O_LENS},
        {"pairs", required_argument, NULL, O_PAIRS},   {"optimise", required_argument, NULL, O_OPTIMISE},
        {"optimize", required_argument, NULL, O_OPTIMISE},
        {"photometric", required_argument, NULL, O_PHOTO},
        {"ransac", required_argument, NULL, O_RANSAC}, {"points", required_argument, NULL, O_POINTS},
        {"min-points", required_argument, NULL, O_MINPTS},
        {"max-mean-error", required_argument, NULL, O_MAXMEAN},
        {"max-error", required_argument, NULL, O_MAXERR},
        PC_TOOL_STD_OPTIONS,                           {NULL, 0, NULL, 0}};
    static const char *const lens_names[] = {"rectilinear", "fisheye", "circular", NULL};
    static const int lens_codes[] = {0, 3, 2};
    static const char *const pairs_names[] = {"linear", "ring", "all", NULL};
    static const char *const optimise_names[] = {"auto", "positions", NULL};
    static const char *const photo_names[] = {"exposure", "full", "none", NULL};
    static const char *const ransac_names[] = {"rpy", "hom", "auto", NULL};
    int ch, rc, k;
    long long ll;
    while ((ch = pc_tool_getopt(&tool_desc, argc, argv, "o:w:f:q", longopts)) != -1) {
        switch (ch) {
        case 'o': o.output = optarg; break;
        case 'w': o.work = optarg; break;
        case 'q': o.quiet = 1; break;
        case 'f':
            if ((rc = pc_tool_double(&tool_desc, "--hfov", optarg, 1, 360, &o.hfov)))
                return rc;
            break;
        case O_RAW: o.raw = optarg; break;
        case O_SET:
            if ((rc = pc_tool_int(&tool_desc, "--set", optarg, 0, 1LL << 40, &ll)))
                return rc;
            o.set = (long)ll;
            break;
        case O_ALGO:
            if (!pc_algo_find(optarg)) {
                char names[256];
                pc_algo_names(names, sizeof names);
                return pc_tool_usage_error(&tool_desc, "--algo: unknown algorithm '%s' (available: %s)", optarg,
                                           names);
            }
            o.algo = optarg;
            break;
        case O_DAEMON: o.daemon = optarg; break;
        case O_SNAP: o.snap_name = optarg; break;
        case O_TIMEOUT:
            if ((rc = pc_tool_int(&tool_desc, "--timeout", optarg, 1, 3600, &ll)))
                return rc;
            o.timeout = (long)ll;
            break;
        case O_RIG: o.rig = optarg; break;
        case O_LENS:
            if ((rc = pick("--lens", optarg, lens_names, &k)))
                return rc;
            o.lens = lens_codes[k];
            break;
        case O_PAIRS:
            if ((rc = pick("--pairs", optarg, pairs_names, &o.pairs)))
                return rc;
            break;
        case O_OPTIMISE:
            if ((rc = pick("--optimise", optarg, optimise_names, &o.optimise)))
                return rc;
            break;
        case O_PHOTO:
            if ((rc = pick("--photometric", optarg, photo_names, &o.photometric)))
                return rc;
            break;
        case O_RANSAC:
            if ((rc = pick("--ransac", optarg, ransac_names, &k)))
                return rc;
            o.ransac = ransac_names[k];
            break;
        case O_POINTS:
            if ((rc = pc_tool_int(&tool_desc, "--points", optarg, 1, 1000, &ll)))
                return rc;
            o.sieve = (long)ll;
            break;
        case O_MINPTS:
            if ((rc = pc_tool_int(&tool_desc, "--min-points", optarg, 1, 100000, &ll)))
                return rc;
            o.min_points = (long)ll;
            break;
        case O_MAXMEAN:
            if ((rc = pc_tool_double(&tool_desc, "--max-mean-error", optarg, 0.001, 1000, &o.max_mean)))
                return rc;
            break;
        case O_MAXERR:
            if ((rc = pc_tool_double(&tool_desc, "--max-error", optarg, 0.001, 1000, &o.max_error)))
                return rc;
            break;
        default:
            return pc_tool_std_option(&tool_desc, ch, argv);
        }
    }
    int nimages = argc - optind, sources = (nimages > 0) + !!o.raw + !!o.daemon;
    if (sources == 0)
        return pc_tool_usage_error(&tool_desc, "no frame set given: name the cameras' image files, --raw FILE or "
                                               "--daemon SOCKET");
    if (sources > 1)
        return pc_tool_usage_error(&tool_desc, "one frame set: image files, --raw or --daemon, not several");
    if (!o.hfov && !o.rig)
        return pc_tool_usage_error(&tool_desc, "the lenses' field of view is needed: --hfov DEG (horizontal, "
                                               "degrees) or --rig FILE.pto");
    if (o.hfov && o.rig)
        return pc_tool_usage_error(&tool_desc, "--hfov and --rig both give the field of view: one of them");
    if (o.lens == 0 && o.hfov >= 180)
        return pc_tool_usage_error(&tool_desc, "--hfov %g: a rectilinear lens sees less than 180 degrees "
                                               "(--lens fisheye?)", o.hfov);
    size_t ol = strlen(o.output);
    if (ol < 5 || strcmp(o.output + ol - 4, ".pto") != 0)
        return pc_tool_usage_error(&tool_desc, "--output %s: the rig file's name ends in .pto", o.output);
    char work[PATH_MAX];
    if (!o.work) {
        snprintf(work, sizeof work, "%.*s.calibration", (int)(ol - 4), o.output);
        o.work = work;
    }

    char missing[64];
    if (cal_hugin_check(missing, sizeof missing))
        return fail(EX_UNAVAILABLE, "hugin-tools is not installed (%s is not in PATH). Install it: "
                                    "sudo apt-get install hugin-tools (Debian, Ubuntu), or your system's Hugin "
                                    "package; panocap itself does not need it",
                    missing);
    int made = mkdir(o.work, 0755) == 0;
    if (!made && errno != EEXIST)
        return fail(1, "work folder %s: %s", o.work, strerror(errno));
    struct stat st;
    if (stat(o.work, &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(1, "work folder %s: not a folder", o.work);

    cal_pictures pics;
    char err[2048];
    if (nimages)
        rc = cal_input_images(o.work, argv + optind, nimages, &pics, err, sizeof err);
    else if (o.raw)
        rc = cal_input_raw(o.work, o.raw, o.set, o.algo, &pics, err, sizeof err);
    else
        rc = cal_input_daemon(o.work, o.daemon, o.snap_name, (int)o.timeout, &pics, err, sizeof err);
    if (rc) {
        if (made) { /* leave no empty work folder behind bad input */
            for (int i = 0; i < CAL_MAX_CAMERAS; i++) {
                char p[PATH_MAX + 32];
                snprintf(p, sizeof p, "%s/cam%d.png", o.work, i);
                unlink(p);
            }
            rmdir(o.work);
        }
        return fail(1, "the frame set: %s", err);
    }
    return calibrate(&o, &pics);
}
