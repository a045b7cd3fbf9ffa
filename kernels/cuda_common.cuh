/* cuda_common.cuh - shared device code of the CUDA debayer kernels: the
 * kernel parameter block, the spec's integer helpers (RS, CLAMP8, the
 * reflect-101 fold), the tile geometry and the smem plane accessors.
 *
 * Compiles under nvcc (device code) and, after cuda_emu.h, as host C++ for
 * the emulation test, so everything here is PC_DEV (inline, no CUDA-only
 * syntax beyond what cuda_emu.h provides; the macros are the core's
 * cuda_dev.cuh).
 *
 * Tile geometry (every algorithm): one CTA of PC_NT threads computes an
 * output tile of PC_TW x th pixels (th even, chosen at run time: the
 * "pixels per thread" knob of the paper). The raw tile plus a halo is
 * loaded once into shared memory with 16-byte loads, and the reflect-101
 * rule of algorithms.md §1.2 is applied there and only there: the spec
 * proves that mirroring every read of every pass equals reflect-padding the
 * raw image and running all passes without border tests, so the passes and
 * the final pass read shared memory with no border logic at all.
 *
 * Phase normalisation: while loading, the tile is mirrored horizontally
 * when the red sample sits at odd x (GRBG, BGGR) and vertically when it
 * sits at odd y (GBRG, BGGR). In the shared-memory tile the red sites are
 * then always at (even, even): every formula is the RGGB one with
 * compile-time offsets, so the compiler shares loads between the four
 * sites of a 2x2 block and nothing branches on CFA colour. This is exact
 * because every algorithm is symmetric under reflection (spec §1.2, §11.2);
 * the writer mirrors back.
 */
#ifndef PANOCAP_CUDA_COMMON_CUH
#define PANOCAP_CUDA_COMMON_CUH

#include <stdint.h>

#include "debayer.h" /* pc_pixfmt, pc_variant: the kernels' FMT and VAR template arguments */

#include "cuda_dev.cuh" /* PC_DEV, PC_KERNEL, PC_HD, PC_UNROLL, PC_SMEM_DECL, pc_clamp8 */

#ifdef __CUDACC__
#define PC_BOUNDS __launch_bounds__(PC_NT)
#else
#define PC_BOUNDS
#endif

/* Threads per CTA and tile width: 128 threads is what the paper found
 * necessary for full occupancy; 128 px wide tiles give each warp of the
 * final pass 64 (4px) or 32 (2px) consecutive 2x2 blocks, so its global
 * stores are whole 32-byte sectors. */
#define PC_NT 128
#define PC_TW 128
/* Left/right halo kept in smem: 16 bytes, so interior chunks stay 16-byte
 * aligned in both global and shared memory. Covers every radius (<= 9). */
#define PC_HX 16
/* Largest tile height (rows) the host will choose or accept. */
#define PC_TH_MAX 64
/* Shared-memory row stride of the raw tile, in elements. */
#define PC_SR (PC_TW + 2 * PC_HX)

/* Everything a kernel needs, passed by value (graph kernel nodes get a new
 * copy per frame through cudaGraphExecKernelNodeSetParams). */
struct pc_kparams {
    const uint8_t *src; /* raw panorama, 16-byte aligned */
    int src_pitch;      /* multiple of 16 */
    int W, H;
    int ox, oy; /* CFA phase: position of red in the top-left 2x2 */
    int th;     /* tile height (rows); multiple of 4 */
    uint8_t *d0, *d1, *d2; /* output planes (Y/CbCr, Y/Cb/Cr, or RGB/RGBX) */
    int p0, p1, p2;
    int grid; /* a grid picture's tiles (pc_grid_pack; in what was padding,
               * so the struct keeps its 128 bytes); 0: stacked */
    /* Conversion matrices (spec §8 with each camera's colour matrix folded
     * in, docs/colour.md §3): n_bands entries of PC_KBAND ints {cy[3],
     * cb[3], cr[3], yoff}; image row y uses band min(umulhi(y, band_mul),
     * n_bands - 1) (band_mul = floor(2^32 / band_rows) + 1, exact for rows
     * < 2^16; 0 with one band). `bands` is the device copy (MLRI's); the
     * +COL kernels read the same matrices from constant memory
     * (pc_cbands, cuda_kernel.cuh). */
    const int *bands;
    unsigned band_mul;
    int n_bands;
    /* Band 0 again, by value: the kernels without per-camera colour
     * (PC_KFMT_COL not set) read their one matrix from here, i.e. straight
     * from the constant bank as instruction operands (no registers, no
     * loads), exactly as before the colour stage. */
    int m0[10];
};
#define PC_KBAND 10
#define PC_KMAX_BANDS 16

/* Kernel output formats (the FMT template argument): the pc_pixfmt values
 * (RGB24 0, NV12 1, I420 2, RGBX32 3), and NV12/I420 + PC_KFMT_COL (4, 5)
 * for the kernels that select a matrix per row band and clamp Y'/chroma.
 * The host picks the +COL kernel only when some band's matrix needs it
 * (pc_bands_plain() == 0): with one matrix whose Y' and chroma cannot
 * leave their ranges (every plain spec §8 matrix, and a colour matrix
 * folded in that keeps them) the clamps are identities and the plain
 * kernel writes the same bytes at the pre-colour cost. The RGB formats
 * have no matrix, hence no +COL kernel. */
