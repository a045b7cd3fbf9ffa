/* debayer_cuda.cu - host side of the CUDA backend (debayer_cuda.h): device
 * memory, streams, events, per-configuration CUDA graphs, variant and
 * tile-height tuning, uploads and downloads.
 *
 * Every algorithm is one fused kernel (cuda_kernel.cuh), so a frame is one
 * graph with one kernel node. It is still replayed as a graph: the launch
 * is cheaper than a stream launch, and the per-frame change (input slot,
 * destination planes) is a cudaGraphExecKernelNodeSetParams only when the
 * pointers differ from the previous frame.
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_colour.cuh"
#include "cuda_common.cuh"
#include "cuda_launch.h"
#include "debayer_cuda.h"
#include "errmsg.h"
#include "net.h"
#include "net_gpu.h"

#define PC_MAX_GRAPHS 256
#define PC_TH_MIN 4

/* One captured configuration. A graph exec's kernel parameters can be
 * changed with cudaGraphExecKernelNodeSetParams, but that costs host time
 * every frame when inputs and outputs rotate; so each configuration keeps a
 * few executable instances, one per (input slot, destination) combination
 * seen recently, and a frame whose combination is cached launches without
 * any update. */
#define PC_INSTANCES 8
struct pc_instance {
    cudaGraphExec_t exec;
    pc_kparams kp;
    unsigned long long used; /* LRU stamp */
};
struct pc_graph {
    int used;
    int algo, var, fmt, th, gm;
    cudaGraph_t graph;
    cudaGraphNode_t node;
    pc_instance inst[PC_INSTANCES];
    pc_kparams last; /* params captured (scratch destination) */
    dim3 grid;
    size_t smem;
};

struct pc_tune { /* indexed by pc_variant (2PX, 4PX; AUTO unused) */
    int done[3]; /* per variant: measured */
    int th[3];   /* tile height */
    int gm[3];   /* grid mode (grid_ctas) */
    float us[3];
};

struct pc_gpu {
    int device, W, H, nslots;
    char name[256];
    cudaStream_t up, cs;
    uint8_t *in[PC_GPU_MAX_SLOTS];   /* pixel (0,0) of each slot */
    uint8_t *in_base[PC_GPU_MAX_SLOTS]; /* the allocation (left margin first) */
    size_t in_pitch;
    int margin_r; /* right margin bytes (the left one is PC_HX) */
    cudaEvent_t ev_up[PC_GPU_MAX_SLOTS], ev_used[PC_GPU_MAX_SLOTS], ev_done[PC_GPU_MAX_SLOTS];
    cudaEvent_t ev_t0[PC_GPU_MAX_SLOTS], ev_t1[PC_GPU_MAX_SLOTS];
    int timed[PC_GPU_MAX_SLOTS];
    cudaEvent_t last_ev[PC_GPU_MAX_SLOTS]; /* the slot's last recorded event */
    int uploaded[PC_GPU_MAX_SLOTS];        /* upload stream work since the last debayer */
    unsigned options;                      /* PC_GPU_OPT_* */
    cudaEvent_t consumed[PC_GPU_MAX_SLOTS]; /* recorded after the slot's last debayer */
    unsigned long long stamp;
    uint8_t *scratch; /* 4*W*H: room for any output format, for tuning */
    /* Conversion matrices the kernels read (pc_kparams.bands): the device
     * copy and the host copy of what was last enqueued into it. */
    int *d_bands;
    /* Colour stage: per-camera tables (PC_GPU_MAX_CAMERAS x 3 x
     * PC_CLUT_STRIDE) and a raw staging buffer per slot (2 bytes per
     * sample, the widest format), allocated at the first use. */
    uint8_t *d_luts;
    uint8_t *raw_stage[PC_GPU_MAX_SLOTS];
    /* Raw slabs copied to the staging buffer but not mapped yet: the
     * colour pass of a frame is one launch for all its cameras (launched
     * by the slot's next debayer, or earlier when a slab does not fit):
     * bit c = camera c's slab at rows [c * col_rows, (c + 1) * col_rows),
     * all in format col_fmt. */
    unsigned col_pend[PC_GPU_MAX_SLOTS];
    int col_rows[PC_GPU_MAX_SLOTS];
    pc_rawfmt col_fmt[PC_GPU_MAX_SLOTS];
    int bands_host[PC_KMAX_BANDS * PC_KBAND];
    int bands_n;
    /* bands_host's version (bumped when it changes), and the version each
     * algorithm's kernel file last got in its pc_cbands */
    unsigned bands_ver, cbands_ver[PC_ALGO_COUNT];
    int num_sms;
    /* current configuration (var: pc_variant 2PX/4PX, or AUTO for an
     * algorithm with its own implementation; fmt: pc_pixfmt) */
    int configured;
    int algo, var, fmt, th, gm, th_forced;
    pc_cfa cfa;
    pc_matrix matrix;
    pc_range range;
    pc_kparams base; /* everything but src and dst */
    pc_graph graphs[PC_MAX_GRAPHS];
    pc_tune tune[PC_ALGO_COUNT][PC_FMT_RGBX32 + 1]; /* [algo][pc_pixfmt] */
    void *custom_state[PC_ALGO_COUNT]; /* own-implementation algorithms, once opened */
    /* Weights (net): custom_net[a] = algorithm a's state holds weights;
     * net_given: those of pc_gpu_set_net, else the default file's
     * (net_own, loaded at the first selection of net). */
    int custom_net[PC_ALGO_COUNT];
    int net_given;
    pc_net *net_own;
    int cam_rows; /* pc_gpu_set_cam_rows */
    int evict; /* next graph slot to reuse when the cache is full */
};

/* The CUDA implementation of every algorithm, indexed by pc_algo_id
 * (cuda_launch.h): its fused kernel set, or its own implementation. A new
 * algorithm adds its line here, in pc_algo_id order. */
static constexpr pc_cuda_algo pc_cuda_algos[] = {
    {PC_ALGO_BILINEAR, &pc_kset_bilinear, nullptr},
    {PC_ALGO_SMOOTH_HUE, &pc_kset_smoothhue, nullptr},
    {PC_ALGO_HQ_LINEAR, &pc_kset_hqlinear, nullptr},
    {PC_ALGO_EDGE, &pc_kset_edge, nullptr},
    {PC_ALGO_HOMOGENEOUS_EDGE, &pc_kset_hed, nullptr},
    {PC_ALGO_WD_ORIGINAL, &pc_kset_wdorig, nullptr},
    {PC_ALGO_WD_MODIFIED, &pc_kset_wdmod, nullptr},
    {PC_ALGO_MLRI, nullptr, &pc_cuda_mlri},
    {PC_ALGO_NET, nullptr, &pc_cuda_net},
};
static_assert(sizeof pc_cuda_algos / sizeof pc_cuda_algos[0] == PC_ALGO_COUNT,
              "pc_cuda_algos needs one entry per pc_algo_id (debayer.h)");
static constexpr bool pc_cuda_algos_ok()
{
    for (int i = 0; i < PC_ALGO_COUNT; i++)
        if (pc_cuda_algos[i].id != i || !pc_cuda_algos[i].ks == !pc_cuda_algos[i].custom)
            return false;
    return true;
}
static_assert(pc_cuda_algos_ok(), "pc_cuda_algos: entries in pc_algo_id order, each with a kernel set or its own code");

static int default_net(pc_gpu *g, int algo, char *err, size_t errlen);

static const pc_kernel_set *kset(int algo) { return pc_cuda_algos[algo].ks; }
static const void *kfn(int algo, int var, int fmt) { return pc_cuda_algos[algo].ks->fn[var][fmt]; }

static const char *algo_name(int algo)
{
    const pc_algo_desc *d = pc_algo_get((pc_algo_id)algo);
    return d ? d->name : "(no algorithm)";
}

/* Checks a CUDA call; the message names the call, the algorithm and size. */
#define CK(g, call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            pc_set_err(err, errlen, "%s failed: %s (%s; algorithm %s, frame %dx%d)", #call,        \
                       cudaGetErrorString(e_), cudaGetErrorName(e_),                               \
                       (g) && (g)->configured ? algo_name((g)->algo) : "none", (g) ? (g)->W : 0,   \
                       (g) ? (g)->H : 0);                                                          \
            return PC_EDEVICE;                                                                     \
        }                                                                                          \
    } while (0)

extern "C" int pc_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no driver" state */
        return 0;
    }
    return n;
}

/* Fills the left/right margins of rows [row0, row0+rows) of an input slot
 * with the reflect-101 mirror of the row (spec §1.2), so the debayer
 * kernels read whole aligned 16-byte chunks at the image edges too. Runs
 * on the upload stream after each slab: off the debayer's critical path. */
