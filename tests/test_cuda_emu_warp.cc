/* test_cuda_emu_warp.cc - the emulated warp-level instructions
 * (core/cuda_emu_warp.h, cuda_emu_sched.cc) that the tensor-core
 * kernels rely on, against plain arithmetic:
 *  - ldmatrix (x1, x2, x4, with and without .trans) feeding mma.sync
 *    m16n8k16 from shared memory in the layouts every such kernel uses
 *    (A row-major or transposed, B as [n][k] or [k][n]) gives the matrix
 *    product of what was stored, for random fp16 matrices;
 *  - the accumulator fragment (which lane holds which D element) and a
 *    chain of mma on one accumulator;
 *  - shuffles (idx, xor, down, up; widths 32, 8, 4) against their formulas;
 *  - fp16 conversions: every half round-trips, float -> half rounds to
 *    nearest even (against the compiler's _Float16 where it has one, and
 *    on hand-picked ties, subnormals and overflows);
 *  - cp.async writes nothing before the wait that covers its group;
 *  - the bank-conflict counter of ldmatrix; and a warp whose lanes do not
 *    all reach a collective is reported (launch returns -1), not hung;
 *  - Hopper's wgmma (m64n64k16, A in registers): the descriptors of
 *    wgmma_desc.h address the net weights' layout, and the emulated
 *    instruction is the product of what was stored, completed at its
 *    wait_group.
 * The device runs the same kernel source with the PTX instructions
 * (cuda_mma.cuh); tools/gpu-net runs the net kernels there. */
#include "cuda_emu.h"

#include "cuda_mma.cuh"
#include "tap.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}
/* a random fp16 value in [-2, 2) with few mantissa bits (exact products) */
static unsigned short rnd_half(void)
{
    const float v = (float)((int)(rnd() % 512) - 256) / 128.0f;
    return pc_emu_float_to_half(v);
}

/* D (16x8) = A (16x16) B (16x8) + C through ldmatrix and mma.sync, each
 * operand stored as `lay` says; returns the largest |D - exact| and checks
 * every lane's fragment position. */
enum { A_ROW = 0, A_TRANS = 1 };
enum { B_NK = 0, B_KN = 1 };
static double product_case(int alay, int blay, int bx1, int chain)
{
    unsigned short A[16][16], B[16][8];
    float C[16][8];
    for (int r = 0; r < 16; r++)
        for (int k = 0; k < 16; k++)
            A[r][k] = rnd_half();
    for (int k = 0; k < 16; k++)
        for (int n = 0; n < 8; n++)
            B[k][n] = rnd_half();
    for (int r = 0; r < 16; r++)
        for (int n = 0; n < 8; n++)
            C[r][n] = (float)((int)(rnd() % 200) - 100) / 16.0f;
    float D[32][4];
    const size_t smem = 1024;
    int rc = pc_emu::launch(dim3(1), dim3(32), smem, [&]() {
        PC_SMEM_DECL(sm);
        unsigned short *sa = (unsigned short *)sm, *sb = (unsigned short *)(sm + 512);
        const int lane = (int)threadIdx.x;
        if (lane == 0) {
            for (int r = 0; r < 16; r++)
                for (int k = 0; k < 16; k++)
                    sa[alay == A_ROW ? r * 16 + k : k * 16 + r] = A[r][k];
            for (int k = 0; k < 16; k++)
                for (int n = 0; n < 8; n++)
                    sb[blay == B_NK ? n * 16 + k : k * 8 + n] = B[k][n];
        }
        __syncthreads();
        unsigned a[4], b[2];
        if (alay == A_ROW) {
            /* rows 0-15, the k half of lane >> 4 */
            pc_ldsm_x4(a, sa + (lane & 15) * 16 + (lane >> 4) * 8);
        } else {
            /* stored [k][m]: matrix j = (m half j & 1, k half j >> 1) */
            const int j = lane >> 3, k = (lane & 7) + 8 * (j >> 1), m0 = 8 * (j & 1);
            pc_ldsm_x4_t(a, sa + k * 16 + m0);
        }
        if (blay == B_NK) {
            if (bx1) { /* two x1 loads: the k halves */
                unsigned b0[1], b1[1];
                pc_ldsm_x1(b0, sb + (lane & 7) * 16);
                pc_ldsm_x1(b1, sb + (lane & 7) * 16 + 8);
                b[0] = b0[0];
                b[1] = b1[0];
            } else {
                pc_ldsm_x2(b, sb + (lane & 7) * 16 + ((lane >> 3) & 1) * 8);
            }
        } else {
            if (bx1) {
                unsigned b0[1], b1[1];
                pc_ldsm_x1_t(b0, sb + (lane & 7) * 8);
                pc_ldsm_x1_t(b1, sb + ((lane & 7) + 8) * 8);
                b[0] = b0[0];
                b[1] = b1[0];
            } else {
                pc_ldsm_x2_t(b, sb + (lane & 15) * 8);
            }
        }
        const int g = lane >> 2, t = lane & 3;
        float d[4] = {C[g][2 * t], C[g][2 * t + 1], C[g + 8][2 * t], C[g + 8][2 * t + 1]};
        for (int i = 0; i < chain; i++)
            pc_mma_16816(d, a, b);
        __syncwarp();
        for (int i = 0; i < 4; i++)
            D[lane][i] = d[i];
    });
    if (rc)
        return 1e9;
    double worst = 0;
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 4; i++) {
            const int r = g + 8 * (i >> 1), n = 2 * t + (i & 1);
            double e = C[r][n];
            for (int c = 0; c < chain; c++) {
                double s = 0;
                for (int k = 0; k < 16; k++)
                    s += (double)pc_emu_half_to_float(A[r][k]) * pc_emu_half_to_float(B[k][n]);
                e += s;
            }
            const double err = fabs(D[lane][i] - e);
            worst = err > worst ? err : worst;
        }
    }
    return worst;
}

