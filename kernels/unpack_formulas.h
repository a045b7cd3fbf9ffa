/* unpack_formulas.h - the definition of every raw packing (colour.h), as
 * one inline function shared by the C code (unpack.c) and the CUDA colour
 * kernel: sample n of a frame's stream (n = y*W + x). */
#ifndef PANOCAP_UNPACK_FORMULAS_H
#define PANOCAP_UNPACK_FORMULAS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define PC_UNPACK_FN __host__ __device__ static inline
#elif defined(PANOCAP_CUDA_EMU_H)
#define PC_UNPACK_FN static inline
#else
#define PC_UNPACK_FN static inline
#endif

/* packing: 0 8-bit, 1 16-bit LE container, 2 PFNC (...p), 3 GigE Vision
 * (...Packed); bits 8, 10 or 12. */
PC_UNPACK_FN unsigned pc_unpack_sample(const uint8_t *s, int packing, int bits, size_t n)
{
    const unsigned mask = (1u << bits) - 1;
    switch (packing) {
    case 0:
        return s[n];
    case 1:
        return (s[2 * n] | (unsigned)s[2 * n + 1] << 8) & mask;
    case 2: {
        /* LSB-first bit stream: sample n at bits [n*b, n*b + b). The shift
         * within the first byte is even (b and so n*b are even): at most 6
         * for b = 10, 0 or 4 for b = 12, so two bytes always hold it. */
        size_t bit = n * (size_t)bits;
        const uint8_t *p = s + (bit >> 3);
        return ((p[0] | (unsigned)p[1] << 8) >> (bit & 7)) & mask;
    }
    default: {
        /* 2 samples in 3 bytes: high bits in bytes 0 and 2, low bits in
         * byte 1 (sample 0 from bit 0, sample 1 from bit 4) */
        const uint8_t *p = s + 3 * (n >> 1);
        const int hs = bits - 8;
        const unsigned lo = (n & 1) ? (unsigned)p[1] >> 4 : p[1];
        return ((unsigned)p[(n & 1) ? 2 : 0] << hs) | (lo & ((1u << hs) - 1));
    }
    }
}

#endif