__global__ void pc_margin_kernel(uint8_t *in, size_t pitch, int w, int row0, int ml, int mr)
{
    uint8_t *row = in + (size_t)(row0 + blockIdx.x) * pitch;
    for (int j = threadIdx.x; j < ml + mr; j += blockDim.x) {
        int x = j < ml ? j - ml : w + (j - ml);
        row[x] = row[pc_fold(x, w)];
    }
}

static int fill_margins(pc_gpu *g, int slot, int row0, int rows, cudaStream_t s, char *err, size_t errlen)
{
    pc_margin_kernel<<<rows, 64, 0, s>>>(g->in[slot], g->in_pitch, g->W, row0, PC_HX, g->margin_r);
    CK(g, cudaGetLastError());
    return 0;
}

/* Rows [row0, row0+rows) of a slot were written after raw slabs still
 * waiting for the colour pass: the later write wins, so the cameras whose
 * rows it overlaps are no longer mapped. */
static void rows_written(pc_gpu *g, int slot, int row0, int rows)
{
    const int R = g->col_rows[slot];
    for (int c = 0; g->col_pend[slot] && c < PC_GPU_MAX_CAMERAS; c++)
        if (c * R < row0 + rows && (c + 1) * R > row0)
            g->col_pend[slot] &= ~(1u << c);
}

/* Fills an input slot with hash noise so tuning never times zeros. */
__global__ void pc_noise_kernel(uint8_t *p, size_t pitch, int w, int h, unsigned seed)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w || y >= h)
        return;
    unsigned v = (unsigned)x * 0x9E3779B1u ^ (unsigned)y * 0x85EBCA77u ^ seed;
    v ^= v >> 15;
    v *= 0x2C1B3C6Du;
    v ^= v >> 12;
    p[(size_t)y * pitch + x] = (uint8_t)(v >> 5);
}

extern "C" void pc_gpu_close(pc_gpu *g)
{
    if (!g)
        return;
    cudaSetDevice(g->device);
    if (g->cs)
        cudaStreamSynchronize(g->cs);
    if (g->up)
        cudaStreamSynchronize(g->up);
    for (int i = 0; i < PC_MAX_GRAPHS; i++)
        if (g->graphs[i].used) {
            for (int j = 0; j < PC_INSTANCES; j++)
                if (g->graphs[i].inst[j].exec)
                    cudaGraphExecDestroy(g->graphs[i].inst[j].exec);
            cudaGraphDestroy(g->graphs[i].graph);
        }
    for (int a = 0; a < PC_ALGO_COUNT; a++)
        if (g->custom_state[a])
            pc_cuda_algos[a].custom->close(g->custom_state[a]);
    pc_net_free(g->net_own);
    for (int i = 0; i < PC_GPU_MAX_SLOTS; i++) {
        if (g->in_base[i])
            cudaFree(g->in_base[i]);
        cudaEvent_t *evs[] = {g->ev_up, g->ev_used, g->ev_done, g->ev_t0, g->ev_t1};
        for (auto e : evs)
            if (e[i])
                cudaEventDestroy(e[i]);
    }
    if (g->scratch)
        cudaFree(g->scratch);
    if (g->d_bands)
        cudaFree(g->d_bands);
    if (g->d_luts)
        cudaFree(g->d_luts);
    for (int i = 0; i < PC_GPU_MAX_SLOTS; i++)
        if (g->raw_stage[i])
            cudaFree(g->raw_stage[i]);
    if (g->cs)
        cudaStreamDestroy(g->cs);
    if (g->up)
        cudaStreamDestroy(g->up);
    free(g);
}

/* Room for a picture of any output format, planes pitched to 64 bytes. */
static size_t scratch_bytes(int w, int h)
{
    size_t m = 0;
    for (int f = PC_FMT_RGB24; f <= PC_FMT_RGBX32; f++) {
        pc_picture p;
        size_t n = pc_picture_layout(&p, (pc_pixfmt)f, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 64, NULL);
        m = n > m ? n : m;
    }
    return m;
}
static int check_dims(int w, int h, char *err, size_t errlen)
{
    if (w < PC_MIN_DIM || h < PC_MIN_DIM || w > PC_MAX_DIM || h > PC_MAX_DIM || (w & 1) || (h & 1)) {
        pc_set_err(err, errlen,
                   "frame size %dx%d: width and height must be even, at least %d and at most %d "
                   "(reflect-101 border rule, algorithms.md §1.2)",
                   w, h, PC_MIN_DIM, PC_MAX_DIM);
        return PC_EINVAL;
    }
    return 0;
}

static int open_impl(pc_gpu *g, int device, int width, int height, int slots, char *err, size_t errlen)
{
    int ndev = pc_gpu_device_count();
    if (ndev == 0) {
        pc_set_err(err, errlen, "no CUDA device (cudaGetDeviceCount found none or no driver)");
        return PC_ENOTSUP;
    }
    if (device < 0 || device >= ndev) {
        pc_set_err(err, errlen, "CUDA device %d does not exist (%d device%s)", device, ndev, ndev == 1 ? "" : "s");
        return PC_EINVAL;
    }
    g->device = device;
    CK(g, cudaSetDevice(device));
    /* Threads that wait for the GPU (the stage thread for a download, the
     * hwframes encoder path) sleep instead of spinning: with the default
     * (auto: spin while there are fewer contexts than CPUs) each wait
     * burns a whole core, which the software encoders of 16 one-camera
     * bands on 16 cores need. A context made active earlier (NVENC, a
     * second pipeline) keeps its flags: that refusal is not an error. */
    {
        cudaError_t fe = cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
        if (fe != cudaSuccess && fe != cudaErrorSetOnActiveProcess)
            CK(g, fe);
        (void)cudaGetLastError();
    }
    cudaDeviceProp prop;
    CK(g, cudaGetDeviceProperties(&prop, device));
    snprintf(g->name, sizeof g->name, "%s", prop.name);
    g->num_sms = prop.multiProcessorCount;
    CK(g, cudaStreamCreateWithFlags(&g->cs, cudaStreamNonBlocking));
    CK(g, cudaStreamCreateWithFlags(&g->up, cudaStreamNonBlocking));
    /* Each row: PC_HX bytes of left margin, the image, and a right margin
     * up to 16 bytes past the last tile (the tiles read PC_HX beyond their
     * edges). Pitch a multiple of 256, so every chunk is 16-byte aligned. */
    int ntx = (width + PC_TW - 1) / PC_TW;
    g->margin_r = ntx * PC_TW + PC_HX - width;
    g->in_pitch = ((size_t)PC_HX + width + g->margin_r + 255) & ~(size_t)255;
    for (int i = 0; i < slots; i++) {
        CK(g, cudaMalloc((void **)&g->in_base[i], g->in_pitch * height));
        g->in[i] = g->in_base[i] + PC_HX;
        dim3 grid((width + 255) / 256, height);
        pc_noise_kernel<<<grid, 256, 0, g->cs>>>(g->in[i], g->in_pitch, width, height, 0x1234u + i);
        CK(g, cudaGetLastError());
        if (fill_margins(g, i, 0, height, g->cs, err, errlen))
            return PC_EDEVICE;
        CK(g, cudaEventCreateWithFlags(&g->ev_up[i], cudaEventDisableTiming));
        CK(g, cudaEventCreateWithFlags(&g->ev_used[i], cudaEventDisableTiming));
        CK(g, cudaEventCreateWithFlags(&g->ev_done[i], cudaEventDisableTiming));
        CK(g, cudaEventCreate(&g->ev_t0[i]));
        CK(g, cudaEventCreate(&g->ev_t1[i]));
    }
    CK(g, cudaMalloc((void **)&g->scratch, scratch_bytes(width, height)));
    CK(g, cudaMalloc((void **)&g->d_bands, sizeof g->bands_host));
    CK(g, cudaMemsetAsync(g->d_bands, 0, sizeof g->bands_host, g->cs));
    CK(g, cudaStreamSynchronize(g->cs));
    return 0;
}

