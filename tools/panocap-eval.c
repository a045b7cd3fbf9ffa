/* panocap-eval - the quality figures of the panorama and the virtual
 * cameras (the targets of BENCHMARKS.md's quality section), measured on
 * the simulated stadium (capture/scene.h) seen through a Hugin rig,
 * against Hugin's nona/enblend/pano_trafo and against the scene's ground
 * truth; and the follow mode on the synthetic match. Deterministic, CPU
 * only. eval.h says what each part measures and how.
 *
 *   panocap-eval --rig FILE.pto --out DIR [--scale K] [--only LIST]
 *                [--algos LIST] [--sampler NAME] [--time T] [--seed N] [--threads N]
 *                [--follow-seconds S] [--follow-camera-scale K] [--keep]
 *                [--check]
 *
 * Prints each part's figures and the commands it ran, then a table and a
 * Markdown block; writes DIR/figures.txt (one "name value" a line),
 * DIR/report.md and the pictures and plots it speaks of.
 *
 * Exit status: 0 done (with --check: and every target met), 1 a step
 * failed (the message says which), 2 with --check: a target missed,
 * 64 usage error.
 */
#include "eval.h"
#include "tool_cli.h"

#include "panocap_config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: panocap-eval --rig FILE.pto --out DIR [options]\n"
            "Measures the panorama's and the virtual cameras' quality on the simulated stadium seen\n"
            "through the rig: (a) panocap's remap against Hugin's nona, (b) the stitched panorama\n"
            "from Bayer cameras against the scene (nona + enblend beside it), the blend zones and\n"
            "the colour step at the seams, (c) views against nona and the scene, (d) the follow\n"
            "mode on the match. Prints a table and a Markdown block; writes DIR/figures.txt,\n"
            "DIR/report.md, pictures and DIR/follow.png.\n"
            "\n"
            "  -r, --rig FILE         the rig (.pto): its cameras see the scene\n"
            "  -o, --out DIR          work folder (created if missing)\n"
            "      --scale K          shrink the rig K times (sizes, shifts, crops; default 1: full size)\n"
            "      --only LIST        comma-separated parts: geometry, panorama, views, follow\n"
            "                         (default: all)\n"
            "      --algos LIST       demosaics for (b) and (c), comma-separated (default: all)\n"
            "      --sampler NAME     (b): the panorama's sampler, bilinear or bicubic, as the daemon's\n"
            "                         panorama.sampler (default: bicubic, what its default auto does on a\n"
            "                         GPU; bilinear is the CPU backend's); multiband\n"
            "                         samples bilinear whatever this says. (c)'s views: bicubic\n"
            "  -t, --time T           scene time of the still pictures, seconds (default 12.5)\n"
            "      --seed N           the match (default 1)\n"
            "      --threads N        worker threads (default: one per CPU)\n"
            "      --follow-seconds S     (d): seconds of the match at 50 fps (default 90)\n"
            "      --follow-camera-scale K  (d): the cameras shrunk K times from the .pto's\n"
            "                         (default 4); the activity panorama is 1/8 of the .pto's\n"
            "      --keep             keep nona's and enblend's TIFF files\n"
            "      --check            exit 2 when a target is missed\n"
            "  -h, --help             this text\n"
            "      --version          the version\n");
}

static const char *const part_names[] = {"geometry", "panorama", "views", "follow"};

static int parse_parts(const char *s, unsigned *out)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *out = 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < 4 && strcmp(w, part_names[k]))
            k++;
        if (k == 4)
            return -1;
        *out |= 1u << k;
    }
    return *out ? 0 : -1;
}

static int parse_algos(const char *s, ev_ctx *e, char *bad, size_t badlen)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    e->nalgos = 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        const pc_algo_desc *d = pc_algo_find(w);
        if (!d || e->nalgos >= EV_MAX_ALGOS) {
            snprintf(bad, badlen, "%s", w);
            return -1;
        }
        e->algos[e->nalgos++] = d->id;
    }
    return e->nalgos ? 0 : -1;
}

/* The machine, for the Markdown block: CPU model, cores, threads used. */
static void machine(const ev_ctx *e, char *buf, size_t len)
{
    char model[256] = "unknown CPU", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    if (f)
        fclose(f);
    struct utsname u;
    uname(&u);
    snprintf(buf, len, "%s, %ld CPUs online, %d threads used, %s %s", model, sysconf(_SC_NPROCESSORS_ONLN),
             pc_cpu_threads(e->cpu), u.sysname, u.machine);
}

