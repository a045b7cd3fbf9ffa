/* render_cuda.cu - host side of the CUDA renderer (render_cuda.h): the
 * plan's device copy, texture objects for the source pictures, launches of
 * the render kernels (cuda_render.cuh) on the pc_gpu's compute stream, gain
 * statistics, and the timing loop of the benchmark. Nothing per frame
 * allocates: a frame is one kernel launch whose parameters (the camera
 * models and gains, by value) are filled on the host.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuda_render.cuh"
#include "errmsg.h"

#include "render_cuda.h"
#include "render_mb_cuda.h"

#define PC_RTEX_CACHE 8

struct pc_rtex {
    const void *ptr;
    size_t pitch;
    int h;
    cudaTextureObject_t tex;
    int ok; /* 0: this picture cannot be a texture (alignment): plain loads */
};

struct pc_gpu_renderer {
    pc_gpu *g;
    int device;
    cudaStream_t cs;
    pc_rkparams kp;   /* the plan's part; pictures filled per launch */
    int photo, resp_identity;
    int cubic; /* sampler = bicubic: the ray kernels with TEX 2 or 3 (cuda_render.cuh) */
    float photo_gain[PC_RENDER_MAX_CAMERAS][3];
    size_t tex_align, tex_pitch_align;
    pc_rtex texc[PC_RTEX_CACHE];
    int ntex, tex_next;
    /* device memory */
    float *d_col, *d_row, *d_luts, *d_seam, *d_pgain, *d_stats, *h_stats;
    uint16_t *d_tmask;
    uint32_t *d_map_off, *d_xy;
    float *d_map;
    pc_rpair *d_pairs;
    int npairs, have_map;
    pc_render_stats pairs_info; /* the pairs' cameras, for pc_gpu_render_stats */
    /* moving views (pc_gpu_render_update): pinned staging of the ray
     * terms and masks, double-buffered, an event per buffer */
    uint8_t *h_stage[2];
    cudaEvent_t stage_ev[2];
    int stage_used[2], stage_next;
    /* peer */
    int have_peer;
    pc_peer_cam peer[PC_RENDER_MAX_CAMERAS];
    float *d_peer[PC_RENDER_MAX_CAMERAS];
    float4 *d_acc;
    pc_gpu_mb *mb; /* blend = multiband (render_mb_cuda.h) */
};

#define CKR(call)                                                                                  \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            pc_set_err(err, errlen, "render: %s failed: %s (%s)", #call, cudaGetErrorString(e_),   \
                       cudaGetErrorName(e_));                                                      \
            return PC_EDEVICE;                                                                     \
        }                                                                                          \
    } while (0)

extern "C" const char *pc_gpu_render_variant_name(int v)
{
    static const char *const n[] = {"ray", "ray-loads", "map", "peer"};
    return (unsigned)v < PC_GPU_RENDER_VARIANTS ? n[v] : "?";
}

template <class T>
static int upload(T **d, const void *h, size_t bytes, char *err, size_t errlen)
{
    CKR(cudaMalloc((void **)d, bytes ? bytes : 16));
    if (bytes)
        CKR(cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice));
    return 0;
}

extern "C" void pc_gpu_render_free(pc_gpu_renderer *r)
{
    if (!r)
        return;
    cudaSetDevice(r->device);
    cudaStreamSynchronize(r->cs);
    pc_gpu_mb_free(r->mb);
    for (int i = 0; i < r->ntex; i++)
        if (r->texc[i].ok)
            cudaDestroyTextureObject(r->texc[i].tex);
    void *ptrs[] = {r->d_col, r->d_row, r->d_luts, r->d_seam, r->d_pgain, r->d_stats, r->d_tmask,
                    r->d_map_off, r->d_xy, r->d_map, r->d_pairs, r->d_acc};
    for (void *p : ptrs)
        if (p)
            cudaFree(p);
    for (int c = 0; c < PC_RENDER_MAX_CAMERAS; c++)
        if (r->d_peer[c])
            cudaFree(r->d_peer[c]);
    if (r->h_stats)
        cudaFreeHost(r->h_stats);
    for (int k = 0; k < 2; k++) {
        if (r->h_stage[k])
            cudaFreeHost(r->h_stage[k]);
        if (r->stage_ev[k])
            cudaEventDestroy(r->stage_ev[k]);
    }
    free(r);
}