extern "C" int pc_gpu_open(pc_gpu **out, int device, int width, int height, int slots, char *err,
                           size_t errlen)
{
    if (!out) {
        pc_set_err(err, errlen, "pc_gpu_open: out is NULL");
        return PC_EINVAL;
    }
    *out = NULL;
    int rc = check_dims(width, height, err, errlen);
    if (rc)
        return rc;
    if (slots < 1 || slots > PC_GPU_MAX_SLOTS) {
        pc_set_err(err, errlen, "pc_gpu_open: %d input slots requested, must be 1..%d", slots, PC_GPU_MAX_SLOTS);
        return PC_EINVAL;
    }
    pc_gpu *g = (pc_gpu *)calloc(1, sizeof *g);
    if (!g) {
        pc_set_err(err, errlen, "pc_gpu_open: out of host memory");
        return PC_ENOMEM;
    }
    g->W = width;
    g->H = height;
    g->nslots = slots;
    rc = open_impl(g, device, width, height, slots, err, errlen);
    if (rc) {
        pc_gpu_close(g);
        return rc;
    }
    *out = g;
    return 0;
}

extern "C" const char *pc_gpu_device_name(const pc_gpu *g) { return g ? g->name : ""; }
extern "C" int pc_gpu_slots(const pc_gpu *g) { return g ? g->nslots : 0; }
extern "C" void *pc_gpu_stream(pc_gpu *g) { return g ? (void *)g->cs : NULL; }

extern "C" void *pc_gpu_cu_context(pc_gpu *g)
{
    if (!g || cudaSetDevice(g->device) != cudaSuccess || cudaFree(0) != cudaSuccess)
        return NULL;
    /* The runtime's primary context, fetched through the driver entry point
     * so that nothing links libcuda directly (CI has no driver). */
    typedef CUresult (*getctx_fn)(CUcontext *);
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
#if CUDART_VERSION >= 12050
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !fn)
        return NULL;
#else
    if (cudaGetDriverEntryPoint("cuCtxGetCurrent", &fn, cudaEnableDefault, &q) != cudaSuccess || !fn)
        return NULL;
#endif
    CUcontext ctx = NULL;
    if (((getctx_fn)fn)(&ctx) != CUDA_SUCCESS)
        return NULL;
    return (void *)ctx;
}

/* Enqueues (on the compute stream, so frames already queued keep the
 * matrices they were queued with) the conversion matrices of the next
 * frames, when they differ from what the device holds. The copy of a few
 * hundred bytes from pageable memory is staged by the driver at once. */
static int set_bands(pc_gpu *g, const pc_yuv_coeffs *b, int n, char *err, size_t errlen)
{
    int v[PC_KMAX_BANDS * PC_KBAND];
    for (int i = 0; i < n; i++) {
        int *q = v + PC_KBAND * i;
        for (int k = 0; k < 3; k++) {
            q[k] = b[i].y[k];
            q[3 + k] = b[i].cb[k];
            q[6 + k] = b[i].cr[k];
        }
        q[9] = b[i].y_offset;
    }
    size_t bytes = sizeof(int) * PC_KBAND * (size_t)n;
    if (n == g->bands_n && memcmp(v, g->bands_host, bytes) == 0)
        return 0;
    CK(g, cudaMemcpyAsync(g->d_bands, v, bytes, cudaMemcpyHostToDevice, g->cs));
    memcpy(g->bands_host, v, bytes);
    g->bands_n = n;
    g->bands_ver++;
    return 0;
}

/* Sets the output planes of kp from a picture. */
static void set_dst(pc_kparams *kp, const pc_picture *d)
{
    kp->d0 = d->plane[0];
    kp->d1 = d->plane[1];
    kp->d2 = d->plane[2];
    kp->p0 = (int)d->pitch[0];
    kp->p1 = (int)d->pitch[1];
    kp->p2 = (int)d->pitch[2];
    kp->grid = pc_grid_pack(d);
}

/* A picture of the scratch buffer in format fmt (pitches multiples of 64,
 * as the kernels' 4-byte stores require). */
static pc_picture scratch_pic(pc_gpu *g, pc_pixfmt fmt)
{
    pc_picture p;
    pc_picture_layout(&p, fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, g->W, g->H, 64, g->scratch);
    return p;
}

static dim3 grid_of(pc_gpu *g, int th) { return dim3((g->W + PC_TW - 1) / PC_TW, (g->H + th - 1) / th); }

/* Finds or captures the graph of (algo, var, fmt, th). */
/* Persistent grid size for ntiles tiles when cap CTAs fit at once.
 * Mode 0: as many CTAs as fit (at most one per tile). Mode 1: the fewest
 * CTAs that still need the same number of rounds, so that every CTA runs
 * the same number of tiles and no SM ends with a lone CTA on its last
 * round (fewer CTAs per SM in exchange). */
static unsigned grid_ctas(long ntiles, long cap, int gm)
{
    if (ntiles <= cap)
        return (unsigned)ntiles;
    if (gm == 0)
        return (unsigned)cap;
    long k = (ntiles + cap - 1) / cap;
    return (unsigned)((ntiles + k - 1) / k);
}

static int get_graph(pc_gpu *g, int algo, int var, int fmt, int th, int gm, pc_graph **out, char *err,
                     size_t errlen)
{
    pc_graph *free_slot = NULL;
    for (int i = 0; i < PC_MAX_GRAPHS; i++) {
        pc_graph *x = &g->graphs[i];
        if (x->used && x->algo == algo && x->var == var && x->fmt == fmt && x->th == th && x->gm == gm) {
            *out = x;
            return 0;
        }
        if (!x->used && !free_slot)
            free_slot = x;
    }
    if (!free_slot) { /* round-robin eviction */
        free_slot = &g->graphs[g->evict];
        g->evict = (g->evict + 1) % PC_MAX_GRAPHS;
        for (int j = 0; j < PC_INSTANCES; j++)
            if (free_slot->inst[j].exec)
                cudaGraphExecDestroy(free_slot->inst[j].exec);
        cudaGraphDestroy(free_slot->graph);
        *free_slot = pc_graph();
    }
    pc_graph *x = free_slot;
    const pc_kernel_set *ks = kset(algo);
    const void *fn = ks->fn[var][fmt];
    x->smem = ks->smem(var, th);
    /* The limit is per function and shared by all tile heights: set it to
     * the largest any of them needs (and never below the 48 KB default). */
    size_t smax = ks->smem(var, PC_TH_MAX);
    if (smax > 48 * 1024)
        CK(g, cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smax));
    /* Persistent grid: as many CTAs as fit at once, at most one per tile. */
    int per_sm = 0;
    CK(g, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, PC_NT, x->smem));
    if (per_sm < 1)
        per_sm = 1;
    dim3 tg = grid_of(g, th);
    long ntiles = (long)tg.x * tg.y;
    x->grid = dim3(grid_ctas(ntiles, (long)per_sm * g->num_sms, gm));
    pc_kparams kp = g->base;
    kp.th = th;
    kp.src = g->in[0];
    pc_picture sp = scratch_pic(g, (pc_pixfmt)PC_KFMT_BASE(fmt));
    set_dst(&kp, &sp);
    void *args[] = {&kp};
    CK(g, cudaStreamBeginCapture(g->cs, cudaStreamCaptureModeThreadLocal));
    cudaError_t le = cudaLaunchKernel(fn, x->grid, dim3(PC_NT), args, x->smem, g->cs);
    cudaGraph_t graph = NULL;
    cudaError_t ce = cudaStreamEndCapture(g->cs, &graph);
    CK(g, le);
    CK(g, ce);
    size_t n = 1;
    cudaGraphNode_t node;
    cudaError_t e = cudaGraphGetNodes(graph, &node, &n);
    if (e == cudaSuccess && n != 1)
        e = cudaErrorInvalidValue;
    if (e != cudaSuccess) {
        cudaGraphDestroy(graph);
        CK(g, e);
    }
    memset(x->inst, 0, sizeof x->inst);
    x->graph = graph;
    x->node = node;
    x->last = kp;
    x->algo = algo;
    x->var = var;
    x->fmt = fmt;
    x->th = th;
    x->gm = gm;
    x->used = 1;
    *out = x;
    return 0;
}

/* Replays configuration x with params kp on the compute stream, through
 * the cached instance for kp, or the least recently used one updated. */
static int launch(pc_gpu *g, pc_graph *x, const pc_kparams *kp, char *err, size_t errlen)
{
    pc_instance *hit = NULL, *lru = &x->inst[0];
    for (int i = 0; i < PC_INSTANCES; i++) {
        pc_instance *in = &x->inst[i];
        if (in->exec && memcmp(&in->kp, kp, sizeof *kp) == 0) {
            hit = in;
            break;
        }
        if (!in->exec || (lru->exec && in->used < lru->used))
            lru = in;
    }
    if (!hit) {
        hit = lru;
        if (!hit->exec)
            CK(g, cudaGraphInstantiate(&hit->exec, x->graph, 0));
        cudaKernelNodeParams np = {};
        np.func = (void *)kfn(x->algo, x->var, x->fmt);
        np.gridDim = x->grid;
        np.blockDim = dim3(PC_NT);
        np.sharedMemBytes = (unsigned)x->smem;
        pc_kparams copy = *kp;
        void *args[] = {&copy};
        np.kernelParams = args;
        CK(g, cudaGraphExecKernelNodeSetParams(hit->exec, x->node, &np));
        hit->kp = *kp;
    }
    hit->used = ++g->stamp;
    CK(g, cudaGraphLaunch(hit->exec, g->cs));
    return 0;
}

