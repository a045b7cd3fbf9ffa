/* panocap-capture-bench - how much the capture library costs and how fast
 * it goes: frame sets per second and CPU time per frame set for Aravis's
 * in-process fake cameras, for GigE Vision simulators over the real
 * protocol (in a private network namespace), and for raw-file replay; and,
 * with CUDA, what stacking the slabs costs (per-slab DMA into the device
 * panorama vs one copy of a contiguous pinned panorama vs a CPU copy).
 *
 * CPU time is getrusage(RUSAGE_SELF) user+sys over the measured window:
 * every thread of the process -- Aravis's stream threads, the capture
 * workers and supervisor, this program's consumer (which only takes and
 * releases sets), and for the fake cameras and simulators also their own
 * frame generation. The fake cameras' and simulators' drawing time is
 * measured separately (thread CPU clock around their fill callbacks) and
 * subtracted; for the simulators, sending the packets (and the kernel's
 * loopback delivery, which runs in the sender's context) cannot be
 * separated and stays in the figure.
 *
 *   panocap-capture-bench [--source fake|sim|file|all] [--seconds S]
 *       [--fps F] [--cameras N] [--width W] [--height H] [--packet-size B]
 *       [--image FILE] [--file RAW] [--record RAW] [--dma] [--markdown]
 *       [--make-raw RAW [--sets N]] [--verbose] [--scene RIG.pto] [--help] [--version]
 *
 * Exit status: 0, 1 on a failure, 64 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "clock.h"
#include "rig.h"
#include "tool_cli.h"
#include "panocap_config.h"
#if PANOCAP_HAVE_ARAVIS
#include "simulator.h"
#endif
#ifdef PC_BENCH_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef PC_BENCH_CUDA
static void *pinned_alloc(size_t n, void *u)
{
    void *p = NULL;
    return cudaHostAlloc(&p, n, cudaHostAllocDefault) == cudaSuccess ? p : NULL;
}
static void pinned_free(void *p, void *u) { cudaFreeHost(p); }
#endif

typedef struct opts {
    const char *source, *image, *file, *record, *make_raw, *scene_rig;
    int make_sets;
    double seconds, fps;
    int cameras, width, height, packet_size, dma, markdown;
} opts;

typedef struct result {
    char what[64];
    int ok;
    double sets_per_s, requested_fps;
    double cpu_ms_per_set, gen_ms_per_set, capture_ms_per_set;
    double capture_core_pct_per_cam, total_core_pct;
    double complete_pct, spread_ms_median, spread_ms_max;
    double nonsim_ms_per_set, nonsim_core_pct_per_cam; /* threads other than the simulators' */
    unsigned long long sets, dropped, substituted_slabs;
    char note[160];
} result;

static result results[8];
static int nresults;

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int verbose;
static void quiet_sink(void *u, int level, const char *line)
{
    if (level <= (verbose ? PC_LOG_DEBUG : PC_LOG_WARNING))
        fprintf(stderr, "  [capture] %s\n", line);
}
static const pc_logger quiet = {quiet_sink, NULL, PC_LOG_DEBUG};

/* CPU seconds of this process's threads whose name starts with prefix
 * (NULL: all), from /proc/self/task/N/schedstat (ns on the CPU). */
#include <dirent.h>
static double threads_cpu_s(const char *prefix, int invert)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    struct dirent *e;
    double sum = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(comm, sizeof comm, f))
                comm[0] = 0;
            fclose(f);
        }
        int match = !prefix || strncmp(comm, prefix, strlen(prefix)) == 0;
        if (match == invert)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        f = fopen(path, "r");
        unsigned long long ns = 0;
        if (f) {
            if (fscanf(f, "%llu", &ns) != 1)
                ns = 0;
            fclose(f);
        }
        sum += ns / 1e9;
    }
    closedir(d);
    return sum;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* generation CPU (fake cameras: per-camera stats; simulators: callback) */
typedef double (*gen_fn)(pc_capture *c, void *user);

