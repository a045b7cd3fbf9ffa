/* colour.h - real sensor data: raw pixel formats (8/10/12-bit, 16-bit
 * containers, PFNC and GigE Vision packing), the per-camera colour settings
 * (black level, white-balance gains, colour matrix, transfer curve), the
 * per-CFA-colour lookup tables built from them on the host, the colour
 * matrix folded into the final pass's RGB -> Y'CbCr integer matrix, and
 * the automatic white-balance estimator. The integer rules are in
 * docs/colour.md; this header is their C API.
 *
 * Data flow (per camera slab):
 *   raw bytes --unpack--> sensor codes 0..2^bits-1 --LUT[colour]--> 8-bit
 *   Bayer (what every demosaic algorithm takes, unchanged) --> final pass
 *   with the camera's own integer matrix (YUV x CCM).
 * With an 8-bit format and default settings the tables are the identity
 * (pc_colour_tables.identity): nothing is applied and the output is the
 * same bytes as without colour processing.
 *
 * Conventions as in debayer.h: 0 or a negative PC_E* code with a message.
 */
#ifndef PANOCAP_COLOUR_H
#define PANOCAP_COLOUR_H

#include <stddef.h>
#include <stdint.h>

#include "debayer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- raw pixel formats ----------------------------------------------------
 * GenICam PFNC names: Bayer{RG,GR,GB,BG}{8,10,12,10p,12p,10Packed,12Packed}.
 *   8        one byte per sample
 *   10, 12   16-bit little-endian container, the code in the low bits
 *            (higher bits are ignored: masked to the bit depth)
 *   10p, 12p PFNC packed: one little-endian bit stream, sample n at bits
 *            [n*b, n*b+b) (10p: 4 samples in 5 bytes; 12p: 2 in 3)
 *   10Packed, 12Packed  GigE Vision packed: 2 samples in 3 bytes,
 *            byte 0 = s0 >> (b-8), byte 2 = s1 >> (b-8), byte 1 holds the
 *            low bits: s0's in bits 0.., s1's in bits 4..
 * A frame is one stream of W*H samples with no padding between rows (as
 * the GigE Vision payload carries it); for 10p a row may start in the
 * middle of a byte (when W is not a multiple of 4). */
typedef enum pc_packing {
    PC_PACK_8 = 0,      /* 8-bit */
    PC_PACK_LE16 = 1,   /* 16-bit little-endian container */
    PC_PACK_PFNC = 2,   /* ...p */
    PC_PACK_GVSP = 3,   /* ...Packed */
} pc_packing;

typedef struct pc_rawfmt {
    int bits;           /* 8, 10 or 12 */
    pc_packing packing;
    pc_cfa cfa;
} pc_rawfmt;

/* "BayerRG12p" -> {12, PFNC, RGGB}; case-sensitive as GenICam. Returns 0
 * or PC_EINVAL with a message listing the accepted forms. */
int pc_rawfmt_parse(const char *name, pc_rawfmt *out, char *err, size_t errlen);
/* The GenICam name ("BayerGB10Packed") into buf. */
void pc_rawfmt_name(const pc_rawfmt *f, char *buf, size_t len);
/* Bits one sample occupies in the stream: 8, 16 (containers), 10 (10p)
 * or 12 (12p, and both ...Packed: 3 bytes per 2 samples). */
int pc_rawfmt_stream_bits(const pc_rawfmt *f);
/* Bytes of a W x H frame (rounded up to whole bytes). */
size_t pc_rawfmt_frame_bytes(const pc_rawfmt *f, int width, int height);
/* Bytes of sensor data per second at that size and rate (for the link
 * check: a GigE link carries about 118 MB/s of payload). */
double pc_rawfmt_rate_bytes(const pc_rawfmt *f, int width, int height, double fps);

/* Unpacks samples [0, w) of row y of a frame (stream layout above) into
 * codes 0..2^bits-1. The reference definition of every format. */
void pc_unpack_row(const pc_rawfmt *f, const uint8_t *frame, int width, int y, uint16_t *dst);

/* --- per-camera colour settings ------------------------------------------ */

typedef enum pc_transfer {
    PC_TRANSFER_LINEAR = 0, /* y = x */
    PC_TRANSFER_SRGB = 1,   /* IEC 61966-2-1 encoding */
    PC_TRANSFER_BT709 = 2,  /* ITU-R BT.709 OETF */
    PC_TRANSFER_GAMMA = 3,  /* y = x^(1/gamma) */
    PC_TRANSFER_LUT = 4,    /* a table of 2^bits output codes (file) */
} pc_transfer;

#define PC_CCM_MAX 8.0      /* |entry| above this is rejected as absurd */
#define PC_WB_MAX 16.0      /* white-balance gains lie in (0, 16] */

typedef struct pc_colour_cfg {
    double black_level;     /* sensor units (codes at the format's depth) */
    double white_level;     /* sensor units; <= 0: the largest code */
    double wb[3];           /* red, green, blue gains (1, 1, 1) */
    double ccm[9];          /* row-major 3x3 on linear-ish RGB (identity) */
    pc_transfer transfer;
    double gamma;           /* PC_TRANSFER_GAMMA */
    const uint8_t *lut;     /* PC_TRANSFER_LUT: lut_len output codes */
    int lut_len;
} pc_colour_cfg;

void pc_colour_cfg_init(pc_colour_cfg *c);
/* Checks c against a format of `bits` bits: black below white, white
 * within the codes, gains finite in (0, PC_WB_MAX], matrix finite within
 * +-PC_CCM_MAX, gamma in [0.1, 10], LUT of exactly 2^bits entries. The
 * message names the setting ("black_level", "ccm", ...) and the value. */