/* Quick timing for tuning: the best of 4 rounds (after one warm-up round)
 * of 8 back-to-back replays, rotating the input slots. Rounds of several
 * replays, not single ones, because single-frame timings differ by a few
 * tenths of a microsecond from run to run, as much as the candidates. */
static int time_config(pc_gpu *g, int algo, int var, int fmt, int th, int gm, float *us, char *err, size_t errlen)
{
    pc_graph *x;
    int rc = get_graph(g, algo, var, fmt, th, gm, &x, err, errlen);
    if (rc)
        return rc;
    pc_kparams kp = x->last;
    cudaEvent_t a = g->ev_t0[0], b = g->ev_t1[0];
    const int n = 8;
    float best = 1e30f;
    for (int rep = 0; rep < 5; rep++) {
        CK(g, cudaEventRecord(a, g->cs));
        for (int i = 0; i < n; i++) {
            kp.src = g->in[i % g->nslots];
            if ((rc = launch(g, x, &kp, err, errlen)))
                return rc;
        }
        CK(g, cudaEventRecord(b, g->cs));
        CK(g, cudaEventSynchronize(b));
        float ms;
        CK(g, cudaEventElapsedTime(&ms, a, b));
        if (rep > 0 && ms < best) /* the first round warms up */
            best = ms;
    }
    g->timed[0] = 0;
    *us = best * 1000.0f / n;
    return 0;
}

static int tune_variant(pc_gpu *g, int algo, int var, int fmt, char *err, size_t errlen)
{
    pc_tune *t = &g->tune[algo][fmt];
    if (t->done[var])
        return 0;
    /* Tile heights = pixels per thread (th for both variants with 128
     * threads and 128-px tiles). The persistent CTAs each take
     * ceil(tiles / CTAs) tiles, so how the tile count falls against the
     * CTAs resident at once (SM count x occupancy) decides the tail, and
     * halo overhead favours tall tiles: measure every candidate on this
     * GPU rather than guess. */
    static const int cands[] = {8, 12, 16, 20, 24, 28, 32, 40, 48, 64};
    float best = 1e30f;
    int best_th = 16, best_gm = 0;
    for (int c : cands)
        for (int gm = 0; gm < 2; gm++) {
            float us;
            int rc = time_config(g, algo, var, fmt, c, gm, &us, err, errlen);
            if (rc)
                return rc;
            if (us < best) {
                best = us;
                best_th = c;
                best_gm = gm;
            }
        }
    t->done[var] = 1;
    t->th[var] = best_th;
    t->gm[var] = best_gm;
    t->us[var] = best;
    return 0;
}

extern "C" int pc_gpu_set_algo(pc_gpu *g, pc_algo_id algo, pc_variant variant, pc_cfa cfa, pc_pixfmt fmt,
                               pc_matrix matrix, pc_range range, char *err, size_t errlen)
{
    if (!g) {
        pc_set_err(err, errlen, "pc_gpu_set_algo: no pc_gpu");
        return PC_EINVAL;
    }
    if ((unsigned)algo >= PC_ALGO_COUNT) {
        char names[256];
        pc_algo_names(names, sizeof names);
        pc_set_err(err, errlen, "pc_gpu_set_algo: unknown algorithm id %d (known: %s)", (int)algo, names);
        return PC_EINVAL;
    }
    if ((unsigned)variant > PC_VARIANT_4PX || (unsigned)cfa > PC_CFA_BGGR || (unsigned)fmt > PC_FMT_RGBX32 ||
        (unsigned)matrix > PC_MATRIX_BT601 || (unsigned)range > PC_RANGE_FULL) {
        pc_set_err(err, errlen,
                   "pc_gpu_set_algo(%s): bad argument (variant %d, cfa %d, format %d, matrix %d, range %d)",
                   algo_name(algo), (int)variant, (int)cfa, (int)fmt, (int)matrix, (int)range);
        return PC_EINVAL;
    }
    CK(g, cudaSetDevice(g->device));
    pc_yuv_coeffs yc;
    pc_yuv_coeffs_get(matrix, range, &yc);
    int rcb = set_bands(g, &yc, 1, err, errlen);
    if (rcb)
        return rcb;
    pc_kparams b;
    memset(&b, 0, sizeof b);
    b.src_pitch = (int)g->in_pitch;
    b.W = g->W;
    b.H = g->H;
    b.ox = (cfa == PC_CFA_GRBG || cfa == PC_CFA_BGGR);
    b.oy = (cfa == PC_CFA_GBRG || cfa == PC_CFA_BGGR);
    b.bands = g->d_bands;
    b.band_mul = 0;
    b.n_bands = 1;
    memcpy(b.m0, g->bands_host, sizeof b.m0);
    /* Tuning runs with the new parameters; keep the old ones until it worked. */
    pc_kparams old = g->base;
    g->base = b;
    int kf = fmt, rc = 0;
    int var;
    const pc_cuda_custom *own = pc_cuda_algos[algo].custom;
    if (own) { /* its own implementation: no variants, no tuning */
        var = PC_VARIANT_AUTO;
        if (!g->custom_state[algo])
            rc = own->open(&g->custom_state[algo], g->W, g->H, (void *)g->cs, err, errlen);
        if (!rc)
            rc = default_net(g, algo, err, errlen);
    } else if (variant == PC_VARIANT_AUTO) {
        rc = tune_variant(g, algo, PC_VARIANT_2PX, kf, err, errlen);
        if (!rc)
            rc = tune_variant(g, algo, PC_VARIANT_4PX, kf, err, errlen);
        pc_tune *t = &g->tune[algo][kf];
        var = t->us[PC_VARIANT_4PX] <= t->us[PC_VARIANT_2PX] ? PC_VARIANT_4PX : PC_VARIANT_2PX;
    } else {
        var = variant;
        rc = tune_variant(g, algo, var, kf, err, errlen);
    }
    if (rc) {
        g->base = old;
        return rc;
    }
    g->configured = 1;
    g->algo = algo;
    g->var = var;
    g->fmt = kf;
    g->th = own ? 0 : g->tune[algo][kf].th[var];
    g->gm = own ? 0 : g->tune[algo][kf].gm[var];
    g->th_forced = 0;
    g->cfa = cfa;
    g->matrix = matrix;
    g->range = range;
    return 0;
}

/* An algorithm with weights (net) selected without pc_gpu_set_net's: the
 * default file's (pc_net_default_path), loaded once and kept by g. */
static int default_net(pc_gpu *g, int algo, char *err, size_t errlen)
{
    const pc_cuda_custom *own = pc_cuda_algos[algo].custom;
    if (!own->set_net || g->custom_net[algo])
        return 0;
    int rc = g->net_own ? 0 : pc_net_load(&g->net_own, pc_net_default_path(), err, errlen);
    if (!rc)
        rc = own->set_net(g->custom_state[algo], g->net_own, (void *)g->cs, err, errlen);
    g->custom_net[algo] = rc == 0;
    return rc;
}

extern "C" int pc_gpu_set_net(pc_gpu *g, const pc_net *net, char *err, size_t errlen)
{
    if (!g) {
        pc_set_err(err, errlen, "pc_gpu_set_net: no pc_gpu");
        return PC_EINVAL;
    }
    pc_netg_layout lay;
    int rc = net ? pc_netg_plan(net, &lay, err, errlen) : 0;
    if (rc)
        return rc;
    CK(g, cudaSetDevice(g->device));
    for (int a = 0; a < PC_ALGO_COUNT && !rc; a++) {
        const pc_cuda_custom *own = pc_cuda_algos[a].custom;
        if (!own || !own->set_net)
            continue;
        if (!net) { /* the default file's, from the next selection on */
            g->custom_net[a] = g->custom_net[a] && !g->net_given;
            continue;
        }
        if (!g->custom_state[a])
            rc = own->open(&g->custom_state[a], g->W, g->H, (void *)g->cs, err, errlen);
        if (!rc)
            rc = own->set_net(g->custom_state[a], net, (void *)g->cs, err, errlen);
        g->custom_net[a] = rc == 0;
    }
    g->net_given = net && !rc;
    return rc;
}