/* The bytes of the view's arrays in staging: col, row, tmask. */
static size_t stage_bytes(const pc_rkparams &k, size_t *row_off, size_t *mask_off)
{
    *row_off = sizeof(float) * 2 * (size_t)k.w;
    *mask_off = *row_off + sizeof(float) * 2 * (size_t)k.h;
    return *mask_off + sizeof(uint16_t) * (size_t)k.ntx * ((k.h + PC_RENDER_TILE_H - 1) / PC_RENDER_TILE_H);
}

static int prepare(pc_gpu_renderer *r, const pc_render_plan *p, unsigned wants, char *err, size_t errlen)
{
    const int w = p->view.w, h = p->view.h;
    cudaDeviceProp prop;
    CKR(cudaGetDeviceProperties(&prop, r->device));
    r->tex_align = prop.textureAlignment;
    r->tex_pitch_align = prop.texturePitchAlignment;
    int rc;
    if ((rc = upload(&r->d_col, p->col, sizeof(float) * 2 * w, err, errlen)) ||
        (rc = upload(&r->d_row, p->row, sizeof(float) * 2 * h, err, errlen)) ||
        (rc = upload(&r->d_tmask, p->tmask, sizeof(uint16_t) * p->ntx * p->nty, err, errlen)))
        return rc;
    /* inv_knots (ncam x PC_RIG_RESPONSE_KNOTS) then out_resp, as floats
     * (the measuring kernel and the peer) and as pairs (our pixel
     * kernels: pc_rlut) */
    const size_t ni = (size_t)p->ncam * PC_RIG_RESPONSE_KNOTS, nt = ni + PC_RIG_RESPONSE_KNOTS;
    std::vector<float2> pairs(nt);
    pc_rlut_pairs_plan(p, pairs.data());
    CKR(cudaMalloc((void **)&r->d_luts, sizeof(float) * 3 * nt));
    CKR(cudaMemcpy(r->d_luts, p->inv_knots, sizeof(float) * ni, cudaMemcpyHostToDevice));
    CKR(cudaMemcpy(r->d_luts + ni, p->out_resp, sizeof(float) * PC_RIG_RESPONSE_KNOTS, cudaMemcpyHostToDevice));
    CKR(cudaMemcpy(r->d_luts + nt, pairs.data(), sizeof(float2) * nt, cudaMemcpyHostToDevice));
    if (p->seam && (rc = upload(&r->d_seam, p->seam, sizeof(float) * 2 * p->ncam * h, err, errlen)))
        return rc;
    if ((rc = upload(&r->d_pgain, p->photo_gain, sizeof(float) * 3 * PC_RENDER_MAX_CAMERAS, err, errlen)))
        return rc;
    /* gain statistics */
    r->npairs = p->npairs;
    r->pairs_info.npairs = p->npairs;
    for (int k = 0; k < p->npairs; k++) {
        r->pairs_info.pair[k].a = p->pair[k].a;
        r->pairs_info.pair[k].b = p->pair[k].b;
    }
    if (p->npairs) {
        pc_rpair pairs[PC_RENDER_MAX_PAIRS];
        const int ns = pc_rpairs_pack(p, pairs, NULL);
        uint32_t *xy = (uint32_t *)malloc(sizeof(uint32_t) * (ns ? ns : 1));
        if (!xy) {
            pc_set_err(err, errlen, "render: out of memory");
            return PC_ENOMEM;
        }
        pc_rpairs_pack(p, NULL, xy);
        rc = upload(&r->d_xy, xy, sizeof(uint32_t) * ns, err, errlen);
        free(xy);
        if (rc || (rc = upload(&r->d_pairs, pairs, sizeof(pc_rpair) * p->npairs, err, errlen)))
            return rc;
        CKR(cudaMalloc((void **)&r->d_stats, sizeof(float) * 8 * p->npairs));
        CKR(cudaHostAlloc((void **)&r->h_stats, sizeof(float) * 8 * p->npairs, cudaHostAllocPortable));
        memset(r->h_stats, 0, sizeof(float) * 8 * p->npairs);
    }
    if (wants & PC_GPU_RENDER_WANT_MAP) {
        if (!p->map) {
            pc_set_err(err, errlen, "render: the map variant needs a plan built with maps (pc_render_options.maps)");
            return PC_EINVAL;
        }
        if ((rc = upload(&r->d_map_off, p->map_off, sizeof(uint32_t) * ((size_t)p->ntx * p->nty + 1), err, errlen)) ||
            (rc = upload(&r->d_map, p->map, sizeof(float) * 2 * p->map_entries, err, errlen)))
            return rc;
        r->have_map = 1;
    }
    if (wants & PC_GPU_RENDER_WANT_PEER) {
        for (int c = 0; c < p->ncam; c++) {
            float *mem;
            if (pc_peer_build(p, c, &r->peer[c], &mem)) {
                pc_set_err(err, errlen, "render: out of memory for the peer's maps");
                return PC_ENOMEM;
            }
            if (!mem)
                continue;
            const size_t n = (size_t)r->peer[c].w * r->peer[c].h;
            rc = upload(&r->d_peer[c], mem, sizeof(float) * 3 * n, err, errlen);
            free(mem);
            if (rc)
                return rc;
            r->peer[c].mx = r->d_peer[c];
            r->peer[c].my = r->d_peer[c] + n;
            r->peer[c].wt = r->d_peer[c] + 2 * n;
        }
        CKR(cudaMalloc((void **)&r->d_acc, sizeof(float4) * (size_t)w * h));
        CKR(cudaMemset(r->d_acc, 0, sizeof(float4) * (size_t)w * h));
        r->have_peer = 1;
    }
    if (p->mb && (rc = pc_gpu_mb_prepare(p, &r->mb, err, errlen)))
        return rc;
    pc_rkparams_plan(&r->kp, p);
    /* moving views' staging (pc_gpu_render_update), so that no update allocates */
    size_t row_off, mask_off;
    const size_t sbytes = stage_bytes(r->kp, &row_off, &mask_off);
    for (int k = 0; k < 2; k++) {
        CKR(cudaHostAlloc((void **)&r->h_stage[k], sbytes, cudaHostAllocPortable));
        CKR(cudaEventCreateWithFlags(&r->stage_ev[k], cudaEventDisableTiming));
    }
    r->kp.col = (const float2 *)r->d_col;
    r->kp.row = (const float2 *)r->d_row;
    r->kp.tmask = r->d_tmask;
    r->kp.inv_knots = r->d_luts;
    r->kp.out_resp = r->d_luts + ni;
    r->kp.lut2 = (const float2 *)(r->d_luts + nt);
    r->kp.seam = r->d_seam;
    r->kp.map_off = r->d_map_off;
    r->kp.map = (const float4 *)r->d_map;
    r->photo = p->photo;
    r->cubic = p->sampler == PC_RENDER_BICUBIC;
    r->resp_identity = p->resp_identity;
    memcpy(r->photo_gain, p->photo_gain, sizeof r->photo_gain);
    return 0;
}