static void products(void)
{
    static const char *const an[] = {"A row-major (ldmatrix.x4)", "A stored transposed (ldmatrix.x4.trans)"};
    static const char *const bn[] = {"B as [n][k] (ldmatrix", "B as [k][n] (ldmatrix"};
    for (int alay = 0; alay < 2; alay++)
        for (int blay = 0; blay < 2; blay++)
            for (int bx1 = 0; bx1 < 2; bx1++) {
                double worst = 0;
                for (int rep = 0; rep < 4; rep++) {
                    double e = product_case(alay, blay, bx1, 1 + rep % 2);
                    worst = e > worst ? e : worst;
                }
                /* the values have 8 significant bits: products and sums are exact */
                TAP_CHECK(worst == 0.0, "mma.sync m16n8k16 of %s, %s.%s%s%s): D = A B + C exactly (max error %g)",
                          an[alay], bn[blay], bx1 ? "x1" : "x2", blay == B_KN ? ".trans" : "", bx1 ? " twice" : "",
                          worst);
            }
}

/* fp32 accumulation: a long chain rounds like float (not like fp16). */
static void accumulation(void)
{
    float got = 0;
    int rc = pc_emu::launch(dim3(1), dim3(32), 0, [&]() {
        const unsigned one = pc_emu_float_to_half(1.0f), third = pc_emu_float_to_half(1.0f / 3.0f);
        const int lane = (int)threadIdx.x, g = lane >> 2, t = lane & 3;
        /* A: row 0, k 0 = 1/3 (lane 0's a0 low half); B: k 0, n 0 = 1 */
        unsigned a[4] = {lane == 0 ? third : 0u, 0u, 0u, 0u}, b[2] = {g == 0 && t == 0 ? one : 0u, 0u};
        float d[4] = {0, 0, 0, 0};
        for (int i = 0; i < 3000; i++)
            pc_mma_16816(d, a, b);
        __syncthreads();
        if (lane == 0)
            got = d[0];
    });
    float want = 0;
    const float third = pc_emu_half_to_float(pc_emu_float_to_half(1.0f / 3.0f));
    for (int i = 0; i < 3000; i++)
        want += third;
    TAP_CHECK(rc == 0 && got == want, "3000 mma.sync into one accumulator add in float (%.9g, float gives %.9g)",
              got, want);
}