/* An own-implementation algorithm's state (cuda_launch.h), opened here if
 * it was not yet: for its bench and test calls (cuda_net.cu). */
void *pc_gpu_custom_state(pc_gpu *g, int algo, char *err, size_t errlen)
{
    if (!g || algo < 0 || algo >= PC_ALGO_COUNT || !pc_cuda_algos[algo].custom) {
        pc_set_err(err, errlen, "no pc_gpu, or algorithm %d has no CUDA implementation of its own", algo);
        return NULL;
    }
    if (cudaSetDevice(g->device) != cudaSuccess) {
        pc_set_err(err, errlen, "cudaSetDevice(%d) failed", g->device);
        return NULL;
    }
    if (!g->custom_state[algo] &&
        pc_cuda_algos[algo].custom->open(&g->custom_state[algo], g->W, g->H, (void *)g->cs, err, errlen))
        return NULL;
    return g->custom_state[algo];
}

extern "C" int pc_gpu_set_cam_rows(pc_gpu *g, int cam_rows, char *err, size_t errlen)
{
    if (!g) {
        pc_set_err(err, errlen, "pc_gpu_set_cam_rows: no pc_gpu");
        return PC_EINVAL;
    }
    if (cam_rows && (cam_rows < PC_MIN_DIM || (cam_rows & 1) || g->H % cam_rows)) {
        pc_set_err(err, errlen, "pc_gpu_set_cam_rows: cameras of %d rows must be even, at least %d and divide the "
                   "%d-row frame", cam_rows, PC_MIN_DIM, g->H);
        return PC_EINVAL;
    }
    g->cam_rows = cam_rows;
    return 0;
}

extern "C" void pc_gpu_get_choice(const pc_gpu *g, pc_variant *variant, int *tile_rows)
{
    if (variant)
        *variant = !g || !g->configured ? PC_VARIANT_AUTO : (pc_variant)g->var;
    if (tile_rows)
        *tile_rows = g && g->configured ? (g->th_forced ? g->th_forced : g->th) : 0;
}

extern "C" int pc_gpu_set_tile_rows(pc_gpu *g, int rows, char *err, size_t errlen)
{
    if (!g || !g->configured) {
        pc_set_err(err, errlen, "pc_gpu_set_tile_rows: call pc_gpu_set_algo first");
        return PC_EINVAL;
    }
    if (rows != 0 && pc_cuda_algos[g->algo].custom) {
        pc_set_err(err, errlen, "pc_gpu_set_tile_rows: %s has its own CUDA implementation (no tiles to size)",
                   algo_name(g->algo));
        return PC_EINVAL;
    }
    if (rows != 0 && (rows < PC_TH_MIN || rows > PC_TH_MAX || (rows & 3))) {
        pc_set_err(err, errlen, "pc_gpu_set_tile_rows: %d rows, must be a multiple of 4 from %d to %d", rows,
                   PC_TH_MIN, PC_TH_MAX);
        return PC_EINVAL;
    }
    g->th_forced = rows;
    return 0;
}

extern "C" uint8_t *pc_gpu_input(pc_gpu *g, int slot, size_t *pitch)
{
    if (!g || slot < 0 || slot >= g->nslots)
        return NULL;
    if (pitch)
        *pitch = g->in_pitch;
    return g->in[slot];
}

static int check_slot(pc_gpu *g, int slot, const char *fn, char *err, size_t errlen)
{
    if (!g) {
        pc_set_err(err, errlen, "%s: no pc_gpu", fn);
        return PC_EINVAL;
    }
    if (slot < 0 || slot >= g->nslots) {
        pc_set_err(err, errlen, "%s: slot %d out of range (0..%d; frame %dx%d)", fn, slot, g->nslots - 1, g->W, g->H);
        return PC_EINVAL;
    }
    return 0;
}

extern "C" int pc_gpu_upload_async(pc_gpu *g, int slot, int row0, const uint8_t *host, size_t host_pitch,
                                   int rows, char *err, size_t errlen)
{
    int rc = check_slot(g, slot, "pc_gpu_upload_async", err, errlen);
    if (rc)
        return rc;
    if (!host || rows <= 0 || row0 < 0 || row0 + rows > g->H || host_pitch < (size_t)g->W) {
        pc_set_err(err, errlen,
                   "pc_gpu_upload_async: rows %d..%d of a %dx%d frame from %p (pitch %zu): out of range",
                   row0, row0 + rows - 1, g->W, g->H, (const void *)host, host_pitch);
        return PC_EINVAL;
    }
    /* Do not overwrite the slot while a kernel still reads it. */
    if (g->consumed[slot])
        CK(g, cudaStreamWaitEvent(g->up, g->consumed[slot], 0));
    CK(g, cudaMemcpy2DAsync(g->in[slot] + (size_t)row0 * g->in_pitch, g->in_pitch, host, host_pitch, g->W, rows,
                            cudaMemcpyHostToDevice, g->up));
    g->uploaded[slot] = 1;
    rows_written(g, slot, row0, rows);
    return fill_margins(g, slot, row0, rows, g->up, err, errlen);
}

extern "C" int pc_gpu_input_written(pc_gpu *g, int slot, int row0, int rows, char *err, size_t errlen)
{
    int rc = check_slot(g, slot, "pc_gpu_input_written", err, errlen);
    if (rc)
        return rc;
    if (rows <= 0 || row0 < 0 || row0 + rows > g->H) {
        pc_set_err(err, errlen, "pc_gpu_input_written: rows %d..%d outside the %dx%d frame", row0, row0 + rows - 1,
                   g->W, g->H);
        return PC_EINVAL;
    }
    g->uploaded[slot] = 1;
    rows_written(g, slot, row0, rows);
    return fill_margins(g, slot, row0, rows, g->up, err, errlen);
}

static int ensure_luts(pc_gpu *g, char *err, size_t errlen)
{
    if (g->d_luts)
        return 0;
    size_t bytes = (size_t)PC_GPU_MAX_CAMERAS * 3 * PC_CLUT_STRIDE;
    CK(g, cudaMalloc((void **)&g->d_luts, bytes));
    CK(g, cudaMemsetAsync(g->d_luts, 0, bytes, g->up));
    return 0;
}

extern "C" int pc_gpu_set_colour_tables(pc_gpu *g, int cam, const pc_colour_tables *t, char *err, size_t errlen)
{
    if (!g || !t || cam < 0 || cam >= PC_GPU_MAX_CAMERAS || (t->bits != 8 && t->bits != 10 && t->bits != 12)) {
        pc_set_err(err, errlen, "pc_gpu_set_colour_tables: camera %d (0..%d) or tables (%d bits) invalid", cam,
                   PC_GPU_MAX_CAMERAS - 1, t ? t->bits : 0);
        return PC_EINVAL;
    }
    CK(g, cudaSetDevice(g->device));
    if (ensure_luts(g, err, errlen))
        return PC_EDEVICE;
    /* pageable source: the driver stages these few KB at once */
    for (int c = 0; c < 3; c++)
        CK(g, cudaMemcpyAsync(g->d_luts + ((size_t)cam * 3 + c) * PC_CLUT_STRIDE, t->lut[c], (size_t)1 << t->bits,
                              cudaMemcpyHostToDevice, g->up));
    return 0;
}

/* The colour pass over the slabs of ncam cameras cams[] (format f, rows
 * each; camera k's raw stream at src + k * src_cam, its rows at dst0 + k *
 * rows * pitch, its tables at luts + k * 3 * PC_CLUT_STRIDE), one launch.
 * margins: also fill the rows' left/right margins (what fill_margins
 * does, in the same pass). */
