/* test_cuda_emu_warp.cc - the emulated warp-level instructions
 * (kernels/cuda_emu_warp.h, cuda_emu_sched.cc) that the tensor-core
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
 *    all reach a collective is reported (launch returns -1), not hung.
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

int main(void)
{
    products();
    accumulation();
    shuffles();
    halves();
    async_copies();
    conflicts();
    divergence();
    return tap_done();
}