static void shuffles(void)
{
    int out[4][32];
    int rc = pc_emu::launch(dim3(1), dim3(64), 0, [&]() {
        const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5;
        const int v = 100 * w + lane;
        const int a = __shfl_sync(0xFFFFFFFFu, v, (lane * 7 + 3) & 31);
        const int b = __shfl_xor_sync(0xFFFFFFFFu, v, 5, 8);
        const int c = __shfl_down_sync(0xFFFFFFFFu, v, 3, 8);
        const int d = __shfl_up_sync(0xFFFFFFFFu, v, 2, 4);
        if (w == 1) {
            out[0][lane] = a;
            out[1][lane] = b;
            out[2][lane] = c;
            out[3][lane] = d;
        }
    });
    int bad = 0;
    for (int l = 0; l < 32; l++) {
        bad += out[0][l] != 100 + ((l * 7 + 3) & 31);
        const int xs = l ^ 5; /* within its segment of 8 */
        bad += out[1][l] != 100 + ((xs >> 3) > (l >> 3) ? l : xs);
        bad += out[2][l] != 100 + ((l & 7) + 3 < 8 ? l + 3 : l);
        bad += out[3][l] != 100 + ((l & 3) >= 2 ? l - 2 : l);
    }
    TAP_CHECK(rc == 0 && bad == 0, "__shfl_sync / xor (width 8) / down (width 8) / up (width 4): %d wrong of 128",
              bad);
    float f = 0;
    rc = pc_emu::launch(dim3(1), dim3(32), 0, [&]() {
        float s = (float)threadIdx.x;
        for (int m = 16; m >= 1; m >>= 1)
            s += __shfl_xor_sync(0xFFFFFFFFu, s, m);
        if (threadIdx.x == 7)
            f = s;
    });
    TAP_CHECK(rc == 0 && f == 496.0f, "butterfly sum of floats over the warp: %g (496)", f);
}

static void halves(void)
{
    int bad = 0;
    for (unsigned h = 0; h < 65536; h++) {
        const unsigned short r = pc_emu_float_to_half(pc_emu_half_to_float((unsigned short)h));
        const bool nan = (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu);
        bad += nan ? r != 0x7FFF : r != h;
    }
    TAP_CHECK(bad == 0, "all 65536 halves: half -> float -> half is the identity (NaN canonical): %d wrong", bad);
    struct {
        float f;
        unsigned short h;
    } cases[] = {
        {1.0f, 0x3C00}, {-2.0f, 0xC000}, {65504.0f, 0x7BFF}, {65519.99f, 0x7BFF}, {65520.0f, 0x7C00},
        {1e9f, 0x7C00}, {1.0f + 1.0f / 2048, 0x3C00} /* tie -> even */, {1.0f + 3.0f / 2048, 0x3C02} /* tie -> even */,
        {6.103515625e-05f, 0x0400} /* 2^-14 */, {5.9604645e-08f, 0x0001} /* 2^-24 */, {2.9802322e-08f, 0x0000} /* 2^-25 tie */,
        {2.9802326e-08f, 0x0001}, {8.940697e-08f, 0x0002} /* 1.5 x 2^-24 tie -> even 2 */, {-0.0f, 0x8000},
        {0.33333334f, 0x3555},
    };
    int cbad = 0;
    for (auto &c : cases)
        if (pc_emu_float_to_half(c.f) != c.h) {
            cbad++;
            tap_diag("float %.9g -> half 0x%04x, expected 0x%04x", c.f, pc_emu_float_to_half(c.f), c.h);
        }
    TAP_CHECK(cbad == 0, "float -> half on ties, subnormals, overflow: %d wrong of %zu", cbad,
              sizeof cases / sizeof cases[0]);
#ifdef __FLT16_MAX__
    int fbad = 0;
    for (int i = 0; i < 2000000; i++) {
        uint32_t u = rnd() << 8 ^ rnd();
        float f;
        memcpy(&f, &u, 4);
        if (f != f)
            continue;
        const _Float16 x = (_Float16)f;
        unsigned short want;
        memcpy(&want, &x, 2);
        fbad += pc_emu_float_to_half(f) != want;
    }
    TAP_CHECK(fbad == 0, "float -> half of 2M random floats agrees with the compiler's _Float16: %d differ", fbad);
#else
    tap_skip("no _Float16 in this compiler");
#endif
}