static int colour_launch(pc_gpu *g, uint8_t *dst0, const uint8_t *src, size_t src_cam, const uint8_t *luts,
                         const pc_rawfmt *f, const int *cams, int ncam, int rows, int margins, cudaStream_t s,
                         char *err, size_t errlen)
{
    pc_cparams p;
    memset(&p, 0, sizeof p);
    p.src = src;
    p.src_cam = (long long)src_cam;
    p.lut = luts;
    p.dst = dst0;
    p.dst_pitch = (long long)g->in_pitch;
    p.W = g->W;
    p.rows = rows;
    p.packing = (int)f->packing;
    p.bits = f->bits;
    p.cfa = (int)f->cfa;
    p.ml = margins ? PC_HX : 0;
    p.mr = margins ? g->margin_r : 0;
    p.ncam = ncam;
    for (int i = 0; i < ncam; i++)
        p.cams |= (unsigned long long)cams[i] << (4 * i);
    /* persistent CTAs: one wave (as many as fit at once) shared by the
     * cameras, each walking groups of PC_CRPI rows of its camera */
    const size_t smem = pc_colour_smem(p.bits, g->W);
    if (smem > 48 * 1024)
        CK(g, cudaFuncSetAttribute(pc_colour_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    CK(g, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pc_colour_kernel, PC_CNT, smem));
    int need = (rows + PC_CRPI - 1) / PC_CRPI, cap = (per_sm > 0 ? per_sm : 1) * (g->num_sms > 0 ? g->num_sms : 1);
    cap = cap / ncam > 0 ? cap / ncam : 1;
    p.cpc = need < cap ? need : cap;
    pc_colour_kernel<<<ncam * p.cpc, PC_CNT, smem, s>>>(p);
    CK(g, cudaGetLastError());
    return 0;
}

static_assert(PC_GPU_MAX_CAMERAS <= 16, "pc_cparams.cams holds 16 camera indices of 4 bits");

/* Launches the colour pass of the slot's pending slabs (upload stream). */
static int colour_flush(pc_gpu *g, int slot, char *err, size_t errlen)
{
    if (!g->col_pend[slot])
        return 0;
    int cams[PC_GPU_MAX_CAMERAS], n = 0;
    for (int c = 0; c < PC_GPU_MAX_CAMERAS; c++)
        if (g->col_pend[slot] >> c & 1)
            cams[n++] = c;
    const int R = g->col_rows[slot];
    g->col_pend[slot] = 0;
    return colour_launch(g, g->in[slot], g->raw_stage[slot], 2 * (size_t)R * g->W, g->d_luts, &g->col_fmt[slot],
                         cams, n, R, 1, g->up, err, errlen);
}

static int check_rawfmt(const pc_rawfmt *f)
{
    return f && (unsigned)f->packing <= PC_PACK_GVSP && (unsigned)f->cfa <= PC_CFA_BGGR &&
           (f->packing == PC_PACK_8 ? f->bits == 8 : (f->bits == 10 || f->bits == 12));
}

extern "C" int pc_gpu_upload_raw_async(pc_gpu *g, int slot, int row0, const uint8_t *host, const pc_rawfmt *f,
                                       int cam, int rows, char *err, size_t errlen)
{
    int rc = check_slot(g, slot, "pc_gpu_upload_raw_async", err, errlen);
    if (rc)
        return rc;
    if (!host || !check_rawfmt(f) || cam < 0 || cam >= PC_GPU_MAX_CAMERAS || row0 < 0 || rows < 2 ||
        row0 + rows > g->H || ((row0 | rows) & 1)) {
        pc_set_err(err, errlen, "pc_gpu_upload_raw_async: rows %d..%d of a %dx%d frame, camera %d: invalid", row0,
                   row0 + rows - 1, g->W, g->H, cam);
        return PC_EINVAL;
    }
    CK(g, cudaSetDevice(g->device));
    if (ensure_luts(g, err, errlen))
        return PC_EDEVICE;
    if (!g->raw_stage[slot])
        CK(g, cudaMalloc((void **)&g->raw_stage[slot], 2 * (size_t)g->W * g->H + 16));
    if (g->consumed[slot])
        CK(g, cudaStreamWaitEvent(g->up, g->consumed[slot], 0));
    /* A slab of the stacked layout (camera cam at rows cam * rows) waits
     * for the others of its frame: their colour pass is one launch, by
     * the slot's debayer (a launch per slab costs more than the pass
     * itself: 5 launches took 33 us for 8-bit input on an H100). Anything
     * else is mapped at once; slabs waiting that it does not join are
     * mapped first (before its copy lands in the staging buffer). */
    const int stacked = row0 == cam * rows;
    const pc_rawfmt *pf = &g->col_fmt[slot];
    if (g->col_pend[slot] && (!stacked || g->col_rows[slot] != rows || pf->packing != f->packing ||
                              pf->bits != f->bits || pf->cfa != f->cfa || (g->col_pend[slot] >> cam & 1)))
        if (colour_flush(g, slot, err, errlen))
            return PC_EDEVICE;
    /* the camera's stream lands at the same rows' offset of the staging
     * buffer: slabs of one frame never overlap there */
    uint8_t *stage = g->raw_stage[slot] + 2 * (size_t)row0 * g->W;
    CK(g, cudaMemcpyAsync(stage, host, pc_rawfmt_frame_bytes(f, g->W, rows), cudaMemcpyHostToDevice, g->up));
    g->uploaded[slot] = 1;
    if (stacked) {
        g->col_pend[slot] |= 1u << cam;
        g->col_rows[slot] = rows;
        g->col_fmt[slot] = *f;
        return 0;
    }
    const int one = 0;
    if (colour_launch(g, g->in[slot] + (size_t)row0 * g->in_pitch, stage, 0,
                      g->d_luts + (size_t)cam * 3 * PC_CLUT_STRIDE, f, &one, 1, rows, 1, g->up, err, errlen))
        return PC_EDEVICE;
    return 0;
}

extern "C" int pc_gpu_colour_time_us(pc_gpu *g, const pc_rawfmt *f, int ncam, double *us, char *err,
                                     size_t errlen)
{
    if (!g || !check_rawfmt(f) || ncam < 1 || ncam > PC_GPU_MAX_CAMERAS || g->H / ncam < 2) {
        pc_set_err(err, errlen, "pc_gpu_colour_time_us: invalid format or %d cameras", ncam);
        return PC_EINVAL;
    }
    CK(g, cudaSetDevice(g->device));
    if (ensure_luts(g, err, errlen))
        return PC_EDEVICE;
    if (!g->raw_stage[0])
        CK(g, cudaMalloc((void **)&g->raw_stage[0], 2 * (size_t)g->W * g->H + 16));
    CK(g, cudaMemsetAsync(g->raw_stage[0], 0x5A, 2 * (size_t)g->W * g->H, g->cs));
    cudaEvent_t a = g->ev_t0[0], b = g->ev_t1[0];
    /* the frame as the daemon's slabs: ncam cameras of H / ncam rows
     * (even), one launch */
    int cams[PC_GPU_MAX_CAMERAS];
    for (int c = 0; c < ncam; c++)
        cams[c] = c;
    const int R = (g->H / ncam) & ~1;
    for (int i = -1; i < 20; i++) {
        if (i == 0)
            CK(g, cudaEventRecord(a, g->cs));
        if (colour_launch(g, g->in[0], g->raw_stage[0], 2 * (size_t)R * g->W, g->d_luts, f, cams, ncam, R, 1, g->cs,
                          err, errlen))
            return PC_EDEVICE;
    }
    CK(g, cudaEventRecord(b, g->cs));
    CK(g, cudaEventSynchronize(b));
    float ms;
    CK(g, cudaEventElapsedTime(&ms, a, b));
    g->timed[0] = 0;
    *us = ms * 1000.0 / 20;
    return 0;
}

extern "C" int pc_gpu_margin_time_us(pc_gpu *g, double *us, char *err, size_t errlen)
{
    cudaEvent_t a = g->ev_t0[0], b = g->ev_t1[0];
    CK(g, cudaEventRecord(a, g->cs));
    for (int i = 0; i < 10; i++)
        if (fill_margins(g, i % g->nslots, 0, g->H, g->cs, err, errlen))
            return PC_EDEVICE;
    CK(g, cudaEventRecord(b, g->cs));
    CK(g, cudaEventSynchronize(b));
    float ms;
    CK(g, cudaEventElapsedTime(&ms, a, b));
    g->timed[0] = 0;
    *us = ms * 100.0;
    return 0;
}

static int check_pic(pc_gpu *g, const pc_picture *p, pc_pixfmt fmt, const char *what, char *err, size_t errlen)
{
    int np = pc_pixfmt_planes(fmt), sw = 0, sh = 0;
    if (p)
        pc_picture_source_size(p, &sw, &sh); /* a grid picture's source: the frame */
    if (!p || p->fmt != fmt || sw != g->W || sh != g->H ||
        (p->grid_cols > 1 && (p->tile_rows < 2 || (p->tile_rows & 1) || g->H % p->tile_rows ||
                              (g->H / p->tile_rows) % p->grid_cols || p->width % p->grid_cols ||
                              g->W % PC_GRID_TILE_ALIGN))) {
        pc_set_err(err, errlen, "%s picture: must be %s %dx%d or a grid of its whole cameras, each a multiple of %d "
                   "pixels wide (got %s %dx%d, %d tile columns of %d rows)", what, pc_pixfmt_name(fmt), g->W, g->H,
                   PC_GRID_TILE_ALIGN, p ? pc_pixfmt_name(p->fmt) : "none",
                   p ? p->width : 0, p ? p->height : 0, p ? p->grid_cols : 0, p ? p->tile_rows : 0);
        return PC_EINVAL;
    }
    if (p->grid_cols > 1 && fmt == PC_FMT_RGBX32) { /* no grid kernels (cuda_common.cuh, PC_KFMT_GRID) */
        pc_set_err(err, errlen, "%s picture: rgbx32 has no grid layout (%d tile columns); it is a stacked texture "
                   "source, grids are for the encoder's nv12/i420", what, p->grid_cols);
        return PC_EINVAL;
    }
    const size_t align = pc_gpu_dst_align(fmt);
    for (int i = 0; i < np; i++) {
        size_t need;
        pc_picture_plane_size(fmt, p->width, p->height, i, NULL, NULL, &need);
        if (!p->plane[i] || p->pitch[i] < need || ((uintptr_t)p->plane[i] & (align - 1)) ||
            (p->pitch[i] & (align - 1)) || p->pitch[i] > 0x7fffffff) {
            pc_set_err(err, errlen, "%s %s picture plane %d: pointer %p / pitch %zu invalid (need a pointer and a pitch that are multiples of %zu, pitch >= %zu; frame %dx%d)",
                       what, pc_pixfmt_name(fmt), i, (void *)p->plane[i], p->pitch[i], align, need, g->W, g->H);
            return PC_EINVAL;
        }
    }
    return 0;
}

extern "C" int pc_gpu_debayer(pc_gpu *g, int slot, const pc_picture *dst, char *err, size_t errlen)
{
    int rc = check_slot(g, slot, "pc_gpu_debayer", err, errlen);
    if (rc)
        return rc;
    if (!g->configured) {
        pc_set_err(err, errlen, "pc_gpu_debayer: no algorithm set (call pc_gpu_set_algo; frame %dx%d)", g->W, g->H);
        return PC_EINVAL;
    }
    pc_pixfmt fmt = (pc_pixfmt)g->fmt;
    if ((rc = check_pic(g, dst, fmt, "pc_gpu_debayer: destination", err, errlen)))
        return rc;
    if (!pc_pixfmt_is_rgb(fmt) && (dst->matrix != g->matrix || dst->range != g->range)) {
        pc_set_err(err, errlen, "pc_gpu_debayer(%s): destination matrix/range differ from pc_gpu_set_algo's", algo_name(g->algo));
        return PC_EINVAL;
    }
    const pc_cuda_custom *own = pc_cuda_algos[g->algo].custom;
    pc_graph *x = NULL;
    pc_kparams kp = g->base;
    int kfmt = fmt; /* the kernel's format: + PC_KFMT_COL when a band's matrix needs it */
    if (!own && !pc_pixfmt_is_rgb(fmt)) {
        /* per-camera matrices (the colour matrix folded in), or the plain
         * §8 one */
        if (dst->bands) {
            if (dst->n_bands < 1 || dst->n_bands > PC_KMAX_BANDS || dst->band_rows < 2 || (dst->band_rows & 1)) {
                pc_set_err(err, errlen, "pc_gpu_debayer(%s): %d colour bands of %d rows (1..%d bands of an even "
                           "number of rows)", algo_name(g->algo), dst->n_bands, dst->band_rows, PC_KMAX_BANDS);
                return PC_EINVAL;
            }
            rc = set_bands(g, dst->bands, dst->n_bands, err, errlen);
            kp.n_bands = dst->n_bands;
            kp.band_mul = dst->n_bands > 1 ? (unsigned)((1ull << 32) / (unsigned)dst->band_rows + 1) : 0u;
        } else {
            pc_yuv_coeffs yc;
            pc_yuv_coeffs_get(g->matrix, g->range, &yc);
            rc = set_bands(g, &yc, 1, err, errlen);
        }
        if (rc)
            return rc;
        memcpy(kp.m0, g->bands_host, sizeof kp.m0);
        if (!pc_bands_plain(g->bands_host, g->bands_n)) {
            kfmt += PC_KFMT_COL;
            /* the matrices into the kernel file's constant memory, on the
             * compute stream before the kernel, when they changed */
            if (g->cbands_ver[g->algo] != g->bands_ver + 1) {
                CK(g, (cudaError_t)kset(g->algo)->set_bands(g->bands_host, g->bands_n, (void *)g->cs));
                g->cbands_ver[g->algo] = g->bands_ver + 1;
            }
        }
    }
    if (!own && dst->grid_cols > 1)
        kfmt += PC_KFMT_GRID; /* the kernel with the grid's stores */
    if (!own) {
        int th = g->th_forced ? g->th_forced : g->th;
        if ((rc = get_graph(g, g->algo, g->var, kfmt, th, g->th_forced ? 0 : g->gm, &x, err, errlen)))
            return rc;
        kp.th = th;
        kp.src = g->in[slot];
        set_dst(&kp, dst);
    }
    /* The colour pass of the slot's raw slabs, one launch for the frame. */
    if ((rc = colour_flush(g, slot, err, errlen)))
        return rc;
    /* Order after the slot's uploads; skipped when nothing was uploaded
     * since its last debayer (re-processing a frame, benchmarks): the
     * cross-stream wait costs GPU front-end time every frame. */
    if (g->uploaded[slot]) {
        CK(g, cudaEventRecord(g->ev_up[slot], g->up));
        CK(g, cudaStreamWaitEvent(g->cs, g->ev_up[slot], 0));
        g->uploaded[slot] = 0;
    }
    /* One event per frame by default (every event record between two
     * kernels costs the GPU about 0.6 us); a timed pair on request. */
    const int timing = (g->options & PC_GPU_OPT_FRAME_TIMING) != 0;
    if (timing)
        CK(g, cudaEventRecord(g->ev_t0[slot], g->cs));
    if (own) {
        pc_cuda_frame f;
        f.src = g->in[slot];
        f.src_pitch = g->in_pitch;
        f.W = g->W;
        f.H = g->H;
        f.cam_rows = g->cam_rows;
        f.cfa = g->cfa;
        f.dst = dst;
        pc_yuv_coeffs_get(g->matrix, g->range, &f.yc);
        if ((rc = own->enqueue(g->custom_state[g->algo], &f, (void *)g->cs, err, errlen)))
            return rc;
    } else if (g->options & PC_GPU_OPT_STREAM_LAUNCH) {
        void *args[] = {&kp};
        CK(g, cudaLaunchKernel(kfn(x->algo, x->var, x->fmt), x->grid, dim3(PC_NT), args, x->smem, g->cs));
    } else if ((rc = launch(g, x, &kp, err, errlen))) {
        return rc;
    }
    cudaEvent_t done = timing ? g->ev_t1[slot] : g->ev_used[slot];
    CK(g, cudaEventRecord(done, g->cs));
    g->consumed[slot] = done;
    g->last_ev[slot] = done;
    g->timed[slot] = timing;
    return 0;
}

extern "C" void pc_gpu_set_options(pc_gpu *g, unsigned options)
{
    if (g)
        g->options = options;
}

/* Enqueues copies of every plane of src into dst (same format and size;
 * either may be host or device memory: the direction comes from the
 * pointers, cudaMemcpyDefault under unified addressing) on the compute
 * stream, then the slot's completion event. what names the caller. */
static int copy_picture_async(pc_gpu *g, int slot, const pc_picture *src, const pc_picture *dst, const char *what,
                              char *err, size_t errlen)
{
    int rc = check_slot(g, slot, what, err, errlen);
    if (rc)
        return rc;
    if (!src || !dst || src->fmt != dst->fmt || src->width != dst->width || src->height != dst->height ||
        (unsigned)src->fmt > PC_FMT_RGBX32) {
        pc_set_err(err, errlen, "%s: device and host pictures differ or are missing (frame %dx%d)", what, g->W, g->H);
        return PC_EINVAL;
    }
    int np = pc_pixfmt_planes(src->fmt);
    for (int i = 0; i < np; i++) {
        size_t w;
        int h;
        pc_picture_plane_size(src->fmt, src->width, src->height, i, NULL, &h, &w);
        if (!src->plane[i] || !dst->plane[i] || src->pitch[i] < w || dst->pitch[i] < w) {
            pc_set_err(err, errlen, "%s: plane %d missing or pitch too small (frame %dx%d)", what, i, g->W, g->H);
            return PC_EINVAL;
        }
        CK(g, cudaMemcpy2DAsync(dst->plane[i], dst->pitch[i], src->plane[i], src->pitch[i], w, h,
                                cudaMemcpyDefault, g->cs));
    }
    CK(g, cudaEventRecord(g->ev_done[slot], g->cs));
    g->last_ev[slot] = g->ev_done[slot];
    return 0;
}

extern "C" int pc_gpu_download_async(pc_gpu *g, int slot, const pc_picture *dev, const pc_picture *host, char *err,
                                     size_t errlen)
{
    return copy_picture_async(g, slot, dev, host, "pc_gpu_download_async", err, errlen);
}

extern "C" int pc_gpu_picture_upload_async(pc_gpu *g, int slot, const pc_picture *host, const pc_picture *dev,
                                           char *err, size_t errlen)
{
    return copy_picture_async(g, slot, host, dev, "pc_gpu_picture_upload_async", err, errlen);
}

/* Box filter, k x k samples per output sample, rounded as
 * pc_picture_downscale (core/picture.c) rounds: bit-identical. */
__global__ void pc_down_y_kernel(const uint8_t *s, size_t sp, uint8_t *d, size_t dp, int dw, int dh, int k)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= dw || y >= dh)
        return;
    unsigned sum = 0, n = (unsigned)(k * k);
    for (int j = 0; j < k; j++) {
        const uint8_t *r = s + (size_t)(y * k + j) * sp + (size_t)x * k;
        for (int i = 0; i < k; i++)
            sum += r[i];
    }
    d[(size_t)y * dp + x] = (uint8_t)((sum + n / 2) / n);
}