#if PANOCAP_HAVE_ARAVIS
static double fake_gen(pc_capture *c, void *user)
{
    pc_camera_stats st[PC_CAPTURE_MAX_CAMERAS];
    int n = pc_capture_stats(c, st, PC_CAPTURE_MAX_CAMERAS);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += st[i].fake_fill_cpu_ns / 1e9;
    return s;
}
#endif

/* Runs a started capture: warm-up, then the measured window. */
static void measure(pc_capture *c, const opts *o, const char *what, gen_fn gen, void *gen_user,
                    const char *note, pc_raw_writer *rec)
{
    result *r = &results[nresults++];
    memset(r, 0, sizeof *r);
    snprintf(r->what, sizeof r->what, "%s", what);
    snprintf(r->note, sizeof r->note, "%s", note ? note : "");
    r->requested_fps = o->fps;
    pc_frameset *s;
    int64_t warm_end = pc_now_ns() + 1500000000LL;
    while (pc_now_ns() < warm_end)
        if (pc_capture_next(c, 200, &s) == 0)
            pc_capture_release(c, s);
    pc_set_stats ss0, ss1;
    pc_capture_set_stats(c, &ss0);
    double cpu0 = cpu_s(), gen0 = gen ? gen(c, gen_user) : 0;
    double nonsim0 = threads_cpu_s("pc-sim", 1);
    int64_t t0 = pc_now_ns(), end = t0 + (int64_t)(o->seconds * 1e9);
    size_t cap = (size_t)(o->seconds * (o->fps > 0 ? o->fps : 100) * 2 + 1000);
    double *spread = malloc(cap * sizeof *spread);
    size_t ns = 0;
    unsigned long long complete = 0, subst = 0;
    char err[256];
    int rc = 0;
    while (pc_now_ns() < end) {
        rc = pc_capture_next(c, 500, &s);
        if (rc == PC_CAPTURE_EOF)
            break;
        if (rc != 0)
            continue;
        if (ns < cap)
            spread[ns++] = (s->t_complete_ns - s->t_first_ns) / 1e6;
        complete += s->substituted == 0;
        subst += (unsigned long long)__builtin_popcount(s->substituted);
        if (rec && pc_raw_writer_write(rec, s, err, sizeof err) != 0) {
            fprintf(stderr, "record: %s\n", err);
            rec = NULL;
        }
        pc_capture_release(c, s);
    }
    double secs = (pc_now_ns() - t0) / 1e9;
    double cpu = cpu_s() - cpu0, g = gen ? gen(c, gen_user) - gen0 : 0;
    double nonsim = threads_cpu_s("pc-sim", 1) - nonsim0;
    pc_capture_set_stats(c, &ss1);
    unsigned long long sets = ss1.sets_delivered - ss0.sets_delivered;
    int n = pc_capture_n_cameras(c);
    r->ok = sets > 0;
    r->sets = sets;
    r->dropped = ss1.sets_dropped - ss0.sets_dropped;
    r->substituted_slabs = subst;
    r->sets_per_s = sets / secs;
    r->cpu_ms_per_set = sets ? cpu * 1e3 / sets : 0;
    r->gen_ms_per_set = sets ? g * 1e3 / sets : 0;
    r->capture_ms_per_set = r->cpu_ms_per_set - r->gen_ms_per_set;
    r->total_core_pct = cpu / secs * 100;
    r->capture_core_pct_per_cam = (cpu - g) / secs * 100 / n;
    r->complete_pct = sets ? 100.0 * complete / sets : 0;
    r->nonsim_ms_per_set = sets ? nonsim * 1e3 / sets : 0;
    r->nonsim_core_pct_per_cam = nonsim / secs * 100 / n;
    if (ns) {
        qsort(spread, ns, sizeof *spread, cmp_d);
        r->spread_ms_median = spread[ns / 2];
        r->spread_ms_max = spread[ns - 1];
    }
    free(spread);
    printf("%-34s %7.2f sets/s  CPU %6.3f ms/set (generation %6.3f, capture %6.3f)  "
           "capture %5.2f %% of a core per camera  complete %5.1f %%  dropped %llu\n",
           r->what, r->sets_per_s, r->cpu_ms_per_set, r->gen_ms_per_set, r->capture_ms_per_set,
           r->capture_core_pct_per_cam, r->complete_pct, r->dropped);
    printf("    first-to-last slab spread: median %.2f ms, max %.2f ms\n", r->spread_ms_median,
           r->spread_ms_max);
    fflush(stdout);
}

