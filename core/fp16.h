/* fp16.h - IEEE binary16 ("half") conversions in plain C, for the host side
 * of the tensor-core kernels (the weights' fp16 layouts, net_gpu.c) and for
 * their CPU emulation (cuda_emu_warp.h): the device's cvt.rn.f16.f32 and
 * cvt.f32.f16, bit for bit. */
#ifndef PANOCAP_FP16_H
#define PANOCAP_FP16_H

#include <stdint.h>
#include <string.h>

/* Exact: every binary16 value is a float. */
static inline float pc_half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    uint32_t bits;
    if (e == 0) {
        const float v = (float)m * (1.0f / 16777216.0f); /* m * 2^-24, exact */
        memcpy(&bits, &v, 4);
        bits |= sign;
    } else if (e == 31) {
        bits = sign | 0x7F800000u | (m << 13);
    } else {
        bits = sign | ((e + 112) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Round to nearest, ties to even (cvt.rn.f16.f32, __float2half_rn):
 * subnormal results, infinity from 65520 up, NaN to the canonical 0x7FFF. */
static inline uint16_t pc_half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7FFFFFFFu;
    if (x > 0x7F800000u)
        return 0x7FFF;
    if (x >= 0x477FF000u) /* >= 65520 */
        return (uint16_t)(sign | 0x7C00u);
    if (x >= 0x38800000u) { /* normal: rebias, round the 13 bits dropped */
        uint32_t h = (x - 0x38000000u) >> 13;
        const uint32_t r = x & 0x1FFFu;
        if (r > 0x1000u || (r == 0x1000u && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
    if (x <= 0x33000000u) /* <= 2^-25: zero (2^-25 is a tie to the even 0) */
        return (uint16_t)sign;
    const uint32_t e = x >> 23, m = (x & 0x7FFFFFu) | 0x800000u, s = 126 - e; /* subnormal: units of 2^-24 */
    uint32_t h = m >> s;
    const uint32_t r = m & ((1u << s) - 1), half = 1u << (s - 1);
    if (r > half || (r == half && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

#endif