int pc_colour_cfg_check(const pc_colour_cfg *c, int bits, char *err, size_t errlen);
/* 1 when c changes nothing for an 8-bit format (the identity tables and
 * the identity matrix). */
int pc_colour_cfg_is_identity(const pc_colour_cfg *c, int bits);

/* Transfer by name: "linear", "srgb", "bt709" (gamma values are numbers,
 * LUT files are paths: the config layer decides). -1 if unknown. */
int pc_transfer_from_name(const char *name);
const char *pc_transfer_name(pc_transfer t);

/* Reads a transfer LUT file: whitespace-separated integers 0..255, '#'
 * to end of line is a comment; exactly `expect` of them. Errors name the
 * file and line. *out is malloc'd. */
int pc_lut_file_read(const char *path, int expect, uint8_t **out, int *len,
                     char *err, size_t errlen);

/* --- the tables ------------------------------------------------------------ */

#define PC_LUT_MAX_CODES 4096

/* lut[c][code], c = 0 red, 1 green, 2 blue: the 8-bit value a sensor code
 * of that CFA colour becomes (docs/colour.md §2). */
typedef struct pc_colour_tables {
    int bits;
    int identity; /* every lut[c][v] == v and bits == 8 */
    uint8_t lut[3][PC_LUT_MAX_CODES];
} pc_colour_tables;

int pc_colour_tables_build(const pc_colour_cfg *c, int bits, pc_colour_tables *t,
                           char *err, size_t errlen);

/* Unpacks and maps row y of a raw frame to 8-bit Bayer (dst, width bytes):
 * dst[x] = lut[colour of (x, y) under f->cfa][code]. The hot-path form,
 * equal to pc_unpack_row followed by the table lookups. */
void pc_colour_row(const pc_rawfmt *f, const pc_colour_tables *t, const uint8_t *frame,
                   int width, int y, uint8_t *dst);
/* A whole slab: rows [0, height) into dst at dst_pitch. For an 8-bit
 * format with identity tables this is a plain copy. src_pitch: bytes
 * between rows of an 8-bit or 16-bit source (0: tight); packed formats
 * are always tight. */
void pc_colour_slab(const pc_rawfmt *f, const pc_colour_tables *t, const uint8_t *src,
                    size_t src_pitch, int width, int height, uint8_t *dst, size_t dst_pitch);
/* Rows [y0, y1) only (dst is still row 0 of the slab). */
void pc_colour_rows(const pc_rawfmt *f, const pc_colour_tables *t, const uint8_t *src, size_t src_pitch,
                    int width, int y0, int y1, uint8_t *dst, size_t dst_pitch);

/* One camera's slab as it arrived, for the CPU backend's colour stage. */
typedef struct pc_raw_slab {
    const uint8_t *data;
    size_t pitch;                   /* 8/16-bit formats: bytes per row (0: tight) */
    pc_rawfmt fmt;
    const pc_colour_tables *tables; /* built for fmt.bits */
} pc_raw_slab;

/* The CPU backend with the colour stage: the n slabs (slab_h rows each,
 * n * slab_h = dst->height) are unpacked and mapped through their tables
 * into the context's 8-bit frame by the pool's threads, each its own rows
 * (this replaces the stacking copy), then demosaiced into dst exactly as
 * pc_cpu_debayer does. The panorama's CFA phase is slabs[0].fmt.cfa; all
 * slabs must have it. */
int pc_cpu_debayer_raw(pc_cpu *cpu, pc_algo_id algo, const pc_raw_slab *slabs, int n, int slab_h,
                       const pc_picture *dst, char *err, size_t errlen);

/* --- the colour matrix in the final pass ------------------------------------
 * out = the §8 coefficients of (matrix, range) times the camera's colour
 * matrix in Q12 (docs/colour.md §3): cQ'[r][k] = RS(sum_j cQ[r][j] *
 * M12[j][k], 12). The identity matrix gives the §8 coefficients exactly. */
int pc_yuv_coeffs_ccm(pc_matrix m, pc_range r, const double ccm[9], pc_yuv_coeffs *out,
                      char *err, size_t errlen);

/* --- automatic white balance ------------------------------------------------ */

typedef struct pc_awb {
    double gain[3];       /* current smoothed gains (r, g, b), g == 1 */
    int have;             /* gains hold an estimate */
    double alpha;         /* smoothing per update, 0 < alpha <= 1 (0.1) */
    double deadband;      /* relative change ignored (0.005): no creeping */
} pc_awb;

void pc_awb_init(pc_awb *a);
/* Grey-world over the 2x2 tiles of a raw slab (every `step`-th tile in x
 * and y), ignoring tiles with any sample at or above 97 % of the white
 * level (clipped) or a green below black + 2 % of the range (near black):
 * raw gains g_c = mean(G) / mean(C) after black subtraction. Returns 0 and
 * the gains, or PC_EINVAL when too few tiles qualify (gains unchanged). */
int pc_awb_estimate(const pc_rawfmt *f, const uint8_t *frame, int width, int height,
                    double black, double white, int step, double gains[3]);
/* Folds an estimate into a->gain: log-domain exponential smoothing with
 * a->alpha, changes below a->deadband ignored (no flicker). */
void pc_awb_update(pc_awb *a, const double est[3]);

#ifdef __cplusplus
}
#endif
#endif
