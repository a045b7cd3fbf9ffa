/* net_test_util.h - weights files made in the tests (the learned demosaic,
 * kernels/net.h): a model's tensors in memory, written in panocap's layout
 * (docs/net.md, tools/convert-demosaicnet) with a correct digest, so that
 * a test can hand-build small networks whose output it can predict and
 * damage a file in one place at a time. Header-only. */
#ifndef PANOCAP_NET_TEST_UTIL_H
#define PANOCAP_NET_TEST_UTIL_H

#include "sha256.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT_MAX 80

/* One tensor: name, shape, values (zeros until set). */
typedef struct nt_tensor {
    char name[48];
    int ndim, dims[4];
    float *v;
    size_t n;
} nt_tensor;

typedef struct nt_model {
    int depth, width, n;
    nt_tensor t[NT_MAX];
} nt_model;

static inline nt_tensor *nt_add(nt_model *m, const char *name, int ndim, int d0, int d1, int d2, int d3)
{
    nt_tensor *t = &m->t[m->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim;
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->dims[2] = d2;
    t->dims[3] = d3;
    t->n = 1;
    for (int i = 0; i < ndim; i++)
        t->n *= (size_t)t->dims[i];
    t->v = (float *)calloc(t->n, sizeof(float));
    return t;
}

static inline void nt_conv(nt_model *m, const char *prefix, int cout, int cin, int k)
{
    char n[48];
    snprintf(n, sizeof n, "%s.weight", prefix);
    nt_add(m, n, 4, cout, cin, k, k);
    snprintf(n, sizeof n, "%s.bias", prefix);
    nt_add(m, n, 1, cout, 0, 0, 0);
}

/* All-zero BayerDemosaick(depth, width) tensors, in the state dict's order. */
static inline void nt_model_init(nt_model *m, int depth, int width)
{
    memset(m, 0, sizeof *m);
    m->depth = depth;
    m->width = width;
    nt_conv(m, "main_processor.pack_mosaic", 4, 3, 2);
    for (int i = 0; i < depth; i++) {
        char p[40];
        snprintf(p, sizeof p, "main_processor.conv%d", i + 1);
        nt_conv(m, p, i == depth - 1 ? 2 * width : width, i == 0 ? 4 : width, 3);
    }
    nt_conv(m, "residual_predictor", 12, width, 1);
    nt_add(m, "upsampler.weight", 4, 12, 1, 2, 2);
    nt_add(m, "upsampler.bias", 1, 3, 0, 0, 0);
    nt_conv(m, "fullres_processor.post_conv", width, 6, 3);
    nt_conv(m, "fullres_processor.output", 3, width, 1);
}

static inline nt_tensor *nt_get(nt_model *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->t[i].name, name) == 0)
            return &m->t[i];
    fprintf(stderr, "net_test_util: no tensor %s\n", name);
    abort();
}

/* Element (i, j, k, l) of a 4-D tensor (or i of a 1-D one). */
static inline float *nt_at(nt_model *m, const char *name, int i, int j, int k, int l)
{
    nt_tensor *t = nt_get(m, name);
    if (t->ndim == 1)
        return &t->v[i];
    return &t->v[((i * t->dims[1] + j) * t->dims[2] + k) * t->dims[3] + l];
}

static inline void nt_free(nt_model *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->t[i].v);
    m->n = 0;
}

static inline void nt_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}
static inline void nt_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

/* The file's bytes (malloc'ed, *len bytes): the layout of docs/net.md. */
static inline uint8_t *nt_bytes(const nt_model *m, size_t *len)
{
    size_t off = 64 + 80 * (size_t)m->n;
    off = (off + 63) & ~(size_t)63;
    size_t total = off;
    for (int i = 0; i < m->n; i++)
        total += (4 * m->t[i].n + 63) & ~(size_t)63;
    total += 32;
    uint8_t *b = (uint8_t *)calloc(total, 1);
    memcpy(b, "PCNETWTS", 8);
    nt_put32(b + 8, 1);
    nt_put32(b + 12, (uint32_t)m->n);
    nt_put32(b + 16, (uint32_t)m->depth);
    nt_put32(b + 20, (uint32_t)m->width);
    nt_put64(b + 24, total);
    snprintf((char *)b + 32, 32, "test-model");
    for (int i = 0; i < m->n; i++) {
        uint8_t *e = b + 64 + 80 * (size_t)i;
        memcpy(e, m->t[i].name, strlen(m->t[i].name));
        nt_put32(e + 48, (uint32_t)m->t[i].ndim);
        for (int d = 0; d < 4; d++)
            nt_put32(e + 52 + 4 * d, d < m->t[i].ndim ? (uint32_t)m->t[i].dims[d] : 0);
        nt_put64(e + 72, off);
        for (size_t k = 0; k < m->t[i].n; k++) {
            uint32_t u;
            memcpy(&u, &m->t[i].v[k], 4);
            nt_put32(b + off + 4 * k, u);
        }
        off += (4 * m->t[i].n + 63) & ~(size_t)63;
    }
    pc_sha256(b, total - 32, b + total - 32);
    *len = total;
    return b;
}

/* Recomputes the digest of a file's bytes (after a deliberate change
 * that should be caught by a later check, not by the checksum). */
static inline void nt_redigest(uint8_t *b, size_t len) { pc_sha256(b, len - 32, b + len - 32); }

static inline int nt_write(const char *path, const uint8_t *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(b, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

#endif