#if PANOCAP_HAVE_ARAVIS
static void fill_cams(pc_capture_config *cfg, const opts *o)
{
    cfg->n_cameras = o->cameras;
    cfg->fps = o->fps;
    cfg->log = &quiet;
    for (int i = 0; i < o->cameras; i++) {
        cfg->cam[i].width = o->width;
        cfg->cam[i].height = o->height;
        cfg->cam[i].cfa = PC_CFA_RGGB;
        cfg->cam[i].image = o->image;
        cfg->cam[i].packet_size = o->packet_size;
    }
}

static pc_raw_writer *open_record(const opts *o)
{
    if (!o->record)
        return NULL;
    pc_raw_writer *w;
    char err[256];
    if (pc_raw_writer_open(&w, o->record, o->width, o->height, o->cameras, PC_CFA_RGGB, o->fps, err,
                           sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    return w;
}

static void bench_fake(const opts *o)
{
    pc_capture_config cfg;
    pc_capture_config_init(&cfg);
    cfg.source = PC_SOURCE_FAKE;
    fill_cams(&cfg, o);
    char err[512], what[96];
    static pc_rig rig;
    if (o->scene_rig) { /* the cameras show the simulated stadium through this rig */
        if (pc_rig_load(o->scene_rig, &rig, err, sizeof err)) {
            fprintf(stderr, "fake: %s\n", err);
            return;
        }
        cfg.scene = "stadium";
        cfg.scene_rig = &rig;
    }
    pc_capture *c;
    double t0 = pc_now_ns() / 1e9;
    if (pc_capture_open(&c, &cfg, err, sizeof err) || pc_capture_start(c, err, sizeof err)) {
        fprintf(stderr, "fake: %s\n", err);
        return;
    }
    if (o->scene_rig)
        printf("scene: the stadium through %s, rendered in %.1f s at open\n", o->scene_rig, pc_now_ns() / 1e9 - t0);
    pc_raw_writer *rec = open_record(o);
    snprintf(what, sizeof what, "fake %dx %dx%d @%g%s", o->cameras, o->width, o->height, o->fps,
             o->scene_rig ? " scene" : "");
    measure(c, o, what, fake_gen, NULL, "in-process ArvFakeCamera", rec);
    pc_raw_writer_close(rec, err, sizeof err);
    pc_capture_close(c);
}

static double sim_gen(pc_capture *c, void *user) { return pc_sim_fill_cpu_ns(user) / 1e9; }

static void bench_sim(const opts *o)
{
    char err[512], what[64];
    pc_sim *sim;
    if (pc_sim_open(&sim, o->cameras, o->width, o->height, PC_CFA_RGGB, o->image, err, sizeof err)) {
        fprintf(stderr, "sim: %s\n", err);
        return;
    }
    pc_sim_set_fps_hint(sim, o->fps);
    pc_capture_config cfg;
    pc_capture_config_init(&cfg);
    cfg.source = PC_SOURCE_GIGE;
    fill_cams(&cfg, o);
    for (int i = 0; i < o->cameras; i++)
        cfg.cam[i].address = pc_sim_address(sim, i);
    pc_capture *c;
    if (pc_capture_open(&c, &cfg, err, sizeof err) || pc_capture_start(c, err, sizeof err)) {
        fprintf(stderr, "sim: %s\n", err);
        pc_sim_close(sim);
        return;
    }
    uint64_t sk0 = 0, sk1 = 0;
    for (int i = 0; i < o->cameras; i++)
        sk0 += pc_sim_skipped(sim, i);
    pc_camera_stats st[PC_CAPTURE_MAX_CAMERAS];
    snprintf(what, sizeof what, "GigE sim %dx %dx%d @%g", o->cameras, o->width, o->height, o->fps);
    pc_raw_writer *rec = open_record(o);
    measure(c, o, what, sim_gen, sim, NULL, rec);
    pc_raw_writer_close(rec, err, sizeof err);
    for (int i = 0; i < o->cameras; i++)
        sk1 += pc_sim_skipped(sim, i);
    pc_capture_stats(c, st, o->cameras);
    unsigned long long fails = 0, late = 0;
    for (int i = 0; i < o->cameras; i++) {
        for (int k = 0; k < PC_FAIL_COUNT; k++)
            fails += st[i].frames_failed[k];
        late += st[i].frames_late;
    }
    result *r = &results[nresults - 1];
    snprintf(r->note, sizeof r->note, "%s, packets %d B; simulators skipped %llu frame times; %llu "
             "incomplete buffers, %llu late", pc_stream_path_name(st[0].path), o->packet_size,
             (unsigned long long)(sk1 - sk0), fails, late);
    printf("    %s\n", r->note);
    printf("    threads other than the simulators' (receivers, capture, consumer): %.3f ms/set = %.2f %% "
           "of a core per camera\n    (the kernel's loopback delivery runs in the simulators' send "
           "calls, so this is a lower bound; the line above is the upper bound)\n",
           r->nonsim_ms_per_set, r->nonsim_core_pct_per_cam);
    pc_capture_close(c);
    pc_sim_close(sim);
}
#endif

static void bench_file(const opts *o)
{
    if (!o->file)
        return;
    for (int realtime = 1; realtime >= 0; realtime--) {
        pc_capture_config cfg;
        pc_capture_config_init(&cfg);
        cfg.source = PC_SOURCE_FILE;
        cfg.file = o->file;
        cfg.n_cameras = 0;
        cfg.fps = realtime ? o->fps : 0;
        cfg.file_realtime = realtime;
        cfg.file_loop = 1;
        cfg.log = &quiet;
#ifdef PC_BENCH_CUDA
        if (o->dma) { /* frame buffers in pinned memory, as the daemon does with CUDA */
            cfg.alloc = pinned_alloc;
            cfg.free = pinned_free;
        }
#endif
        char err[512], what[64];
        pc_capture *c;
        if (pc_capture_open(&c, &cfg, err, sizeof err) || pc_capture_start(c, err, sizeof err)) {
            fprintf(stderr, "file: %s\n", err);
            return;
        }
        int w, h;
        double fps;
        pc_capture_geometry(c, &w, &h, NULL, &fps);
        opts o2 = *o;
        o2.fps = realtime ? fps : 0;
        snprintf(what, sizeof what, "file %dx %dx%d %s", pc_capture_n_cameras(c), w, h,
                 realtime ? "realtime" : "as fast as possible");
        measure(c, &o2, what, NULL, NULL, "PCRAW1 replay (page cache)", NULL);
        pc_capture_close(c);
    }
}

/* CPU stacking: pc_frameset_stack of N slabs into one panorama. */
static void bench_cpu_stack(const opts *o)
{
    size_t slab = (size_t)o->width * o->height;
    uint8_t *src = NULL, *dst = NULL;
    if (posix_memalign((void **)&src, 4096, slab * o->cameras) ||
        posix_memalign((void **)&dst, 4096, slab * o->cameras))
        return;
    memset(src, 7, slab * o->cameras);
    memset(dst, 0, slab * o->cameras);
    pc_frameset s;
    memset(&s, 0, sizeof s);
    s.n = o->cameras;
    s.width = o->width;
    s.height = o->height;
    for (int k = 0; k < s.n; k++) {
        s.slab[k] = src + slab * k;
        s.pitch[k] = (size_t)o->width;
    }
    int reps = 100;
    double c0 = cpu_s();
    int64_t t0 = pc_now_ns();
    for (int i = 0; i < reps; i++)
        pc_frameset_stack(&s, dst, (size_t)o->width);
    double ms = (pc_now_ns() - t0) / 1e6 / reps, cms = (cpu_s() - c0) * 1e3 / reps;
    printf("%-34s %7.3f ms per set (CPU %.3f ms), %.2f GB/s; at %g fps %.1f %% of one core\n",
           "CPU stacking (pc_frameset_stack)", ms, cms, slab * o->cameras / (ms * 1e6), o->fps,
           cms * o->fps / 10.0);
    free(src);
    free(dst);
}

#ifdef PC_BENCH_CUDA
#define CK(x)                                                                           \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                    \
            return;                                                                     \
        }                                                                               \
    } while (0)


