/* cuda_kernel.cuh - the one fused kernel template every algorithm runs in:
 * load the raw tile (mirrored, phase-normalised) into shared memory, run
 * the algorithm's intermediate passes tile-locally in shared memory, then
 * the final pass in its 2-pixel or 4-pixel variant with the RGB -> Y'CbCr
 * conversion of spec §8 fused in, writing NV12, I420, RGB24 or RGBX32
 * straight to the destination planes.
 *
 * Why fused: the temporaries of the multi-pass algorithms (T2/T4, 2-6
 * bytes per pixel) would otherwise go through device memory, two to four
 * times the traffic of the floor (read the Bayer frame once, write NV12
 * once). Recomputing the intermediate values of the halo instead costs a
 * few percent of extra arithmetic for the 1-radius passes.
 *
 * An algorithm is a struct A with
 *   RP                  raw halo (rows above/below; even, >= R_tot)
 *   smem_bytes(th)      shared memory of its planes (host and device)
 *   P, planes(smem,th)  its plane pointers
 *   passes(P, th)       intermediate passes, each ending in __syncthreads()
 *   own(P, off, c1, g, c2)    pixel at an R/B site: own colour, green, other
 *   gsite(P, off, ch, g, cv)  pixel at a G site: colour of the horizontal
 *                             neighbours, green, colour of the vertical ones
 * with `off` the element offset of the site in the tile (same for every
 * plane). R and B sites use the same code, and so do Gr and Gb: the spec's
 * formulas only differ by the colour labels (algorithms.md §2-§7), which
 * the final pass swaps at compile time.
 */
#ifndef PANOCAP_CUDA_KERNEL_CUH
#define PANOCAP_CUDA_KERNEL_CUH

#include "cuda_common.cuh"

/* --- loading ------------------------------------------------------------ */

PC_DEV unsigned pc_bswap(unsigned v) { return __byte_perm(v, 0, 0x0123); }

/* Copies rows [-RP, th+RP) and columns [-PC_HX, PC_TW+PC_HX) of the tile
 * whose top-left output pixel is (tx0, ty0) into shared memory, in
 * normalised orientation. Rows are mirrored (reflect-101) through the row
 * index; columns need no test at all because every input slot carries
 * left/right margins that already hold the mirrored samples (filled by
 * pc_margin_kernel right after each upload), so every chunk is one
 * 16-byte copy from an aligned address.
 *
 * On sm_80+ the copies are cp.async (LDGSTS): they go straight to shared
 * memory without registers, so a CTA issues the next tile's copies and
 * computes the current tile while they are in flight (double-buffered raw
 * plane). Older GPUs copy synchronously. */