static void async_copies(void)
{
    int before = -1, after_first = -1, after_all = -1;
    static uint32_t src[8] __attribute__((aligned(16))) = {11, 12, 13, 14, 21, 22, 23, 24};
    int rc = pc_emu::launch(dim3(1), dim3(32), 64, [&]() {
        PC_SMEM_DECL(sm);
        uint32_t *d = (uint32_t *)sm;
        if (threadIdx.x == 0) {
            d[0] = d[4] = 0;
            pc_cp_async16(d, src);
            pc_cp_async_commit();
            pc_cp_async16(d + 4, src + 4);
            pc_cp_async_commit();
            before = (int)(d[0] + d[4]);
            pc_cp_async_wait<1>();
            after_first = (int)(d[0] + d[4]);
            pc_cp_async_wait<0>();
            after_all = (int)(d[0] + d[4]);
        }
    });
    TAP_CHECK(rc == 0 && before == 0 && after_first == 11 && after_all == 32,
              "cp.async: nothing before the wait (%d), wait_group 1 completes the older group (%d), 0 all (%d)",
              before, after_first, after_all);
}

static void conflicts(void)
{
    for (int swz = 0; swz < 2; swz++) {
        pc_emu::stats() = pc_emu::counters{};
        int rc = pc_emu::launch(dim3(1), dim3(32), 8 * 128, [&]() {
            PC_SMEM_DECL(sm);
            const int lane = (int)threadIdx.x;
            /* 8 rows of 128 bytes; chunk c of row r at c ^ r when swizzled */
            const int r = lane & 7, c = lane >> 3;
            unsigned v[4];
            pc_ldsm_x4(v, sm + r * 128 + 16 * (swz ? c ^ r : c));
        });
        const pc_emu::counters st = pc_emu::stats();
        TAP_CHECK(rc == 0 && st.ldsm_phases == 4 && st.ldsm_wavefronts == (swz ? 4u : 32u),
                  "ldmatrix over rows 128 bytes apart: %llu wavefronts for %llu phases (%s)", st.ldsm_wavefronts,
                  st.ldsm_phases, swz ? "swizzled: conflict-free" : "unswizzled: 8-way conflicts");
    }
}

static void divergence(void)
{
    int rc = pc_emu::launch(dim3(1), dim3(32), 0, [&]() {
        if (threadIdx.x == 5)
            return;
        __syncwarp();
    });
    TAP_CHECK(rc == -1, "a lane that skips __syncwarp: the launch reports the deadlock (%d)", rc);
    int order = 0, seen = -1;
    rc = pc_emu::launch(dim3(2), dim3(64), 0, [&]() {
        /* warp 1 does 3 collectives before the barrier, warp 0 none: the
         * barrier still waits for both */
        if (threadIdx.x >= 32)
            for (int i = 0; i < 3; i++)
                __syncwarp();
        if (threadIdx.x == 40)
            order = 1;
        __syncthreads();
        if (threadIdx.x == 0)
            seen = order;
        __syncthreads();
        if (threadIdx.x == 40)
            order = 0;
    });
    TAP_CHECK(rc == 0 && seen == 1, "a barrier after uneven numbers of warp collectives waits for every warp");
}

/* wgmma_desc.h: the descriptors the net kernels build (pc_net_wdesc) make
 * the tensor cores read, for B element (k, n) of tap p and k16 step kc,
 * the weight the kernels stored for (cout n, cin 16 kc + k) of that tap
 * (pc_net_wsm_offset), for weights at several 1024-byte boundaries; the
 * decoding itself agrees with the ISA's canonical K-major 128-byte-swizzle
 * layout spelled as CUTLASS does (Swizzle<3,4,3> o ((8,n),2):((8,SBO),1)
 * in 16-byte units), and a k16 step's 16 x 64 elements are 1024 distinct
 * 2-byte places. */
