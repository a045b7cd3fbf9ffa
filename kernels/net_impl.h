/* net_impl.h - private interface of the learned demosaic (--algo net)
 * between its C reference (net_reference.c), the CPU backend's version
 * (net_cpu.c and its SIMD builds) and the tests.
 *
 * Geometry (docs/net.md), the same for every implementation: a frame is
 * cam_rows-row cameras stacked (pc_bayer.cam_rows; 0 = one image), each
 * demosaiced on its own. Camera pixel (x, y) reads, for the network's input
 * at (ix, iy), the camera's sample at (mir(ix - padx), mir(iy - pady)),
 * reflect-101 at the camera's own edges (repeated for cameras smaller than
 * the pad, which the minimum size allows). The input grid starts where a
 * 2x2 block reads G R / B G (the network's GRBG): pad = margin M plus 0 or
 * 1 so that -pad has the parity of that block offset. Input channel c
 * (R, G, B) holds sample / 255 at the sites of colour c, 0 elsewhere. The
 * unpadded network's output pixel (i, j) is input pixel (i + M, j + M),
 * camera pixel (i - (padx - M), j - (pady - M)).
 */
#ifndef PANOCAP_NET_IMPL_H
#define PANOCAP_NET_IMPL_H

#include "algo_impl.h"
#include "net.h"
#include "reference_passes.h"

/* One frame's geometry and destination, filled by pc_net_frame_setup. */
typedef struct pc_net_frame {
    const pc_net *net;
    int w, h;           /* frame */
    int cam_h, ncam;    /* rows per camera, cameras */
    int ox, oy;         /* the red sample's position in a 2x2 tile */
    int M;              /* pc_net_margin */
    int padx, pady;     /* input pixels before the camera's first column, row */
    int win, hin;       /* the network's input per camera (even) */
    const uint8_t *raw;
    size_t raw_pitch;
    pc_picture dst;
    pc_yuv_coeffs yc;
} pc_net_frame;

/* Checks src/dst (pc_debayer_check) and the weights, fills f. */
int pc_net_frame_setup(pc_net_frame *f, const pc_net *net, const pc_bayer *src, const pc_picture *dst, char *err,
                       size_t errlen);

/* reflect-101 of index i into [0, n), n >= 2, any i (repeated reflection) */
static inline int pc_net_mir(int i, int n)
{
    const int p = 2 * (n - 1);
    i %= p;
    if (i < 0)
        i += p;
    return i < n ? i : p - i;
}

/* Camera cam's sample under network input pixel (ix, iy), and its colour
 * (0 R, 1 G, 2 B). */
static inline int pc_net_sample(const pc_net_frame *f, int cam, int ix, int iy, int *colour)
{
    const int x = pc_net_mir(ix - f->padx, f->w), y = pc_net_mir(iy - f->pady, f->cam_h);
    const int sx = (x ^ f->ox) & 1, sy = (y ^ f->oy) & 1;
    *colour = sx == 0 && sy == 0 ? 0 : sx && sy ? 2 : 1;
    return f->raw[(size_t)(cam * f->cam_h + y) * f->raw_pitch + (size_t)x];
}

/* The network's input value of a sample (the published model's x / 255). */
static inline float pc_net_in(int sample) { return (float)sample / 255.0f; }

/* Output value -> code value: clamped to [0, 1], x 255, rounded. */
static inline uint8_t pc_net_u8(float v)
{
    v = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f; /* NaN -> 0 */
    return (uint8_t)(v * 255.0f + 0.5f);
}

/* Stores camera cam's rows y, y + 1 (y even; RGB24, w pixels each) in the
 * destination's format (its colour band's matrix, grid offsets). */
void pc_net_store_rows(const pc_net_frame *f, int cam, int y, const uint8_t *rgb0, const uint8_t *rgb1);


/* The CPU backend's version on its pool (net_cpu.c), same weights: within
 * one code value of pc_net_ref (sums reordered, multiply-adds fused).
 * lanes: "avx512", "avx2", "baseline" or NULL for the best this CPU runs. */
int pc_net_cpu(pc_cpu *cpu, const pc_net *net, const char *lanes, uint8_t *temp, size_t temp_bytes,
               const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen);
/* Scratch bytes pc_net_cpu needs for w-pixel-wide frames on `threads`
 * threads (line buffers per thread; independent of the height). */
size_t pc_net_cpu_temp_bytes(const pc_net *net, int w, int threads);
/* The best lanes this CPU runs, and whether a build's lanes can run. */
const char *pc_net_cpu_best_lanes(void);
int pc_net_cpu_lanes_usable(const char *lanes);

/* The descriptor's impl (algo_impl.h): the reference with the default
 * weights file (pc_net_default_path), the CPU backend's version with the
 * weights of pc_cpu_set_net (or the default file, loaded once). */
extern const pc_algo_impl pc_net_impl;

/* The CPU backend's weights (cpu.c): those set by pc_cpu_set_net, else
 * the default file, loaded on first use and kept by cpu. NULL with a
 * message naming the file when it cannot be loaded. */
const pc_net *pc_cpu_get_net(pc_cpu *cpu, char *err, size_t errlen);
/* The CPU backend's scratch for net (cpu.c): grown to at least `bytes`
 * (64-byte aligned, kept by cpu); *out (if not NULL) gets it. */
int pc_cpu_net_scratch(pc_cpu *cpu, size_t bytes, uint8_t **out, char *err, size_t errlen);

#endif
