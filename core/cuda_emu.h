/* cuda_emu.h - a tiny host emulation of the CUDA subset the kernels use.
 *
 * Why: the GPU tests only run where a device exists (not in CI, and device
 * time is scarce), yet the kernels' tiling, mirroring and phase handling are
 * exactly where bugs hide. Including the kernel headers (cuda_kernel.cuh)
 * after this file compiles them as plain C++: every CUDA thread becomes a
 * coroutine (cuda_emu_sched.cc), __syncthreads() switches to the next
 * thread of the block, and a block finishes when all its threads returned.
 * The result is bit-identical to the device for race-free kernels, so CI
 * checks the real kernel code against the C reference without a GPU.
 *
 * Only what the kernels use is provided: threadIdx/blockIdx/blockDim/
 * gridDim, __syncthreads, dynamic shared memory (PC_SMEM), uint4/uint2, and the
 * intrinsics __byte_perm, __umulhi, __fdividef, __fmaf_rd, __saturatef, __ldg, __int_as_float,
 * __float_as_int, __float_as_uint, and atomicAdd on unsigned (the activity map's counts).
 * For the render kernels (cuda_render.cuh): float2/float4,
 * __ffs, __popc, __grid_constant__, and a texture object whose tex2D<float4>
 * filters as the texture unit does (linear filtering of 8-bit RGBA read as
 * normalised floats, clamp addressing, unnormalised coordinates, weights
 * with 8 fractional bits). For the tensor-core kernels (cuda_net.cuh):
 * fp16, warp shuffles, __syncwarp, ldmatrix, mma.sync and cp.async as warp
 * collectives of all 32 lanes, and Hopper's wgmma with A in registers
 * (cuda_emu_warp.h).
 */
#ifndef PANOCAP_CUDA_EMU_H
#define PANOCAP_CUDA_EMU_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <ucontext.h>