static void descriptors(void)
{
    long bad = 0, dup = 0, spell = 0;
    static const uint32_t bases[3] = {0, 1024, 7 * 1024};
    for (int bi = 0; bi < 3; bi++)
        for (int p = 0; p < 9; p++)
            for (int kc = 0; kc < 4; kc++) {
                const uint64_t d = pc_net_wdesc(bases[bi], p, kc);
                static unsigned char seen[16 * 64 * 128];
                memset(seen, 0, sizeof seen);
                for (int k = 0; k < 16; k++)
                    for (int n = 0; n < 64; n++) {
                        const uint32_t a = pc_wgmma_desc_addr(d, k, n);
                        bad += a != bases[bi] + pc_net_wsm_offset(64 * p + n, 16 * kc + k);
                        const uint32_t rel = a - bases[bi] - (uint32_t)p * 8192u;
                        if (rel < sizeof seen)
                            dup += seen[rel]++ != 0;
                        /* CUTLASS's spelling: u128 offset = 8 (n % 8) + (n / 8) SBO/16 + k / 8 from
                         * the start, element k % 8 in it; Swizzle<3,4,3> on the byte address */
                        const uint32_t lin = pc_wgmma_desc_start(d) + 16u * (8u * (n % 8) + (n / 8) * (1024u / 16u) +
                                                                             (uint32_t)k / 8u) + 2u * (k % 8);
                        const uint32_t sw = lin ^ (((lin >> 7) & 7u) << 4);
                        spell += sw != a;
                    }
            }
    TAP_CHECK(bad == 0 && dup == 0 && spell == 0,
              "wgmma descriptors of the net weights: B(k, n) of every tap and k16 step is the stored weight "
              "(%ld wrong), 1024 distinct places a step (%ld repeated), the ISA layout as CUTLASS spells it "
              "(%ld differ)", bad, dup, spell);
    const uint64_t d = pc_wgmma_desc_k128(0x1230, 1024);
    TAP_CHECK(pc_wgmma_desc_start(d) == 0x1230 && pc_wgmma_desc_sbo(d) == 1024 && pc_wgmma_desc_swizzle(d) == 1 &&
                  pc_wgmma_desc_base(d) == 0 && ((d >> 16) & 0x3FFF) == 1 && pc_wgmma_desc_addr(d | 1ull << 49, 0, 0) ==
                  UINT32_MAX && pc_wgmma_desc_addr(d & ~(3ull << 62), 0, 0) == UINT32_MAX,
              "wgmma descriptor fields: start, LBO 1, SBO, 128-byte swizzle (1 << 62), base offset 0; other "
              "layouts not decoded (0x%016llx)", (unsigned long long)d);
}

/* wgmma.m64n64k16 with A from registers (emulated: cuda_emu_sched.cc's
 * exec_wgmma) against plain products: one warpgroup, A (64 x 16) loaded by
 * ldmatrix as mma.sync's fragments (warp w rows 16 w ..), B the k16 step kc
 * of a 64 x 64 K-major matrix in the net weights' layout at a 1024-byte
 * boundary, through pc_net_wdesc; D per warp in mma's C layout of each n8
 * block. Also: d untouched until the wait_group that covers its group,
 * wait_group 1 completing the older group only. */