extern "C" int pc_gpu_render_prepare(pc_gpu *g, const pc_render_plan *plan, unsigned wants, pc_gpu_renderer **out,
                                     char *err, size_t errlen)
{
    *out = NULL;
    if (!g || !plan) {
        pc_set_err(err, errlen, "render: no GPU or no plan");
        return PC_EINVAL;
    }
    pc_gpu_renderer *r = (pc_gpu_renderer *)calloc(1, sizeof *r);
    if (!r) {
        pc_set_err(err, errlen, "render: out of memory");
        return PC_ENOMEM;
    }
    r->g = g;
    r->device = pc_gpu_device(g);
    r->cs = (cudaStream_t)pc_gpu_stream(g);
    cudaError_t e = cudaSetDevice(r->device);
    int rc = e == cudaSuccess ? prepare(r, plan, wants, err, errlen) : PC_EDEVICE;
    if (e != cudaSuccess)
        pc_set_err(err, errlen, "render: cudaSetDevice(%d) failed: %s", r->device, cudaGetErrorString(e));
    if (rc) {
        pc_gpu_render_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

extern "C" int pc_gpu_render_set_gains(pc_gpu_renderer *r, const float gains[][3], char *err, size_t errlen)
{
    if (!r || !gains) {
        pc_set_err(err, errlen, "render: set gains: no renderer or no gains");
        return PC_EINVAL;
    }
    int ones = 1;
    for (int c = 0; c < r->kp.ncam; c++)
        for (int k = 0; k < 3; k++) {
            if (!(gains[c][k] > 0.0f && gains[c][k] < 100.0f)) {
                pc_set_err(err, errlen, "render: set gains: camera %d's gain %g is out of range (0..100)", c,
                           (double)gains[c][k]);
                return PC_EINVAL;
            }
            r->kp.cam[c].gain[k] = r->photo_gain[c][k] * gains[c][k];
            ones &= r->kp.cam[c].gain[k] == 1.0f;
        }
    r->photo = !(r->resp_identity && ones && !r->kp.has_vig);
    return 0;
}

extern "C" int pc_gpu_render_update(pc_gpu_renderer *r, const pc_render_plan *plan, char *err, size_t errlen)
{
    if (!r || !plan) {
        pc_set_err(err, errlen, "render update: no renderer or no plan");
        return PC_EINVAL;
    }
    if (plan->view.w != r->kp.w || plan->view.h != r->kp.h || plan->ncam != r->kp.ncam || plan->ntx != r->kp.ntx ||
        plan->cam_w != r->kp.cam_w || plan->cam_h != r->kp.cam_h) {
        pc_set_err(err, errlen, "render update: the plan renders %dx%d from %d cameras, the renderer was prepared "
                   "for %dx%d from %d (update takes the moved plan it was prepared from)", plan->view.w,
                   plan->view.h, plan->ncam, r->kp.w, r->kp.h, r->kp.ncam);
        return PC_EINVAL;
    }
    CKR(cudaSetDevice(r->device));
    size_t row_off, mask_off;
    const size_t bytes = stage_bytes(r->kp, &row_off, &mask_off);
    const int k = r->stage_next;
    if (r->stage_used[k]) /* the copy out of this buffer, queued two updates ago */
        CKR(cudaEventSynchronize(r->stage_ev[k]));
    uint8_t *h = r->h_stage[k];
    memcpy(h, plan->col, row_off);
    memcpy(h + row_off, plan->row, mask_off - row_off);
    memcpy(h + mask_off, plan->tmask, bytes - mask_off);
    CKR(cudaMemcpyAsync(r->d_col, h, row_off, cudaMemcpyHostToDevice, r->cs));
    CKR(cudaMemcpyAsync(r->d_row, h + row_off, mask_off - row_off, cudaMemcpyHostToDevice, r->cs));
    CKR(cudaMemcpyAsync(r->d_tmask, h + mask_off, bytes - mask_off, cudaMemcpyHostToDevice, r->cs));
    CKR(cudaEventRecord(r->stage_ev[k], r->cs));
    r->stage_used[k] = 1;
    r->stage_next = k ^ 1;
    r->kp.view = plan->view;
    /* the old view's overlap samples mean nothing in this one (set_view
     * drops them from the plan): gain statistics stop until prepared anew */
    if (plan->npairs == 0)
        r->npairs = r->pairs_info.npairs = 0;
    return 0;
}

/* The texture object of src (cached by plane pointer, pitch and height);
 * 0 when it cannot be one (the base or pitch is not aligned as textures
 * need: then the kernels read it with plain loads). */
static int texture_for(pc_gpu_renderer *r, const pc_picture *src, cudaTextureObject_t *tex, char *err, size_t errlen)
{
    for (int i = 0; i < r->ntex; i++)
        if (r->texc[i].ptr == src->plane[0] && r->texc[i].pitch == src->pitch[0] && r->texc[i].h == src->height) {
            *tex = r->texc[i].ok ? r->texc[i].tex : 0;
            return 0;
        }
    int slot = r->ntex < PC_RTEX_CACHE ? r->ntex++ : r->tex_next;
    r->tex_next = (slot + 1) % PC_RTEX_CACHE;
    pc_rtex *t = &r->texc[slot];
    if (t->ok) { /* evicting one the stream may still read */
        CKR(cudaStreamSynchronize(r->cs));
        cudaDestroyTextureObject(t->tex);
    }
    t->ptr = src->plane[0];
    t->pitch = src->pitch[0];
    t->h = src->height;
    t->ok = 0;
    *tex = 0;
    if (((uintptr_t)src->plane[0] % r->tex_align) || (src->pitch[0] % r->tex_pitch_align))
        return 0;
    cudaResourceDesc rd;
    memset(&rd, 0, sizeof rd);
    rd.resType = cudaResourceTypePitch2D;
    rd.res.pitch2D.devPtr = src->plane[0];
    rd.res.pitch2D.desc = cudaCreateChannelDesc<uchar4>();
    rd.res.pitch2D.width = (size_t)src->width;
    rd.res.pitch2D.height = (size_t)src->height;
    rd.res.pitch2D.pitchInBytes = src->pitch[0];
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeNormalizedFloat;
    td.normalizedCoords = 0;
    if (cudaCreateTextureObject(&t->tex, &rd, &td, NULL) != cudaSuccess) {
        cudaGetLastError(); /* too large or unsupported: plain loads */
        return 0;
    }
    t->ok = 1;
    *tex = t->tex;
    return 0;
}

template <int F, int P, int T>
static void launch_ray(const pc_rkparams &kp, dim3 grid, cudaStream_t s, int map)
{
    if (map)
        pc_render_map_kernel<F, P, T><<<grid, dim3(PC_RBX, PC_RBY), 0, s>>>(kp);
    else
        pc_render_ray_kernel<F, P, T><<<grid, dim3(PC_RBX, PC_RBY), 0, s>>>(kp);
}

template <int F, int P>
static void launch_fp(const pc_rkparams &kp, dim3 grid, cudaStream_t s, int map, int tex)
{
    /* tex: bit 0 the texture unit, bit 1 bicubic (the ray kernel only:
     * enqueue refuses the map variant for a bicubic plan) */
    if (tex == 3)
        pc_render_ray_kernel<F, P, 3><<<grid, dim3(PC_RBX, PC_RBY), 0, s>>>(kp);
    else if (tex == 2)
        pc_render_ray_kernel<F, P, 2><<<grid, dim3(PC_RBX, PC_RBY), 0, s>>>(kp);
    else if (tex)
        launch_ray<F, P, 1>(kp, grid, s, map);
    else
        launch_ray<F, P, 0>(kp, grid, s, map);
}

template <int F>
static void launch_f(const pc_rkparams &kp, dim3 grid, cudaStream_t s, int map, int tex, int photo)
{
    if (photo)
        launch_fp<F, 1>(kp, grid, s, map, tex);
    else
        launch_fp<F, 0>(kp, grid, s, map, tex);
}

template <int F, int P>
static void launch_peer(pc_gpu_renderer *r, const pc_rkparams &kp, dim3 grid, cudaStream_t s)
{
    for (int c = 0; c < kp.ncam; c++) {
        const pc_peer_cam &pc = r->peer[c];
        if (!pc.w)
            continue;
        dim3 b(32, 8), gr((pc.w + 31) / 32, (pc.h + 7) / 8);
        pc_peer_remap_kernel<P><<<gr, b, 0, s>>>(kp, c, pc, r->d_acc);
    }
    pc_peer_final_kernel<F, P><<<grid, dim3(PC_RBX, PC_RBY), 0, s>>>(kp, r->d_acc);
}

static int enqueue(pc_gpu_renderer *r, int variant, const pc_picture *src, const pc_picture *dst, char *err,
                   size_t errlen)
{
    if (!r || !src || !dst || (unsigned)variant >= PC_GPU_RENDER_VARIANTS) {
        pc_set_err(err, errlen, "render: bad arguments");
        return PC_EINVAL;
    }
    if ((src->fmt != PC_FMT_RGB24 && src->fmt != PC_FMT_RGBX32) || src->width != r->kp.cam_w ||
        src->height != r->kp.ncam * r->kp.cam_h || !src->plane[0]) {
        pc_set_err(err, errlen, "render: the source must be the %d cameras stacked, rgb24 or rgbx32 %dx%d (got %dx%d)",
                   r->kp.ncam, r->kp.cam_w, r->kp.ncam * r->kp.cam_h, src->width, src->height);
        return PC_EINVAL;
    }
    if ((dst->fmt != PC_FMT_RGB24 && dst->fmt != PC_FMT_NV12 && dst->fmt != PC_FMT_I420) || dst->width != r->kp.w ||
        dst->height != r->kp.h || dst->grid_cols > 1 || dst->bands) {
        pc_set_err(err, errlen, "render: the destination must be nv12, i420 or rgb24 %dx%d (got %dx%d)", r->kp.w,
                   r->kp.h, dst->width, dst->height);
        return PC_EINVAL;
    }
    for (int i = 0; i < pc_pixfmt_planes(dst->fmt); i++)
        if (!dst->plane[i] || ((uintptr_t)dst->plane[i] & 1) || (dst->pitch[i] & 1)) {
            pc_set_err(err, errlen, "render: destination plane %d missing, or its pointer or pitch odd (the kernels "
                       "store 2 bytes at once)", i);
            return PC_EINVAL;
        }
    if (variant == PC_GPU_RENDER_MAP && !r->have_map) {
        pc_set_err(err, errlen, "render: the map variant was not prepared (PC_GPU_RENDER_WANT_MAP)");
        return PC_EINVAL;
    }
    if (variant == PC_GPU_RENDER_PEER && !r->have_peer) {
        pc_set_err(err, errlen, "render: the peer was not prepared (PC_GPU_RENDER_WANT_PEER)");
        return PC_EINVAL;
    }
    if (r->cubic && variant != PC_GPU_RENDER_RAY && variant != PC_GPU_RENDER_RAY_LOADS) {
        pc_set_err(err, errlen, "render: sampler bicubic runs with the ray kernels (not %s)",
                   pc_gpu_render_variant_name(variant));
        return PC_EINVAL;
    }
    if (r->mb && variant != PC_GPU_RENDER_RAY && variant != PC_GPU_RENDER_RAY_LOADS) {
        pc_set_err(err, errlen, "render: blend multiband runs with the ray kernels (not %s)",
                   pc_gpu_render_variant_name(variant));
        return PC_EINVAL;
    }
    CKR(cudaSetDevice(r->device));
    pc_rkparams kp = r->kp;
    pc_rkparams_pictures(&kp, src, dst);
    int tex = 0;
    if (src->fmt == PC_FMT_RGBX32 && (variant == PC_GPU_RENDER_RAY || variant == PC_GPU_RENDER_MAP)) {
        int rc = texture_for(r, src, &kp.tex, err, errlen);
        if (rc)
            return rc;
        tex = kp.tex != 0;
    }
    const dim3 grid((unsigned)((kp.w / 2 + PC_RBX - 1) / PC_RBX), (unsigned)((kp.h / 2 + PC_RBY - 1) / PC_RBY));
    const int map = variant == PC_GPU_RENDER_MAP, photo = r->photo;
    if (r->mb) { /* the pyramid beside the main pass, which leaves out the strips */
        int rc = pc_gpu_mb_begin(r->mb, kp, photo, tex, r->cs, &kp.tmask, err, errlen);
        if (rc)
            return rc;
    }
    if (variant == PC_GPU_RENDER_PEER) {
        if (dst->fmt == PC_FMT_NV12)
            photo ? launch_peer<PC_FMT_NV12, 1>(r, kp, grid, r->cs) : launch_peer<PC_FMT_NV12, 0>(r, kp, grid, r->cs);
        else if (dst->fmt == PC_FMT_I420)
            photo ? launch_peer<PC_FMT_I420, 1>(r, kp, grid, r->cs) : launch_peer<PC_FMT_I420, 0>(r, kp, grid, r->cs);
        else
            photo ? launch_peer<PC_FMT_RGB24, 1>(r, kp, grid, r->cs) : launch_peer<PC_FMT_RGB24, 0>(r, kp, grid, r->cs);
    } else {
        const int samp = tex | (r->cubic ? 2 : 0);
        if (dst->fmt == PC_FMT_NV12)
            launch_f<PC_FMT_NV12>(kp, grid, r->cs, map, samp, photo);
        else if (dst->fmt == PC_FMT_I420)
            launch_f<PC_FMT_I420>(kp, grid, r->cs, map, samp, photo);
        else
            launch_f<PC_FMT_RGB24>(kp, grid, r->cs, map, samp, photo);
    }
    CKR(cudaGetLastError());
    return r->mb ? pc_gpu_mb_end(r->mb, kp, dst->fmt, photo, tex, r->cs, err, errlen) : 0;
}

extern "C" int pc_gpu_render_enqueue(pc_gpu_renderer *r, int variant, const pc_picture *src, const pc_picture *dst,
                                     char *err, size_t errlen)
{
    return enqueue(r, variant, src, dst, err, errlen);
}

extern "C" int pc_gpu_render(pc_gpu *g, int slot, pc_gpu_renderer *r, const pc_picture *src, const pc_picture *dst,
                             char *err, size_t errlen)
{
    int rc = enqueue(r, PC_GPU_RENDER_RAY, src, dst, err, errlen);
    return rc ? rc : pc_gpu_slot_mark(g, slot, err, errlen);
}

extern "C" int pc_gpu_render_measure(pc_gpu *g, int slot, pc_gpu_renderer *r, const pc_picture *src, char *err,
                                     size_t errlen)
{
    if (!r || !src || src->width != r->kp.cam_w || src->height != r->kp.ncam * r->kp.cam_h ||
        (src->fmt != PC_FMT_RGB24 && src->fmt != PC_FMT_RGBX32)) {
        pc_set_err(err, errlen, "render measure: the source must be the %d cameras stacked", r ? r->kp.ncam : 0);
        return PC_EINVAL;
    }
    if (!r->npairs)
        return pc_gpu_slot_mark(g, slot, err, errlen);
    CKR(cudaSetDevice(r->device));
    pc_rkparams kp = r->kp;
    kp.src = src->plane[0];
    kp.src_pitch = (int)src->pitch[0];
    kp.bpp = src->fmt == PC_FMT_RGBX32 ? 4 : 3;
    int tex = 0;
    if (src->fmt == PC_FMT_RGBX32) {
        int rc = texture_for(r, src, &kp.tex, err, errlen);
        if (rc)
            return rc;
        tex = kp.tex != 0;
    }
    const size_t smem = sizeof(float) * 7 * PC_RMEAS_NT;
    if (tex)
        pc_render_measure_kernel<1><<<r->npairs, PC_RMEAS_NT, smem, r->cs>>>(kp, r->d_pairs, r->d_xy, r->d_pgain,
                                                                           r->d_stats);
    else
        pc_render_measure_kernel<0><<<r->npairs, PC_RMEAS_NT, smem, r->cs>>>(kp, r->d_pairs, r->d_xy, r->d_pgain,
                                                                           r->d_stats);
    CKR(cudaGetLastError());
    CKR(cudaMemcpyAsync(r->h_stats, r->d_stats, sizeof(float) * 8 * r->npairs, cudaMemcpyDeviceToHost, r->cs));
    return pc_gpu_slot_mark(g, slot, err, errlen);
}

extern "C" int pc_gpu_render_stats(pc_gpu_renderer *r, pc_render_stats *st, char *err, size_t errlen)
{
    if (!r || !st) {
        pc_set_err(err, errlen, "render stats: bad arguments");
        return PC_EINVAL;
    }
    *st = r->pairs_info;
    for (int k = 0; k < r->npairs; k++) {
        st->pair[k].n = (int)r->h_stats[8 * k];
        for (int ch = 0; ch < 3; ch++) {
            st->pair[k].sum_a[ch] = r->h_stats[8 * k + 1 + ch];
            st->pair[k].sum_b[ch] = r->h_stats[8 * k + 4 + ch];
        }
    }
    return 0;
}

extern "C" int pc_gpu_render_picture_alloc(pc_gpu *g, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width,
                                           int height, pc_picture *out, char *err, size_t errlen)
{
    if (!g || !out || pc_pixfmt_planes(fmt) == 0 || width < 2 || height < 2 ||
        (fmt != PC_FMT_RGB24 && fmt != PC_FMT_RGBX32 && ((width | height) & 1))) {
        pc_set_err(err, errlen, "render picture %dx%d: bad size or format", width, height);
        return PC_EINVAL;
    }
    memset(out, 0, sizeof *out);
    out->fmt = fmt;
    out->matrix = matrix;
    out->range = range;
    out->width = width;
    out->height = height;
    CKR(cudaSetDevice(pc_gpu_device(g)));
    for (int i = 0; i < pc_pixfmt_planes(fmt); i++) {
        size_t rb;
        int ph;
        pc_picture_plane_size(fmt, width, height, i, NULL, &ph, &rb);
        cudaError_t e = cudaMallocPitch((void **)&out->plane[i], &out->pitch[i], rb, (size_t)ph);
        if (e != cudaSuccess) {
            pc_gpu_picture_free(g, out);
            CKR(e);
        }
    }
    return 0;
}

/* Holds the stream until the host has enqueued a whole timing run (flag
 * set) or max_ns passed: the frames then run back to back, and the events
 * between them time the GPU, not the host's launch rate. */
__global__ void pc_rspin_kernel(const volatile int *flag, unsigned long long max_ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (!*flag && t - t0 < max_ns);
}

extern "C" int pc_gpu_render_time(int n, pc_gpu_renderer *const *r, const int *variant, const pc_picture *src,
                                  int nsrc, const pc_picture *dst, int ndst, int warmup, int iters, double *us,
                                  char *err, size_t errlen)
{
    if (n < 1 || !r || nsrc < 1 || ndst < 1 || iters < 1 || warmup < 0) {
        pc_set_err(err, errlen, "render time: bad arguments");
        return PC_EINVAL;
    }
    CKR(cudaSetDevice(r[0]->device));
    cudaStream_t s = r[0]->cs;
    int rc = 0;
    for (int i = 0; !rc && i < warmup; i++)
        for (int k = 0; k < n && !rc; k++)
            rc = enqueue(r[k], variant[k], &src[i % nsrc], &dst[k * ndst + i % ndst], err, errlen);
    if (rc)
        return rc;
    CKR(cudaStreamSynchronize(s));
    int *flag = NULL, *dflag = NULL;
    CKR(cudaHostAlloc((void **)&flag, sizeof *flag, cudaHostAllocMapped));
    *flag = 0;
    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)iters + 1, sizeof *ev);
    int made = 0;
    if (!ev) {
        pc_set_err(err, errlen, "render time: out of memory");
        rc = PC_ENOMEM;
    }
    for (; !rc && made <= iters; made++)
        if (cudaEventCreate(&ev[made]) != cudaSuccess) {
            pc_set_err(err, errlen, "render time: cudaEventCreate failed");
            rc = PC_EDEVICE;
        }
    if (!rc && cudaHostGetDevicePointer((void **)&dflag, flag, 0) != cudaSuccess) {
        pc_set_err(err, errlen, "render time: cudaHostGetDevicePointer failed");
        rc = PC_EDEVICE;
    }
    if (!rc) {
        pc_rspin_kernel<<<1, 1, 0, s>>>(dflag, 200000000ull);
        if (cudaGetLastError() != cudaSuccess) {
            pc_set_err(err, errlen, "render time: the holding kernel did not launch");
            rc = PC_EDEVICE;
        }
    }
    for (int i = 0; !rc && i < iters; i++) {
        if (cudaEventRecord(ev[i], s) != cudaSuccess) {
            pc_set_err(err, errlen, "render time: cudaEventRecord failed");
            rc = PC_EDEVICE;
            break;
        }
        const int j = warmup + i;
        for (int k = 0; k < n && !rc; k++)
            rc = enqueue(r[k], variant[k], &src[j % nsrc], &dst[k * ndst + j % ndst], err, errlen);
    }
    if (!rc && cudaEventRecord(ev[iters], s) != cudaSuccess) {
        pc_set_err(err, errlen, "render time: cudaEventRecord failed");
        rc = PC_EDEVICE;
    }
    *(volatile int *)flag = 1;
    cudaError_t e = cudaStreamSynchronize(s);
    if (!rc && e != cudaSuccess) {
        pc_set_err(err, errlen, "render time: %s", cudaGetErrorString(e));
        rc = PC_EDEVICE;
    }
    for (int i = 0; !rc && i < iters; i++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, ev[i], ev[i + 1]) != cudaSuccess) {
            pc_set_err(err, errlen, "render time: cudaEventElapsedTime failed");
            rc = PC_EDEVICE;
        }
        us[i] = ms * 1000.0;
    }
    for (int i = 0; i < made; i++)
        cudaEventDestroy(ev[i]);
    free(ev);
    cudaFreeHost(flag);
    return rc;
}