#include <algorithm>
#include <functional>
#include <vector>

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint4 {
    unsigned x, y, z, w;
};
struct uint2 {
    unsigned x, y;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
struct float2 {
    float x, y;
};
struct float4 {
    float x, y, z, w;
};
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
#define __grid_constant__

namespace pc_emu {

/* A coroutine's saved state: the stack pointer of the fast switch
 * (cuda_emu_sched.cc: x86-64 without ThreadSanitizer), or a ucontext
 * elsewhere; under AddressSanitizer also its fake stack and bounds (the
 * fiber annotations tell ASan which stack is live). */
struct context {
    void *sp = nullptr;
    ucontext_t uc;
    void *fake = nullptr;
    const void *bottom = nullptr;
    size_t size = 0;
};

/* One mma.sync of a lane, deferred until the warp's next collective
 * operation (cuda_emu_warp.h): d += A * B with the lane's fragments. */
struct mma_rec {
    float *d;
    unsigned a[4], b[2];
};

/* One wgmma.mma_async (m64n64k16, A in registers) of a lane, executed at
 * the warp's wgmma.wait_group that covers its group (cuda_emu_warp.h):
 * d (8 x 4 floats) += A B, A from the lane's fragment, B read from shared
 * memory through the descriptor then. */
struct wgmma_rec {
    float *d;
    unsigned a[4];
    uint64_t desc;
    unsigned group;
};

/* What a lane brings to a warp collective operation, and its result. */
struct collective {
    int op;           /* PC_EMU_OP_* (cuda_emu_warp.h) */
    int n;            /* ldmatrix: matrices (1, 2, 4); shfl: width */
    const void *addr; /* ldmatrix: this lane's row address */
    unsigned val;     /* shfl: this lane's value */
    int arg;          /* shfl: source lane, lane mask or delta */
    unsigned mask;    /* the member mask given */
    unsigned out[4];  /* the lane's result */
};

/* One cp.async of a lane, performed when a cp.async.wait_group covers
 * its group (the device may complete it any time before: reading the
 * destination earlier is a race, which the emulation shows as stale data). */
struct cp_rec {
    void *dst;
    const void *src;
    unsigned bytes, group;
};

enum { PC_EMU_RUN, PC_EMU_BAR, PC_EMU_WARP, PC_EMU_DONE };
#define PC_EMU_STACK (256 * 1024)
/* Warp collective operations (cuda_emu_warp.h). */
enum {
    PC_EMU_OP_SYNCWARP = 1,
    PC_EMU_OP_LDSM,       /* ldmatrix.sync.aligned.m8n8.xN.shared.b16 */
    PC_EMU_OP_LDSM_TRANS, /* the same with .trans */
    PC_EMU_OP_SHFL_IDX,
    PC_EMU_OP_SHFL_XOR,
    PC_EMU_OP_SHFL_DOWN,
    PC_EMU_OP_SHFL_UP,
    PC_EMU_OP_WGMMA_WAIT, /* wgmma.wait_group.sync.aligned N (n = N) */
};

struct thread {
    context ctx;
    dim3 tid;
    int lin, lane, warp;
    int st; /* PC_EMU_RUN .. DONE */
    char *stack; /* PC_EMU_STACK bytes: a pooled stack (cuda_emu_sched.cc) */
    std::vector<mma_rec> mma;
    collective c;
    std::vector<cp_rec> cp;
    unsigned cp_group; /* groups committed so far */
    std::vector<wgmma_rec> wg;
    unsigned wg_group; /* wgmma groups committed so far */
};

/* Counters over every launch since the last reset (the test reads them):
 * ldmatrix phases (one 8x8 matrix each: 8 rows of 16 bytes) and the
 * shared-memory wavefronts they take (one per phase without bank
 * conflicts); mma.sync and warp collectives executed. */
struct counters {
    unsigned long long ldsm_phases, ldsm_wavefronts, mma, collectives, wgmma;
};

/* The emulator's state lives in one object per launch; these point at it. */
struct state {
    context sched;
    int sched_known; /* sched's stack bounds learnt (ASan) */
    thread *cur;
    dim3 block_idx, block_dim, grid_dim;
    std::vector<unsigned char> smem;
    std::function<void()> body;
    std::vector<thread> th;
    int nt, bar;
    std::vector<int> warp_arrived, warp_lanes;
    /* per warp: the wgmma it executed in the block and a hash of their
     * descriptors (the four warps of a warpgroup must agree) */
    std::vector<unsigned long long> wg_count, wg_sig;
};
inline state *&current()
{
    static state *s;
    return s;
}
inline counters &stats()
{
    static counters c;
    return c;
}

/* Runs body once per thread of every block (blocks one after another, the
 * threads of a block as coroutines that switch at __syncthreads() and at
 * warp collectives); returns 0, or -1 when the block cannot finish: threads
 * that wait at a barrier or a warp collective that some others never reach
 * (they returned, or wait elsewhere): a kernel bug. */
int launch(dim3 grid, dim3 block, size_t smem_bytes, std::function<void()> body);
/* __syncthreads(): the last thread to arrive completes every warp's
 * deferred mma and goes on; the others wait. */
void syncthreads();
/* The calling lane has filled cur->c; returns once the whole warp has
 * arrived and the operation is done (the lane's result in cur->c.out). */
void warp_collective(int op);

} // namespace pc_emu

#define threadIdx (pc_emu::current()->cur->tid)
#define blockIdx (pc_emu::current()->block_idx)
#define blockDim (pc_emu::current()->block_dim)
#define gridDim (pc_emu::current()->grid_dim)
#define __syncthreads() pc_emu::syncthreads()

static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    uint64_t v = (uint64_t)x | ((uint64_t)y << 32);
    unsigned r = 0;
    for (int i = 0; i < 4; i++) {
        unsigned sel = (s >> (4 * i)) & 7;
        r |= (unsigned)((v >> (8 * sel)) & 0xFF) << (8 * i);
    }
    return r;
}
/* A store of n bytes at d: the device faults on a misaligned one
 * (cudaErrorMisalignedAddress, and the context is lost), so the emulation
 * stops there too, naming it, instead of storing it silently as x86 would. */
static inline void pc_emu_check_align(const void *d, unsigned n)
{
    if ((uintptr_t)d & (n - 1)) {
        fprintf(stderr, "cuda_emu: misaligned %u-byte store at %p: the device would fault here "
                "(cudaErrorMisalignedAddress)\n", n, d);
        abort();
    }
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }
static inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return (x > y ? x - y : y - x) + z; }
static inline int __vimin_s32_relu(int a, int b) { int m = a < b ? a : b; return m > 0 ? m : 0; }
/* per 16-bit lane, signed: max(min(a + b, c), 0) */
static inline unsigned __viaddmin_s16x2_relu(unsigned a, unsigned b, unsigned c)
{
    unsigned r = 0;
    for (int i = 0; i < 2; i++) {
        int s = (int16_t)(a >> (16 * i)) + (int16_t)(b >> (16 * i)), m = (int16_t)(c >> (16 * i));
        s = s < m ? s : m;
        s = s > 0 ? s : 0;
        r |= ((unsigned)s & 0xFFFFu) << (16 * i);
    }
    return r;
}
static inline float __fdividef(float a, float b) { return a / b; }
/* a * b + c rounded down (FFMA.RM): the nearest one, a step down where the
 * exact value lies below it; the sign of exact - nearest from doubles (a
 * * b exact, c - r exact where c and r are not 2^29 apart, one rounding
 * after that, which keeps the sign) */
