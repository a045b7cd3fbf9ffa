/* cuda_emu_warp.h - the warp-level instructions of the tensor-core kernels
 * in the CPU emulation (included by cuda_emu.h): fp16 conversions, warp
 * shuffles, __syncwarp, ldmatrix, mma.sync m16n8k16 (fp16 in, fp32
 * accumulate), cp.async and Hopper's wgmma m64n64k16 with A in registers,
 * under the names cuda_mma.cuh gives their PTX on the device, so the same
 * kernel source runs on both.
 *
 * A warp collective (ldmatrix, shuffle, __syncwarp) waits until all 32
 * lanes have arrived (cuda_emu_sched.cc switches to the other threads),
 * then computes every lane's result as the PTX ISA defines it; mma.sync is
 * recorded and executed at the warp's next collective or barrier, so its
 * accumulators may be read only after one of those (cuda_mma.cuh). The
 * fragment layouts are in cuda_emu_sched.cc with the ISA sections they
 * follow; tests/test_cuda_emu_warp.c checks them against plain matrix
 * products.
 */
#ifndef PANOCAP_CUDA_EMU_WARP_H
#define PANOCAP_CUDA_EMU_WARP_H

#ifndef PANOCAP_CUDA_EMU_H
#error "include cuda_emu.h"
#endif

#include "fp16.h"
#include "wgmma_desc.h"

/* --- fp16 (IEEE binary16, fp16.h) ------------------------------------- */

static inline float pc_emu_half_to_float(unsigned short h) { return pc_half_to_float(h); }
static inline unsigned short pc_emu_float_to_half(float f) { return pc_half_from_float(f); }

struct __half {
    unsigned short x;
};
struct __half2 {
    __half x, y;
};
static inline __half __float2half_rn(float f) { return __half{pc_emu_float_to_half(f)}; }
static inline float __half2float(__half h) { return pc_emu_half_to_float(h.x); }
static inline unsigned short __half_as_ushort(__half h) { return h.x; }
/* .x = a (the low 16 bits), .y = b */
static inline __half2 __floats2half2_rn(float a, float b) { return __half2{__float2half_rn(a), __float2half_rn(b)}; }
static inline float __low2float(__half2 h) { return __half2float(h.x); }
static inline float __high2float(__half2 h) { return __half2float(h.y); }
static inline float2 __half22float2(__half2 h) { return float2{__half2float(h.x), __half2float(h.y)}; }

/* --- warp collectives --------------------------------------------------- */

template <typename T>
static inline T pc_emu_shfl(int op, unsigned mask, T v, int arg, int width)
{
    static_assert(sizeof(T) == 4, "the emulated shuffles move 32-bit values");
    pc_emu::thread *t = pc_emu::current()->cur;
    memcpy(&t->c.val, &v, 4);
    t->c.arg = arg;
    t->c.n = width;
    t->c.mask = mask;
    pc_emu::warp_collective(op);
    T r;
    memcpy(&r, &t->c.out[0], 4);
    return r;
}
template <typename T>
static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
    return pc_emu_shfl(pc_emu::PC_EMU_OP_SHFL_IDX, mask, v, src, width);
}
template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
    return pc_emu_shfl(pc_emu::PC_EMU_OP_SHFL_XOR, mask, v, lane_mask, width);
}
template <typename T>
static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return pc_emu_shfl(pc_emu::PC_EMU_OP_SHFL_DOWN, mask, v, (int)delta, width);
}
template <typename T>
static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return pc_emu_shfl(pc_emu::PC_EMU_OP_SHFL_UP, mask, v, (int)delta, width);
}
static inline void __syncwarp(unsigned mask = 0xFFFFFFFFu)
{
    pc_emu::thread *t = pc_emu::current()->cur;
    t->c.mask = mask;
    t->c.n = 0;
    pc_emu::warp_collective(pc_emu::PC_EMU_OP_SYNCWARP);
}

/* ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: p is this lane's
 * row address (threads 0-7 give matrix 0's rows, 8-15 matrix 1's, ...). */