__global__ void pc_down_uv_kernel(const uint8_t *s, size_t sp, uint8_t *d, size_t dp, int cw, int ch, int k)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cw || y >= ch)
        return;
    unsigned n = (unsigned)(k * k);
    for (int c = 0; c < 2; c++) {
        unsigned sum = 0;
        for (int j = 0; j < k; j++) {
            const uint8_t *r = s + (size_t)(y * k + j) * sp + 2 * (size_t)x * k + c;
            for (int i = 0; i < k; i++)
                sum += r[2 * i];
        }
        d[(size_t)y * dp + 2 * x + c] = (uint8_t)((sum + n / 2) / n);
    }
}

extern "C" int pc_gpu_downscale_async(pc_gpu *g, int slot, const pc_picture *dev, const pc_picture *dst, int scale,
                                      char *err, size_t errlen)
{
    int rc = check_slot(g, slot, "pc_gpu_downscale_async", err, errlen);
    if (rc)
        return rc;
    if (!dev || !dst || dev->fmt != PC_FMT_NV12 || dst->fmt != PC_FMT_NV12 || scale < 1 ||
        dst->width != ((dev->width / scale) & ~1) || dst->height != ((dev->height / scale) & ~1) || dst->width < 2 ||
        dst->height < 2) {
        pc_set_err(err, errlen, "pc_gpu_downscale_async: NV12 pictures of %dx%d and of that size / %d (even) wanted "
                   "(frame %dx%d)", dev ? dev->width : 0, dev ? dev->height : 0, scale, g->W, g->H);
        return PC_EINVAL;
    }
    /* staged in the scratch picture (3*W*H bytes; used by tuning only,
     * which runs on this stream too: stream order keeps them apart) */
    int dw = dst->width, dh = dst->height;
    size_t sp = ((size_t)dw + 255) & ~(size_t)255;
    if (sp * (size_t)dh * 3 / 2 > scratch_bytes(g->W, g->H)) {
        pc_set_err(err, errlen, "pc_gpu_downscale_async: %dx%d does not fit the staging picture (frame %dx%d)", dw, dh,
                   g->W, g->H);
        return PC_EINVAL;
    }
    uint8_t *sy = g->scratch, *suv = g->scratch + sp * (size_t)dh;
    dim3 blk(32, 8);
    pc_down_y_kernel<<<dim3((dw + 31) / 32, (dh + 7) / 8), blk, 0, g->cs>>>(dev->plane[0], dev->pitch[0], sy, sp, dw,
                                                                           dh, scale);
    CK(g, cudaGetLastError());
    pc_down_uv_kernel<<<dim3((dw / 2 + 31) / 32, (dh / 2 + 7) / 8), blk, 0, g->cs>>>(dev->plane[1], dev->pitch[1], suv,
                                                                                   sp, dw / 2, dh / 2, scale);
    CK(g, cudaGetLastError());
    CK(g, cudaMemcpy2DAsync(dst->plane[0], dst->pitch[0], sy, sp, (size_t)dw, (size_t)dh, cudaMemcpyDefault, g->cs));
    CK(g, cudaMemcpy2DAsync(dst->plane[1], dst->pitch[1], suv, sp, (size_t)dw, (size_t)dh / 2, cudaMemcpyDefault,
                            g->cs));
    CK(g, cudaEventRecord(g->ev_done[slot], g->cs));
    g->last_ev[slot] = g->ev_done[slot];
    return 0;
}