static inline float __fmaf_rd(float a, float b, float c)
{
    const float r = fmaf(a, b, c);
    const double d = (double)a * b + ((double)c - r);
    return d < 0.0 ? nextafterf(r, -INFINITY) : r;
}
/* clamps to [0, 1]; NaN gives 0, as on the GPU */
static inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
static inline float __int_as_float(int i)
{
    float f;
    memcpy(&f, &i, 4);
    return f;
}
static inline int __float_as_int(float f)
{
    int i;
    memcpy(&i, &f, 4);
    return i;
}
static inline unsigned __float_as_uint(float f)
{
    unsigned i;
    memcpy(&i, &f, 4);
    return i;
}
template <typename T> static inline T __ldg(const T *p) { return *p; }
static inline int __ffs(unsigned v) { return v ? __builtin_ctz(v) + 1 : 0; }
/* atomicAdd as a plain add: an emulated thread runs alone until its next
 * __syncthreads() (or its end), so nothing interleaves with the
 * read-modify-write; blocks run one after another. */
static inline unsigned atomicAdd(unsigned *a, unsigned v)
{
    const unsigned old = *a;
    *a = old + v;
    return old;
}
static inline int __popc(unsigned v) { return __builtin_popcount(v); }

/* A pitched 2D texture of 4 x 8-bit texels (cudaResourceTypePitch2D,
 * uchar4), filterMode linear, readMode normalised float, clamp, unnormalised
 * coordinates. The device's rule (CUDA programming guide, texture
 * fetching): xB = x - 0.5, i = floor(xB), alpha = frac(xB) held in 9-bit
 * fixed point with 8 fractional bits (taken as rounded to nearest), the
 * same for y; T[] clamped to the texture; the four texels weighted
 * (1-a)(1-b), a(1-b), (1-a)b, ab. */
struct pc_emu_tex {
    const uint8_t *base;
    size_t pitch;
    int w, h;
};
typedef const pc_emu_tex *cudaTextureObject_t;

template <class T>
T tex2D(cudaTextureObject_t t, float x, float y);
template <>
inline float4 tex2D<float4>(cudaTextureObject_t t, float x, float y)
{
    const float xb = x - 0.5f, yb = y - 0.5f;
    const float fx = floorf(xb), fy = floorf(yb);
    const float a = rintf((xb - fx) * 256.0f) * (1.0f / 256.0f), b = rintf((yb - fy) * 256.0f) * (1.0f / 256.0f);
    int i0 = (int)fx, j0 = (int)fy, i1 = i0 + 1, j1 = j0 + 1;
    i0 = i0 < 0 ? 0 : (i0 >= t->w ? t->w - 1 : i0);
    i1 = i1 < 0 ? 0 : (i1 >= t->w ? t->w - 1 : i1);
    j0 = j0 < 0 ? 0 : (j0 >= t->h ? t->h - 1 : j0);
    j1 = j1 < 0 ? 0 : (j1 >= t->h ? t->h - 1 : j1);
    const uint8_t *p00 = t->base + (size_t)j0 * t->pitch + 4 * (size_t)i0, *p10 = t->base + (size_t)j0 * t->pitch + 4 * (size_t)i1;
    const uint8_t *p01 = t->base + (size_t)j1 * t->pitch + 4 * (size_t)i0, *p11 = t->base + (size_t)j1 * t->pitch + 4 * (size_t)i1;
    float v[4];
    for (int k = 0; k < 4; k++)
        v[k] = ((1.0f - a) * (1.0f - b) * p00[k] + a * (1.0f - b) * p10[k] + (1.0f - a) * b * p01[k] + a * b * p11[k]) *
               (1.0f / 255.0f);
    return float4{v[0], v[1], v[2], v[3]};
}

using std::max;
using std::min;

#include "cuda_emu_warp.h"

#endif