/* Per-slab DMA (what capture hands over: N separate pinned buffers) vs one
 * copy of a contiguous pinned panorama, into one device panorama. */
static void bench_dma(const opts *o)
{
    int dev = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        printf("DMA stacking: no CUDA device\n");
        return;
    }
    size_t slab = (size_t)o->width * o->height, pano = slab * o->cameras;
    uint8_t *hs[PC_CAPTURE_MAX_CAMERAS], *hp, *d, *pageable;
    for (int k = 0; k < o->cameras; k++)
        CK(cudaHostAlloc((void **)&hs[k], slab, cudaHostAllocDefault));
    CK(cudaHostAlloc((void **)&hp, pano, cudaHostAllocDefault));
    CK(cudaMalloc((void **)&d, pano));
    pageable = malloc(pano);
    memset(pageable, 1, pano);
    cudaStream_t st;
    cudaEvent_t e0, e1;
    CK(cudaStreamCreate(&st));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int reps = 200;
    float ms;
    printf("DMA stacking on %s, %dx%d x %d = %.1f MB per set:\n", prop.name, o->width, o->height,
           o->cameras, pano / 1e6);
    for (int mode = 0; mode < 3; mode++) {
        for (int w = 0; w < 10; w++) /* warm-up */
            CK(cudaMemcpyAsync(d, hp, pano, cudaMemcpyHostToDevice, st));
        CK(cudaEventRecord(e0, st));
        int64_t q0 = pc_now_ns();
        for (int i = 0; i < reps; i++) {
            if (mode == 0)
                for (int k = 0; k < o->cameras; k++)
                    CK(cudaMemcpyAsync(d + slab * k, hs[k], slab, cudaMemcpyHostToDevice, st));
            else if (mode == 1)
                CK(cudaMemcpyAsync(d, hp, pano, cudaMemcpyHostToDevice, st));
            else
                CK(cudaMemcpyAsync(d, pageable, pano, cudaMemcpyHostToDevice, st));
        }
        /* time to queue the copies (the host's work; async from pinned memory) */
        double enqueue = (pc_now_ns() - q0) / 1e6 / reps;
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        static const char *names[] = {"per-slab DMA (5 pinned slabs)", "one DMA (contiguous pinned)",
                                      "one copy from pageable memory"};
        printf("  %-34s %7.3f ms per set on the GPU, %6.2f GB/s; queueing them took the host %.4f ms "
               "per set\n", names[mode], ms / reps, pano / (ms / reps * 1e6), enqueue);
        result *r = &results[nresults++];
        memset(r, 0, sizeof *r);
        snprintf(r->what, sizeof r->what, "H2D %s", names[mode]);
        snprintf(r->note, sizeof r->note, "%.3f ms per set, %.2f GB/s on %s", ms / reps,
                 pano / (ms / reps * 1e6), prop.name);
    }
    /* the capture library itself on pinned memory: file replay into cudaHostAlloc buffers */
    for (int k = 0; k < o->cameras; k++)
        cudaFreeHost(hs[k]);
    cudaFreeHost(hp);
    cudaFree(d);
    free(pageable);
    cudaStreamDestroy(st);
}
#endif

