/* algos.c - the algorithm table (one descriptor per --algo name) and the
 * variant names (the picture's names are the core's, picture.c). Everything that lists or selects an algorithm
 * reads this table: the CLI, panocap-quality, panocap-bench, the tests. */
#include "debayer.h"
#include "mlri.h"
#include "net_impl.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define BOTH (PC_VARIANT_2PX | PC_VARIANT_4PX)

/* Radii and temporaries from algorithms.md §9; GTX 680 times from the
 * paper's Table III (µs per 2040x5400 frame, YUV conversion included).
 * The last field, impl, is NULL for these fused-stencil algorithms: each
 * backend finds their code in its own table by id (algo_impl.h says how
 * to add an algorithm, with its own code or not). */
static const pc_algo_desc algo_table[PC_ALGO_COUNT] = {
    {PC_ALGO_BILINEAR, "bilinear", "bilinear interpolation",
     "average of the 2 or 4 nearest samples of each colour; the fastest baseline",
     1, {1, 0, 0}, 1, 0, BOTH, 929, NULL},
    {PC_ALGO_SMOOTH_HUE, "smooth-hue", "smooth hue transition (Cok)",
     "bilinear green, then red/blue from neighbour hue ratios C/G",
     2, {1, 1, 0}, 2, 2, BOTH, 1979, NULL},
    {PC_ALGO_HQ_LINEAR, "hq-linear", "high-quality linear (Malvar-He-Cutler)",
     "5x5 linear filters: bilinear plus a Laplacian correction from the known colour",
     1, {2, 0, 0}, 2, 0, BOTH, 1073, NULL},
    {PC_ALGO_EDGE, "edge", "edge-directed (Hamilton-Adams)",
     "green along the smaller gradient with Laplacian correction, constant-hue red/blue",
     2, {2, 1, 0}, 3, 2, BOTH, 2025, NULL},
    {PC_ALGO_HOMOGENEOUS_EDGE, "homogeneous-edge", "homogeneous edge-directed",
     "both directional greens, direction by 3x3 majority vote, constant-hue red/blue",
     3, {2, 1, 1}, 4, 4, BOTH, 3184, NULL},
    {PC_ALGO_WD_ORIGINAL, "wd-original", "weighted directions, original (Lu-Tan)",
     "inverse-gradient weighted green, then weighted red/blue on diagonals and axes",
     3, {3, 3, 3}, 9, 6, BOTH, 9061, NULL},
    {PC_ALGO_WD_MODIFIED, "wd-modified", "weighted directions, modified",
     "weighted-directions green plus the edge-directed constant-hue final pass",
     2, {3, 1, 0}, 4, 2, BOTH, 3094, NULL},
    /* Float guided filters over 7x7 and 11x11 windows (docs/mlri.md), its
     * own code (mlri_reference.c, cuda_mlri.cu). Its three steps
     * (directional estimates, green, red/blue) count as the passes, with
     * their halos; radius_total is the reach of the whole method;
     * temporaries are the CUDA backend's 5 float planes. */
    {PC_ALGO_MLRI, "mlri", "minimised-Laplacian residual interpolation (Kiku et al.)",
     "green from directional guided filters on Laplacians plus residuals, then red/blue guided by green",
     3, {9, 8, 10}, 27, 20, 0, 0, &pc_mlri_impl},
    /* demosaicnet's Bayer network with its published weights (docs/net.md;
     * net_reference.c, net_cpu.c, the CUDA path on tensor cores). Its
     * steps as the passes: the half-resolution network (the 2x2 packing and
     * 15 3x3 layers: 31 pixels of reach), the transposed convolution back
     * to full resolution, and the full-resolution 3x3 + 1x1; radius_total
     * is pc_net_margin plus the packing block. Temporaries: those of the
     * CUDA backend (0 until it states them). */
    {PC_ALGO_NET, "net", "learned demosaic (demosaicnet, Gharbi et al. 2016)",
     "15-layer convolutional network at half resolution plus a full-resolution correction (published weights)",
     3, {31, 0, 1}, 32, 0, 0, 0, &pc_net_impl},
};

int pc_algo_count(void) { return PC_ALGO_COUNT; }

const pc_algo_desc *pc_algo_get(pc_algo_id id)
{
    if ((int)id < 0 || id >= PC_ALGO_COUNT)
        return NULL;
    return &algo_table[id];
}

const pc_algo_desc *pc_algo_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < PC_ALGO_COUNT; i++)
        if (strcasecmp(name, algo_table[i].name) == 0)
            return &algo_table[i];
    return NULL;
}

void pc_algo_names(char *buf, size_t len)
{
    size_t off = 0;
    if (!len)
        return;
    buf[0] = '\0';
    for (int i = 0; i < PC_ALGO_COUNT && off < len; i++) {
        int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", algo_table[i].name);
        if (n < 0)
            break;
        off += (size_t)n;
    }
}

static const char *const variant_names[] = {"auto", "2px", "4px"};

int pc_variant_from_name(const char *n)
{
    if (!n)
        return -1;
    for (int i = 0; i < 3; i++)
        if (strcasecmp(n, variant_names[i]) == 0)
            return i;
    return -1;
}
const char *pc_variant_name(pc_variant v) { return (unsigned)v < 3 ? variant_names[v] : "?"; }