static void wgmma_products(void)
{
    unsigned short A[4][64][16], Bm[64][64]; /* A per k step; Bm[n][k] */
    float C[64][64];
    for (int s = 0; s < 4; s++)
        for (int r = 0; r < 64; r++)
            for (int k = 0; k < 16; k++)
                A[s][r][k] = rnd_half();
    for (int n = 0; n < 64; n++)
        for (int k = 0; k < 64; k++)
            Bm[n][k] = rnd_half();
    for (int r = 0; r < 64; r++)
        for (int n = 0; n < 64; n++)
            C[r][n] = (float)((int)(rnd() % 200) - 100) / 16.0f;
    static float D[2][128][32];
    int untouched = 0, early = -1;
    const size_t wbase = 2048, abase = 0;
    int rc = pc_emu::launch(dim3(1), dim3(128), wbase + 64 * 128, [&]() {
        PC_SMEM_DECL(sm);
        const int tid = (int)threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, t = lane & 3;
        if (tid == 0)
            for (int n = 0; n < 64; n++)
                for (int k = 0; k < 64; k++)
                    memcpy(sm + wbase + pc_net_wsm_offset(n, k), &Bm[n][k], 2);
        __syncthreads();
        float d[2][8][4];
        for (int j = 0; j < 8; j++)
            for (int e = 0; e < 4; e++)
                d[0][j][e] = d[1][j][e] = C[16 * w + g + 8 * (e >> 1)][8 * j + 2 * t + (e & 1)];
        unsigned a[4][4];
        for (int s = 0; s < 4; s++) {
            __syncthreads();
            if (tid == 0)
                for (int r = 0; r < 64; r++)
                    memcpy(sm + abase + r * 32, A[s][r], 32);
            __syncthreads();
            pc_ldsm_x4(a[s], sm + abase + (16 * w + (lane & 15)) * 32 + (lane >> 4) * 16);
        }
        pc_wgmma_fence();
        /* group 0: d[0] += A_s B_s for s = 0..3; group 1: d[1] += A_0 B_0 */
        for (int s = 0; s < 4; s++)
            pc_wgmma_64x64x16_rs(d[0], a[s], pc_net_wdesc((uint32_t)wbase, 0, s));
        pc_wgmma_commit();
        pc_wgmma_64x64x16_rs(d[1], a[0], pc_net_wdesc((uint32_t)wbase, 0, 0));
        pc_wgmma_commit();
        if (tid == 0)
            untouched = d[0][0][0] == C[0][0] && d[1][0][0] == C[0][0];
        pc_wgmma_wait<1>();
        if (tid == 0)
            early = d[0][0][0] != C[0][0] && d[1][0][0] == C[0][0];
        pc_wgmma_wait<0>();
        for (int j = 0; j < 8; j++)
            for (int e = 0; e < 4; e++) {
                D[0][tid][4 * j + e] = d[0][j][e];
                D[1][tid][4 * j + e] = d[1][j][e];
            }
    });
    double worst = 0;
    for (int tid = 0; tid < 128 && rc == 0; tid++) {
        const int lane = tid & 31, w = tid >> 5, g = lane >> 2, t = lane & 3;
        for (int j = 0; j < 8; j++)
            for (int e = 0; e < 4; e++) {
                const int r = 16 * w + g + 8 * (e >> 1), n = 8 * j + 2 * t + (e & 1);
                double e0 = C[r][n], e1 = C[r][n];
                for (int s = 0; s < 4; s++)
                    for (int k = 0; k < 16; k++) {
                        const double pr = (double)pc_emu_half_to_float(A[s][r][k]) *
                                          pc_emu_half_to_float(Bm[n][16 * s + k]);
                        e0 += pr;
                        if (s == 0)
                            e1 += pr;
                    }
                worst = fmax(worst, fmax(fabs(D[0][tid][4 * j + e] - e0), fabs(D[1][tid][4 * j + e] - e1)));
            }
    }
    TAP_CHECK(rc == 0 && worst == 0.0,
              "wgmma m64n64k16 (A from registers, B through the net weights' descriptors, 4 k16 steps): D = A B + C "
              "exactly in every warp's fragment (max error %g)", worst);
    TAP_CHECK(rc == 0 && untouched == 1 && early == 1,
              "wgmma: accumulators unchanged before wait_group (%d); wait_group 1 completes the older group only (%d)",
              untouched, early);
}

int main(void)
{
    descriptors();
    wgmma_products();
    products();
    accumulation();
    shuffles();
    halves();
    async_copies();
    conflicts();
    divergence();
    return tap_done();
}
