/* net_cpu.c - the learned demosaic on the CPU backend's threads (--algo
 * net, backend cpu): the network of net_reference.c with its sums
 * reordered and, where the CPU has them, fused multiply-adds; within one
 * code value of the reference (docs/net.md: numerics and speed).
 *
 * The frame is cut into rectangles: each camera (pc_bayer.cam_rows) into
 * column strips and row bands, as many as the pool has threads (strips
 * first: a strip's halo costs less than a band's, the network's layers
 * being wider than tall per thread), and the pool's threads take them in
 * turn (an atomic counter), each with its own line buffers. A rectangle
 * recomputes the halo the network needs around it (2 half-resolution
 * pixels per layer still to come) instead of sharing rows with its
 * neighbours: no barrier inside a frame.
 *
 * The loops (net_cpu_lanes.h) are built three times: here with 4 floats a
 * vector and no fused multiply-add (any CPU), in net_cpu_avx2.c (8, FMA)
 * and net_cpu_avx512.c (16); the best the CPU runs is chosen at run time.
 */
#define PC_NET_LANES pc_net_lanes_base
#define PC_NET_VL 4
#include "net_cpu_lanes.h"

#include "errmsg.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
extern const pc_net_lanes pc_net_lanes_avx2;   /* net_cpu_avx2.c */
extern const pc_net_lanes pc_net_lanes_avx512; /* net_cpu_avx512.c */
#define PC_NET_X86 1
#else
#define PC_NET_X86 0
#endif

/* The builds, best first. */
static const pc_net_lanes *const builds[] = {
#if PC_NET_X86
    &pc_net_lanes_avx512,
    &pc_net_lanes_avx2,
#endif
    &pc_net_lanes_base,
};
#define NBUILDS ((int)(sizeof builds / sizeof builds[0]))

static int usable(const pc_net_lanes *l)
{
#if PC_NET_X86
    if (l == &pc_net_lanes_avx512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    if (l == &pc_net_lanes_avx2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    return 1;
}

static const pc_net_lanes *find(const char *name)
{
    for (int i = 0; i < NBUILDS; i++)
        if (name ? strcmp(builds[i]->name, name) == 0 : usable(builds[i]))
            return builds[i];
    return NULL;
}

const char *pc_net_cpu_best_lanes(void) { return find(NULL)->name; }

int pc_net_cpu_lanes_usable(const char *name)
{
    const pc_net_lanes *l = find(name);
    return l && usable(l);
}

/* The largest any build needs, so that any build may run in it. */
size_t pc_net_cpu_temp_bytes(const pc_net *net, int w, int threads)
{
    size_t most = 0;
    for (int i = 0; i < NBUILDS; i++) {
        size_t s = builds[i]->weights_floats(net) + (size_t)(threads > 0 ? threads : 1) * builds[i]->thread_floats(net, w);
        if (s > most)
            most = s;
    }
    return most * sizeof(float);
}

static void worker(void *arg, int band, int nbands)
{
    pc_net_job *job = arg;
    (void)nbands;
    float *scratch = job->scratch + (size_t)band * job->thread_floats;
    for (;;) {
        const int it = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (it >= job->nitems)
            break;
        job->lanes->item(job, it, scratch);
    }
}

/* Strips x bands per camera for T threads: strips of at least 128 columns
 * (the halo of 2 x depth half-resolution pixels stays a small part),
 * bands for the rest. */
static void split(int w, int cam_h, int ncam, int threads, int *strips, int *bands)
{
    int s = 1, b = 1;
    if (threads > 1) {
        int g = threads, m = ncam; /* rectangles a camera: threads / gcd(ncam, threads), so that
                                    * every thread gets as many */
        while (m) {
            const int t = g % m;
            g = m;
            m = t;
        }
        const int per = threads / g;
        s = per;
        while (s > 1 && w / s < 128)
            s--;
        b = (per + s - 1) / s;
        while (b > 1 && cam_h / b < 64)
            b--;
    }
    *strips = s;
    *bands = b;
}

int pc_net_cpu(pc_cpu *cpu, const pc_net *net, const char *lanes, uint8_t *temp, size_t temp_bytes,
               const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen)
{
    pc_net_job job;
    memset(&job, 0, sizeof job);
    int rc = pc_net_frame_setup(&job.f, net, src, dst, err, errlen);
    if (rc)
        return rc;
    job.lanes = find(lanes);
    if (!job.lanes || !usable(job.lanes)) {
        pc_set_err(err, errlen, "net: the CPU lanes \"%s\" are %s", lanes ? lanes : "(best)",
                   job.lanes ? "not supported by this CPU" : "not in this build (avx512 and avx2 on x86-64, baseline)");
        return PC_EINVAL;
    }
    const int T = pc_cpu_threads(cpu);
    const size_t wf = job.lanes->weights_floats(net), tf = job.lanes->thread_floats(net, job.f.w);
    const size_t need = (wf + (size_t)T * tf) * sizeof(float);
    if (!temp || temp_bytes < need || ((uintptr_t)temp & 63)) {
        pc_set_err(err, errlen, "net %dx%d: line buffers of %zu bytes (64-byte aligned) needed, %zu given", job.f.w,
                   job.f.h, need, temp_bytes);
        return PC_EINVAL;
    }
    float *wp = (float *)(void *)temp;
    job.lanes->pack(net, wp);
    job.wp = wp;
    job.scratch = wp + wf;
    job.thread_floats = tf;
    split(job.f.w, job.f.cam_h, job.f.ncam, T, &job.nstrips, &job.nbands);
    job.nitems = job.f.ncam * job.nstrips * job.nbands;
    pc_cpu_parallel(cpu, worker, &job);
    return PC_OK;
}