#define PC_KFMT_COL 3
/* + PC_KFMT_GRID (any of the 6 above but RGBX32): the kernel for a grid
 * picture (encode.layout "grid", pc_picture.grid_cols), whose final pass
 * adds each camera tile's offsets (pc_grid_offset) to its stores; the
 * other kernels have no trace of it (not a register, not an instruction).
 * RGBX32 (the panorama's texture source) has no grid (every backend's
 * check refuses one): its slot in the kernel sets is NULL, 14 kernels
 * less to compile. */
#define PC_KFMT_GRID 6
#define PC_KFMT_COUNT 12
#define PC_KFMT_NOGRID(f) ((f) % PC_KFMT_GRID)
#define PC_KFMT_IS_GRID(f) ((f) >= PC_KFMT_GRID)
#define PC_KFMT_IS_COL(f) (PC_KFMT_NOGRID(f) > PC_FMT_RGBX32)
#define PC_KFMT_BASE(f) (PC_KFMT_IS_COL(f) ? PC_KFMT_NOGRID(f) - PC_KFMT_COL : PC_KFMT_NOGRID(f))

/* 1 when n == 1 and for every 8-bit R, G, B the Y' numerator lies in
 * [0, 2^24) and the chroma numerators (sums of 4 pixels, + PC_COFF) are
 * >= 0, so the plain kernel's unclamped Y' and upper-clamped chroma equal
 * the clamped ones. */
static PC_HD int pc_bands_plain(const int *b, int n)
{
    if (n != 1)
        return 0;
    long long ylo = b[9], yhi = b[9], cblo = (128 << 18) + (1 << 17), crlo = cblo;
    for (int i = 0; i < 3; i++) {
        if (b[i] < 0)
            ylo += 255LL * b[i];
        else
            yhi += 255LL * b[i];
        if (b[3 + i] < 0)
            cblo += 1020LL * b[3 + i];
        if (b[6 + i] < 0)
            crlo += 1020LL * b[6 + i];
    }
    return ylo >= 0 && yhi < (1 << 24) && cblo >= 0 && crlo >= 0;
}

/* The band (index into pc_kparams.bands) of image row y. */
PC_DEV int pc_band_of(const pc_kparams &p, int y)
{
    const int b = (int)__umulhi((unsigned)y, p.band_mul);
    return b < p.n_bands - 1 ? b : p.n_bands - 1;
}

/* The colour (0 R, 1 G, 2 B) of a CFA site (x & 1) | (y & 1) << 1 under
 * CFA phase cfa (pc_cfa: the site of red). */
PC_HD int pc_site_colour(int site, int cfa)
{
    const int s = site ^ cfa;
    return s == 0 ? 0 : s == 3 ? 2 : 1;
}

PC_DEV int pc_rs(int v, int k) { return (v + (1 << (k - 1))) >> k; }

/* reflect-101 (spec §1.2), folded until inside: a tile halo may be wider
 * than one reflection of a tiny image (e.g. 9 px halo, 8 px image). */
PC_DEV int pc_fold(int i, int n)
{
    while ((unsigned)i >= (unsigned)n)
        i = i < 0 ? -i : 2 * n - 2 - i;
    return i;
}

/* Accessor of one shared-memory plane around a site: at<DX,DY>() reads the
 * element (DX,DY) away. Offsets are compile-time, so every read is one
 * shared load with an immediate offset from one base register. */
template <typename T>
struct pc_plane {
    const T *q;
    template <int DX, int DY>
    PC_DEV int at() const { return (int)q[DY * PC_SR + DX]; }
};

/* Bytes of one plane of th + 2*rp rows of PC_SR elements of es bytes. */
PC_HD size_t pc_plane_bytes(int th, int rp, int es)
{
    return ((size_t)(th + 2 * rp) * PC_SR * es + 15) & ~(size_t)15;
}

template <typename T>
PC_DEV pc_plane<T> pc_at(const T *base, int off)
{
    pc_plane<T> p;
    p.q = base + off;
    return p;
}

/* --- RGBX32 stores (the fused kernels' final pass and MLRI's) ------------
 * pc_rgbx: one texel, R, G, B in memory order and 255 (two PRMTs and an
 * OR; byte 0 of each value, as RGB24's byte stores take). The texels a
 * thread makes in a row are adjacent and 4 bytes each, so they leave in
 * one aligned store: 8 bytes (the 2px variant's two pixels, an MLRI block
 * row) or 16 (a row of the 4px variant's two blocks), one instruction
 * where RGB24 needs three byte stores per pixel, and a warp's stores cover
 * whole contiguous sectors. Hence the 16-byte alignment asked of RGBX32
 * destinations (pc_gpu_dst_align). */
PC_DEV unsigned pc_rgbx(int r, int g, int b)
{
    return __byte_perm(__byte_perm(r, g, 0x0040), b | 0xFF00, 0x5410);
}
PC_DEV void pc_store_u64(uint8_t *d, unsigned lo, unsigned hi)
{
#ifndef __CUDACC__
    pc_emu_check_align(d, 8);
#endif
    uint2 v;
    v.x = lo;
    v.y = hi;
    *(uint2 *)d = v;
}
PC_DEV void pc_store_u128(uint8_t *d, unsigned a, unsigned b, unsigned c, unsigned e)
{
#ifndef __CUDACC__
    pc_emu_check_align(d, 16);
#endif
    *(uint4 *)d = make_uint4(a, b, c, e);
}

#endif