PC_DEV void pc_cp16(uint8_t *dst_smem, const uint8_t *src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    unsigned d = (unsigned)__cvta_generic_to_shared(dst_smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
#else
    *(uint4 *)dst_smem = *(const uint4 *)src;
#endif
}
PC_DEV void pc_cp_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
/* Waits until at most N of this thread's copy groups are still pending. */
template <int N>
PC_DEV void pc_cp_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

template <int RP>
struct pc_loader {
    static constexpr int CH = PC_SR / 16;
    static PC_DEV void issue(uint8_t *raw, const pc_kparams &p, int tx0, int ty0)
    {
        const int n = (p.th + 2 * RP) * CH;
        for (int i = threadIdx.x; i < n; i += PC_NT) {
            const int r = i / CH, k = i - r * CH;
            const int y = pc_fold(p.oy ? ty0 + p.th - 1 + RP - r : ty0 - RP + r, p.H);
            const int xs = p.ox ? tx0 + PC_TW - 16 * k : tx0 - PC_HX + 16 * k;
            pc_cp16(raw + r * PC_SR + 16 * k, p.src + (size_t)y * p.src_pitch + xs);
        }
        pc_cp_commit();
    }
    /* After the wait: byte-reverse this thread's own chunks when the tile
     * is mirrored horizontally (before the barrier that publishes them). */
    static PC_DEV void finish(uint8_t *raw, const pc_kparams &p)
    {
        if (!p.ox)
            return;
        const int n = (p.th + 2 * RP) * CH;
        for (int i = threadIdx.x; i < n; i += PC_NT) {
            const int r = i / CH, k = i - r * CH;
            uint4 *c = (uint4 *)(raw + r * PC_SR + 16 * k);
            uint4 w = *c, o;
            o.x = pc_bswap(w.w);
            o.y = pc_bswap(w.z);
            o.z = pc_bswap(w.y);
            o.w = pc_bswap(w.x);
            *c = o;
        }
    }
};

/* Runs f(offR, offB) for R/B site pairs covering the tile grown by EXT
 * pixels on every side (R sites at even, B sites at odd tile coordinates).
 * For odd EXT the pair is (R, the B up-left of it), for even EXT (R, the B
 * down-right), so both colours cover exactly [-EXT, size+EXT). For passes
 * that need every pixel, EXT = 2 and the 2x2 block at offR is complete. */
template <int RP, int EXT, class F>
PC_DEV void pc_for_pairs(int th, F f)
{
    constexpr int NBX = PC_TW / 2 + EXT;
    const int n = NBX * (th / 2 + EXT);
    for (int i = threadIdx.x; i < n; i += PC_NT) {
        int by = i / NBX, bx = i - by * NBX;
        int off = (RP + 2 * (by - EXT / 2)) * PC_SR + PC_HX + 2 * (bx - EXT / 2);
        f(off, (EXT & 1) ? off - PC_SR - 1 : off + PC_SR + 1);
    }
}

/* The conversion matrices of the +COL kernels (pc_kparams.bands, the same
 * PC_KMAX_BANDS x PC_KBAND ints) in constant memory: a band's coefficient
 * is then a warp-uniform indexed constant-cache load (LDC), not a global
 * load through L1 (1.3-4.2 us per frame on an H100 that way, about 1 us
 * this way). One copy per kernel file (translation unit), written on the
 * compute stream before the kernels that use it (pc_kernel_set.set_bands,
 * cuda_launch.h), so frames already queued keep theirs. The matrices stay
 * out of pc_kparams: a larger parameter block cost every kernel 6-16
 * registers. */
#ifdef __CUDACC__
static __constant__ int pc_cbands[16 * 10];
#else
static int pc_cbands[16 * 10]; /* the emulation's copy (cuda_emu.cc) */
#endif

/* --- the Y'CbCr conversion (spec §8, docs/colour.md §3) --------------------
 * m: PC_KBAND coefficients {cy[3], cb[3], cr[3], yoff}. Why two versions:
 * - COL false (no per-camera colour, or one matrix that keeps Y'/chroma in
 *   range, pc_bands_plain): m is pc_kparams.m0, so every coefficient is a
 *   constant-bank operand of its IMAD (no registers, no loads, no band
 *   bookkeeping in the loop), and no clamps: with such a matrix Y' lies in
 *   0..255 for any 8-bit R, G, B, the numerator is < 2^24 and Y' is its
 *   byte 2, which one PRMT extracts and packs with its neighbour; the
 *   chroma numerators are >= 0, so only the upper clamp can bite (full
 *   range). This is the pre-colour code, at the pre-colour cost.
 * - COL true (per-camera matrices folded in): m points at the row band's
 *   matrix in constant memory (pc_cbands), read where it is used: a
 *   warp-uniform indexed constant-cache load, and nothing stays live
 *   across the row loop, so the kernel keeps the plain one's register
 *   count (held in registers for the loop, the coefficients
 *   took 4px hq-linear from 47 to 63 registers: the version that did so
 *   for every frame ran 21.79 -> 25.22 us on an H100). Y' and chroma can
 *   leave their ranges, so both are clamped (one VIMNMX.RELU each on
 *   sm_90): the Y' numerator to [0, 2^24 - 1], whose byte 2 is then
 *   CLAMP8 of Y'; chroma to [0, 255].
 * Where the COL false conditions hold both write the same bytes. */
template <bool COL>
PC_DEV int pc_ynum(const int *m, int r, int g, int b)
{
    const int v = m[0] * r + m[1] * g + m[2] * b + m[9];
    return COL ? __vimin_s32_relu(v, 0xFFFFFF) : v;
}
template <bool COL>
PC_DEV int pc_cval(int num) /* num includes PC_COFF */
{
    return COL ? __vimin_s32_relu(num >> 18, 255) : min(num >> 18, 255);
}
#define PC_COFF ((128 << 18) + (1 << 17))

PC_DEV void pc_store_u16(uint8_t *d, unsigned v)
{
#ifndef __CUDACC__
    pc_emu_check_align(d, 2);
#endif
    *(uint16_t *)d = (uint16_t)v;
}

/* --- final pass, 4-pixel variant --------------------------------------------
 * A thread computes whole 2x2 blocks: the four sites share most of their
 * reads (bilinear: 14 distinct smem loads instead of 4 x 4-9), at the price
 * of more live registers. Each step takes two horizontally adjacent blocks:
 * they share another quarter of the loads, the loop and address overhead
 * is paid once per 8 pixels, and Y and CbCr leave as 4-byte stores (32
 * threads cover a 128-px tile row, so a warp still writes whole 128-byte
 * lines). Four row pairs per step with 128 threads. */
template <class A>
struct pc_quad {
    int r[4], g[4], b[4]; /* pixels (0,0) (1,0) (0,1) (1,1) of a block */
    PC_DEV void compute(const typename A::P &pl, int off)
    {
        A::own(pl, off, r[0], g[0], b[0]);               /* R  (0,0) */
        A::gsite(pl, off + 1, r[1], g[1], b[1]);         /* Gr (1,0): R horizontal */
        A::gsite(pl, off + PC_SR, b[2], g[2], r[2]);     /* Gb (0,1): B horizontal */
        A::own(pl, off + PC_SR + 1, b[3], g[3], r[3]);   /* B  (1,1) */
    }
    /* Y' of pixels i and i+1 (a normalised row), packed in image order. */
    template <bool COL>
    PC_DEV unsigned ypair(const int *m, int i, unsigned ysel) const
    {
        return __byte_perm(pc_ynum<COL>(m, r[i], g[i], b[i]), pc_ynum<COL>(m, r[i + 1], g[i + 1], b[i + 1]), ysel);
    }
    template <bool COL>
    PC_DEV unsigned cbcr(const int *m) const
    {
        const int sr = r[0] + r[1] + r[2] + r[3], sg = g[0] + g[1] + g[2] + g[3], sb = b[0] + b[1] + b[2] + b[3];
        const int cb = pc_cval<COL>(m[3] * sr + m[4] * sg + m[5] * sb + PC_COFF);
        const int cr = pc_cval<COL>(m[6] * sr + m[7] * sg + m[8] * sb + PC_COFF);
        return (unsigned)cb | ((unsigned)cr << 8);
    }
    PC_DEV unsigned rgbx(int i) const { return pc_rgbx(r[i], g[i], b[i]); }
    PC_DEV void rgb(uint8_t *top, uint8_t *bot, int ox) const
    {
        const int lr = ox; /* normalised column 0 lands at image column x + ox */
        top[3 * lr] = r[0]; top[3 * lr + 1] = g[0]; top[3 * lr + 2] = b[0];
        top[3 - 3 * lr] = r[1]; top[4 - 3 * lr] = g[1]; top[5 - 3 * lr] = b[1];
        bot[3 * lr] = r[2]; bot[3 * lr + 1] = g[2]; bot[3 * lr + 2] = b[2];
        bot[3 - 3 * lr] = r[3]; bot[4 - 3 * lr] = g[3]; bot[5 - 3 * lr] = b[3];
    }
};

PC_DEV void pc_store_u32(uint8_t *d, unsigned v)
{
#ifndef __CUDACC__
    pc_emu_check_align(d, 4);
#endif
    *(uint32_t *)d = v;
}

/* The two blocks of a 4px step, A at off and B at off + 2. By default
 * each block is computed on its own; an algorithm may specialise this to
 * compute both at once (hq-linear: two 16-bit lanes per register). */
template <class A>
struct pc_pair {
    static PC_DEV void compute(const typename A::P &pl, int off, pc_quad<A> &qa, pc_quad<A> &qb)
    {
        qa.compute(pl, off);
        qb.compute(pl, off + 2);
    }
};

template <class A, int FMT, bool COL, bool GRID>
PC_DEV void pc_final_4px(const typename A::P &pl, const pc_kparams &p, int tx0, int ty0)
{
    const int t = threadIdx.x, bc = 2 * (t & 31);
    /* image columns of normalised blocks bc (A) and bc+1 (B) */
    const int xa = p.ox ? tx0 + PC_TW - 2 - 2 * bc : tx0 + 2 * bc;
    const int xbk = p.ox ? xa - 2 : xa + 2;
    const bool va = xa < p.W, vb = xbk < p.W;
    if (!va && !vb)
        return;
    const bool both = va && vb;
    const int xl = min(xa, xbk); /* left column of the pair, a multiple of 4 */
    const unsigned ysel = p.ox ? 0x0026 : 0x0062;
    const unsigned wsel = p.ox ? 0x1054 : 0x5410; /* two halves in image order */
    /* Output addresses advance by a constant stride per step (four row
     * pairs, up or down the image with the vertical mirror) instead of
     * being recomputed: 64-bit address arithmetic is a large share of the
     * integer work per block. */
    int rp = t >> 5;
    int yb = p.oy ? ty0 + p.th - 2 - 2 * rp : ty0 + 2 * rp;
    const int dyb = p.oy ? -8 : 8;
    /* normalised top row (the R row) -> image row yb + oy */
    uint8_t *yt = p.d0 + (long long)(yb + p.oy) * p.p0 +
                  (FMT == PC_FMT_RGB24 ? 3 * xl : FMT == PC_FMT_RGBX32 ? 4 * xl : xl);
    const long long ydown = p.oy ? -(long long)p.p0 : (long long)p.p0, ystep = (long long)dyb * p.p0;
    uint8_t *c1 = p.d1 + (long long)(yb >> 1) * p.p1 + (FMT == PC_FMT_NV12 ? xl : xl >> 1);
    uint8_t *c2 = p.d2 + (long long)(yb >> 1) * p.p2 + (xl >> 1);
    const long long c1step = (long long)(dyb >> 1) * p.p1, c2step = (long long)(dyb >> 1) * p.p2;
    const int off0 = (A::RP + 2 * rp) * PC_SR + PC_HX + 2 * bc;
    /* byte offsets of blocks A and B from the pair's left column */
    const int ea = xa - xl, eb = xbk - xl;
    int gcur = 0; /* the grid tile whose offsets yt, c1, c2 include (0: none) */
    for (int i = 0; rp < (p.th >> 1); rp += 4, i++, yb += dyb, yt += ystep, c1 += c1step, c2 += c2step) {
        if (yb >= p.H)
            continue;
        const int off = off0 + i * 8 * PC_SR;
        pc_quad<A> qa, qb;
        pc_pair<A>::compute(pl, off, qa, qb);
        /* GRID: when the row pair enters another camera's tile, the
         * stepping addresses move by the difference of the two tiles'
         * offsets (pc_grid_offset) */
        const int tl = GRID ? yb / (p.grid >> 8) : 0;
        if (GRID && tl != gcur) {
            const int yo = gcur * (p.grid >> 8);
            yt += pc_grid_offset(p.grid, p.W, FMT, 0, yb, p.p0) - pc_grid_offset(p.grid, p.W, FMT, 0, yo, p.p0);
            c1 += pc_grid_offset(p.grid, p.W, FMT, 1, yb, p.p1) - pc_grid_offset(p.grid, p.W, FMT, 1, yo, p.p1);
            c2 += pc_grid_offset(p.grid, p.W, FMT, 2, yb, p.p2) - pc_grid_offset(p.grid, p.W, FMT, 2, yo, p.p2);
            gcur = tl;
        }
        uint8_t *ybot = yt + ydown;
        if (FMT == PC_FMT_RGB24) {
            if (va)
                qa.rgb(yt + 3 * ea, ybot + 3 * ea, p.ox);
            if (vb)
                qb.rgb(yt + 3 * eb, ybot + 3 * eb, p.ox);
            continue;
        }
        if (FMT == PC_FMT_RGBX32) {
            /* A row of the pair is 4 texels, 16 bytes at 4 * xl (xl a
             * multiple of 4; pointer and pitch multiples of 16,
             * pc_gpu_dst_align): one 16-byte store per row, the warp's 32
             * covering 512 contiguous bytes. Image order: the pair's left
             * block (A, or B when mirrored), each block's pixel ox first. */
            const unsigned a0 = qa.rgbx(0), a1 = qa.rgbx(1), a2 = qa.rgbx(2), a3 = qa.rgbx(3);
            const unsigned b0 = qb.rgbx(0), b1 = qb.rgbx(1), b2 = qb.rgbx(2), b3 = qb.rgbx(3);
            if (both) {
                if (p.ox) {
                    pc_store_u128(yt, b1, b0, a1, a0);
                    pc_store_u128(ybot, b3, b2, a3, a2);
                } else {
                    pc_store_u128(yt, a0, a1, b0, b1);
                    pc_store_u128(ybot, a2, a3, b2, b3);
                }
                continue;
            }
            /* right image edge: one block, 8 bytes per row */
            const int e = 4 * (va ? ea : eb);
            const unsigned t0 = va ? a0 : b0, t1 = va ? a1 : b1, t2 = va ? a2 : b2, t3 = va ? a3 : b3;
            pc_store_u64(yt + e, p.ox ? t1 : t0, p.ox ? t0 : t1);
            pc_store_u64(ybot + e, p.ox ? t3 : t2, p.ox ? t2 : t3);
            continue;
        }
        /* COL: the row pair's band matrix is read where it is used (a
         * warp-uniform constant-bank index), so it holds no registers
         * across the loop */
        const int *m = COL ? pc_cbands + PC_KBAND * pc_band_of(p, yb) : p.m0;
        const unsigned ta = qa.template ypair<COL>(m, 0, ysel), tb = qb.template ypair<COL>(m, 0, ysel);
        const unsigned ba = qa.template ypair<COL>(m, 2, ysel), bb = qb.template ypair<COL>(m, 2, ysel);
        const unsigned ca = qa.template cbcr<COL>(m), cbb = qb.template cbcr<COL>(m);
        if (both) {
            pc_store_u32(yt, __byte_perm(ta, tb, wsel));
            pc_store_u32(ybot, __byte_perm(ba, bb, wsel));
            if (FMT == PC_FMT_NV12) {
                pc_store_u32(c1, __byte_perm(ca, cbb, wsel));
            } else {
                pc_store_u16(c1, __byte_perm(ca, cbb, p.ox ? 0x0004 : 0x0040));
                pc_store_u16(c2, __byte_perm(ca, cbb, p.ox ? 0x0015 : 0x0051));
            }
            continue;
        }
        /* right image edge: one block of the pair */
        const int e = va ? ea : eb;
        const unsigned ty_ = va ? ta : tb, by_ = va ? ba : bb, cc = va ? ca : cbb;
        pc_store_u16(yt + e, ty_);
        pc_store_u16(ybot + e, by_);
        if (FMT == PC_FMT_NV12) {
            pc_store_u16(c1 + e, cc);
        } else {
            c1[e >> 1] = (uint8_t)cc;
            c2[e >> 1] = (uint8_t)(cc >> 8);
        }
    }
}

/* --- final pass, 2-pixel variant --------------------------------------------
 * One thread computes two horizontally adjacent pixels (one row of a 2x2
 * block) with its own reads: fewer live registers, more smem loads. Even
 * warps take the R/Gr rows, odd warps the Gb/B rows of the same 32 blocks,
 * so the row type is warp-uniform (no divergence) and offsets stay
 * compile-time constants. The two halves of a block's chroma sum meet in
 * shared memory (double-buffered, one barrier per row pair); the R-row
 * thread then writes Cb and the B-row thread Cr, each warp's bytes
 * interleaving into whole sectors of the CbCr row. */
template <class A, int FMT, bool COL, bool GRID, int ROW>
PC_DEV void pc_final_2px_row(const typename A::P &pl, const pc_kparams &p, const int *m, int *xch, int xb,
                             int yb, bool ok, int off, unsigned ysel)
{
    int ra, ga, ba, rb, gb, bb; /* a = normalised column 0, b = column 1 */
    if (ROW == 0) {
        A::own(pl, off, ra, ga, ba);
        A::gsite(pl, off + 1, rb, gb, bb);
    } else {
        A::gsite(pl, off + PC_SR, ba, ga, ra);
        A::own(pl, off + PC_SR + 1, bb, gb, rb);
    }
    const int yrow = yb + (p.oy ? 1 - ROW : ROW);
    /* GRID: the camera tile's offset (pc_grid_offset), where it is stored */
    if (FMT == PC_FMT_RGB24) {
        if (ok) {
            uint8_t *d = p.d0 + yrow * p.p0 + (GRID ? pc_grid_offset(p.grid, p.W, FMT, 0, yb, p.p0) : 0) + 3 * xb;
            int lr = p.ox;
            d[3 * lr] = ra; d[3 * lr + 1] = ga; d[3 * lr + 2] = ba;
            d[3 - 3 * lr] = rb; d[4 - 3 * lr] = gb; d[5 - 3 * lr] = bb;
        }
        return;
    }
    if (FMT == PC_FMT_RGBX32) {
        /* the thread's two pixels are two texels, 8 bytes at 4 * xb (xb
         * even; pc_gpu_dst_align): one 8-byte store, the warp's 32 covering
         * 256 contiguous bytes. Pixel a (normalised column 0) lands at
         * xb + ox. */
        if (ok) {
            const unsigned ta = pc_rgbx(ra, ga, ba), tb = pc_rgbx(rb, gb, bb);
            pc_store_u64(p.d0 + (long long)yrow * p.p0 + 4 * xb, p.ox ? tb : ta, p.ox ? ta : tb);
        }
        return;
    }
    if (ok)
        pc_store_u16(p.d0 + yrow * p.p0 + (GRID ? pc_grid_offset(p.grid, p.W, FMT, 0, yb, p.p0) : 0) + xb,
                     __byte_perm(pc_ynum<COL>(m, ra, ga, ba), pc_ynum<COL>(m, rb, gb, bb), ysel));
    const int sr = ra + rb, sg = ga + gb, sb = ba + bb;
    const int cbp = m[3] * sr + m[4] * sg + m[5] * sb;
    const int crp = m[6] * sr + m[7] * sg + m[8] * sb;
    const int t = threadIdx.x;
    xch[t] = ROW == 0 ? crp : cbp; /* hand the partner what it finishes */
    __syncthreads();
    const int other = xch[t ^ 32];
    const int v = pc_cval<COL>((ROW == 0 ? cbp : crp) + other + PC_COFF);
    if (!ok)
        return;
    const int crow = yb >> 1;
    if (FMT == PC_FMT_NV12)
        p.d1[crow * p.p1 + (GRID ? pc_grid_offset(p.grid, p.W, FMT, 1, yb, p.p1) : 0) + xb + ROW] = (uint8_t)v;
    else if (ROW == 0)
        p.d1[crow * p.p1 + (GRID ? pc_grid_offset(p.grid, p.W, FMT, 1, yb, p.p1) : 0) + (xb >> 1)] = (uint8_t)v;
    else
        p.d2[crow * p.p2 + (GRID ? pc_grid_offset(p.grid, p.W, FMT, 2, yb, p.p2) : 0) + (xb >> 1)] = (uint8_t)v;
}

template <class A, int FMT, bool COL, bool GRID>
PC_DEV void pc_final_2px(const typename A::P &pl, const pc_kparams &p, int *xch, int tx0, int ty0)
{
    const int t = threadIdx.x, w = t >> 5;
    const int bc = ((w >> 1) << 5) + (t & 31);
    const int xb = p.ox ? tx0 + PC_TW - 2 - 2 * bc : tx0 + 2 * bc;
    const unsigned ysel = p.ox ? 0x0026 : 0x0062;
    for (int rp = 0; rp < (p.th >> 1); rp++) {
        const int yb = p.oy ? ty0 + p.th - 2 - 2 * rp : ty0 + 2 * rp;
        const bool ok = xb < p.W && yb < p.H;
        const int off = (A::RP + 2 * rp) * PC_SR + PC_HX + 2 * bc;
        int *x = xch + (rp & 1) * PC_NT;
        /* COL: the band's matrix read where it is used (as in
         * pc_final_4px); rows past the image (ok false) still take part in
         * the chroma exchange: any band will do */
        const int *m = COL ? pc_cbands + PC_KBAND * pc_band_of(p, yb < p.H ? yb : 0) : p.m0;
        if (w & 1)
            pc_final_2px_row<A, FMT, COL, GRID, 1>(pl, p, m, x, xb, yb, ok, off, ysel);
        else
            pc_final_2px_row<A, FMT, COL, GRID, 0>(pl, p, m, x, xb, yb, ok, off, ysel);
    }
}

/* --- the kernel --------------------------------------------------------- */

/* Shared memory of one CTA: the algorithm's planes plus, for 2px, the
 * double-buffered chroma exchange. */
/* Shared memory of one CTA: the algorithm's planes, a second raw plane
 * (double buffering) and, for 2px, the double-buffered chroma exchange. */
template <class A, int VAR>
PC_HD size_t pc_kernel_smem(int th)
{
    return A::smem_bytes(th) + pc_plane_bytes(th, A::RP, 1) +
           (VAR == PC_VARIANT_2PX ? 2 * PC_NT * sizeof(int) : 0);
}

template <class A, int VAR, int FMT>
PC_KERNEL void PC_BOUNDS pc_debayer_kernel(pc_kparams p)
{
    static_assert(!(PC_KFMT_IS_GRID(FMT) && PC_KFMT_BASE(FMT) == PC_FMT_RGBX32), "RGBX32 has no grid kernel");
    PC_SMEM_DECL(smem);
    /* Persistent CTAs: gridDim.x CTAs (one wave: SMs x resident CTAs per
     * SM) walk the tiles with stride gridDim.x. While a CTA computes tile
     * i, the copies of its next tile are in flight into the other raw
     * buffer, so memory latency overlaps computation inside each CTA, and
     * there is no partial last wave of whole tiles. */
    const int ntx = (p.W + PC_TW - 1) / PC_TW;
    const int ntiles = ntx * ((p.H + p.th - 1) / p.th);
    int tile = blockIdx.x;
    if (tile >= ntiles)
        return;
    typename A::P pl = A::planes(smem, p.th);
    /* The two raw buffers are addressed by arithmetic on the shared array
     * (not through an array of pointers, which would live in local memory
     * and turn every tile read into a generic load instead of LDS). */
    const int raw1 = (int)A::smem_bytes(p.th);
    int *xch = (int *)(smem + raw1 + pc_plane_bytes(p.th, A::RP, 1));
    int ty = tile / ntx;
    int tx0 = (tile - ty * ntx) * PC_TW, ty0 = ty * p.th;
    pc_loader<A::RP>::issue(smem, p, tx0, ty0);
    for (int it = 0;; it++) {
        uint8_t *cur = smem + ((it & 1) ? raw1 : 0);
        const int next = tile + gridDim.x;
        const int nty_ = next / ntx;
        const int ntx0 = (next - nty_ * ntx) * PC_TW, nty0 = nty_ * p.th;
        if (next < ntiles)
            pc_loader<A::RP>::issue(smem + ((it & 1) ? 0 : raw1), p, ntx0, nty0);
        else
            pc_cp_commit(); /* keep the group count uniform */
        pc_cp_wait<1>();    /* this tile's copies (the older group) are done */
        pc_loader<A::RP>::finish(cur, p);
        __syncthreads();
        pl.raw = cur;
        A::passes(pl, p.th);
        if (VAR == PC_VARIANT_4PX)
            pc_final_4px<A, PC_KFMT_BASE(FMT), PC_KFMT_IS_COL(FMT), PC_KFMT_IS_GRID(FMT)>(pl, p, tx0, ty0);
        else
            pc_final_2px<A, PC_KFMT_BASE(FMT), PC_KFMT_IS_COL(FMT), PC_KFMT_IS_GRID(FMT)>(pl, p, xch, tx0, ty0);
        if (next >= ntiles)
            break;
        __syncthreads(); /* everyone is done with this tile's planes */
        tile = next;
        tx0 = ntx0;
        ty0 = nty0;
    }
}

#endif
