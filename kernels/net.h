/* net.h - the learned demosaic (--algo net): the network's weights in
 * memory, their file, and the definition of the network.
 *
 * The network is Gharbi, Chaurasia, Paris and Durand's Bayer demosaicking
 * network ("Deep joint demosaicking and denoising", SIGGRAPH Asia 2016;
 * github.com/mgharbi/demosaicnet, MIT licence), its published weights
 * converted by tools/convert-demosaicnet into panocap's weights file
 * (docs/net.md has the architecture, the file layout and the provenance).
 *
 * Every implementation (the C reference net_reference.c, the CPU backend,
 * the CUDA kernels and their emulation) reads its weights from one
 * pc_net, loaded and checked here; the tensors keep PyTorch's layouts so
 * that the reference reads as the published model does.
 */
#ifndef PANOCAP_NET_H
#define PANOCAP_NET_H

#include <stddef.h>
#include <stdint.h>

#include "debayer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_NET_MAX_DEPTH 32
#define PC_NET_MAX_WIDTH 128

/* One convolution: w[cout][cin][k][k] (PyTorch's Conv2d layout), b[cout]. */
typedef struct pc_net_conv {
    int cin, cout, k; /* k = 1, 2 or 3 */
    const float *w;
    const float *b;
} pc_net_conv;

/* The whole network (all pointers into one allocation owned by pc_net).
 *   pack      Conv2d(3, 4, 2, stride 2): the masked GRBG mosaic (3
 *             channels, one nonzero per pixel) packed per 2x2 block
 *   main[i]   Conv2d 3x3, no padding, each followed by ReLU: main[0]
 *             4 -> width, then width -> width, the last width -> 2 width
 *             (filters, masks); depth of them, at half resolution
 *   residual  Conv2d(width, 12, 1) of filters * masks
 *   up        ConvTranspose2d(12, 3, 2, stride 2, groups 3): w[12][1][2][2]
 *             (stored as a pc_net_conv with cin 12, cout 3, k 2), b[3]
 *   post      Conv2d(6, width, 3), ReLU: the cropped mosaic (3 channels)
 *             and the upsampled residual (3) at full resolution
 *   out       Conv2d(width, 3, 1): RGB in [0, 1] (clamped, then x 255) */
typedef struct pc_net {
    int depth, width;
    pc_net_conv pack;
    pc_net_conv main[PC_NET_MAX_DEPTH];
    pc_net_conv residual, up, post, out;
    char sha256[65];  /* hex digest of the file's payload, checked at load */
    char path[512];   /* the file it came from */
    char name[64];    /* the model's name in the file, e.g. "demosaicnet-bayer" */
    size_t bytes;     /* the whole allocation, this struct first (pc_net_copy) */
} pc_net;

/* Full-resolution pixels the unpadded network loses on each side of its
 * input: 2 per half-resolution 3x3 layer plus 1 for post (31 for the
 * published model). The implementations pad each camera by reflection
 * (reflect-101, which keeps the CFA phase) by this plus the phase shift. */
int pc_net_margin(const pc_net *net);

/* Loads and checks a weights file (docs/net.md: magic, version, the
 * tensors' names and shapes, the SHA-256 of the payload). Every failure
 * names the file and what is wrong with it (missing, truncated, bad
 * magic, checksum mismatch, a tensor of the wrong shape). 0 or a negative
 * PC_E* code. */
int pc_net_load(pc_net **out, const char *path, char *err, size_t errlen);
void pc_net_free(pc_net *net);
/* A copy of net with its own allocation (e.g. for a thread that outlives
 * the original's owner); NULL when out of memory. */
pc_net *pc_net_copy(const pc_net *net);

/* Floating-point operations (2 per multiply-add) the network costs for a
 * w x h frame of cameras of cam_rows rows (0: one image) in phase cfa, as
 * the reference computes it (each camera padded, net_impl.h): the measure
 * behind the GFLOP/s figures of docs/net.md. 0 for invalid sizes. */
double pc_net_flops(const pc_net *net, int w, int h, int cam_rows, pc_cfa cfa);

/* The weights file panocap uses when none is configured: the installed
 * copy ($datadir/panocap/), else the source tree's. */
const char *pc_net_default_path(void);

/* The reference (net_reference.c: single-threaded float loops, the
 * definition) with these weights; pc_ref_debayer(PC_ALGO_NET, ...) is
 * this with the default file. */
int pc_net_ref(const pc_net *net, const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen);

/* The weights the CPU backend's net runs with from its next frame on
 * (borrowed: net must outlive its use, until another pc_cpu_set_net or
 * pc_cpu_close). NULL: the default file (pc_net_default_path), loaded on
 * first use. Takes effect between frames (it waits for a frame in
 * progress). */
void pc_cpu_set_net(pc_cpu *cpu, const pc_net *net);

#ifdef __cplusplus
}
#endif
#endif