/* Writes n synthetic sets (a gradient with a moving bar) as a PCRAW1 file,
 * for machines without cameras or Aravis. */
static int make_raw(const opts *o)
{
    char err[256];
    pc_raw_writer *w;
    if (pc_raw_writer_open(&w, o->make_raw, o->width, o->height, o->cameras, PC_CFA_RGGB, o->fps, err,
                           sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    size_t slab = (size_t)o->width * o->height;
    uint8_t *buf = malloc(slab * o->cameras);
    pc_frameset s;
    memset(&s, 0, sizeof s);
    s.n = o->cameras;
    s.width = o->width;
    s.height = o->height;
    for (int i = 0; i < o->make_sets; i++) {
        for (int k = 0; k < o->cameras; k++) {
            uint8_t *p = buf + slab * k;
            for (int y = 0; y < o->height; y++)
                for (int x = 0; x < o->width; x++)
                    p[(size_t)y * o->width + x] =
                        (uint8_t)(((x + i * 8) % o->width) < 16 ? 255 : (x / 8 + y / 4 + k * 50));
            s.slab[k] = p;
            s.pitch[k] = (size_t)o->width;
        }
        s.index = (uint64_t)i;
        s.pts_ns = (int64_t)(i * 1e9 / o->fps);
        if (pc_raw_writer_write(w, &s, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    }
    free(buf);
    if (pc_raw_writer_close(w, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("wrote %d synthetic sets to %s\n", o->make_sets, o->make_raw);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: panocap-capture-bench [--source fake|sim|file|all] [--seconds S] [--fps F]\n"
               "         [--cameras N] [--width W] [--height H] [--packet-size B] [--image FILE]\n"
               "         [--file RAW] [--record RAW] [--dma] [--markdown] [--verbose]\n"
               "         [--scene RIG.pto]  (fake cameras show the simulated stadium through the rig)\n"
               "         [--make-raw RAW [--sets N]]  (write N synthetic sets first)\n"
               "         [--help] [--version]\n");
}

static const pc_tool tool = {"panocap-capture-bench", usage};

/* Options into *o; returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, opts *o)
{
    static const struct option lo[] = {
        {"source", 1, 0, 's'}, {"seconds", 1, 0, 't'}, {"fps", 1, 0, 'f'}, {"cameras", 1, 0, 'n'},
        {"width", 1, 0, 'w'}, {"height", 1, 0, 'h'}, {"packet-size", 1, 0, 'p'}, {"image", 1, 0, 'i'},
        {"file", 1, 0, 'r'}, {"record", 1, 0, 'R'}, {"dma", 0, 0, 'd'}, {"markdown", 0, 0, 'm'},
        {"verbose", 0, 0, 'v'}, {"make-raw", 1, 0, 'M'}, {"sets", 1, 0, 'S'}, {"scene", 1, 0, 'X'},
        PC_TOOL_STD_OPTIONS,
        {0, 0, 0, 0}};
    int ch, rc;
    long long n;
    while ((ch = pc_tool_getopt(&tool, argc, argv, "", lo)) != -1) {
        rc = 0;
        switch (ch) {
        case 's':
            if (strcmp(optarg, "fake") && strcmp(optarg, "sim") && strcmp(optarg, "file") && strcmp(optarg, "all"))
                return pc_tool_usage_error(&tool, "--source: unknown source '%s' (known: fake, sim, file, all)",
                                           optarg);
            o->source = optarg;
            break;
        case 't': rc = pc_tool_double(&tool, "--seconds", optarg, 0.01, 86400, &o->seconds); break;
        case 'f': rc = pc_tool_double(&tool, "--fps", optarg, 0.1, 1000, &o->fps); break;
        case 'n':
            rc = pc_tool_int(&tool, "--cameras", optarg, 1, PC_CAPTURE_MAX_CAMERAS, &n), o->cameras = (int)n;
            break;
        case 'w': rc = pc_tool_int(&tool, "--width", optarg, 2, 16384, &n), o->width = (int)n; break;
        case 'h': rc = pc_tool_int(&tool, "--height", optarg, 2, 16384, &n), o->height = (int)n; break;
        case 'p': rc = pc_tool_int(&tool, "--packet-size", optarg, 0, 16384, &n), o->packet_size = (int)n; break;
        case 'i': o->image = optarg; break;
        case 'r': o->file = optarg; break;
        case 'R': o->record = optarg; break;
        case 'd': o->dma = 1; break;
        case 'm': o->markdown = 1; break;
        case 'v': verbose = 1; break;
        case 'M': o->make_raw = optarg; break;
        case 'S': rc = pc_tool_int(&tool, "--sets", optarg, 1, 1000000, &n), o->make_sets = (int)n; break;
        case 'X': o->scene_rig = optarg; break;
        default: return pc_tool_std_option(&tool, ch, argv);
        }
        if (rc)
            return rc;
    }
    if ((rc = pc_tool_no_operands(&tool, argc, argv)))
        return rc;
    if (o->scene_rig) { /* the rig says how many cameras and how large */
        static pc_rig rig;
        char err[512];
        if (pc_rig_load(o->scene_rig, &rig, err, sizeof err)) {
            fprintf(stderr, "panocap-capture-bench: %s\n", err);
            return 1;
        }
        o->cameras = rig.ncam;
        o->width = rig.cam[0].w;
        o->height = rig.cam[0].h;
    }
    return -1;
}

int main(int argc, char **argv)
{
    opts o = {.source = "all", .seconds = 10, .fps = 50, .cameras = 5, .width = 2040,
              .height = 1080, .packet_size = 8000, .make_sets = 50};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (o.make_raw && make_raw(&o) != 0)
        return 1;
    int all = strcmp(o.source, "all") == 0;
#if PANOCAP_HAVE_ARAVIS
    int want_sim = all || strcmp(o.source, "sim") == 0;
#endif
#if PANOCAP_HAVE_ARAVIS
    if (want_sim) {
        /* outside: re-executes this whole run inside a private network
         * namespace (does not return); inside: sets the namespace up */
        char err[512];
        if (pc_netns_enter(argc, argv, o.cameras, err, sizeof err) != 0) {
            fprintf(stderr, "no private network namespace (%s): skipping the simulator run\n", err);
            want_sim = 0;
        } else {
            printf("inside a private network namespace (only lo)\n");
        }
    }
    printf("panocap-capture-bench: %d cameras %dx%d, %g fps requested, %g s per run, %ld CPUs online\n",
           o.cameras, o.width, o.height, o.fps, o.seconds, sysconf(_SC_NPROCESSORS_ONLN));
    if (all || strcmp(o.source, "fake") == 0)
        bench_fake(&o);
    if (want_sim)
        bench_sim(&o);
#else
    printf("panocap-capture-bench: %d cameras %dx%d, %g fps requested, %g s per run, %ld CPUs online\n",
           o.cameras, o.width, o.height, o.fps, o.seconds, sysconf(_SC_NPROCESSORS_ONLN));
    if (!all && strcmp(o.source, "file") != 0)
        fprintf(stderr, "this build has no Aravis: only --source file (and --dma)\n");
#endif
    if (all || strcmp(o.source, "file") == 0)
        bench_file(&o);
    bench_cpu_stack(&o);
#ifdef PC_BENCH_CUDA
    if (o.dma)
        bench_dma(&o);
#else
    if (o.dma)
        printf("DMA stacking: this build has no CUDA\n");
#endif
    if (o.markdown) {
        printf("\n| run | sets/s | CPU ms/set | generation ms/set | capture ms/set | capture %% core per camera | non-simulator threads ms/set (%% core per camera) | complete %% | spread median/max ms | dropped |\n");
        printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int i = 0; i < nresults; i++) {
            result *r = &results[i];
            if (!r->sets)
                continue;
            char ns[48] = "-";
            if (strncmp(r->what, "GigE", 4) == 0)
                snprintf(ns, sizeof ns, "%.3f (%.2f)", r->nonsim_ms_per_set, r->nonsim_core_pct_per_cam);
            printf("| %s | %.2f | %.3f | %.3f | %.3f | %.2f | %s | %.1f | %.2f / %.2f | %llu |\n", r->what,
                   r->sets_per_s, r->cpu_ms_per_set, r->gen_ms_per_set, r->capture_ms_per_set,
                   r->capture_core_pct_per_cam, ns, r->complete_pct, r->spread_ms_median,
                   r->spread_ms_max, r->dropped);
        }
    }
    return 0;
}
