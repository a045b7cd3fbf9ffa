/* mlri_formulas.h - the point formulas of minimised-Laplacian residual
 * interpolation (MLRI, Kiku et al. 2014), shared by the C reference
 * (mlri_reference.c) and the CUDA kernels (cuda_mlri.cuh), so both evaluate
 * the same float expressions in the same order. See docs/mlri.md for the
 * whole method and where each constant comes from.
 *
 * Plain C99 / CUDA C++: every function is host+device inline, no state.
 */
#ifndef PANOCAP_MLRI_FORMULAS_H
#define PANOCAP_MLRI_FORMULAS_H

#ifdef __CUDACC__
#define PC_MF __host__ __device__ __forceinline__ static
#else
#define PC_MF static inline
#endif

/* Guided-filter windows (radius; the window is (2r+1) x (2r+1)): 7x7 for
 * the directional green estimates, 11x11 for red and blue from the full
 * green (the authors' code: h = v = 3 and h = v = 5). */
#define PC_MLRI_R_GREEN 3
#define PC_MLRI_R_RB 5
/* Lower bound of the mean squared Laplacian of the guide, 1e-5 * 255^2
 * (the authors' code, "th"); eps of the regression is 0 for MLRI. */
#define PC_MLRI_VAR_MIN 0.65025f
/* Regulariser of the directional weights 1 / (gradient^2 + 1e-2). */
#define PC_MLRI_W_EPS 0.01f

/* Half of a 9-tap Gaussian, sigma 1.4, renormalised over its 5 taps
 * (distance 0..4): the one-sided colour-difference smoothers of the green
 * step. Computed as exp(-d^2 / (2 * 1.4^2)) / sum_{k=0..4} exp(...). */
#define PC_MLRI_GW0 0.44388535f
#define PC_MLRI_GW1 0.34393898f
#define PC_MLRI_GW2 0.15999749f
#define PC_MLRI_GW3 0.04468545f
#define PC_MLRI_GW4 0.00749273f

PC_MF float pc_mlri_clip(float v) { return v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v; }

/* Regression through the origin of the target's Laplacian on the guide's
 * (the "minimised Laplacian" step), from the window sums over the n sites
 * of one CFA class: sip = sum I*p, sii = sum I*I, sg = sum guide,
 * st = sum target. Writes the slope a and the intercept b. */
PC_MF void pc_mlri_ab(float n, float sip, float sii, float sg, float st, float *a, float *b)
{
    float mii = sii / n;
    if (mii < PC_MLRI_VAR_MIN)
        mii = PC_MLRI_VAR_MIN;
    float av = (sip / n) / mii;
    *a = av;
    *b = st / n - av * (sg / n);
}

/* Directional weight from the 3x3-summed gradient of the colour difference. */
PC_MF float pc_mlri_w(float s) { return 1.0f / (s * s + PC_MLRI_W_EPS); }

/* Rounds a float in [0, 255] to the nearest 8-bit code value. */
PC_MF int pc_mlri_u8(float v) { return (int)(pc_mlri_clip(v) + 0.5f); }

#endif
