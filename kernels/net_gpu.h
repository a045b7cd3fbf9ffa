/* net_gpu.h - the learned demosaic's weights (net.h) in the layouts of its
 * tensor-core kernels (cuda_net.cuh), built on the host: one blob that the
 * CUDA backend copies to the device once per weights file and the CPU
 * emulation of the kernels reads in place.
 *
 * What the kernels compute from it (docs/net.md has the network):
 *   layer 1   pack (3 -> 4, 2x2 stride 2, no ReLU) folded into conv 1
 *             (4 -> 64, 3x3): one 36 -> 64 map of the 3x3 cells' 4 raw
 *             samples each (x 1/255 folded in too), exact in real arithmetic
 *   trunk     the 3x3 64 -> 64 convolutions, fp16 [tap][cout][cin]; the
 *             last layer (64 -> 128) as two of them: its filters and masks
 *   U         residual (64 -> 12, 1x1) and the transposed 2x2 upsampler
 *             (12 -> 3, grouped) are both linear: one 64 -> 12 map of
 *             filters * masks giving each 2x2 block's three colours at its
 *             four pixels (channel 4 c + 2 ky + kx; 16 stored, 4 zero)
 *   post      Conv2d(6, 64, 3) on the mosaic and U at full resolution: per
 *             pixel parity one 48 -> 64 map (the mosaic's colour at each
 *             tap depends on the parity; x 1/255 folded in), K ordered so
 *             that lane t of a fragment holds taps t, t + 4, t + 8 (below);
 *             its bias in K slots 34 and 35 (tap 9's sample and R, which
 *             the kernel sets to 1): the fp16 nearest to it, then the fp16
 *             of what is left, so the sum is the bias to ~2^-22
 *   out       Conv2d(64, 3, 1) in fp32.
 * Fragments are stored per lane in the order the kernels load them (one
 * 8-byte load per lane and fragment): B operands of mma.m16n8k16, lane l
 * (g = l >> 2, t = l & 3) holding {B[2t][g], B[2t+1][g]} and {B[2t+8][g],
 * B[2t+9][g]} of each 16 x 8 block. */
#ifndef PANOCAP_NET_GPU_H
#define PANOCAP_NET_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_NETG_C 64 /* the kernels' channels: the model's width */

/* Byte offsets into the blob (each a multiple of 256). */
typedef struct pc_netg_layout {
    int depth;      /* the model's half-resolution layers */
    int nconv;      /* trunk convolutions: depth (depth - 2 plain, then filters, masks) */
    size_t bytes;   /* the blob's size */
    size_t l1_frag; /* layer 1: B fragments [3 k16][8 n8][32 lanes] x 2 u32 */
    size_t l1_bias; /* float[64] */
    size_t conv[PC_NET_MAX_DEPTH]; /* trunk k: fp16 [9][64][64]; k < depth - 2: main[k + 1],
                                      depth - 2: main[depth - 1]'s filters, depth - 1: its masks */
    size_t bias[PC_NET_MAX_DEPTH]; /* float[64] each */
    size_t r_frag;    /* U: B fragments [4 k16][2 n8][32] x 2 u32 */
    size_t r_bias;    /* float[16] */
    size_t post_frag; /* post: [4 parities][3 k16][8 n8][32] x 2 u32; parity = (y & 1) * 2 + (x & 1) of
                         the network's input pixel */
    size_t post_bias; /* float[64] (the kernels take it from post_frag's slots 34, 35) */
    size_t out_w;     /* float[3][64] */
    size_t out_b;     /* float[4] (3 used) */
} pc_netg_layout;

/* Checks that net fits the kernels (width 64, depth 2..PC_NET_MAX_DEPTH,
 * every tensor's shape) and fills lay. 0 or PC_EINVAL with a message. */
int pc_netg_plan(const pc_net *net, pc_netg_layout *lay, char *err, size_t errlen);
/* Writes the blob (lay->bytes bytes, 16-byte aligned) for net. */
void pc_netg_build(const pc_net *net, const pc_netg_layout *lay, void *blob);

/* The mosaic's colour (0 R, 1 G, 2 B) at a position (x & 1, y & 1) of the
 * network's GRBG block grid. */
static inline int pc_netg_colour(int sx, int sy)
{
    return sy == 0 ? (sx ? 0 : 1) : (sx ? 1 : 2);
}

/* The post layer's K order: slot k of a 48-wide row is tap 4 (k / 16) +
 * (k % 8) / 2 (0..8; 9..11 are not taps: 9's v 0 and 1 carry the bias, the
 * rest are zero) and value v = 2 (k % 16 >= 8) + k % 2: 0 the mosaic
 * sample, 1..3 U's R, G, B at that tap. */
static inline void pc_netg_post_k(int k, int *tap, int *v)
{
    *tap = 4 * (k / 16) + (k % 8) / 2;
    *v = 2 * ((k % 16) >= 8) + (k % 2);
}

#ifdef __cplusplus
}
#endif
#endif