template <int N>
static inline void pc_emu_ldsm(unsigned *r, const void *p, bool trans)
{
    pc_emu::thread *t = pc_emu::current()->cur;
    t->c.addr = p;
    t->c.n = N;
    t->c.mask = 0xFFFFFFFFu;
    pc_emu::warp_collective(trans ? pc_emu::PC_EMU_OP_LDSM_TRANS : pc_emu::PC_EMU_OP_LDSM);
    for (int j = 0; j < N; j++)
        r[j] = t->c.out[j];
}
static inline void pc_ldsm_x1(unsigned (&r)[1], const void *p) { pc_emu_ldsm<1>(r, p, false); }
static inline void pc_ldsm_x2(unsigned (&r)[2], const void *p) { pc_emu_ldsm<2>(r, p, false); }
static inline void pc_ldsm_x4(unsigned (&r)[4], const void *p) { pc_emu_ldsm<4>(r, p, false); }
static inline void pc_ldsm_x1_t(unsigned (&r)[1], const void *p) { pc_emu_ldsm<1>(r, p, true); }
static inline void pc_ldsm_x2_t(unsigned (&r)[2], const void *p) { pc_emu_ldsm<2>(r, p, true); }
static inline void pc_ldsm_x4_t(unsigned (&r)[4], const void *p) { pc_emu_ldsm<4>(r, p, true); }

/* mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, d += A B: deferred
 * (cuda_emu_sched.cc); d must stay alive and unread until the warp's next
 * collective or barrier. */
static inline void pc_mma_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    pc_emu::mma_rec m;
    m.d = d;
    for (int i = 0; i < 4; i++)
        m.a[i] = a[i];
    m.b[0] = b[0];
    m.b[1] = b[1];
    pc_emu::current()->cur->mma.push_back(m);
}

/* cp.async.cg.shared.global [dst], [src], 16: both 16-byte aligned, dst in
 * shared memory; the copy happens when a wait covers its group. */
static inline void pc_cp_async16(void *dst, const void *src)
{
    pc_emu::state *s = pc_emu::current();
    const unsigned char *b = s->smem.data(), *q = (const unsigned char *)dst;
    if (q < b || q + 16 > b + s->smem.size() - 16 || ((uintptr_t)q & 15) || ((uintptr_t)src & 15)) {
        fprintf(stderr, "cuda_emu: cp.async: destination outside shared memory or an address not 16-byte aligned "
                "(the device would fault)\n");
        abort();
    }
    s->cur->cp.push_back(pc_emu::cp_rec{dst, src, 16u, s->cur->cp_group});
}
static inline void pc_cp_async_commit() { pc_emu::current()->cur->cp_group++; }
/* cp.async.wait_group N: all committed groups but the N most recent done */
template <int N>
static inline void pc_cp_async_wait()
{
    pc_emu::thread *t = pc_emu::current()->cur;
    size_t keep = 0;
    for (size_t i = 0; i < t->cp.size(); i++) {
        const pc_emu::cp_rec &r = t->cp[i];
        if (r.group + N + 1 <= t->cp_group)
            memcpy(r.dst, r.src, r.bytes);
        else
            t->cp[keep++] = r;
    }
    t->cp.resize(keep);
}


/* --- wgmma (sm_90a), A from registers ------------------------------------- */

/* The shared-window address of p, as the descriptors take it: its offset
 * in the block's shared memory (the emulated window starts at 0, so on a
 * 1024-byte boundary, as the kernels' __align__(1024) places it on the
 * device). */
static inline unsigned pc_smem_addr(const void *p)
{
    pc_emu::state *s = pc_emu::current();
    const unsigned char *b = s->smem.data(), *q = (const unsigned char *)p;
    if (q < b || q >= b + s->smem.size()) {
        fprintf(stderr, "cuda_emu: a shared-memory address outside the block's shared memory\n");
        abort();
    }
    return (unsigned)(q - b);
}
/* wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16, A in registers:
 * recorded, executed by the warp's wgmma.wait_group that covers its group
 * (cuda_emu_sched.cc), so d must not be read, nor a's registers matter,
 * before then, as on the device. */
static inline void pc_wgmma_64x64x16_rs(float (&d)[8][4], const unsigned (&a)[4], uint64_t desc)
{
    pc_emu::thread *t = pc_emu::current()->cur;
    pc_emu::wgmma_rec r;
    r.d = &d[0][0];
    for (int i = 0; i < 4; i++)
        r.a[i] = a[i];
    r.desc = desc;
    r.group = t->wg_group;
    t->wg.push_back(r);
}
static inline void pc_wgmma_fence() {}
static inline void pc_wgmma_commit() { pc_emu::current()->cur->wg_group++; }
template <int N>
static inline void pc_wgmma_wait()
{
    pc_emu::thread *t = pc_emu::current()->cur;
    t->c.n = N;
    t->c.mask = 0xFFFFFFFFu;
    pc_emu::warp_collective(pc_emu::PC_EMU_OP_WGMMA_WAIT);
}
template <int R, int C>
static inline void pc_wgmma_fence_acc(float (&)[R][C][4])
{
}
static inline void pc_fence_proxy_async() {}

#endif