extern "C" int pc_gpu_slot_mark(pc_gpu *g, int slot, char *err, size_t errlen)
{
    int rc = check_slot(g, slot, "pc_gpu_slot_mark", err, errlen);
    if (rc)
        return rc;
    CK(g, cudaEventRecord(g->ev_done[slot], g->cs));
    g->last_ev[slot] = g->ev_done[slot];
    return 0;
}

extern "C" int pc_gpu_device(const pc_gpu *g) { return g ? g->device : -1; }

extern "C" int pc_gpu_slot_wait(pc_gpu *g, int slot, char *err, size_t errlen)
{
    int rc = check_slot(g, slot, "pc_gpu_slot_wait", err, errlen);
    if (rc)
        return rc;
    if (g->last_ev[slot])
        CK(g, cudaEventSynchronize(g->last_ev[slot]));
    return 0;
}

extern "C" int pc_gpu_sync(pc_gpu *g, char *err, size_t errlen)
{
    if (!g) {
        pc_set_err(err, errlen, "pc_gpu_sync: no pc_gpu");
        return PC_EINVAL;
    }
    CK(g, cudaStreamSynchronize(g->up));
    CK(g, cudaStreamSynchronize(g->cs));
    return 0;
}

extern "C" int pc_gpu_frame_time_us(pc_gpu *g, int slot, double *us, char *err, size_t errlen)
{
    int rc = check_slot(g, slot, "pc_gpu_frame_time_us", err, errlen);
    if (rc)
        return rc;
    if (!g->timed[slot]) {
        pc_set_err(err, errlen, "pc_gpu_frame_time_us: slot %d has no timed frame (set PC_GPU_OPT_FRAME_TIMING)", slot);
        return PC_EINVAL;
    }
    float ms;
    CK(g, cudaEventElapsedTime(&ms, g->ev_t0[slot], g->ev_t1[slot]));
    *us = ms * 1000.0;
    return 0;
}

extern "C" int pc_gpu_picture_alloc(pc_gpu *g, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width,
                                    int height, pc_picture *out, char *err, size_t errlen)
{
    if (!g || !out || pc_pixfmt_planes(fmt) == 0 || width < 1 || height < 1) {
        pc_set_err(err, errlen, "pc_gpu_picture_alloc: bad arguments (%dx%d, format %d)", width, height, (int)fmt);
        return PC_EINVAL;
    }
    memset(out, 0, sizeof *out);
    out->fmt = fmt;
    out->matrix = matrix;
    out->range = range;
    out->width = width;
    out->height = height;
    int np = pc_pixfmt_planes(fmt);
    CK(g, cudaSetDevice(g->device));
    for (int i = 0; i < np; i++) {
        size_t w;
        int h;
        pc_picture_plane_size(fmt, width, height, i, NULL, &h, &w);
        cudaError_t e = cudaMallocPitch((void **)&out->plane[i], &out->pitch[i], w, h);
        if (e != cudaSuccess) {
            pc_gpu_picture_free(g, out);
            CK(g, e);
        }
    }
    return 0;
}

extern "C" void pc_gpu_picture_free(pc_gpu *g, pc_picture *pic)
{
    if (!pic)
        return;
    if (g)
        cudaSetDevice(g->device);
    for (int i = 0; i < 3; i++) {
        if (pic->plane[i])
            cudaFree(pic->plane[i]);
        pic->plane[i] = NULL;
    }
}

extern "C" int pc_gpu_host_alloc(size_t bytes, void **out, char *err, size_t errlen)
{
    pc_gpu *g = NULL; /* for CK's message */
    if (!out || !bytes) {
        pc_set_err(err, errlen, "pc_gpu_host_alloc: bad arguments");
        return PC_EINVAL;
    }
    *out = NULL;
    CK(g, cudaHostAlloc(out, bytes, cudaHostAllocPortable));
    return 0;
}

extern "C" void pc_gpu_host_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}