static const char *verdict(int pass) { return pass < 0 ? "" : pass ? "met" : "MISSED"; }

static int report(ev_ctx *e, const char *cmdline, double secs)
{
    char mach[512], path[1024];
    machine(e, mach, sizeof mach);
    printf("\n== summary (%s)\n", mach);
    printf("%-4s %-62s %-36s %-16s %s\n", "part", "what", "figure", "target", "");
    int missed = 0;
    for (int i = 0; i < e->nrows; i++) {
        const ev_row *r = &e->row[i];
        printf("%-4s %-62s %-36s %-16s %s\n", r->part, r->what, r->figure, r->target, verdict(r->pass));
        missed += r->pass == 0;
    }
    snprintf(path, sizeof path, "%s/figures.txt", e->dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; f && i < e->nfigs; i++)
        fprintf(f, "%s %.6g\n", e->fig[i].name, e->fig[i].v);
    if (!f || fclose(f)) {
        fprintf(stderr, "panocap-eval: %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* the Markdown block for BENCHMARKS.md */
    snprintf(path, sizeof path, "%s/report.md", e->dir);
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "panocap-eval: %s: %s\n", path, strerror(errno));
        return -1;
    }
    FILE *outs[2] = {stdout, f};
    printf("\n== Markdown for BENCHMARKS.md\n\n");
    for (int k = 0; k < 2; k++) {
        FILE *o = outs[k];
        fprintf(o, "### Quality of the panorama and the virtual cameras (panocap-eval)\n\n");
        fprintf(o, "CPU figures (%s), %.0f s. Simulated stadium through `%s`%s, scene time %g s, seed %llu; "
                "the panorama sampled %s.\nReproduce: `%s`\n\n", mach, secs, e->rig_path,
                e->scale > 1 ? " shrunk" : " at full size", e->t, (unsigned long long)e->seed,
                pc_render_sampler_name((pc_render_sampler)e->sampler), cmdline);
        if (e->scale > 1)
            fprintf(o, "Rig shrunk %g times: cameras %dx%d, panorama %dx%d.\n\n", e->scale, e->cam_w, e->cam_h,
                    e->pano_w, e->pano_h);
        fprintf(o, "| part | what | figure | target | |\n|---|---|---|---|---|\n");
        for (int i = 0; i < e->nrows; i++) {
            const ev_row *r = &e->row[i];
            fprintf(o, "| %s | %s | %s | %s | %s |\n", r->part, r->what, r->figure, r->target, verdict(r->pass));
        }
        fprintf(o, "\n");
    }
    if (fclose(f)) {
        fprintf(stderr, "panocap-eval: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return missed;
}

int main(int argc, char **argv)
{
    static const pc_tool tool = {"panocap-eval", usage};
    enum { O_SCALE = 1000, O_ONLY, O_ALGOS, O_SEED, O_THREADS, O_FSECS, O_FSCALE, O_KEEP, O_CHECK, O_SAMPLER };
    static const struct option opts[] = {
        {"rig", required_argument, NULL, 'r'}, {"out", required_argument, NULL, 'o'},
        {"time", required_argument, NULL, 't'}, {"scale", required_argument, NULL, O_SCALE},
        {"only", required_argument, NULL, O_ONLY}, {"algos", required_argument, NULL, O_ALGOS},
        {"sampler", required_argument, NULL, O_SAMPLER},
        {"seed", required_argument, NULL, O_SEED}, {"threads", required_argument, NULL, O_THREADS},
        {"follow-seconds", required_argument, NULL, O_FSECS},
        {"follow-camera-scale", required_argument, NULL, O_FSCALE}, {"keep", no_argument, NULL, O_KEEP},
        {"check", no_argument, NULL, O_CHECK}, PC_TOOL_STD_OPTIONS, {NULL, 0, NULL, 0},
    };
    static ev_ctx e;
    e.scale = 1.0;
    e.t = 12.5;
    e.seed = 1;
    e.parts = EV_PART_GEOMETRY | EV_PART_PANORAMA | EV_PART_VIEWS | EV_PART_FOLLOW;
    e.follow_s = 90;
    e.follow_cam_scale = 4;
    e.sampler = EV_PANORAMA_SAMPLER;
    for (int i = 0; i < PC_ALGO_COUNT; i++)
        e.algos[e.nalgos++] = i;
    const char *rig = NULL, *dir = NULL;
    int check = 0, c, rc;
    long long v;
    char bad[128];
    while ((c = pc_tool_getopt(&tool, argc, argv, "r:o:t:h", opts)) != -1) {
        switch (c) {
        case 'r': rig = optarg; break;
        case 'o': dir = optarg; break;
        case 't':
            if ((rc = pc_tool_double(&tool, "--time", optarg, 0, 1e5, &e.t)))
                return rc;
            break;
        case O_SCALE:
            if ((rc = pc_tool_double(&tool, "--scale", optarg, 1, 32, &e.scale)))
                return rc;
            break;
        case O_ONLY:
            if (parse_parts(optarg, &e.parts))
                return pc_tool_usage_error(&tool, "--only: '%s' is not a list of geometry, panorama, views, follow",
                                           optarg);
            break;
        case O_ALGOS:
            if (parse_algos(optarg, &e, bad, sizeof bad)) {
                char names[512];
                pc_algo_names(names, sizeof names);
                return pc_tool_usage_error(&tool, "--algos: '%s' is not a demosaic (%s)", bad, names);
            }
            break;
        case O_SAMPLER:
            if ((e.sampler = pc_render_sampler_from_name(optarg)) < 0)
                return pc_tool_usage_error(&tool, "--sampler: '%s' is not a sampler (bilinear, bicubic)", optarg);
            break;
        case O_SEED:
            if ((rc = pc_tool_int(&tool, "--seed", optarg, 0, (long long)1 << 62, &v)))
                return rc;
            e.seed = (uint64_t)v;
            break;
        case O_THREADS:
            if ((rc = pc_tool_int(&tool, "--threads", optarg, 0, 256, &v)))
                return rc;
            e.threads = (int)v;
            break;
        case O_FSECS:
            if ((rc = pc_tool_double(&tool, "--follow-seconds", optarg, 4, 600, &e.follow_s)))
                return rc;
            break;
        case O_FSCALE:
            if ((rc = pc_tool_double(&tool, "--follow-camera-scale", optarg, 1, 32, &e.follow_cam_scale)))
                return rc;
            break;
        case O_KEEP: e.keep = 1; break;
        case O_CHECK: check = 1; break;
        case 'h': usage(stdout); return 0;
        default: return pc_tool_std_option(&tool, c, argv);
        }
    }
    if ((rc = pc_tool_no_operands(&tool, argc, argv)))
        return rc;
    if (!rig)
        return pc_tool_usage_error(&tool, "--rig: no rig given (rig/examples/stadium5.pto is the example)");
    if (!dir)
        return pc_tool_usage_error(&tool, "--out: no work folder given");
    snprintf(e.rig_path, sizeof e.rig_path, "%s", rig);
    snprintf(e.dir, sizeof e.dir, "%s", dir);
    char cmdline[2048] = "";
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(cmdline);
        snprintf(cmdline + n, sizeof cmdline - n, "%s%s", i ? " " : "", i ? argv[i] : "panocap-eval");
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int fail = ev_setup(&e);
    if (!fail)
        printf("panocap-eval: %s%s: %d cameras %dx%d, panorama %dx%d; scene time %g s; work folder %s\n", rig,
               e.scale > 1 ? " (shrunk)" : "", e.ncam, e.cam_w, e.cam_h, e.pano_w, e.pano_h, e.t, e.dir);
    if (!fail && (e.parts & EV_PART_GEOMETRY))
        fail = ev_geometry(&e);
    if (!fail && (e.parts & EV_PART_PANORAMA))
        fail = ev_panorama(&e);
    if (!fail && (e.parts & EV_PART_VIEWS))
        fail = ev_views(&e);
    if (!fail && (e.parts & EV_PART_FOLLOW))
        fail = ev_follow(&e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int missed = fail ? 0 : report(&e, cmdline, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
    ev_teardown(&e);
    if (fail || missed < 0)
        return 1;
    return check && missed ? 2 : 0;
}
